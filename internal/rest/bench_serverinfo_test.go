package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// BenchmarkServerInfoShare measures what the GetServerInfo each REST request runs (every
// resource describes the service from it) costs beside a small request it serves: a query of
// two records by id on the world layer, and GetServerInfo alone.
//
//	go test ./internal/rest -run '^$' -bench ServerInfoShare
func BenchmarkServerInfoShare(b *testing.B) {
	h := newHandler(b)
	b.Run("op=query-2-ids", func(b *testing.B) {
		for range b.N {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/arcgis/rest/services/world/MapServer/0/query?f=json&objectIds=1,2&outFields=*", nil))
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code)
			}
		}
	})
	b.Run("op=GetServerInfo", func(b *testing.B) {
		c := catalogtest.Samples(b)
		svc, _ := c.Service("world")
		ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000}})
		for range b.N {
			if _, err := ops.Do(context.Background(), &mapserver.Call{Service: svc}, "GetServerInfo", &gisxml.GetServerInfo{MapName: svc.DefaultMap().Name}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
