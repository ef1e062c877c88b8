package vectortileserver_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
	"github.com/mapfarm/mapfarm/internal/vectortile"
	"github.com/mapfarm/mapfarm/internal/vectortileserver"
)

const publicURL = "http://farm.test"

// fixture is one handler over the sample services, mounted as the api mounts it.
type fixture struct {
	cat *catalog.Catalog
	mux *http.ServeMux
	h   *vectortileserver.Handler
}

func newFixture(t *testing.T, opts mvt.Options, stored vectortileserver.Stored) *fixture {
	t.Helper()
	return newFixtureRun(t, opts, stored, nil)
}

func newFixtureRun(t *testing.T, opts mvt.Options, stored vectortileserver.Stored, run func(func())) *fixture {
	t.Helper()
	cat := catalogtest.Samples(t)
	b, err := vectortile.New(vectortile.Params{Services: cat, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	h := vectortileserver.New(vectortileserver.Params{Services: cat, Builder: b, Stored: stored, Glyphs: vectorfonts.New(r.Fonts(), 0),
		Renderer: r, PublicURL: publicURL, Run: run})
	mux := http.NewServeMux()
	mux.Handle("/arcgis/rest/services/{service}/VectorTileServer", h)
	mux.Handle("/arcgis/rest/services/{service}/VectorTileServer/{path...}", h)
	return &fixture{cat: cat, mux: mux, h: h}
}

func (f *fixture) get(path string, header ...string) (*http.Response, []byte) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	f.mux.ServeHTTP(rec, req)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func (f *fixture) getJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	resp, body := f.get(path)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%s: %s %s %.300s", path, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

const vts = "/arcgis/rest/services/world/VectorTileServer"

// tile fetches a tile as a browser does (gzip accepted) and returns its inflated bytes after
// checking them with mvtcheck.
func (f *fixture) tile(t *testing.T, z, y, x int) ([]byte, *http.Response) {
	t.Helper()
	resp, body := f.get(fmt.Sprintf("%s/tile/%d/%d/%d.pbf", vts, z, y, x), "Accept-Encoding", "gzip, deflate, br")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Fatalf("tile %d/%d/%d: %s, encoding %q, type %q: %.200q", z, y, x, resp.Status, resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Type"), body)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("tile %d/%d/%d is not gzip: %v", z, y, x, err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if probs, _ := mvtcheck.Check(plain, mvtcheck.Options{MaxBuffer: mvt.DefaultBuffer}); len(probs) > 0 {
		t.Fatalf("tile %d/%d/%d breaks the specification: %v", z, y, x, probs)
	}
	return plain, resp
}

// TestServiceJSON: the root JSON as ArcGIS's (with or without f, with a trailing slash), the
// TileJSON and the tile map.
func TestServiceJSON(t *testing.T) {
	f := newFixture(t, mvt.Options{Gzip: true}, nil)
	for _, p := range []string{vts, vts + "/", vts + "?f=json", vts + "?f=pjson"} {
		v := f.getJSON(t, p)
		ti, _ := v["tileInfo"].(map[string]any)
		lods, _ := ti["lods"].([]any)
		if v["name"] != "world" || v["type"] != "indexedVector" || v["capabilities"] != "TilesOnly" || v["defaultStyles"] != "resources/styles" ||
			fmt.Sprint(v["tiles"]) != "[tile/{z}/{y}/{x}.pbf]" || ti["rows"] != 512.0 || ti["format"] != "pbf" || len(lods) != 15 {
			t.Fatalf("%s: %v", p, v)
		}
		if _, ok := v["tileMap"]; ok {
			t.Errorf("%s names a tileMap: the ArcGIS SDK would ask it for every tile", p)
		}
		l1 := lods[1].(map[string]any)
		if l1["scale"].(float64) != 147914381.89788875 || l1["resolution"].(float64) < 39135.7 || l1["resolution"].(float64) > 39135.8 {
			t.Errorf("level 1: %v", l1)
		}
		full := v["fullExtent"].(map[string]any)
		if full["xmin"].(float64) > -2e7 || full["ymax"].(float64) < 1.5e7 || fmt.Sprint(full["spatialReference"]) != "map[latestWkid:3857 wkid:102100]" {
			t.Errorf("full extent %v", full)
		}
	}

	tj := f.getJSON(t, vts+"/tiles.json")
	layers, _ := tj["vector_layers"].([]any)
	if tj["tilejson"] != "3.0.0" || fmt.Sprint(tj["tiles"]) != "["+publicURL+vts+"/tile/{z}/{y}/{x}.pbf]" || tj["maxzoom"] != 14.0 || len(layers) != 1 {
		t.Fatalf("TileJSON %v", tj)
	}
	if l := layers[0].(map[string]any); l["id"] != "Countries" || fmt.Sprint(l["fields"]) != "map[NAME:String]" || l["minzoom"] != 0.0 {
		t.Errorf("vector layer %v", l)
	}

	idx, _ := f.getJSON(t, vts+"/tilemap")["index"].([]any)
	if len(idx) != 4 {
		t.Fatalf("tile map index %v", idx)
	}
	sub := f.getJSON(t, vts+"/tilemap/14/6000/8000")["index"]
	if sub != 1.0 {
		t.Errorf("tile map of a tile of the last level over land: %v, want 1 (a leaf)", sub)
	}
}

// TestTiles: every tile of z0 to z2 decodes and passes mvtcheck, gzipped with its ETag; a 304 for
// the ETag; the plain tile for a client without gzip; 404 and 400 for tiles that are not.
func TestTiles(t *testing.T) {
	f := newFixture(t, mvt.Options{Gzip: true}, nil)
	for z := 0; z <= 2; z++ {
		features := 0
		for y := 0; y < 1<<z; y++ {
			for x := 0; x < 1<<z; x++ {
				plain, _ := f.tile(t, z, y, x)
				_, st := mvtcheck.Check(plain, mvtcheck.Options{})
				features += st.Features["Countries"]
			}
		}
		// 241 countries; at z0 (10 km a unit) 179 of them, the smallest collapsing.
		if features < 170 {
			t.Errorf("z%d: %d countries in its tiles, want about every one", z, features)
		}
	}

	plain, resp := f.tile(t, 2, 1, 2)
	etag := resp.Header.Get("Etag")
	if len(etag) < 10 || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "public, max-age=") {
		t.Errorf("ETag %q, Cache-Control %q", etag, resp.Header.Get("Cache-Control"))
	}
	if resp, body := f.get(vts+"/tile/2/1/2.pbf", "If-None-Match", etag, "Accept-Encoding", "gzip"); resp.StatusCode != 304 || len(body) != 0 {
		t.Errorf("If-None-Match: %s, %d bytes", resp.Status, len(body))
	}
	if resp, body := f.get(vts + "/tile/2/1/2.pbf"); resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, plain) {
		t.Errorf("without gzip: %s, encoding %q, %d bytes (want the %d plain ones)", resp.Status, resp.Header.Get("Content-Encoding"), len(body), len(plain))
	}
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/tile/15/0/0.pbf", 404}, {"/tile/2/4/0.pbf", 404}, {"/tile/2/0/-1.pbf", 400}, {"/tile/+2/0/0.pbf", 400},
		{"/nosuch", 404}, {"/resources/sprites/sprite@3x.png", 404},
	} {
		resp, body := f.get(vts + c.path)
		var e struct{ Error struct{ Code int } }
		if resp.StatusCode != c.status || json.Unmarshal(body, &e) != nil || e.Error.Code != c.status {
			t.Errorf("%s: %s %.200q, want %d and an ArcGIS error", c.path, resp.Status, body, c.status)
		}
	}
	if resp, _ := f.get("/arcgis/rest/services/nosuch/VectorTileServer/tile/0/0/0.pbf"); resp.StatusCode != 404 {
		t.Errorf("no such service: %s", resp.Status)
	}
}

// TestMemory: a tile built on demand runs through Params.Run once, and is then served from the
// memory, the same bytes and ETag.
func TestMemory(t *testing.T) {
	var builds atomic.Int32
	f := newFixtureRun(t, mvt.Options{Gzip: true}, nil, func(build func()) { builds.Add(1); build() })
	a, ra := f.tile(t, 3, 2, 4)
	b, rb := f.tile(t, 3, 2, 4)
	if n := builds.Load(); n != 1 || !bytes.Equal(a, b) || ra.Header.Get("Etag") != rb.Header.Get("Etag") {
		t.Errorf("%d builds for two requests of a tile (want 1); same bytes %v, ETags %q %q", n, bytes.Equal(a, b), ra.Header.Get("Etag"), rb.Header.Get("Etag"))
	}
	f.tile(t, 3, 2, 5)
	if n := builds.Load(); n != 2 {
		t.Errorf("%d builds after another tile, want 2", n)
	}
}

// TestForgetTiles: a message of the invalidation channel naming a tile of the default map's
// vector cache root drops it from the memory (it is built again); messages of other tiles, of
// the raster cache root, or of another map keep it.
func TestForgetTiles(t *testing.T) {
	var builds atomic.Int32
	f := newFixtureRun(t, mvt.Options{Gzip: true}, nil, func(build func()) { builds.Add(1); build() })
	f.tile(t, 3, 2, 4)
	at := func(z, y, x int) []tilecache.TileRange {
		return []tilecache.TileRange{{Level: z, MinRow: y, MaxRow: y, MinCol: x, MaxCol: x}}
	}
	for _, v := range []refresh.Invalidation{
		{Root: "arcgiscache/world/Layers_vector", Folders: []string{tilecache.FusedLayer}, Ranges: at(3, 2, 5)},
		{Root: "arcgiscache/world/Layers_vector", Folders: []string{tilecache.FusedLayer}, Ranges: at(4, 2, 4)},
		{Root: "arcgiscache/world/Layers", Ranges: at(3, 2, 4)},
		{Root: "arcgiscache/world/Other_vector", Ranges: at(3, 2, 4)},
		{Root: "arcgiscache/nosuch/Layers_vector", Ranges: at(3, 2, 4)},
	} {
		f.h.ForgetTiles(v)
		f.tile(t, 3, 2, 4)
		if n := builds.Load(); n != 1 {
			t.Fatalf("tile 3/2/4 built again after %+v", v)
		}
	}
	f.h.ForgetTiles(refresh.Invalidation{Root: "arcgiscache/world/Layers_vector", Folders: []string{tilecache.FusedLayer}, Ranges: at(3, 2, 4)})
	f.tile(t, 3, 2, 4)
	if n := builds.Load(); n != 2 {
		t.Fatalf("%d builds: tile 3/2/4 was not dropped by a message naming it", n)
	}
}

// TestThinned: a tile past the feature limit says so in its header.
func TestThinned(t *testing.T) {
	f := newFixture(t, mvt.Options{Gzip: true, MaxFeatures: 5}, nil)
	plain, resp := f.tile(t, 0, 0, 0)
	if _, st := mvtcheck.Check(plain, mvtcheck.Options{}); resp.Header.Get(vectortileserver.ThinnedHeader) != "5" || st.Features["Countries"] != 5 {
		t.Errorf("thinned tile: header %q, %d features", resp.Header.Get(vectortileserver.ThinnedHeader), st.Features["Countries"])
	}
	_, resp = f.tile(t, 14, 6000, 8000)
	if h := resp.Header.Get(vectortileserver.ThinnedHeader); h != "" {
		t.Errorf("a tile under the limit says it is thinned: %q", h)
	}
}

// seeded is a seeded cache holding one tile.
type seeded struct{ data []byte }

func (s seeded) VectorTile(_ context.Context, service, mapName string, z, y, x int) ([]byte, bool, error) {
	if service == "world" && mapName == "Layers" && z == 1 && y == 0 && x == 1 {
		return s.data, true, nil
	}
	return nil, false, nil
}

// TestSeeded: a tile a seeded cache holds is served from it (gzipped when stored plain); the
// others are built.
func TestSeeded(t *testing.T) {
	b, err := vectortile.New(vectortile.Params{Services: catalogtest.Samples(t), Options: mvt.Options{MaxFeatures: 3}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.WebMercatorTile(context.Background(), "world", "", 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, mvt.Options{Gzip: true}, seeded{data: res.Data})
	if plain, _ := f.tile(t, 1, 0, 1); !bytes.Equal(plain, res.Data) {
		t.Errorf("tile 1/0/1: %d bytes, not the %d seeded", len(plain), len(res.Data))
	}
	if plain, _ := f.tile(t, 1, 0, 0); bytes.Equal(plain, res.Data) {
		t.Error("tile 1/0/0 is the seeded 1/0/1")
	}
}

// TestStoreCaches: a tile stored in a map's vector cache, compact-V2 bundles under
// arcgiscache/<service>/<map>_vector as seeding writes them, is read back; other tiles are not
// there.
func TestStoreCaches(t *testing.T) {
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := tilecache.New(store, tilecache.Options{Root: "arcgiscache/world/Layers" + vectortileserver.VectorCacheSuffix, TileFormat: "PNG"})
	if err != nil {
		t.Fatal(err)
	}
	tl := tilecache.Tile{Level: 3, Row: 2, Col: 4}
	w, err := c.NewBundleWriter(tilecache.BundleOf(tl))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Put(tl, []byte("seeded tile")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sc := vectortileserver.NewStoreCaches(store, nil)
	if data, ok, err := sc.VectorTile(context.Background(), "world", "Layers", 3, 2, 4); err != nil || !ok || string(data) != "seeded tile" {
		t.Errorf("stored tile: %q, %v, %v", data, ok, err)
	}
	for _, c := range [][3]int{{3, 2, 5}, {4, 0, 0}} {
		if _, ok, err := sc.VectorTile(context.Background(), "world", "Layers", c[0], c[1], c[2]); ok || err != nil {
			t.Errorf("tile %v: found %v, %v", c, ok, err)
		}
	}
	if _, ok, err := sc.VectorTile(context.Background(), "usa", "Layers", 3, 2, 4); ok || err != nil {
		t.Errorf("a map without a vector cache: found %v, %v", ok, err)
	}
}

// TestResources: the style, a glyph range and the sprites answer, and say what clients read.
func TestResources(t *testing.T) {
	f := newFixture(t, mvt.Options{Gzip: true}, nil)
	for _, p := range []string{vts + "/resources/styles", vts + "/resources/styles/root.json?f=json"} {
		st := f.getJSON(t, p)
		src := st["sources"].(map[string]any)["esri"].(map[string]any)
		if st["version"] != 8.0 || fmt.Sprint(src["tiles"]) != "["+publicURL+vts+"/tile/{z}/{y}/{x}.pbf]" ||
			st["glyphs"] != publicURL+vts+"/resources/fonts/{fontstack}/{range}.pbf" || st["sprite"] != publicURL+vts+"/resources/sprites/sprite" {
			t.Fatalf("%s: %v", p, st)
		}
		var ids []string
		for _, l := range st["layers"].([]any) {
			ids = append(ids, l.(map[string]any)["id"].(string))
		}
		if fmt.Sprint(ids) != "[background Countries/fill Countries/outline Countries/label/0]" {
			t.Errorf("style layers %q", ids)
		}
	}
	// With a token parameter, the URLs the style and the TileJSON name carry it.
	st := f.getJSON(t, vts+"/resources/styles/root.json?token=a%2Bb")
	src := st["sources"].(map[string]any)["esri"].(map[string]any)
	tj := f.getJSON(t, vts+"/tiles.json?token=a%2Bb")
	if fmt.Sprint(src["tiles"]) != "["+publicURL+vts+"/tile/{z}/{y}/{x}.pbf?token=a%2Bb]" || !strings.HasSuffix(st["glyphs"].(string), ".pbf?token=a%2Bb") ||
		!strings.HasSuffix(st["sprite"].(string), "/sprite?token=a%2Bb") || fmt.Sprint(tj["tiles"]) != fmt.Sprint(src["tiles"]) {
		t.Errorf("with a token: style tiles %v, glyphs %v, sprite %v; TileJSON tiles %v", src["tiles"], st["glyphs"], st["sprite"], tj["tiles"])
	}
	if st := f.getJSON(t, vts+"/resources/styles/root.json"); strings.Contains(st["glyphs"].(string), "token") {
		t.Errorf("a token kept for the next request: %v", st["glyphs"])
	}
	resp, body := f.get(vts + "/resources/fonts/DejaVu%20Sans%20Book/0-255.pbf")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-protobuf" || len(body) < 10000 {
		t.Errorf("glyphs: %s %q, %d bytes", resp.Status, resp.Header.Get("Content-Type"), len(body))
	}
	if resp, _ := f.get(vts + "/resources/fonts/DejaVu%20Sans%20Book/1-255.pbf"); resp.StatusCode != 400 {
		t.Errorf("a bad range: %s", resp.Status)
	}
	for _, name := range []string{"sprite", "sprite@2x"} {
		if v := f.getJSON(t, vts+"/resources/sprites/"+name+".json"); v == nil {
			t.Errorf("%s.json: null", name)
		}
		resp, body := f.get(vts + "/resources/sprites/" + name + ".png")
		if _, err := png.Decode(bytes.NewReader(body)); resp.StatusCode != 200 || err != nil {
			t.Errorf("%s.png: %s, %v", name, resp.Status, err)
		}
	}
}

// TestGDALCount: GDAL's MVT driver reads a served tile, and at a zoom where nothing is simplified
// away its feature count is the provider's count of countries over the tile and its buffer.
func TestGDALCount(t *testing.T) {
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatal("ogrinfo (gdal-bin) is not installed")
		}
		t.Skip("ogrinfo (gdal-bin) is not installed")
	}
	f := newFixture(t, mvt.Options{Gzip: true}, nil)
	const z, y, x = 7, 45, 67 // over the Alps: Switzerland, Liechtenstein, Austria, Italy
	plain, _ := f.tile(t, z, y, x)
	dir := filepath.Join(t.TempDir(), strconv.Itoa(z), strconv.Itoa(x))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, strconv.Itoa(y)+".pbf")
	if err := os.WriteFile(path, plain, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ogrinfo", "-ro", "-so", "-al", "-oo", "CLIP=NO", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^Layer name: Countries$\n(?:.*\n)*?Feature Count: (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("ogrinfo found no Countries layer:\n%s", out)
	}
	got, _ := strconv.Atoi(string(m[1]))

	svc, _ := f.cat.Service("world")
	l, _ := svc.DefaultMap().Layer(1)
	tb, err := tilecache.WebMercator().TileBounds(tilecache.Tile{Level: z, Row: y, Col: x})
	if err != nil {
		t.Fatal(err)
	}
	pad := (tb.Max[0] - tb.Min[0]) * mvt.DefaultBuffer / mvt.DefaultExtent
	q := orb.Bound{Min: orb.Point{tb.Min[0] - pad, tb.Min[1] - pad}, Max: orb.Point{tb.Max[0] + pad, tb.Max[1] + pad}}
	want, err := l.Data.Count(context.Background(), &feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: q}})
	if err != nil {
		t.Fatal(err)
	}
	if got != want || want < 3 {
		t.Errorf("tile %d/%d/%d: GDAL reads %d countries, the provider counts %d over the tile", z, y, x, got, want)
	}
}
