package mvt_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// parcelTile returns the z14 tile over Austin and an in-memory layer of
// parcels as bench/parcelgen makes them (48 m cells, one jittered 4- to
// 8-gon in each, with a parcel number, a land use and a value), covering
// the tile and its buffer: about 2,700 parcels, the density of the 1M
// parcel benchmark table.
func parcelTile(tb testing.TB) (mvt.Tile, *feature.Layer) {
	tb.Helper()
	s := tilecache.WebMercator()
	c := proj.ToMercator(orb.Point{-97.74, 30.27})
	r, err := s.TilesCovering(14, orb.Bound{Min: c, Max: c})
	if err != nil {
		tb.Fatal(err)
	}
	tile, err := mvt.SchemeTile(s, tilecache.Tile{Level: 14, Row: r.MinRow, Col: r.MinCol})
	if err != nil {
		tb.Fatal(err)
	}
	const cell = 48.0
	rng := rand.New(rand.NewPCG(1, 2))
	uses := []string{"residential", "residential", "residential", "commercial", "industrial", "vacant", "agricultural"}
	b := tile.Bound
	pad := 2 * cell
	var fs []feature.Feature
	id := int64(1)
	for y := b.Min[1] - pad; y < b.Max[1]+pad; y += cell {
		for x := b.Min[0] - pad; x < b.Max[0]+pad; x += cell {
			n := 4 + rng.IntN(5)
			ring := make(orb.Ring, 0, n+1)
			for k := range n {
				a := 2 * math.Pi * float64(k) / float64(n)
				rad := cell * (0.35 + 0.1*rng.Float64())
				ring = append(ring, orb.Point{x + cell/2 + rad*math.Cos(a), y + cell/2 + rad*math.Sin(a)})
			}
			ring = append(ring, ring[0])
			fs = append(fs, feature.Feature{ID: id, Geom: orb.Polygon{ring}, Values: []any{
				id, fmt.Sprintf("P%07d", id), uses[rng.IntN(len(uses))], int64(50_000 + rng.IntN(900_000)),
			}})
			id++
		}
	}
	fields := []feature.Field{
		{Name: "OBJECTID", Type: feature.FieldOID}, {Name: "PARCEL_NO", Type: feature.FieldString},
		{Name: "LAND_USE", Type: feature.FieldString}, {Name: "VALUE", Type: feature.FieldInteger},
	}
	return tile, feature.NewLayer("parcels", proj.SR{WKID: proj.WebMercator}, feature.Polygon, fields, fs)
}

func benchEncode(b *testing.B, opts mvt.Options) {
	tile, src := parcelTile(b)
	enc, err := mvt.NewEncoder(opts)
	if err != nil {
		b.Fatal(err)
	}
	layers := []mvt.Layer{{Name: "parcels", Source: src, Fields: []string{"PARCEL_NO", "LAND_USE", "VALUE"}}}
	ctx := context.Background()
	var res *mvt.Result
	b.ReportAllocs()
	for b.Loop() {
		res, err = enc.Encode(ctx, tile, layers)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Features), "features/tile")
	b.ReportMetric(float64(len(res.Data)), "bytes/tile")
}

// BenchmarkEncodeParcelsZ14 encodes a dense z14 tile (about 2,700
// parcels) from memory: the encoder's own cost, without a database.
func BenchmarkEncodeParcelsZ14(b *testing.B) { benchEncode(b, mvt.Options{}) }

// BenchmarkEncodeParcelsZ14Gzip is the same tile, gzip-compressed.
func BenchmarkEncodeParcelsZ14Gzip(b *testing.B) { benchEncode(b, mvt.Options{Gzip: true}) }

// BenchmarkCheckParcelsZ14 validates the dense tile with mvtcheck.
func BenchmarkCheckParcelsZ14(b *testing.B) {
	tile, src := parcelTile(b)
	enc, _ := mvt.NewEncoder(mvt.Options{})
	res, err := enc.Encode(context.Background(), tile, []mvt.Layer{{Name: "parcels", Source: src, Fields: []string{"PARCEL_NO", "LAND_USE", "VALUE"}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(res.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if probs, _ := mvtcheck.Check(res.Data, mvtcheck.Options{MaxBuffer: 64}); len(probs) > 0 {
			b.Fatal(probs)
		}
	}
}

// BenchmarkEncodeCountiesZ7 encodes a z7 tile of the US counties sample
// through the GeoPackage provider: read, clip and simplification of
// detailed polygons.
func BenchmarkEncodeCountiesZ7(b *testing.B) {
	src := sample(b, "us_counties_10m_3857.gpkg", "counties")
	tile, _ := mvt.WebMercatorTile(7, 34, 49)
	enc, _ := mvt.NewEncoder(mvt.Options{})
	layers := []mvt.Layer{{Name: "counties", Source: src, Fields: []string{"NAME", "GEOID"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := enc.Encode(context.Background(), tile, layers); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGzipLevels compresses the dense z14 tile at klauspost/compress's levels 1 (BestSpeed),
// 2, 5 (its default) and 6, and with the standard library's gzip at its default (tegola's), for
// the size and time each costs.
func BenchmarkGzipLevels(b *testing.B) {
	tile, src := parcelTile(b)
	enc, _ := mvt.NewEncoder(mvt.Options{})
	res, err := enc.Encode(context.Background(), tile, []mvt.Layer{{Name: "parcels", Source: src, Fields: []string{"PARCEL_NO", "LAND_USE", "VALUE"}}})
	if err != nil {
		b.Fatal(err)
	}
	type writer interface {
		io.Writer
		Close() error
		Reset(io.Writer)
	}
	for _, c := range []struct {
		name string
		w    func() writer
	}{
		{"klauspost-1", func() writer { w, _ := kgzip.NewWriterLevel(nil, 1); return w }},
		{"klauspost-2", func() writer { w, _ := kgzip.NewWriterLevel(nil, 2); return w }},
		{"klauspost-5", func() writer { w, _ := kgzip.NewWriterLevel(nil, 5); return w }},
		{"klauspost-6", func() writer { w, _ := kgzip.NewWriterLevel(nil, 6); return w }},
		{"stdlib-default", func() writer { return gzip.NewWriter(nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out bytes.Buffer
			b.SetBytes(int64(len(res.Data)))
			w := c.w() // reused, as a pool of writers would
			for b.Loop() {
				out.Reset()
				w.Reset(&out)
				if _, err := w.Write(res.Data); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(out.Len()), "gzip-bytes/tile")
		})
	}
}
