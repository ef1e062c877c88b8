package gpkg_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/sourcetest"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// TestSourceParity runs the shared query table against the lazy GeoPackage provider and the
// in-memory oracle loaded from the same table: every answer must be the same.
func TestSourceParity(t *testing.T) {
	for _, tc := range []struct{ file, table string }{
		{"world_countries_50m_3857.gpkg", "countries"},
		{"us_state_facts_3857.gpkg", "state_facts"},
		{"world_country_points_50m_4326.gpkg", "country_points"},
	} {
		t.Run(tc.table, func(t *testing.T) {
			f := open(t, tc.file)
			lazy, err := f.Source(context.Background(), tc.table)
			if err != nil {
				t.Fatal(err)
			}
			tbl, _ := f.Table(tc.table)
			oracle, err := f.ReadLayer(tc.table, tbl.SR)
			if err != nil {
				t.Fatal(err)
			}
			sourcetest.Parity(t, oracle, lazy)
		})
	}
}

// Attribute tables (attachments) read their BLOBs only when asked.
func TestSourceBlobsOnDemand(t *testing.T) {
	f := open(t, "us_state_facts_3857.gpkg")
	src, err := f.Source(context.Background(), "state_facts__ATTACH")
	if err != nil {
		t.Fatal(err)
	}
	info := src.Info()
	data := info.FieldIndex("DATA")
	if info.GeometryType != feature.None || data < 0 {
		t.Fatalf("info = %+v", info)
	}
	var withBytes, without int
	err = src.Scan(context.Background(), &feature.Query{}, func(f *feature.Feature) error {
		if f.Values[data] != nil {
			without++
		}
		return nil
	})
	if err != nil || without != 0 {
		t.Errorf("a default scan read %d BLOBs (%v)", without, err)
	}
	err = src.Scan(context.Background(), &feature.Query{Columns: []int{data}}, func(f *feature.Feature) error {
		if b, ok := f.Values[data].([]byte); ok && len(b) > 0 {
			withBytes++
		}
		return nil
	})
	if err != nil || withBytes != 15 {
		t.Errorf("a scan asking for DATA read %d BLOBs, want 15 (%v)", withBytes, err)
	}
}

// A cancelled context stops a scan with the context's error.
func TestSourceCancel(t *testing.T) {
	f := open(t, "world_countries_50m_3857.gpkg")
	src, err := f.Source(context.Background(), "countries")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = src.Scan(ctx, &feature.Query{}, func(*feature.Feature) error {
		if n++; n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n > 300 {
		t.Errorf("after cancel: %d rows, err %v", n, err)
	}
}

// BenchmarkEnvelopeCount counts and pages a 1% envelope of a synthetic GeoPackage of 200,000
// polygons, the shape of the million-parcel benchmark (bench/providers.sh) at a size a unit
// benchmark can build.
func BenchmarkEnvelopeCount(b *testing.B) {
	path := b.TempDir() + "/grid.gpkg"
	const side = 447 // ≈ 200,000 cells
	if err := gpkg.WriteGrid(path, "cells", side); err != nil {
		b.Fatal(err)
	}
	f, err := gpkg.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	src, err := f.Source(context.Background(), "cells")
	if err != nil {
		b.Fatal(err)
	}
	// 1% of the area: a tenth of each side.
	w := float64(side) / 10
	box := orb.Bound{Min: orb.Point{100, 100}, Max: orb.Point{100 + w, 100 + w}}
	ctx := context.Background()
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			n, err := src.Count(ctx, &feature.Query{Bound: &box})
			if err != nil || n < 1900 {
				b.Fatalf("count %d, %v", n, err)
			}
		}
	})
	b.Run("page1000", func(b *testing.B) {
		for b.Loop() {
			n := 0
			err := src.Scan(ctx, &feature.Query{Bound: &box, Limit: 1000}, func(*feature.Feature) error { n++; return nil })
			if err != nil || n != 1000 {
				b.Fatalf("page %d, %v", n, err)
			}
		}
	})
}

// A 4326 table seen in Web Mercator answers as the table reprojected when read.
func TestReprojectedParity(t *testing.T) {
	f := open(t, "world_countries_50m_4326.gpkg")
	lazy, err := f.Source(context.Background(), "countries")
	if err != nil {
		t.Fatal(err)
	}
	merc := proj.SR{WKID: proj.WebMercator}
	got, err := feature.Reprojected(lazy, merc, proj.NewSystems(0))
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := f.ReadLayer("countries", merc)
	if err != nil {
		t.Fatal(err)
	}
	sourcetest.Parity(t, oracle, got)
}

// BenchmarkParcels times the 1% envelope count and first page of the million-parcel GeoPackage
// that bench/parcelgen writes (bench/providers.sh caches it), asked as QueryFeatureCount asks:
// intersects a rectangle. Set MAPFARM_BENCH_PARCELS to its path.
func BenchmarkParcels(b *testing.B) {
	path := os.Getenv("MAPFARM_BENCH_PARCELS")
	if path == "" {
		b.Skip("MAPFARM_BENCH_PARCELS names no GeoPackage (see bench/providers.sh)")
	}
	f, err := gpkg.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	src, err := f.Source(ctx, "parcels")
	if err != nil {
		b.Fatal(err)
	}
	e := src.Info().Extent
	c := e.Center()
	w, h := (e.Max[0]-e.Min[0])/20, (e.Max[1]-e.Min[1])/20 // a tenth of each side: 1% of the area
	rect := orb.Bound{Min: orb.Point{c[0] - w, c[1] - h}, Max: orb.Point{c[0] + w, c[1] + h}}.ToPolygon()
	q := feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: rect}}
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			if _, err := src.Count(ctx, &q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("page1000", func(b *testing.B) {
		pq := q
		pq.Limit = 1000
		for b.Loop() {
			if err := src.Scan(ctx, &pq, func(*feature.Feature) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
