package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// MapProxy's arcgis source draws from the REST export: a WMS GetMap through MapProxy (Debian's
// python3-mapproxy, layer without a cache) gives the image export draws for the same extent and
// size, within a small colour tolerance (MapProxy decodes the PNG and encodes its own).
func TestMapProxyArcGISSource(t *testing.T) {
	h := newHandler(t)
	var exports atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/MapServer/export") {
			exports.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	mp := testenv.NewMapProxyArcGIS(t, t.TempDir(), srv.URL+"/arcgis/rest/services/world/MapServer", "EPSG:4326")
	const w, hgt = 512, 256
	got := decodePNG(t, mp.GetMap("EPSG:4326", [4]float64{-180, -90, 180, 90}, w, hgt))
	if exports.Load() == 0 {
		t.Fatal("MapProxy did not call export")
	}
	code, body := get(t, h, "/arcgis/rest/services/world/MapServer/export?bbox=-180,-90,180,90&bboxSR=4326&imageSR=4326&size=512,256&format=png&f=image")
	if code != http.StatusOK {
		t.Fatalf("export: %d %s", code, body)
	}
	want := decodePNG(t, body)
	if got.Bounds() != want.Bounds() {
		t.Fatalf("MapProxy drew %v, export %v", got.Bounds(), want.Bounds())
	}
	diff, colours := 0, map[[3]uint32]bool{}
	for y := range hgt {
		for x := range w {
			r1, g1, b1, _ := got.At(x, y).RGBA()
			r2, g2, b2, _ := want.At(x, y).RGBA()
			colours[[3]uint32{r2 >> 8, g2 >> 8, b2 >> 8}] = true
			if absDiff(r1>>8, r2>>8) > 8 || absDiff(g1>>8, g2>>8) > 8 || absDiff(b1>>8, b2>>8) > 8 {
				diff++
			}
		}
	}
	if len(colours) < 3 {
		t.Fatalf("export drew only %d colours; the comparison would prove nothing", len(colours))
	}
	// At most 0.5 % of the pixels may differ by more than 8 levels in a channel.
	if diff > w*hgt/200 {
		t.Errorf("%d of %d pixels differ between MapProxy's image and export's", diff, w*hgt)
	}
	t.Logf("MapProxy: %d export calls; %d of %d pixels beyond tolerance", exports.Load(), diff, w*hgt)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
