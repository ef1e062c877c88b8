package e2e

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestWMSThroughTheFarm: on a running farm (api, coordinator, worker, Redis, the store), a WMS
// GetMap is rendered by a worker as ExportMapImage is: the same picture as REST export of the
// same extent and size; its capabilities name the farm's address.
func TestWMSThroughTheFarm(t *testing.T) {
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	fetch := func(path string) (string, []byte) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v %.300s", path, resp.StatusCode, err, b)
		}
		return resp.Header.Get("Content-Type"), b
	}
	decode := func(b []byte) image.Image {
		t.Helper()
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not a PNG: %v", err)
		}
		return img
	}
	_, caps := fetch("/arcgis/services/world/MapServer/WMSServer?SERVICE=WMS&REQUEST=GetCapabilities")
	if !bytes.Contains(caps, []byte(`xlink:href="`+base+`/arcgis/services/world/MapServer/WMSServer?"`)) {
		t.Errorf("the capabilities do not name the farm's address %s:\n%.600s", base, caps)
	}
	ct, wms := fetch("/arcgis/services/world/MapServer/WMSServer?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=1&STYLES=&CRS=EPSG:4326" +
		"&BBOX=20,-30,60,50&WIDTH=400&HEIGHT=200&FORMAT=image/png")
	_, export := fetch("/arcgis/rest/services/world/MapServer/export?bbox=-30,20,50,60&bboxSR=4326&imageSR=4326&size=400,200&format=png32&f=image")
	got, want := decode(wms), decode(export)
	if ct != "image/png" || got.Bounds() != want.Bounds() {
		t.Fatalf("GetMap %s %v; export %v", ct, got.Bounds(), want.Bounds())
	}
	diff := 0
	for y := 0; y < 200; y++ {
		for x := 0; x < 400; x++ {
			if got.At(x, y) != want.At(x, y) {
				diff++
			}
		}
	}
	if diff != 0 {
		t.Errorf("GetMap differs from export in %d pixels", diff)
	}
}
