package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectortile"
	"github.com/mapfarm/mapfarm/internal/vectortileserver"
)

// BenchmarkCachedTiles serves a cached tile through the whole api handler chain, every default
// middleware on (tokens and rate limit off, the default CORS, metrics, a JSON request log as
// main.go makes it), on each cached-tile route. It is what bench/tiles.sh measures with wrk,
// without the network: run it with -benchmem and -cpuprofile to see what a tile hit pays.
func BenchmarkCachedTiles(b *testing.B) {
	store, _ := worldTileStore(b)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	index := tilecache.NewIndexCache(tilecache.IndexCacheOptions{}) // shared, as internal/app does
	cat := catalogtest.Samples(b)
	ops := mapserver.New(mapserver.Params{Catalog: cat, Logger: logger, NewID: NewID, Tiles: store, TileIndex: index})
	vb, err := vectortile.New(vectortile.Params{Services: cat, Options: mvt.Options{Gzip: true}})
	if err != nil {
		b.Fatal(err)
	}
	vts := vectortileserver.New(vectortileserver.Params{Services: cat, Builder: vb, PublicURL: "http://farm.test", Logger: logger})
	h := New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute,
		PublicURL: "http://farm.test", Tiles: store, TileIndex: index, Logger: logger, Metrics: metrics.New(), VectorTiles: vts}).Handler()
	for _, route := range []struct{ name, path string }{
		{"rest", "/arcgis/rest/services/world/MapServer/tile/0/0/0"},
		{"wmts", "/arcgis/rest/services/world/MapServer/WMTS/tile/1.0.0/world/default/default028mm/0/0/0.png"},
		{"directory", CachePath + "/world/Layers/_alllayers/L00/R00000000/C00000000.png"},
		// A vector tile from the VectorTileServer's memory, gzipped as browsers take it.
		{"vector", "/arcgis/rest/services/world/VectorTileServer/tile/0/0/0.pbf"},
	} {
		b.Run(route.name, func(b *testing.B) {
			tmpl := httptest.NewRequest(http.MethodGet, route.path, nil)
			tmpl.RemoteAddr = "127.0.0.1:5555"
			// Each request is a fresh copy of the template with a header map of its own, as
			// net/http reads one (two allocations of the 2–3 counted per op, which the
			// server pays too).
			serve := func(w *discardWriter) {
				req := new(http.Request)
				*req = *tmpl
				req.Header = make(http.Header, 4)
				req.Header["Accept-Encoding"] = acceptGzip
				clear(w.h)
				w.status = 0
				h.ServeHTTP(w, req)
			}
			w := &discardWriter{h: http.Header{}}
			serve(w)
			if w.status != http.StatusOK {
				b.Fatalf("GET %s: %d", route.path, w.status)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				serve(w)
			}
			if w.status != http.StatusOK {
				b.Fatalf("GET %s: %d", route.path, w.status)
			}
		})
	}
}

// acceptGzip is a browser's Accept-Encoding, on every benchmark request (the raster routes ignore
// it).
var acceptGzip = []string{"gzip, deflate, br"}

// discardWriter is a ResponseWriter that keeps the status and header and drops the body, as
// net/http's own writer costs nothing per request here: what is measured is the api.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
