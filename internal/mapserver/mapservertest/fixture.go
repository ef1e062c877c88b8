// Package mapservertest is the fixture of the MapServer operations' tests: a server composed by
// mapserver.New on the sample services (services/services.yaml), through which a test runs
// operations by name as the SOAP endpoint does, and, when a test PostgreSQL is there, the same
// server on a PostGIS copy of the samples, on which every data operation runs again and must
// answer alike (provider parity). Each operation family (internal/mapserver/queries,
// cartography, information) and the composing package test themselves with it; a package that
// uses it calls [Main] from its TestMain, which drops the PostGIS copy at the end. The front ends'
// tests (REST, WMS) draw their exports in process with [LocalFarm], on a server of [Drawing].
package mapservertest

import (
	"context"
	"errors"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// Fixture is a server on the sample catalog.
type Fixture struct {
	T   testing.TB
	Srv *mapserver.Server
	Cat *catalog.Catalog
	PG  *Fixture // the same server on the PostGIS copy of the samples, for provider parity; nil without PostgreSQL
}

// New returns a server on the sample catalog, with its PostGIS twin when MAPFARM_TEST_POSTGRES
// names a server.
func New(t testing.TB) *Fixture {
	t.Helper()
	c := catalogtest.Samples(t)
	f := &Fixture{T: t, Cat: c, Srv: mapserver.New(mapserver.Params{Catalog: c, Limits: limits()})}
	if pg := postgisCatalog(t); pg != nil {
		f.PG = &Fixture{T: t, Cat: pg, Srv: mapserver.New(mapserver.Params{Catalog: pg, Limits: limits()})}
	}
	return f
}

// limits are the fixture servers' limits: 1,000 records, images up to 4096 pixels a side.
func limits() mapserver.Limits {
	return mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096}
}

// Do runs one operation on a service (and again on the PostGIS twin, see the package
// documentation).
func (f *Fixture) Do(service, op string, req any) (any, error) {
	f.T.Helper()
	svc, ok := f.Cat.Service(service)
	if !ok {
		f.T.Fatalf("no service %s", service)
	}
	resp, err := f.Srv.Do(context.Background(), &mapserver.Call{Service: svc}, op, req)
	f.checkParity(service, op, req, resp, err)
	return resp, err
}

// Must runs an operation that must succeed and answer a *T.
func Must[T any](f *Fixture, service, op string, req any) *T {
	f.T.Helper()
	resp, err := f.Do(service, op, req)
	if err != nil {
		f.T.Fatalf("%s: %v", op, err)
	}
	r, ok := resp.(*T)
	if !ok {
		f.T.Fatalf("%s returned %T", op, resp)
	}
	return r
}

// ClientFault checks that an operation fails because of the request, and returns the error's
// text.
func (f *Fixture) ClientFault(service, op string, req any) string {
	f.T.Helper()
	_, err := f.Do(service, op, req)
	if err == nil {
		f.T.Fatalf("%s succeeded; want a client fault", op)
	}
	if !errors.Is(err, mapserver.ErrInvalidArgument) {
		f.T.Fatalf("%s: %v is not a client error", op, err)
	}
	return err.Error()
}

// Count runs QueryFeatureCount.
func (f *Fixture) Count(service string, layer int, qf gisxml.QueryFilterKind) int {
	f.T.Helper()
	return Must[gisxml.QueryFeatureCountResponse](f, service, "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: layer, QueryFilter: qf}).Result
}

// IDs runs QueryFeatureIDs.
func (f *Fixture) IDs(service string, layer int, qf gisxml.QueryFilterKind) []int {
	f.T.Helper()
	return Must[gisxml.QueryFeatureIDsResponse](f, service, "QueryFeatureIDs", &gisxml.QueryFeatureIDs{LayerID: layer, QueryFilter: qf}).Result.FIDArray
}

// Where is a query filter of a where clause only.
func Where(clause string) *gisxml.QueryFilter { return &gisxml.QueryFilter{WhereClause: clause} }

// EnvelopeFilter is a spatial filter of a where clause and an envelope.
func EnvelopeFilter(clause string, rel gisxml.SpatialRelEnum, xmin, ymin, xmax, ymax float64) *gisxml.SpatialFilter {
	return &gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{WhereClause: clause}, SpatialRel: rel,
		FilterGeometry: &gisxml.EnvelopeN{XMin: xmin, YMin: ymin, XMax: xmax, YMax: ymax}}
}

// MapDesc is the description of a map named Layers showing the extent xmin, ymin, xmax, ymax
// turned by rotation degrees.
func MapDesc(xmin, ymin, xmax, ymax, rotation float64) *gisxml.MapDescription {
	return &gisxml.MapDescription{Name: "Layers", Rotation: rotation,
		MapArea: &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: xmin, YMin: ymin, XMax: xmax, YMax: ymax}}}}
}
