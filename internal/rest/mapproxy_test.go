package rest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mapfarm/mapfarm/internal/render/rendertest"
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
	diff := rendertest.CheckNear(t, got, want, "MapProxy", "export")
	t.Logf("MapProxy: %d export calls; %d of %d pixels beyond tolerance", exports.Load(), diff, w*hgt)
}
