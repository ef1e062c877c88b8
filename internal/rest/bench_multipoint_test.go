package rest_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/rest"
)

// multipointBody is a REST form body with a multipoint of n points spread over the world (Web
// Mercator) as its geometry, and the parameters more.
func multipointBody(tb testing.TB, n int, more string) string {
	rng := rand.New(rand.NewPCG(25, uint64(n)))
	mp := struct {
		Points [][2]float64   `json:"points"`
		SR     map[string]int `json:"spatialReference"`
	}{Points: make([][2]float64, n), SR: map[string]int{"wkid": 3857}}
	for i := range mp.Points {
		mp.Points[i] = [2]float64{math.Round((rng.Float64()*2 - 1) * 1.9e7), math.Round((rng.Float64()*2 - 1) * 1.5e7)}
	}
	g, err := json.Marshal(mp)
	if err != nil {
		tb.Fatal(err)
	}
	return url.Values{"geometry": {string(g)}, "geometryType": {"esriGeometryMultipoint"}, "f": {"json"}}.Encode() + "&" + more
}

// BenchmarkMultipoint answers the hostile suite's REST multipoint requests (issue 25, 3) in the
// process, without the api's lane: the whole of one request, form to JSON.
//
//	go test -tags proj ./internal/rest -run '^$' -bench Multipoint -benchtime 1x
func BenchmarkMultipoint(b *testing.B) {
	c := catalogtest.Samples(b)
	h := rest.New(rest.Params{Ops: mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000}}), Services: c})
	for _, tc := range []struct {
		name, path string
		n          int
		more       string
	}{
		{"Within/5000", "1/query", 5_000, "spatialRel=esriSpatialRelWithin&returnCountOnly=true"},
		{"Intersects/5000", "1/query", 5_000, "spatialRel=esriSpatialRelIntersects&returnCountOnly=true"},
		{"Within/100000", "1/query", 100_000, "spatialRel=esriSpatialRelWithin&returnCountOnly=true"},
		{"Intersects/100000", "1/query", 100_000, "spatialRel=esriSpatialRelIntersects&returnCountOnly=true"},
		{"identify/5000", "identify", 5_000, "tolerance=2&mapExtent=-2e7,-2e7,2e7,2e7&imageDisplay=800,800,96&layers=all:1"},
	} {
		body := multipointBody(b, tc.n, tc.more)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("POST", "/arcgis/rest/services/world/MapServer/"+tc.path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if !strings.Contains(rec.Body.String(), `"count"`) && !strings.Contains(rec.Body.String(), `"results"`) {
					b.Fatalf("%.300s", rec.Body)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/request")
		})
	}
}
