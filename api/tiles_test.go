package api

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/token"
)

// tileServer returns an api on the sample services whose world map has a fused compact-V2
// cache holding one tile, 0/0/0, and that tile's bytes.
func tileServer(t *testing.T, sec Security) (http.Handler, []byte) {
	t.Helper()
	store, tile := worldTileStore(t)
	logger := slog.New(slog.DiscardHandler)
	ops := mapserver.New(mapserver.Params{Catalog: catalogtest.Samples(t), Logger: logger, NewID: NewID, Tiles: store})
	h := New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute,
		PublicURL: "http://farm.test", Tiles: store, Logger: logger, Security: sec}).Handler()
	return h, tile
}

// worldTileStore returns a store holding a fused compact-V2 cache of the world map with one
// tile, 0/0/0, and that tile's bytes.
func worldTileStore(t testing.TB) (*blob.Disk, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 256, 256))); err != nil {
		t.Fatal(err)
	}
	return worldTileStoreWith(t, buf.Bytes()), buf.Bytes()
}

// worldTileStoreWith is worldTileStore with the tile's bytes given.
func worldTileStoreWith(t testing.TB, tile []byte) *blob.Disk {
	t.Helper()
	ctx := context.Background()
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := tilecache.New(store, tilecache.Options{Root: seed.CacheRoot("world", "Layers")})
	if err != nil {
		t.Fatal(err)
	}
	scheme := tilecache.WebMercator()
	scheme.LODs = scheme.LODs[:3]
	w, err := c.NewBundleWriter(tilecache.BundleOf(tilecache.Tile{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Put(tilecache.Tile{}, tile); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: scheme}, scheme.Extent); err != nil {
		t.Fatal(err)
	}
	return store
}

func tileGet(h http.Handler, path string, header ...string) (*http.Response, []byte) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.RemoteAddr = "203.0.113.9:5555"
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// tileErrorCode returns the code of an ArcGIS REST error body, or fails.
func tileErrorCode(t *testing.T, body []byte) int {
	t.Helper()
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == "" {
		t.Fatalf("not an ArcGIS error: %v: %s", err, body)
	}
	return e.Error.Code
}

// Tokens apply to the REST tiles and WMTS as to SOAP: none, a forged one and one scoped to
// another service are refused with ArcGIS's error codes; a token for the service, as a
// parameter or a bearer header, gets the tile (private to shared caches either way), and the
// WMTS capabilities' URLs carry the token parameter they were asked with.
func TestTileRoutesNeedTokens(t *testing.T) {
	signer := testSigner(t)
	tok := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	usa := issue(t, signer, token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"usa"}})
	h, tile := tileServer(t, Security{Tokens: signer})
	const path = "/arcgis/rest/services/world/MapServer/tile/0/0/0"
	for _, c := range []struct {
		name, query, bearer string
		status, code        int
	}{
		{"none", "", "", 401, 499},
		{"forged", "?token=" + tok[:len(tok)-2] + "xx", "", 401, 498},
		{"another service's", "?token=" + usa, "", 403, 403},
	} {
		resp, body := tileGet(h, path+c.query)
		if resp.StatusCode != c.status || tileErrorCode(t, body) != c.code {
			t.Errorf("%s token: %s %s", c.name, resp.Status, body)
		}
		resp, _ = tileGet(h, "/arcgis/rest/services/world/MapServer/WMTS?SERVICE=WMTS&REQUEST=GetCapabilities"+strings.Replace(c.query, "?", "&", 1))
		if resp.StatusCode != c.status {
			t.Errorf("%s token, WMTS: %s", c.name, resp.Status)
		}
	}
	resp, body := tileGet(h, path+"?token="+tok)
	if resp.StatusCode != 200 || !bytes.Equal(body, tile) || resp.Header.Get("Cache-Control") != "private, max-age=3600" {
		t.Errorf("token parameter: %s %s, %d bytes", resp.Status, resp.Header.Get("Cache-Control"), len(body))
	}
	resp, body = tileGet(h, path, "Authorization", "Bearer "+tok)
	if resp.StatusCode != 200 || !bytes.Equal(body, tile) || resp.Header.Get("Cache-Control") != "private, max-age=3600" {
		t.Errorf("bearer token: %s %s, %d bytes", resp.Status, resp.Header.Get("Cache-Control"), len(body))
	}
	resp, body = tileGet(h, "/arcgis/rest/services/world/MapServer/WMTS/1.0.0/WMTSCapabilities.xml?token="+tok)
	if want := `template="http://farm.test/arcgis/rest/services/world/MapServer/WMTS/tile/1.0.0/world/{Style}/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}?token=` + tok + `"`; resp.StatusCode != 200 || !bytes.Contains(body, []byte(want)) {
		t.Errorf("capabilities with a token: %s\n%s", resp.Status, body)
	}
}

// Rate limits count tile requests, and CORS headers are on tiles and on their errors.
func TestTileRoutesRateLimitAndCORS(t *testing.T) {
	const origin = "https://maps.example.org"
	h, _ := tileServer(t, Security{RateLimit: 0.001, RateBurst: 2, CORSOrigins: []string{origin}})
	for i, c := range []struct {
		path   string
		status int
	}{
		{"/arcgis/rest/services/world/MapServer/tile/0/0/0", 200},
		{"/arcgis/rest/services/world/MapServer/tile/2/0/0", 404},
		{"/arcgis/rest/services/world/MapServer/tile/0/0/0", 429},
	} {
		resp, body := tileGet(h, c.path, "Origin", origin)
		if resp.StatusCode != c.status || resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("request %d: %s, Access-Control-Allow-Origin %q: %.200s", i, resp.Status, resp.Header.Get("Access-Control-Allow-Origin"), body)
		}
		if c.status != 200 {
			tileErrorCode(t, body)
		}
		if c.status == 429 && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
}

// A service without a cache has no tiles: the REST tile resource answers ArcGIS's 404, WMTS an
// exception report with 404, for the capabilities as for a tile; HEAD gets the status alone.
func TestTileRoutesOfUncachedService(t *testing.T) {
	h, _ := tileServer(t, Security{})
	resp, body := tileGet(h, "/arcgis/rest/services/usa/MapServer/tile/0/0/0")
	if resp.StatusCode != 404 || tileErrorCode(t, body) != 404 {
		t.Errorf("tile: %s %s", resp.Status, body)
	}
	for _, path := range []string{
		"/arcgis/rest/services/usa/MapServer/WMTS/1.0.0/WMTSCapabilities.xml",
		"/arcgis/rest/services/usa/MapServer/WMTS?SERVICE=WMTS&REQUEST=GetCapabilities",
		"/arcgis/rest/services/usa/MapServer/WMTS/tile/1.0.0/usa/default/default028mm/0/0/0",
	} {
		resp, body := tileGet(h, path)
		if resp.StatusCode != 404 || !bytes.Contains(body, []byte(`<Exception exceptionCode="NoApplicableCode"><ExceptionText>`)) ||
			!bytes.Contains(body, []byte("has no tile cache")) {
			t.Errorf("%s: %s %s", path, resp.Status, body)
		}
	}
	req := httptest.NewRequest(http.MethodHead, "/arcgis/rest/services/world/MapServer/tile/0/0/0", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" || rec.Header().Get("ETag") == "" {
		t.Errorf("HEAD: %d, %d bytes, headers %v", rec.Code, rec.Body.Len(), rec.Header())
	}
}

// A directory tile once served comes from memory, with its type and length, without reading
// the store again (its bundle deleted, it is still served within servedTileMaxAge); a tile
// that was not found is not remembered.
func TestDirectoryTileServedFromMemory(t *testing.T) {
	store, tile := worldTileStore(t)
	logger := slog.New(slog.DiscardHandler)
	h := New(Params{Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute,
		PublicURL: "http://farm.test", Tiles: store, Logger: logger}).Handler()
	const path = CachePath + "/world/Layers/_alllayers/L00/R00000000/C00000000.png"
	const missing = CachePath + "/world/Layers/_alllayers/L01/R00000001/C00000001.png"
	for range 2 {
		if resp, _ := tileGet(h, missing); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("missing tile: %d", resp.StatusCode)
		}
	}
	resp, body := tileGet(h, path)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, tile) {
		t.Fatalf("first GET: %d, %d bytes", resp.StatusCode, len(body))
	}
	key := seed.CacheRoot("world", "Layers") + "/_alllayers/L00/R0000C0000.bundle"
	if _, err := store.Stat(context.Background(), key); err != nil {
		t.Fatalf("the bundle is not at %s: %v", key, err)
	}
	if err := store.Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	resp, body = tileGet(h, path)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(body, tile) {
		t.Fatalf("second GET, bundle gone: %d, %d bytes; want the tile from memory", resp.StatusCode, len(body))
	}
	for k, want := range map[string]string{"Content-Type": "image/png", "Content-Length": strconv.Itoa(len(tile)),
		"Cache-Control": "public, max-age=3600", "X-Content-Type-Options": "nosniff", "Access-Control-Allow-Origin": "*"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}
