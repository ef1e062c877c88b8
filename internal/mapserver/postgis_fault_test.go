package mapserver_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// A PostGIS layer whose database goes down fails within the request's deadline with an error
// that names the layer and its source, the catalog's readiness check reports it, and the same
// server answers again once the database is back, without a restart.
func TestPostGISDownAndBack(t *testing.T) {
	cl := testenv.StartPostgresCluster(t)
	testenv.PostgresExec(t, cl.DSN, "CREATE EXTENSION postgis")
	testenv.LoadGeoPackage(t, cl.DSN, testenv.SampleData(t, "world_countries_50m_3857.gpkg"), "countries", "countries", "fid")

	cfg, err := servicedef.Load(filepath.Join("..", "..", "services", "services.yaml"), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	var world *servicedef.Service
	for _, s := range cfg.Services {
		if s.Name == "world" {
			world = s
		}
	}
	countries := world.Maps[0].Layers[1]
	countries.Source = postgis.Definition{Connection: "gis", Table: "countries"}
	cfg.Services = []*servicedef.Service{world}
	cfg.Connections = map[string]*servicedef.Connection{"gis": {Name: "gis", DSN: cl.DSN, StatementTimeout: 2 * time.Second}}
	cat, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	srv := mapserver.New(mapserver.Params{Catalog: cat, Limits: mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096}})
	svc, _ := cat.Service("world")
	count := func() (int, time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		resp, err := srv.Do(ctx, &mapserver.Call{Service: svc}, "QueryFeatureCount",
			&gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: &gisxml.QueryFilter{WhereClause: "NAME LIKE 'S%'"}})
		if err != nil {
			return 0, time.Since(start), err
		}
		return resp.(*gisxml.QueryFeatureCountResponse).Result, time.Since(start), nil
	}
	want, _, err := count()
	if err != nil || want == 0 {
		t.Fatalf("before: %d, %v", want, err)
	}

	cl.Stop()
	_, took, err := count()
	switch {
	case err == nil:
		t.Fatal("a query with the database down succeeded")
	case !errors.Is(err, feature.ErrUnavailable):
		t.Errorf("database down: %v is not ErrUnavailable", err)
	case !strings.Contains(err.Error(), "layer 1 (Countries)") || !strings.Contains(err.Error(), "postgis"):
		t.Errorf("the error does not name the layer and its source: %v", err)
	case errors.Is(err, mapserver.ErrInvalidArgument):
		t.Errorf("a database outage is reported as the client's fault: %v", err)
	}
	if took > 3500*time.Millisecond {
		t.Errorf("the failing query took %v, past its 3 s deadline", took)
	}
	if err := cat.Ping(context.Background()); err == nil {
		t.Error("the readiness check passes with the database down")
	}

	cl.Start()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, _, err := count()
		if err == nil {
			if got != want {
				t.Errorf("after: %d features, before %d", got, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not recover after the database came back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := cat.Ping(context.Background()); err != nil {
		t.Errorf("readiness after recovery: %v", err)
	}
}
