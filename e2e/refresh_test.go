package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// tileURLs are the three routes of one tile of the world map's fused cache: the REST tile, the
// WMTS RESTful tile and the cache directory.
func tileURLs(base string, level, row, col int) []string {
	svc := base + "/arcgis/rest/services/world/MapServer"
	return []string{
		fmt.Sprintf("%s/tile/%d/%d/%d", svc, level, row, col),
		fmt.Sprintf("%s/WMTS/tile/1.0.0/world/default/default028mm/%d/%d/%d.png", svc, level, row, col),
		fmt.Sprintf("%s/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L%02d/R%08x/C%08x.png", base, level, row, col),
	}
}

func getTile(t *testing.T, url, ifNoneMatch string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag")
}

// A tile every route served (and so keeps in memory) just before a truncate is not served by
// any of them once the truncate job has ended: the job's end tells every api at once, where
// each used to serve it for up to its trust window (10 s). Before, each route revalidates a
// tile by its content ETag (304), the directory route included.
func TestTruncateDropsServedTilesAtOnce(t *testing.T) {
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	extent := []float64{-1_000_000, 5_000_000, 1_000_000, 7_000_000}
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Extent: extent, Levels: []int{3}, SkipEmpty: &no})
	urls := tileURLs(base, 3, 2, 3) // inside the extent
	for _, u := range urls {
		code, etag := getTile(t, u, "")
		if code != http.StatusOK || etag == "" {
			t.Fatalf("GET %s: %d, ETag %q: want 200 with an ETag", u, code, etag)
		}
		if code, _ := getTile(t, u, etag); code != http.StatusNotModified {
			t.Fatalf("GET %s with If-None-Match %s: %d, want 304", u, etag, code)
		}
	}
	seedAndWait(t, base, seed.Request{Service: "world", Extent: extent, Levels: []int{3}, Mode: "delete"})
	for _, u := range urls {
		if code, _ := getTile(t, u, ""); code == http.StatusOK {
			t.Errorf("GET %s right after the truncate ended: 200, want the tile gone", u)
		}
	}
}
