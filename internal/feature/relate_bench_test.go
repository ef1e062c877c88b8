package feature_test

import (
	"context"
	"math"
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
