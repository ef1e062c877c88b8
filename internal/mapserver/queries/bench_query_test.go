package queries_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// synthetic is a one-layer service of n random points in [0,1000)² with an integer field v in
// [0,100) and a string field name.
func synthetic(n int) *catalog.Service {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	fields := []feature.Field{
		{Name: "fid", Type: feature.FieldOID, Length: 8},
		{Name: "v", Type: feature.FieldInteger, Length: 8, Nullable: true},
		{Name: "name", Type: feature.FieldString, Length: 16, Nullable: true},
	}
	feats := make([]feature.Feature, n)
	for i := range feats {
		id := int64(i + 1)
		feats[i] = feature.Feature{ID: id, Geom: orb.Point{rng.Float64() * 1000, rng.Float64() * 1000},
			Values: []any{id, int64(rng.IntN(100)), fmt.Sprintf("p%d", i)}}
	}
	sr := proj.SR{WKID: 3857}
	data := feature.NewLayer("points", sr, feature.Point, fields, feats)
	l := &catalog.Layer{Def: &servicedef.Layer{}, ID: 0, Name: "points", Data: data, Fields: fields, FieldIndex: []int{0, 1, 2},
		Extent: data.Info().Extent, DisplayField: "name", IDField: "fid"}
	m := &catalog.Map{Def: &servicedef.Map{}, Name: "Layers", SR: sr, FullExtent: data.Info().Extent, InitialExtent: data.Info().Extent, Layers: []*catalog.Layer{l}}
	return &catalog.Service{Def: &servicedef.Service{}, Name: "synthetic", Maps: []*catalog.Map{m}}
}

// BenchmarkQuery measures QueryFeatureCount and QueryFeatureData with an envelope covering 1%
// of the layer's area (10%×10%) and a where clause keeping half of it, on layers of 10k, 100k
// and 1M points. The features inside the envelope grow with the layer, so ms/query grows
// linearly; ns/feature-in-envelope shows the cost per candidate staying flat.
//
//	go test ./internal/mapserver -run '^$' -bench Query -benchmem
func BenchmarkQuery(b *testing.B) {
	srv := mapserver.New(mapserver.Params{Limits: mapserver.Limits{MaxRecordCount: 1 << 30}})
	filter := &gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{WhereClause: "v < 50"}, SpatialRel: gisxml.SpatialRelIntersects,
		FilterGeometry: &gisxml.EnvelopeN{XMin: 450, YMin: 450, XMax: 550, YMax: 550}}
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		svc := synthetic(n)
		inside := 0
		box := orb.Bound{Min: orb.Point{450, 450}, Max: orb.Point{550, 550}}
		inside, _ = svc.Maps[0].Layers[0].Data.Count(context.Background(), &feature.Query{Bound: &box})
		for _, op := range []string{"QueryFeatureCount", "QueryFeatureData"} {
			b.Run(fmt.Sprintf("%s/n=%d", op, n), func(b *testing.B) {
				var req any = &gisxml.QueryFeatureCount{LayerID: 0, QueryFilter: filter}
				if op == "QueryFeatureData" {
					req = &gisxml.QueryFeatureData{LayerID: 0, QueryFilter: filter}
				}
				benchOperation(b, srv, svc, op, req)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(inside), "ns/candidate")
			})
		}
	}
	// Everything matches: the count keeps memory flat (no collection).
	svc := synthetic(1_000_000)
	everything := &gisxml.QueryFilter{WhereClause: "v >= 0"}
	b.Run("QueryFeatureCount/everything/n=1000000", func(b *testing.B) {
		benchOperation(b, srv, svc, "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 0, QueryFilter: everything})
	})
	// Everything matches a record query: with the default MaxRecordCount (1000) it holds only
	// the first 1001 features, however large the layer.
	capped := mapserver.New(mapserver.Params{})
	b.Run("QueryFeatureData/everything/n=1000000", func(b *testing.B) {
		benchOperation(b, capped, svc, "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 0, QueryFilter: everything})
	})
}

// benchOperation runs operation op of svc on srv b.N times and reports ms/query.
func benchOperation(b *testing.B, srv *mapserver.Server, svc *catalog.Service, op string, req any) {
	c := &mapserver.Call{Service: svc}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := srv.Do(context.Background(), c, op, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/query")
}
