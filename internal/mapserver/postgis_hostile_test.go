package mapserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// Hostile where clauses, field lists, order-by clauses and search fields sent through the SOAP
// operations to a PostGIS layer get a client fault, never a server error or a changed database;
// a hostile search string is searched for as text.
func TestPostGISHostileRequests(t *testing.T) {
	cat, dsn := mapservertest.PostGISSamples(t)
	if cat == nil {
		t.Skip("no test PostgreSQL (MAPFARM_TEST_POSTGRES)")
	}
	before := testenv.PostgresTables(t, dsn)
	srv := mapserver.New(mapserver.Params{Catalog: cat, Limits: mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096}})
	svc, _ := cat.Service("world")
	call := func(op string, req any) (any, error) {
		return srv.Do(context.Background(), &mapserver.Call{Service: svc}, op, req)
	}
	str := func(s string) *string { return &s }
	count := func(where string) *gisxml.QueryFeatureCount {
		return &gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: &gisxml.QueryFilter{WhereClause: where}}
	}
	data := func(f gisxml.QueryFilter) *gisxml.QueryFeatureData {
		return &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &f}
	}
	display := &gisxml.ImageDisplay{ImageWidth: 400, ImageHeight: 300, ImageDPI: 96}
	faults := []struct {
		name string
		op   string
		req  any
	}{
		{"statement separator", "QueryFeatureCount", count("1=1; DROP TABLE countries")},
		{"comment", "QueryFeatureCount", count("NAME = 'x' --' OR 1=1")},
		{"pg_sleep", "QueryFeatureCount", count("pg_sleep(10) IS NULL")},
		{"subselect", "QueryFeatureCount", count("NAME IN (SELECT usename FROM pg_user)")},
		{"dollar quoting", "QueryFeatureCount", count("NAME = $$x$$")},
		{"cast to regclass", "QueryFeatureCount", count("'pg_authid'::regclass IS NOT NULL")},
		{"unknown function", "QueryFeatureCount", count("lo_import('/etc/passwd') > 0")},
		{"semicolon in a field list", "QueryFeatureData", data(gisxml.QueryFilter{WhereClause: "1=1", SubFields: str("NAME; DROP TABLE countries")})},
		{"expression as a field", "QueryFeatureData", data(gisxml.QueryFilter{WhereClause: "1=1", SubFields: str("NAME, (SELECT 1)")})},
		{"quoted identifier as a field", "QueryFeatureData", data(gisxml.QueryFilter{WhereClause: "1=1", SubFields: str(`"NAME"; --`)})},
		{"order by a statement", "QueryFeatureData", data(gisxml.QueryFilter{WhereClause: "1=1", PostfixClause: str("ORDER BY NAME; DROP TABLE countries")})},
		{"order by a subselect", "QueryFeatureData", data(gisxml.QueryFilter{WhereClause: "1=1", PostfixClause: str("ORDER BY (SELECT 1)")})},
		{"order by a function", "QueryFeatureData", data(gisxml.QueryFilter{WhereClause: "1=1", PostfixClause: str("ORDER BY pg_sleep(1)")})},
	}
	for _, c := range faults {
		_, err := call(c.op, c.req)
		switch {
		case err == nil:
			t.Errorf("%s: %s succeeded", c.name, c.op)
		case !errors.Is(err, mapserver.ErrInvalidArgument):
			t.Errorf("%s: %s: %v is not a client fault", c.name, c.op, err)
		case strings.Contains(strings.ToLower(err.Error()), "sqlstate"):
			t.Errorf("%s: %s: the fault leaks the database's error: %v", c.name, c.op, err)
		}
	}
	// A quote doubled inside a string literal is part of the string: the clause means exactly
	// that, and matches nothing.
	for _, where := range []string{"NAME = 'x'' OR ''1''=''1'", "NAME = 'x\\'' OR 1=1 --'"} {
		resp, err := call("QueryFeatureCount", count(where))
		if err != nil {
			if !errors.Is(err, mapserver.ErrInvalidArgument) {
				t.Errorf("%s: %v is not a client fault", where, err)
			}
			continue
		}
		if n := resp.(*gisxml.QueryFeatureCountResponse).Result; n != 0 {
			t.Errorf("%s counts %d features, want 0", where, n)
		}
	}
	// A hostile search string is a string, and Find's search fields name fields (those no layer
	// has are passed over, as ArcGIS does): Find answers, finding nothing.
	for _, c := range []struct{ search, fields string }{
		{"x'); DROP TABLE countries; --", "NAME"}, {`%' OR '1'='1`, "NAME"}, {"$$; SELECT pg_sleep(5); $$", "NAME"},
		{"France", "NAME; DROP TABLE countries"}, {"France", `NAME" OR 1=1 --`},
	} {
		resp, err := call("Find", &gisxml.Find{
			MapDescription: &gisxml.MapDescription{Name: "Layers"}, MapImageDisplay: display, SearchString: c.search, Contains: true, SearchFields: c.fields,
			FindOption: gisxml.FindAllLayers, LayerIDs: gisxml.ArrayOfInt{1},
		})
		if err != nil {
			t.Errorf("Find %q in %q: %v", c.search, c.fields, err)
			continue
		}
		if n := len(resp.(*gisxml.FindResponse).Result); n != 0 {
			t.Errorf("Find %q in %q found %d features", c.search, c.fields, n)
		}
	}
	testenv.CheckPostgresTablesUnchanged(t, dsn, before)
}
