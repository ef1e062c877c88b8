package ogcapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/ogcapi"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/render/rendertest"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// maxRecords is the farm's record limit: a page of items holds at most this many.
const maxRecords = 100

// newFarmAt is the OGC APIs and the REST API on one composed server over the sample catalog,
// drawing in process with the worker's own drawing, its links under publicURL; REST (query,
// export) is the oracle.
func newFarmAt(t testing.TB, publicURL string) http.Handler {
	t.Helper()
	return newFarmWith(t, publicURL, maxRecords)
}

// shared is what every farm of the package shares, opened once by TestMain: the sample catalog
// and the renderer.
var shared struct {
	cat *catalog.Catalog
	r   *render.Renderer
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	cfg, err := servicedef.Load(samplesPath(), providers.Registry())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if shared.cat, err = catalog.Open(context.Background(), cfg, providers.Registry()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer shared.cat.Close()
	if shared.r, err = render.NewRenderer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// samplesPath is services/services.yaml at the module's root (as catalogtest.SamplesPath finds
// it, without a test to fail).
func samplesPath() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "services", "services.yaml")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "services/services.yaml"
		}
		dir = parent
	}
}

// newFarmWith is newFarmAt with the record limit maxRecords; opts change the handler's Params.
func newFarmWith(t testing.TB, publicURL string, maxRecords int, opts ...func(*ogcapi.Params)) http.Handler {
	t.Helper()
	c, r := shared.cat, shared.r
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: maxRecords, MaxImageWidth: 4096, MaxImageHeight: 4096},
		Exporter: &mapservertest.LocalFarm{Cat: c, R: r}, NewID: mapservertest.NewIDs(), OutputURL: func(key string) string { return publicURL + "/arcgis/" + key }})
	mux := http.NewServeMux()
	p := ogcapi.Params{Server: ops, PublicURL: publicURL, MaxRecordCount: maxRecords}
	for _, o := range opts {
		o(&p)
	}
	h := ogcapi.New(p)
	mux.Handle("/ogc", h)
	mux.Handle("/ogc/", h)
	mux.Handle("/arcgis/rest/", rest.New(rest.Params{Ops: ops, Services: c, PublicURL: publicURL, MaxRecordCount: 5000}))
	return mux
}

const farmURL = "http://farm.test"

// get answers target (a path, or a URL of farmURL), with the Accept header when given.
func get(t testing.TB, h http.Handler, target string, accept ...string) (*http.Response, []byte) {
	t.Helper()
	target = strings.TrimPrefix(target, farmURL)
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if len(accept) > 0 {
		req.Header.Set("Accept", accept[0])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// getJSON answers target, which must be 200 JSON, decoded into v.
func getJSON(t testing.TB, h http.Handler, target string, v any) *http.Response {
	t.Helper()
	resp, b := get(t, h, target)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %.300s", target, err, b)
	}
	return resp
}

type link struct {
	Href, Rel, Type string
	Templated       bool
}

func find(links []link, rel, typ string) (link, bool) {
	for _, l := range links {
		if l.Rel == rel && (typ == "" || l.Type == typ) {
			return l, true
		}
	}
	return link{}, false
}

// The landing page links what Common, Features, Maps and Tiles require, by their relations;
// the conformance declaration names the classes; /ogc lists the services.
func TestLandingPage(t *testing.T) {
	f := newFarmAt(t, farmURL)
	var landing struct {
		Title string
		Links []link
	}
	getJSON(t, f, "/ogc/world", &landing)
	if landing.Title != "World countries" {
		t.Errorf("title %q", landing.Title)
	}
	for _, want := range []struct{ rel, typ, href string }{
		{"self", "application/json", farmURL + "/ogc/world?f=json"},
		{"alternate", "text/html", farmURL + "/ogc/world?f=html"},
		{"service-desc", "application/vnd.oai.openapi+json;version=3.0", farmURL + "/ogc/world/api"},
		{"conformance", "application/json", farmURL + "/ogc/world/conformance"},
		{"data", "application/json", farmURL + "/ogc/world/collections"},
		{"http://www.opengis.net/def/rel/ogc/1.0/map", "image/png", farmURL + "/ogc/world/map"},
		{"http://www.opengis.net/def/rel/ogc/1.0/tilesets-map", "application/json", farmURL + "/ogc/world/map/tiles"},
		{"http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes", "application/json", farmURL + "/ogc/world/tileMatrixSets"},
	} {
		if l, ok := find(landing.Links, want.rel, want.typ); !ok || l.Href != want.href {
			t.Errorf("link %s %s: %+v, want %s", want.rel, want.typ, l, want.href)
		}
	}
	var conf struct{ ConformsTo []string }
	getJSON(t, f, "/ogc/world/conformance", &conf)
	for _, c := range []string{"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core", "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs", "http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset"} {
		if !contains(conf.ConformsTo, c) {
			t.Errorf("conformance lacks %s", c)
		}
	}
	var root struct{ Links []link }
	getJSON(t, f, "/ogc", &root)
	var children []string
	for _, l := range root.Links {
		if l.Rel == "child" {
			children = append(children, l.Href)
		}
	}
	if !contains(children, farmURL+"/ogc/world") || !contains(children, farmURL+"/ogc/usa") {
		t.Errorf("/ogc lists %v", children)
	}
	var api struct {
		OpenAPI string
		Paths   map[string]any
	}
	resp := getJSON(t, f, "/ogc/world/api", &api)
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.oai.openapi+json;version=3.0" || !strings.HasPrefix(api.OpenAPI, "3.0") {
		t.Errorf("api: %s %q", ct, api.OpenAPI)
	}
	if _, ok := api.Paths["/collections/1/items"]; !ok {
		t.Errorf("the API definition has no items path of collection 1")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// f=html and an Accept of text/html answer HTML; Accept of JSON, or none, JSON; an f the
// resource does not offer is a 400.
func TestNegotiation(t *testing.T) {
	f := newFarmAt(t, farmURL)
	for _, c := range []struct{ target, accept, want string }{
		{"/ogc/world/collections?f=html", "", "text/html; charset=utf-8"},
		{"/ogc/world/collections", "text/html,application/xhtml+xml,*/*;q=0.8", "text/html; charset=utf-8"},
		{"/ogc/world/collections", "application/json", "application/json"},
		{"/ogc/world/collections", "", "application/json"},
		{"/ogc/world/collections/1/items?limit=2", "application/geo+json, application/json", "application/geo+json"},
		{"/ogc/world/collections/1/items?limit=2&f=html", "", "text/html; charset=utf-8"},
	} {
		resp, b := get(t, f, c.target, c.accept)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.want {
			t.Errorf("%s (Accept %q): %d %s, want %s", c.target, c.accept, resp.StatusCode, resp.Header.Get("Content-Type"), c.want)
		}
		if strings.HasPrefix(c.want, "text/html") && !bytes.Contains(b, []byte("<h1>")) {
			t.Errorf("%s: not a page: %.200s", c.target, b)
		}
	}
	if resp, b := get(t, f, "/ogc/world/collections?f=xml"); resp.StatusCode != 400 || !bytes.Contains(b, []byte(`"code"`)) {
		t.Errorf("f=xml: %d %s", resp.StatusCode, b)
	}
}

// /collections has one collection per layer of the map, named by its layer id, with its extent
// in CRS84 and the links to its items, map and tilesets.
func TestCollections(t *testing.T) {
	f := newFarmAt(t, farmURL)
	type collection struct {
		ID, Title, ItemType string
		Extent              struct{ Spatial struct{ BBox [][]float64 } }
		CRS                 []string
		Links               []link
	}
	var cs struct{ Collections []collection }
	getJSON(t, f, "/ogc/world/collections", &cs)
	if len(cs.Collections) != 2 || cs.Collections[0].ID != "0" || cs.Collections[1].ID != "1" || cs.Collections[1].Title != "Countries" {
		t.Fatalf("collections %+v", cs.Collections)
	}
	var c collection
	getJSON(t, f, "/ogc/world/collections/1", &c)
	b := c.Extent.Spatial.BBox
	if len(b) != 1 || b[0][0] > -170 || b[0][2] < 170 || b[0][1] > -50 || b[0][3] < 70 || b[0][3] > 90 {
		t.Errorf("extent %v, want the world in longitude and latitude", b)
	}
	if c.ItemType != "feature" || !contains(c.CRS, "http://www.opengis.net/def/crs/OGC/1.3/CRS84") || !contains(c.CRS, "http://www.opengis.net/def/crs/EPSG/0/3857") {
		t.Errorf("itemType %q, crs %v", c.ItemType, c.CRS)
	}
	if l, ok := find(c.Links, "items", "application/geo+json"); !ok || l.Href != farmURL+"/ogc/world/collections/1/items" {
		t.Errorf("items link %+v", l)
	}
	if resp, _ := get(t, f, "/ogc/world/collections/7"); resp.StatusCode != 404 {
		t.Errorf("collection 7: %d", resp.StatusCode)
	}
	if resp, _ := get(t, f, "/ogc/nosuch/collections"); resp.StatusCode != 404 {
		t.Errorf("service nosuch: %d", resp.StatusCode)
	}
}

type featureCollection struct {
	Type           string
	NumberMatched  int
	NumberReturned int
	Links          []link
	Features       []feature
}

type feature struct {
	Type     string
	ID       any
	Geometry struct {
		Type        string
		Coordinates json.RawMessage
	}
	Properties map[string]any
}

// restCount is the number of features of a layer that match where, as REST's query counts them.
func restCount(t testing.TB, h http.Handler, service string, layer int, where string) int {
	var v struct{ Count int }
	getJSON(t, h, "/arcgis/rest/services/"+service+"/MapServer/"+strconv.Itoa(layer)+"/query?returnCountOnly=true&f=json&where="+where, &v)
	return v.Count
}

// Paging through a collection (the country points) by its next links reads every feature once: numberMatched is
// the layer's count, each page has limit features (the last the rest), and the ids are
// distinct.
func TestItemsPaging(t *testing.T) {
	f := newFarmAt(t, farmURL)
	want := restCount(t, f, "world", 0, "1%3D1")
	if want < 200 {
		t.Fatalf("the sample has %d countries", want)
	}
	seen := map[string]bool{}
	next := "/ogc/world/collections/0/items?limit=70"
	pages := 0
	for next != "" {
		var fc featureCollection
		resp := getJSON(t, f, next, &fc)
		if resp.Header.Get("Content-Type") != "application/geo+json" || fc.Type != "FeatureCollection" || fc.NumberMatched != want || fc.NumberReturned != len(fc.Features) {
			t.Fatalf("%s: %s, type %q, matched %d (want %d), returned %d of %d", next, resp.Header.Get("Content-Type"), fc.Type, fc.NumberMatched, want, fc.NumberReturned, len(fc.Features))
		}
		if len(fc.Features) != min(70, want-70*pages) {
			t.Fatalf("page %d has %d features", pages, len(fc.Features))
		}
		for _, ft := range fc.Features {
			id := string(mustJSON(t, ft.ID))
			if seen[id] {
				t.Fatalf("feature %s twice", id)
			}
			seen[id] = true
			if ft.Geometry.Type != "Point" {
				t.Fatalf("feature %s: geometry %q", id, ft.Geometry.Type)
			}
		}
		pages++
		l, ok := find(fc.Links, "next", "application/geo+json")
		next = ""
		if ok {
			next = l.Href
		}
	}
	if len(seen) != want || pages != (want+69)/70 {
		t.Errorf("read %d features in %d pages, want %d", len(seen), pages, want)
	}
	// A limit over the record limit is the record limit (Features Part 1 §7.15.3), not an error.
	var fc featureCollection
	getJSON(t, f, "/ogc/world/collections/0/items?limit=100000", &fc)
	if len(fc.Features) != maxRecords {
		t.Errorf("limit=100000 answered %d features, want %d", len(fc.Features), maxRecords)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A property filter (NAME=Brazil), a bbox and the crs parameter select and write what they
// say; an unknown parameter is a 400.
func TestItemsFilters(t *testing.T) {
	f := newFarmAt(t, farmURL)
	var fc featureCollection
	getJSON(t, f, "/ogc/world/collections/1/items?NAME=Brazil", &fc)
	if fc.NumberMatched != 1 || len(fc.Features) != 1 || fc.Features[0].Properties["NAME"] != "Brazil" {
		t.Fatalf("NAME=Brazil: %d matched: %+v", fc.NumberMatched, fc.Features)
	}
	brazil := fc.Features[0]
	// A box inside Brazil, in CRS84: Brazil among the few it meets.
	getJSON(t, f, "/ogc/world/collections/1/items?bbox=-55,-15,-50,-10&limit=50", &fc)
	var names []string
	for _, ft := range fc.Features {
		names = append(names, ft.Properties["NAME"].(string))
	}
	if !contains(names, "Brazil") || len(names) > 3 {
		t.Errorf("bbox in Brazil: %v", names)
	}
	// The same box in EPSG:4326, latitude first.
	getJSON(t, f, "/ogc/world/collections/1/items?bbox=-15,-55,-10,-50&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/4326&limit=50", &fc)
	if len(fc.Features) != len(names) {
		t.Errorf("bbox in EPSG:4326 latitude first: %d features, want %d", len(fc.Features), len(names))
	}
	// The geometry in CRS84 (longitude first), in EPSG:4326 (latitude first), in EPSG:3857.
	first := func(raw json.RawMessage) [2]float64 {
		var mp [][][][2]float64
		if err := json.Unmarshal(raw, &mp); err != nil {
			t.Fatalf("coordinates: %v", err)
		}
		return mp[0][0][0]
	}
	lonLat := first(brazil.Geometry.Coordinates)
	if lonLat[0] > -30 || lonLat[0] < -75 || lonLat[1] > 6 || lonLat[1] < -35 {
		t.Errorf("Brazil's first point %v is not longitude, latitude", lonLat)
	}
	resp := getJSON(t, f, "/ogc/world/collections/1/items?NAME=Brazil&crs=http://www.opengis.net/def/crs/EPSG/0/4326", &fc)
	if got := first(fc.Features[0].Geometry.Coordinates); math.Abs(got[0]-lonLat[1]) > 1e-6 || math.Abs(got[1]-lonLat[0]) > 1e-6 {
		t.Errorf("EPSG:4326: first point %v, want %v swapped", got, lonLat)
	}
	if resp.Header.Get("Content-Crs") != "<http://www.opengis.net/def/crs/EPSG/0/4326>" {
		t.Errorf("Content-Crs %q", resp.Header.Get("Content-Crs"))
	}
	getJSON(t, f, "/ogc/world/collections/1/items?NAME=Brazil&crs=http://www.opengis.net/def/crs/EPSG/0/3857", &fc)
	if got := first(fc.Features[0].Geometry.Coordinates); math.Abs(got[0]) < 1e6 {
		t.Errorf("EPSG:3857: first point %v is not in metres", got)
	}
	for _, bad := range []string{"?foo=1", "?limit=0", "?limit=x", "?bbox=1,2,3", "?crs=http://www.opengis.net/def/crs/EPSG/0/9999", "?fid=abc", "?bbox-crs=http://www.opengis.net/def/crs/EPSG/0/4326"} {
		resp, b := get(t, f, "/ogc/world/collections/1/items"+bad)
		var e struct{ Code, Description string }
		if resp.StatusCode != 400 || json.Unmarshal(b, &e) != nil || e.Code == "" {
			t.Errorf("items%s: %d %s, want a 400 exception", bad, resp.StatusCode, b)
		}
	}
}

// A single item is the feature of that object id, with the same properties as in a page; an id
// no feature has is a 404.
func TestItem(t *testing.T) {
	f := newFarmAt(t, farmURL)
	var fc featureCollection
	getJSON(t, f, "/ogc/world/collections/1/items?NAME=France", &fc)
	if len(fc.Features) != 1 {
		t.Fatalf("NAME=France: %d features", len(fc.Features))
	}
	id := string(mustJSON(t, fc.Features[0].ID))
	var ft feature
	resp := getJSON(t, f, "/ogc/world/collections/1/items/"+id, &ft)
	if resp.Header.Get("Content-Type") != "application/geo+json" || ft.Type != "Feature" || string(mustJSON(t, ft.ID)) != id || ft.Properties["NAME"] != "France" {
		t.Errorf("item %s: %s %+v", id, resp.Header.Get("Content-Type"), ft)
	}
	for _, missing := range []string{"999999", "x", "01"} {
		if resp, _ := get(t, f, "/ogc/world/collections/1/items/"+missing); resp.StatusCode != 404 {
			t.Errorf("item %s: %d", missing, resp.StatusCode)
		}
	}
}

func decodePNG(t testing.TB, h http.Handler, target string) image.Image {
	t.Helper()
	resp, b := get(t, h, target)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("GET %s: %v (%s)", target, err, resp.Header.Get("Content-Type"))
	}
	return img
}

// A map of the dataset and of a collection is the picture REST export (ExportMapImage) draws of
// the same extent, size, system and layers; a bbox in EPSG:4326 is read latitude first.
func TestMapIsExport(t *testing.T) {
	f := newFarmAt(t, farmURL)
	for _, c := range []struct{ ogc, export string }{
		{"/ogc/world/map?bbox=-20000000,-10000000,20000000,10000000&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/3857&width=400&height=200",
			"/arcgis/rest/services/world/MapServer/export?bbox=-20000000,-10000000,20000000,10000000&bboxSR=3857&size=400,200&format=png32&f=image"},
		{"/ogc/world/collections/0/map?bbox=-20,30,40,60&crs=http://www.opengis.net/def/crs/EPSG/0/4326&width=300&height=150",
			"/arcgis/rest/services/world/MapServer/export?bbox=-20,30,40,60&bboxSR=4326&imageSR=4326&size=300,150&format=png32&layers=show:0&f=image"},
		{"/ogc/world_geographic/map?bbox=30,-20,60,40&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/4326&width=300&height=150",
			"/arcgis/rest/services/world_geographic/MapServer/export?bbox=-20,30,40,60&bboxSR=4326&size=300,150&format=png32&f=image"},
	} {
		got := decodePNG(t, f, c.ogc)
		want := decodePNG(t, f, c.export)
		if n := rendertest.Differing(t, got, want); n != 0 {
			t.Errorf("%s: %d pixels differ from export's", c.ogc, n)
		}
	}
	// A 2:1 box drawn 1:1 is widened about its centre, and Content-Bbox says so.
	resp, _ := get(t, f, "/ogc/world/map?bbox=-2000000,-1000000,2000000,1000000&bbox-crs=http://www.opengis.net/def/crs/EPSG/0/3857&width=100&height=100")
	if got := resp.Header.Get("Content-Bbox"); got != "-2000000,-2000000,2000000,2000000" || resp.Header.Get("Content-Crs") != "<http://www.opengis.net/def/crs/EPSG/0/3857>" {
		t.Errorf("Content-Bbox %q, Content-Crs %q", got, resp.Header.Get("Content-Crs"))
	}
	// Only a width: the height follows the extent's aspect.
	img := decodePNG(t, f, "/ogc/world/map?bbox=-40,-20,40,20&width=200")
	if b := img.Bounds(); b.Dx() != 200 || b.Dy() < 90 || b.Dy() > 110 {
		t.Errorf("width=200 of a 2:1 box in Web Mercator: %v", b)
	}
	for _, bad := range []string{"?width=5000", "?bbox=1,2", "?crs=http://www.opengis.net/def/crs/EPSG/0/9999", "?f=gif"} {
		if resp, b := get(t, f, "/ogc/world/map"+bad); resp.StatusCode != 400 {
			t.Errorf("map%s: %d %s", bad, resp.StatusCode, b)
		}
	}
}

// The tilesets name WebMercatorQuad with a tile URL template; a tile is the 256 × 256 picture
// export draws of its extent; a tile outside the matrix is a 404.
func TestTiles(t *testing.T) {
	f := newFarmAt(t, farmURL)
	var sets struct {
		Tilesets []struct {
			DataType, TileMatrixSetURI string
			Links                      []link
		}
	}
	getJSON(t, f, "/ogc/world/map/tiles", &sets)
	if len(sets.Tilesets) != 1 || sets.Tilesets[0].DataType != "map" || sets.Tilesets[0].TileMatrixSetURI != "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad" {
		t.Fatalf("tilesets %+v", sets.Tilesets)
	}
	self, _ := find(sets.Tilesets[0].Links, "self", "application/json")
	var ts struct {
		Links               []link
		TileMatrixSetLimits []struct{ TileMatrix string }
	}
	getJSON(t, f, self.Href, &ts)
	item, ok := find(ts.Links, "item", "image/png")
	if !ok || !item.Templated || !strings.Contains(item.Href, "{tileMatrix}/{tileRow}/{tileCol}") || len(ts.TileMatrixSetLimits) == 0 {
		t.Fatalf("tileset links %+v, limits %d", ts.Links, len(ts.TileMatrixSetLimits))
	}
	scheme, _ := find(ts.Links, "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme", "application/json")
	var tms struct {
		ID, CRS      string
		TileMatrices []struct {
			ID            string
			PointOfOrigin [2]float64
			MatrixWidth   int
		}
	}
	getJSON(t, f, scheme.Href, &tms)
	if tms.ID != "WebMercatorQuad" || len(tms.TileMatrices) != 25 || tms.TileMatrices[3].MatrixWidth != 8 || tms.TileMatrices[0].PointOfOrigin[0] > -2e7 {
		t.Errorf("tile matrix set %s %s, %d matrices", tms.ID, tms.CRS, len(tms.TileMatrices))
	}
	tileURL := strings.NewReplacer("{tileMatrix}", "1", "{tileRow}", "0", "{tileCol}", "1").Replace(item.Href)
	tile := decodePNG(t, f, tileURL)
	want := decodePNG(t, f, "/arcgis/rest/services/world/MapServer/export?bbox=0,0,20037508.3427892,20037508.3427892&bboxSR=3857&size=256,256&format=png32&f=image")
	if n := rendertest.Differing(t, tile, want); n != 0 {
		t.Errorf("tile 1/0/1: %d pixels differ from export's of its extent", n)
	}
	for _, missing := range []string{"/1/2/0", "/1/0/2", "/25/0/0", "/x/0/0"} {
		if resp, _ := get(t, f, "/ogc/world/map/tiles/WebMercatorQuad"+missing); resp.StatusCode != 404 && resp.StatusCode != 400 {
			t.Errorf("tile %s: %d", missing, resp.StatusCode)
		}
	}
	// A collection's tile draws that layer alone.
	layer := decodePNG(t, f, "/ogc/world/collections/0/map/tiles/WebMercatorQuad/1/0/1")
	if rendertest.Differing(t, layer, tile) == 0 {
		t.Error("collection 0's tile is the map's")
	}
}

// fakeVectorTiles builds "tiles" that name their z/x/y.
type fakeVectorTiles struct{}

func (fakeVectorTiles) WebMercatorTile(_ context.Context, service, mapName string, z, x, y int) (*mvt.Result, error) {
	return &mvt.Result{Data: []byte(service + "/" + mapName + " " + strconv.Itoa(z) + "/" + strconv.Itoa(x) + "/" + strconv.Itoa(y))}, nil
}

func (fakeVectorTiles) MaxZoom() int { return 5 }

// With a vector tile builder, the landing page links the vector tilesets, the conformance
// declares mvt, the tileset's item link is a template of Mapbox vector tiles, and a tile is the
// builder's tile of that z/x/y (row y, column x); past its last zoom a tile is a 404.
func TestVectorTiles(t *testing.T) {
	built := 0
	f := newFarmWith(t, farmURL, maxRecords, func(p *ogcapi.Params) {
		p.VectorTiles = fakeVectorTiles{}
		p.TileBuild = func(build func()) { built++; build() }
	})
	var landing struct{ Links []link }
	getJSON(t, f, "/ogc/world", &landing)
	l, ok := find(landing.Links, "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector", "application/json")
	if !ok {
		t.Fatalf("no tilesets-vector link: %+v", landing.Links)
	}
	var sets struct {
		Tilesets []struct {
			DataType string
			Links    []link
		}
	}
	getJSON(t, f, l.Href, &sets)
	if len(sets.Tilesets) != 1 || sets.Tilesets[0].DataType != "vector" {
		t.Fatalf("vector tilesets %+v", sets)
	}
	self, _ := find(sets.Tilesets[0].Links, "self", "application/json")
	var ts struct {
		Links  []link
		Layers []struct{ ID string }
	}
	getJSON(t, f, self.Href, &ts)
	item, ok := find(ts.Links, "item", "application/vnd.mapbox-vector-tile")
	if !ok || len(ts.Layers) != 2 {
		t.Fatalf("vector tileset links %+v, layers %+v", ts.Links, ts.Layers)
	}
	resp, b := get(t, f, strings.NewReplacer("{tileMatrix}", "2", "{tileRow}", "1", "{tileCol}", "3").Replace(item.Href))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.mapbox-vector-tile" || string(b) != "world/Layers 2/3/1" {
		t.Errorf("tile 2/1/3: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if built != 1 {
		t.Errorf("%d builds ran through TileBuild, want 1", built)
	}
	if resp, _ := get(t, f, "/ogc/world/tiles/WebMercatorQuad/6/0/0"); resp.StatusCode != 404 {
		t.Errorf("tile past the last zoom: %d", resp.StatusCode)
	}
	var conf struct{ ConformsTo []string }
	getJSON(t, f, "/ogc/world/conformance", &conf)
	if !contains(conf.ConformsTo, "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt") {
		t.Error("conformance lacks mvt")
	}
	// Without a builder there are none.
	if resp, _ := get(t, newFarmAt(t, farmURL), "/ogc/world/tiles"); resp.StatusCode != 404 {
		t.Errorf("/tiles without vector tiles: %d", resp.StatusCode)
	}
}

// With the farm's vector tile builder (internal/vectortile), the tile at row 0, column 1 of
// level 1 is a valid, gzip-encoded Mapbox vector tile with countries in it, the bytes the
// builder makes of z 1, x 1, y 0.
func TestVectorTilesBuilt(t *testing.T) {
	b, err := vectortile.New(vectortile.Params{Services: shared.cat, Options: mvt.Options{Gzip: true}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFarmWith(t, farmURL, maxRecords, func(p *ogcapi.Params) { p.VectorTiles = b })
	resp, body := get(t, f, "/ogc/world/tiles/WebMercatorQuad/1/0/1")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("tile 1/0/1: %d, Content-Encoding %q: %.200s", resp.StatusCode, resp.Header.Get("Content-Encoding"), body)
	}
	problems, stats := mvtcheck.Check(body, mvtcheck.Options{})
	if len(problems) > 0 || stats.Features["Countries"] == 0 {
		t.Errorf("tile 1/0/1: %v, %+v", problems, stats)
	}
	want, err := b.WebMercatorTile(context.Background(), "world", "", 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want.Data) {
		t.Error("tile 1/0/1 is not the builder's tile of z 1, x 1, y 0")
	}
}
