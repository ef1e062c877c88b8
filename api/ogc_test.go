package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The OGC APIs follow the request policy of the services: with tokens on, no token or one
// scoped to another service gets the OGC API exception with 401 or 403; the world's token, as a
// parameter or a bearer header, opens it, private; /ogc lists only the services a token opens;
// without tokens it is public; any origin may read it. A WebMercatorQuad tile of the world's
// stored cache is the stored tile.
func TestOGCRoutePolicy(t *testing.T) {
	const landing = "/ogc/world/collections"
	rp := newRoutePolicy(t, landing, "?")
	h, open, tile, usa := rp.tokens, rp.open, rp.tile, rp.usa
	for _, c := range rp.cases {
		rec, b := serveGet(c.h, c.target, c.header)
		var doc struct {
			Code        string
			Collections []any
		}
		_ = json.Unmarshal(b, &doc)
		if rec.Code != c.status || (c.status == 200) != (len(doc.Collections) > 0) || (c.status != 200) != (doc.Code != "") {
			t.Errorf("%s: %d %.300s, want %d", c.name, rec.Code, b, c.status)
		}
		checkReadHeaders(t, c, rec)
	}
	// /ogc lists what the token opens.
	rec, b := serveGet(h, "/ogc?token="+usa, "")
	if rec.Code != 200 || !bytes.Contains(b, []byte("/ogc/usa")) || bytes.Contains(b, []byte("/ogc/world")) {
		t.Errorf("/ogc with the usa token: %d %s", rec.Code, b)
	}
	rec, b = serveGet(open, "/ogc/world/map/tiles/WebMercatorQuad/0/0/0", "")
	if rec.Code != 200 || !bytes.Equal(b, tile) || rec.Header().Get("Content-Type") != "image/png" {
		t.Errorf("tile 0/0/0: %d %s, %d bytes, want the stored tile's %d", rec.Code, rec.Header().Get("Content-Type"), len(b), len(tile))
	}
	// The cache's own tiling scheme: its tile matrix set, its tileset, the stored tile.
	rec, b = serveGet(open, "/ogc/world/tileMatrixSets/default028mm", "")
	var tms struct {
		CRS          string
		TileMatrices []struct {
			ID          string
			MatrixWidth int
		}
	}
	if err := json.Unmarshal(b, &tms); err != nil || rec.Code != 200 || tms.CRS != "http://www.opengis.net/def/crs/EPSG/0/3857" || len(tms.TileMatrices) != 3 || tms.TileMatrices[2].MatrixWidth != 4 {
		t.Errorf("the cache's tile matrix set: %d %v %.300s", rec.Code, err, b)
	}
	rec, b = serveGet(open, "/ogc/world/map/tiles", "")
	if rec.Code != 200 || !bytes.Contains(b, []byte("/ogc/world/map/tiles/default028mm")) {
		t.Errorf("the map's tilesets do not list the cache's: %d %s", rec.Code, b)
	}
	rec, b = serveGet(open, "/ogc/world/map/tiles/default028mm/0/0/0", "")
	if rec.Code != 200 || !bytes.Equal(b, tile) {
		t.Errorf("cache tile 0/0/0: %d, %d bytes, want the stored tile's %d", rec.Code, len(b), len(tile))
	}
	if rec, _ = serveGet(open, "/ogc/world/map/tiles/default028mm/1/0/0", ""); rec.Code != 404 {
		t.Errorf("a tile the cache does not hold: %d", rec.Code)
	}
	if rec, _ = serveGet(open, "/ogc/world/collections/1/map/tiles/default028mm", ""); rec.Code != 404 {
		t.Errorf("a layer without a cache of its own has the cache's tileset: %d", rec.Code)
	}
	rec, _ = serveGet(open, "/ogc/world/collections?f=html", "")
	if rec.Header().Get("X-Frame-Options") != "DENY" {
		t.Errorf("HTML page: X-Frame-Options %q", rec.Header().Get("X-Frame-Options"))
	}
	req := httptest.NewRequest(http.MethodPost, landing, nil)
	rec = httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}
