package rest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/rest"
)

// newHandler is the REST handler on the sample catalog.
func newHandler(t testing.TB) http.Handler {
	t.Helper()
	c := catalogtest.Samples(t)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096}})
	return rest.New(rest.Params{Ops: ops, Services: c, PublicURL: "http://farm.test", MaxRecordCount: 1000})
}

// get sends a GET and returns the status and body.
func get(t testing.TB, h http.Handler, target string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, body
}

// getJSON sends a GET that must answer 200 with JSON and decodes it.
func getJSON(t testing.TB, h http.Handler, target string) map[string]any {
	t.Helper()
	code, body := get(t, h, target)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, code, body)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v in %.300s", target, err, body)
	}
	return v
}

// The catalog lists every service of the sample catalog, in f=json and f=pjson alike; a folder
// that does not exist is ArcGIS's error (HTTP 200, the code in the body).
func TestCatalog(t *testing.T) {
	h := newHandler(t)
	for _, f := range []string{"json", "pjson"} {
		v := getJSON(t, h, "/arcgis/rest/services?f="+f)
		var names []string
		for _, s := range v["services"].([]any) {
			m := s.(map[string]any)
			if m["type"] != "MapServer" {
				t.Errorf("service %v: type %v", m["name"], m["type"])
			}
			names = append(names, m["name"].(string))
		}
		if got := strings.Join(names, ","); got != "usa,usa_geographic,world,world_geographic" || v["currentVersion"] != 10.71 {
			t.Errorf("f=%s: services %s, version %v", f, got, v["currentVersion"])
		}
	}
	info := getJSON(t, h, "/arcgis/rest/info?f=json")
	if info["soapUrl"] != "http://farm.test/arcgis/services" || info["authInfo"].(map[string]any)["isTokenBasedSecurity"] != false {
		t.Errorf("info: %v", info)
	}
	e := getJSON(t, h, "/arcgis/rest/services/nofolder?f=json")["error"].(map[string]any)
	if e["code"] != 404.0 {
		t.Errorf("missing folder: %v", e)
	}
	_, body := get(t, h, "/arcgis/rest/services?f=pjson")
	if !strings.Contains(string(body), "\n  \"folders\"") {
		t.Errorf("f=pjson is not indented: %.100s", body)
	}
}

// The MapServer root and layer resources describe the service as ArcGIS 10.7 does.
func TestMapServerResources(t *testing.T) {
	h := newHandler(t)
	root := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/?f=json")
	sr := root["spatialReference"].(map[string]any)
	if root["mapName"] != "Layers" || sr["wkid"] != 3857.0 || root["units"] != "esriMeters" || root["singleFusedMapCache"] != false ||
		root["maxRecordCount"] != 1000.0 || root["capabilities"] != "Map,Query,Data" {
		t.Errorf("root: %v", root)
	}
	if layers := root["layers"].([]any); len(layers) != 3 || layers[1].(map[string]any)["name"] != "Counties" {
		t.Errorf("root layers: %v", layers)
	}
	if tables := root["tables"].([]any); len(tables) != 1 || tables[0].(map[string]any)["id"] != 2.0 {
		t.Errorf("root tables: %v", tables)
	}
	if ext := root["fullExtent"].(map[string]any); ext["xmin"].(float64) >= ext["xmax"].(float64) {
		t.Errorf("fullExtent: %v", ext)
	}
	l := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1?f=json")
	fields := l["fields"].([]any)
	if l["geometryType"] != "esriGeometryPolygon" || l["displayField"] != "NAME" || fields[0].(map[string]any)["type"] != "esriFieldTypeOID" ||
		fields[2].(map[string]any)["alias"] != "County" {
		t.Errorf("layer 1: %v", l)
	}
	r := l["drawingInfo"].(map[string]any)["renderer"].(map[string]any)
	if r["type"] != "simple" || r["symbol"].(map[string]any)["type"] != "esriSFS" {
		t.Errorf("renderer: %v", r)
	}
	if rels := l["relationships"].([]any); len(rels) != 2 {
		t.Errorf("relationships: %v", rels)
	}
	tbl := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/2?f=json")
	if tbl["type"] != "Table" || tbl["name"] != "County attributes" {
		t.Errorf("table: %v", tbl)
	}
	all := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/layers?f=json")
	if len(all["layers"].([]any)) != 3 || len(all["tables"].([]any)) != 1 {
		t.Errorf("layers: %v", all)
	}
	for target, code := range map[string]float64{
		"/arcgis/rest/services/nosuch/MapServer?f=json": 404,
		"/arcgis/rest/services/usa/MapServer/9?f=json":  400,
		"/arcgis/rest/services/usa/MapServer/x?f=json":  400,
	} {
		e, ok := getJSON(t, h, target)["error"].(map[string]any)
		if !ok || e["code"] != code {
			t.Errorf("%s: %v, want code %v", target, e, code)
		}
	}
}

func features(t *testing.T, v map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	fs, ok := v["features"].([]any)
	if !ok {
		t.Fatalf("no features: %.300v", v)
	}
	for _, f := range fs {
		out = append(out, f.(map[string]any))
	}
	return out
}

// query pages by resultOffset/resultRecordCount with exceededTransferLimit; count, ids,
// distinct values, order, tables and GeoJSON answer as ArcGIS does; bad parameters are 400.
func TestQuery(t *testing.T) {
	h := newHandler(t)
	const counties = "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=1%3D1"
	n := int(getJSON(t, h, counties+"&returnCountOnly=true")["count"].(float64))
	ids := getJSON(t, h, counties+"&returnIdsOnly=true")
	if n <= 1000 || len(ids["objectIds"].([]any)) != n || ids["objectIdFieldName"] != "fid" {
		t.Fatalf("count %d, ids %d", n, len(ids["objectIds"].([]any)))
	}
	seen := map[float64]bool{}
	pages := 0
	for off := 0; ; off += 1000 {
		v := getJSON(t, h, counties+"&returnGeometry=false&outFields=NAME,fid&resultOffset="+strconv.Itoa(off))
		pages++
		for _, f := range features(t, v) {
			seen[f["attributes"].(map[string]any)["fid"].(float64)] = true
		}
		if v["exceededTransferLimit"] != true {
			break
		}
		if pages > 10 {
			t.Fatal("no end of pages")
		}
	}
	if len(seen) != n || pages != (n+999)/1000 {
		t.Errorf("paging read %d distinct features in %d pages, want %d", len(seen), pages, n)
	}
	v := getJSON(t, h, counties+"&outFields=STATE&returnDistinctValues=true&returnGeometry=false&orderByFields=STATE")
	fs := features(t, v)
	if len(fs) < 40 || len(fs) > 60 || fs[0]["attributes"].(map[string]any)["STATE"].(string) > fs[1]["attributes"].(map[string]any)["STATE"].(string) {
		t.Errorf("distinct states: %d, first %v", len(fs), fs[0])
	}
	if _, ok := fs[0]["geometry"]; ok {
		t.Errorf("returnGeometry=false answered a geometry")
	}
	v = getJSON(t, h, "/arcgis/rest/services/usa/MapServer/2/query?f=json&where=1%3D1&outFields=*&resultRecordCount=5")
	if len(features(t, v)) != 5 || v["exceededTransferLimit"] != true || v["geometryType"] != nil {
		t.Errorf("table query: %.300v", v)
	}
	v = getJSON(t, h, "/arcgis/rest/services/world/MapServer/0/query?f=geojson&where=1%3D1&outFields=*&resultRecordCount=3")
	gf := v["features"].([]any)
	if v["type"] != "FeatureCollection" || len(gf) != 3 || gf[0].(map[string]any)["geometry"].(map[string]any)["type"] != "Point" {
		t.Errorf("geojson: %.300v", v)
	}
	c := gf[0].(map[string]any)["geometry"].(map[string]any)["coordinates"].([]any)
	if x := c[0].(float64); x < -180 || x > 180 {
		t.Errorf("geojson is not in WGS 84: %v", c)
	}
	for _, bad := range []string{"&where=NOPE%3D1", "&returnCountOnly=maybe", "&geometry=1,2,3", "&outSR=bogus", "&spatialRel=esriSpatialRelNear&geometry=1,2"} {
		e, ok := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1/query?f=json"+bad)["error"].(map[string]any)
		if !ok || e["code"] != 400.0 || len(e["details"].([]any)) == 0 {
			t.Errorf("%s: %v, want a 400 error with details", bad, e)
		}
	}
}
