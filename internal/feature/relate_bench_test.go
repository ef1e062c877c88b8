package feature_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// wavy is the hostile suite's filter polygon (e2e relationBody): an ellipse over most of the
// world in Web Mercator with 37 waves along its edge, of n vertices.
func wavy(n int) orb.Polygon {
	ring := make(orb.Ring, 0, n+1)
	for i := range n + 1 {
		a := 2 * math.Pi * float64(i%n) / float64(n)
		r := 1.5e7 * (1 + 0.05*math.Sin(37*a))
		ring = append(ring, orb.Point{r * math.Cos(a), 0.6 * r * math.Sin(a)})
	}
	return orb.Polygon{ring}
}

// BenchmarkRelation counts the world's countries in a relation with a 1,000-vertex polygon,
// as the hostile suite's relation query does (and, for Relate, its pattern).
//
//	go test -tags proj ./internal/feature -run '^$' -bench Relation -count 5
func BenchmarkRelation(b *testing.B) {
	l := load(b, "world_countries_50m_3857.gpkg", "countries", 3857)
	poly := wavy(1_000)
	cases := []struct {
		name string
		s    feature.Spatial
	}{
		{"Relate", feature.Spatial{Rel: feature.Relate, Pattern: "T*T***T**"}},
		{"Intersects", feature.Spatial{Rel: feature.Intersects}},
		{"Within", feature.Spatial{Rel: feature.Within}},
		{"Contains", feature.Spatial{Rel: feature.Contains}},
		{"Touches", feature.Spatial{Rel: feature.Touches}},
		{"Overlaps", feature.Spatial{Rel: feature.Overlaps}},
		{"Crosses", feature.Spatial{Rel: feature.Crosses}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := c.s
			s.Geom = poly
			q := &feature.Query{Spatial: &s}
			for b.Loop() {
				if _, err := l.Count(context.Background(), q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/query")
		})
	}
}

// scatter is n points spread evenly at random over the world in Web Mercator, as the hostile
// suite's multipoint queries send them.
func scatter(n int) orb.MultiPoint {
	rng := rand.New(rand.NewPCG(25, 3))
	mp := make(orb.MultiPoint, n)
	for i := range mp {
		mp[i] = orb.Point{(rng.Float64()*2 - 1) * 1.9e7, (rng.Float64()*2 - 1) * 1.5e7}
	}
	return mp
}

// BenchmarkMultipointRelation counts the world's countries in a relation with a multipoint of
// 5,000 or 100,000 points over the world (issue 25, 3).
//
//	go test -tags proj ./internal/feature -run '^$' -bench MultipointRelation -benchtime 1x
func BenchmarkMultipointRelation(b *testing.B) {
	l := load(b, "world_countries_50m_3857.gpkg", "countries", 3857)
	for _, n := range []int{5_000, 100_000} {
		mp := scatter(n)
		for _, rel := range []struct {
			name string
			rel  feature.Relation
		}{{"Within", feature.Within}, {"Intersects", feature.Intersects}, {"Contains", feature.Contains}} {
			b.Run(fmt.Sprintf("%s/%d", rel.name, n), func(b *testing.B) {
				q := &feature.Query{Spatial: &feature.Spatial{Rel: rel.rel, Geom: mp}}
				for b.Loop() {
					if _, err := l.Count(context.Background(), q); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/query")
			})
		}
	}
}
