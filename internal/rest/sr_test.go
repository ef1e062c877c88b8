package rest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/render/rendertest"
)

// clientWKT is one of the client strings of internal/proj/testdata/srs (see its README).
func clientWKT(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../proj/testdata/srs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// srJSON is a spatial reference parameter as JSON: {"wkt":…} or {"wkt2":…}.
func srJSON(t *testing.T, key, wkt string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{key: wkt})
	if err != nil {
		t.Fatal(err)
	}
	return url.QueryEscape(string(b))
}

// TestExportClientWKT: the export the ArcGIS Maps SDK sends with bboxSR and imageSR as
// {"wkt": the Esri WKT of Web Mercator} draws what bboxSR=102100 draws, in every build (the
// built-in engine recognises the text), and reports the extent in 102100; so do GDAL's OGC
// WKT1 and the WKT2 QGIS sends (as wkt, and as the SDK's wkt2).
func TestExportClientWKT(t *testing.T) {
	h := newHandler(t)
	const base = "/arcgis/rest/services/world/MapServer/export?bbox=-10000000,-5000000,10000000,5000000&size=200,100&format=png32"
	code, body := get(t, h, base+"&bboxSR=102100&imageSR=102100&f=image")
	if code != http.StatusOK {
		t.Fatalf("export in 102100: %d %.300s", code, body)
	}
	want := decodePNG(t, body)
	for _, tc := range []struct{ key, file string }{
		{"wkt", "102100.arcgis-js-sdk.txt"},
		{"wkt", "3857.arcgis-server-10.7.txt"},
		{"wkt", "3857.gdal-wkt1.txt"},
		{"wkt", "3857.qgis-wkt2-2019-simplified.txt"},
		{"wkt", "3857.qgis-custom-merc.txt"},
		{"wkt2", "3857.gdal-wkt2.txt"},
	} {
		sr := srJSON(t, tc.key, clientWKT(t, tc.file))
		code, body := get(t, h, base+"&bboxSR="+sr+"&imageSR="+sr+"&f=image")
		if code != http.StatusOK {
			t.Errorf("%s as %s: %d %.300s", tc.file, tc.key, code, body)
			continue
		}
		if d := rendertest.Differing(t, want, decodePNG(t, body)); d != 0 {
			t.Errorf("%s as %s: %d pixels differ from the export in 102100", tc.file, tc.key, d)
		}
		v := getJSON(t, h, base+"&bboxSR="+sr+"&imageSR="+sr+"&f=json")
		ext, _ := v["extent"].(map[string]any)
		got, _ := ext["spatialReference"].(map[string]any)
		if got["latestWkid"] != 3857.0 || ext["xmin"] != -10000000.0 {
			t.Errorf("%s as %s: extent %v, want Web Mercator's", tc.file, tc.key, ext)
		}
	}
}

// TestQueryClientWKT: outSR as a WKT of WGS 84 (GDAL's WKT1 and WKT2, QGIS's, Esri's) gives the
// geometry outSR=4326 gives, labelled 4326.
func TestQueryClientWKT(t *testing.T) {
	h := newHandler(t)
	const q = "/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&resultRecordCount=1&orderByFields=fid"
	want := features(t, getJSON(t, h, q+"&outSR=4326"))[0]["geometry"]
	for _, file := range []string{"4326.gdal-wkt1.txt", "4326.gdal-wkt2.txt", "4326.gdal-wkt2-pretty.txt", "4326.qgis-wkt2-2019-simplified.txt", "4326.arcgis-server-10.7.txt"} {
		v := getJSON(t, h, q+"&outSR="+srJSON(t, "wkt", clientWKT(t, file)))
		fs := features(t, v)
		if len(fs) != 1 {
			t.Errorf("%s: %.300v", file, v)
			continue
		}
		g, _ := json.Marshal(fs[0]["geometry"])
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s: geometry %s, want %s", file, g, w)
		}
		if sr, _ := v["spatialReference"].(map[string]any); sr["wkid"] != 4326.0 {
			t.Errorf("%s: spatialReference %v, want 4326", file, v["spatialReference"])
		}
	}
}

// TestInvalidSpatialReference: text that is not a WKT, wherever a spatial reference is read,
// is 400 "Invalid spatial reference", as ArcGIS answers: not a guess (PROJ took "foo" for
// Amersfoort) and not a label ({"wkt":"foo"} on the output).
func TestInvalidSpatialReference(t *testing.T) {
	h := newHandler(t)
	const (
		query    = "/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&resultRecordCount=1"
		export   = "/arcgis/rest/services/world/MapServer/export?bbox=-10,-10,10,10&size=100,100"
		identify = "/arcgis/rest/services/world/MapServer/identify?f=json&geometryType=esriGeometryPoint&tolerance=3&imageDisplay=400,400,96&mapExtent=-20,-20,20,20&layers=all"
	)
	var bad []string
	for _, v := range []string{`{"wkt":"foo"}`, `{"wkt":"zz"}`, `{"wkt":"WGS"}`, `{"wkt":"EPSG:4326"}`, `{"wkt2":"foo"}`, `{"wkt":"GEOGCS[\"WGS 84\""}`, "zz", "WGS", "foo"} {
		bad = append(bad, url.QueryEscape(v))
	}
	for _, v := range bad {
		for _, target := range []string{
			query + "&outSR=" + v,
			query + "&inSR=" + v + "&geometry=0,0,10,10&geometryType=esriGeometryEnvelope",
			query + "&geometry=" + url.QueryEscape(`{"xmin":0,"ymin":0,"xmax":10,"ymax":10,"spatialReference":`) + v + "%7D",
			export + "&f=json&bboxSR=" + v,
			export + "&f=json&bboxSR=4326&imageSR=" + v,
			identify + "&geometry=0,0&sr=" + v,
			"/arcgis/rest/services/world/MapServer/0/queryRelatedRecords?f=json&objectIds=1&relationshipId=0&outSR=" + v,
		} {
			if strings.Contains(target, "spatialReference") && !strings.HasPrefix(v, "%7B") {
				continue // a geometry's spatialReference is JSON
			}
			code, body := get(t, h, target)
			var e struct {
				Error struct {
					Code    int
					Message string
					Details []string
				}
			}
			if err := json.Unmarshal(body, &e); err != nil || code != http.StatusOK || e.Error.Code != 400 || e.Error.Message != "Invalid spatial reference" {
				t.Errorf("%s: %d %.300s; want error 400 \"Invalid spatial reference\"", target, code, body)
			}
		}
	}
	code, body := get(t, h, export+"&f=image&bboxSR="+bad[0])
	if code != http.StatusBadRequest || !strings.Contains(string(body), `"Invalid spatial reference"`) {
		t.Errorf("export f=image with bboxSR {\"wkt\":\"foo\"}: %d %.300s, want HTTP 400", code, body)
	}
}

// TestQGISSpatialReference: QGIS writes a WKID as a string ({"wkid":"4326"}, its
// QgsArcGisRestUtils::crsToJson) in outSR and in a geometry's spatialReference; it means what
// the number means.
func TestQGISSpatialReference(t *testing.T) {
	h := newHandler(t)
	const q = "/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&resultRecordCount=1&orderByFields=fid"
	want, _ := json.Marshal(features(t, getJSON(t, h, q+"&outSR=4326"))[0]["geometry"])
	v := getJSON(t, h, q+"&outSR="+url.QueryEscape(`{"wkid":"4326"}`))
	if got, _ := json.Marshal(features(t, v)[0]["geometry"]); string(got) != string(want) {
		t.Errorf(`outSR {"wkid":"4326"}: geometry %s, want %s`, got, want)
	}
	const count = "/arcgis/rest/services/world/MapServer/1/query?f=json&returnCountOnly=true&geometryType=esriGeometryEnvelope&geometry="
	byNumber := getJSON(t, h, count+url.QueryEscape(`{"xmin":0,"ymin":40,"xmax":20,"ymax":55,"spatialReference":{"wkid":4326}}`))["count"]
	byString := getJSON(t, h, count+url.QueryEscape(`{"xmin":0,"ymin":40,"xmax":20,"ymax":55,"spatialReference":{"wkid":"4326"}}`))["count"]
	if n, _ := byNumber.(float64); n < 5 || byString != byNumber {
		t.Errorf(`countries in (0,40)-(20,55) with spatialReference {"wkid":"4326"}: %v, with 4326: %v`, byString, byNumber)
	}
}
