package mapserver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// fixture is a server on the sample catalog.
type fixture struct {
	t   testing.TB
	srv *mapserver.Server
	cat *catalog.Catalog
	pg  *fixture // the same server on the PostGIS copy of the samples, for provider parity; nil without PostgreSQL
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	c := catalogtest.Samples(t)
	limits := mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096}
	f := &fixture{t: t, cat: c, srv: mapserver.New(mapserver.Params{Catalog: c, Limits: limits})}
	if pg := postgisCatalog(t); pg != nil {
		f.pg = &fixture{t: t, cat: pg, srv: mapserver.New(mapserver.Params{Catalog: pg, Limits: limits})}
	}
	return f
}

// do runs one operation on a service.
func (f *fixture) do(service, op string, req any) (any, error) {
	f.t.Helper()
	svc, ok := f.cat.Service(service)
	if !ok {
		f.t.Fatalf("no service %s", service)
	}
	resp, err := f.srv.Do(context.Background(), &mapserver.Call{Service: svc}, op, req)
	f.checkParity(service, op, req, resp, err)
	return resp, err
}

// must runs an operation that must succeed.
func must[T any](f *fixture, service, op string, req any) *T {
	f.t.Helper()
	resp, err := f.do(service, op, req)
	if err != nil {
		f.t.Fatalf("%s: %v", op, err)
	}
	r, ok := resp.(*T)
	if !ok {
		f.t.Fatalf("%s returned %T", op, resp)
	}
	return r
}

// clientFault checks that an operation fails because of the request.
func (f *fixture) clientFault(service, op string, req any) string {
	f.t.Helper()
	_, err := f.do(service, op, req)
	if err == nil {
		f.t.Fatalf("%s succeeded; want a client fault", op)
	}
	if !errors.Is(err, mapserver.ErrInvalidArgument) {
		f.t.Fatalf("%s: %v is not a client error", op, err)
	}
	return err.Error()
}

func (f *fixture) count(service string, layer int, qf gisxml.QueryFilterKind) int {
	f.t.Helper()
	return must[gisxml.QueryFeatureCountResponse](f, service, "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: layer, QueryFilter: qf}).Result
}

func (f *fixture) ids(service string, layer int, qf gisxml.QueryFilterKind) []int {
	f.t.Helper()
	return must[gisxml.QueryFeatureIDsResponse](f, service, "QueryFeatureIDs", &gisxml.QueryFeatureIDs{LayerID: layer, QueryFilter: qf}).Result.FIDArray
}

func where(clause string) *gisxml.QueryFilter { return &gisxml.QueryFilter{WhereClause: clause} }

func envelopeFilter(clause string, rel gisxml.SpatialRelEnum, xmin, ymin, xmax, ymax float64) *gisxml.SpatialFilter {
	return &gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{WhereClause: clause}, SpatialRel: rel,
		FilterGeometry: &gisxml.EnvelopeN{XMin: xmin, YMin: ymin, XMax: xmax, YMax: ymax}}
}

func ptr[T any](v T) *T { return &v }
