package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// logLines decodes the JSON log lines of buf.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// Tile hits (200 and 304 on the tile, WMTS and directory routes) have no line each: they are
// counted in a "tile hits" line a window, with one in TileLogSample logged in full and marked;
// a tile route's 404 and every other request keep their own line.
func TestRequestLogAggregatesTileHits(t *testing.T) {
	store, _ := worldTileStore(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	ops := mapserver.New(mapserver.Params{Catalog: catalogtest.Samples(t), Logger: slog.New(slog.DiscardHandler), NewID: NewID, Tiles: store})
	s := New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute,
		PublicURL: "http://farm.test", Tiles: store, Logger: logger, TileLogSample: 4})
	h := s.Handler()
	const tile = "/arcgis/rest/services/world/MapServer/tile/0/0/0"
	resp, _ := tileGet(h, tile)
	etag := resp.Header.Get("ETag")
	for range 4 {
		tileGet(h, tile)
	}
	if resp, _ := tileGet(h, tile, "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	if resp, _ := tileGet(h, CachePath+"/world/Layers/_alllayers/L00/R00000000/C00000000.png"); resp.StatusCode != http.StatusOK {
		t.Fatalf("directory: %d", resp.StatusCode)
	}
	if resp, _ := tileGet(h, "/arcgis/rest/services/world/MapServer/tile/1/1/1"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("missing tile: %d", resp.StatusCode)
	}
	if resp, _ := tileGet(h, "/healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	s.hits.flush(time.Now(), true)

	var requests, sampled []string
	var summary map[string]any
	for _, l := range logLines(t, &logs) {
		switch l["msg"] {
		case "request":
			line := fmt.Sprintf("%s %v", l["path"], l["status"])
			requests = append(requests, line)
			if l["sampled"] != nil {
				sampled = append(sampled, line)
			}
		case "tile hits":
			if summary != nil {
				t.Fatalf("two summaries in one window: %v", l)
			}
			summary = l
		}
	}
	// 7 hits: the sample is the 4th (a 200 of the tile route).
	want := []string{tile + " 200", "/arcgis/rest/services/world/MapServer/tile/1/1/1 404", "/healthz 200"}
	if strings.Join(requests, "\n") != strings.Join(want, "\n") || len(sampled) != 1 {
		t.Errorf("request lines:\n%s\nwant\n%s\n(sampled: %v)", strings.Join(requests, "\n"), strings.Join(want, "\n"), sampled)
	}
	if summary == nil {
		t.Fatal("no tile hits line")
	}
	for k, v := range map[string]float64{"requests": 7, "tile": 6, "directory": 1, "status_200": 6, "status_304": 1, "sample_1_in": 4} {
		if summary[k] != v {
			t.Errorf("tile hits %s = %v, want %v (%v)", k, summary[k], v, summary)
		}
	}
	for _, k := range []string{"p50_ms", "p90_ms", "p99_ms", "max_ms", "bytes"} {
		if v, ok := summary[k].(float64); !ok || v <= 0 && k == "bytes" {
			t.Errorf("tile hits %s = %v", k, summary[k])
		}
	}
	if summary["p50_ms"].(float64) > summary["p99_ms"].(float64) || summary["p99_ms"].(float64) > summary["max_ms"].(float64) {
		t.Errorf("quantiles out of order: %v", summary)
	}
}

// A latency's bucket holds it: its upper bound is at least the latency and within a quarter of
// it above.
func TestLatencyBuckets(t *testing.T) {
	for us := int64(0); us < 1<<22; us = us*9/8 + 1 {
		d := time.Duration(us) * time.Microsecond
		i := latencyBucket(d)
		top := latencyBucketTop(i)
		if top < d || top > d+d/4+time.Microsecond {
			t.Fatalf("%v: bucket %d tops at %v", d, i, top)
		}
		if i > 0 && latencyBucketTop(i-1) >= d {
			t.Fatalf("%v: bucket %d, but %d tops at %v", d, i, i-1, latencyBucketTop(i-1))
		}
	}
}
