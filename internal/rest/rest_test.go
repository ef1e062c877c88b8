package rest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

func TestDump(t *testing.T) {
	h := newHandler(t)
	for _, u := range []string{"/arcgis/rest/services?f=json", "/arcgis/rest/services/usa/MapServer?f=pjson", "/arcgis/rest/services/usa/MapServer/1?f=pjson",
		"/arcgis/rest/services/usa/MapServer/1/query?f=json&where=1=1&outFields=*&resultRecordCount=2&returnGeometry=false",
		"/arcgis/rest/services/world/MapServer/1/query?f=geojson&where=1=1&outFields=*&resultRecordCount=1"} {
		_, b := get(t, h, u)
		if len(b) > 3000 {
			b = b[:3000]
		}
		t.Logf("%s\n%s", u, b)
	}
	_ = strings.TrimSpace
}
