package feature_test

import (
	"context"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// relatePatterns are the DE-9IM patterns the differential test asks for: common ones, and
// ones that disjoint geometries match.
var relatePatterns = []string{
	"T*T***T**", "****T****", "212101212", "212F11FF2", "FF2FF1212", "FF*FF****", "F********",
	"FF1FF0102", "FF0FFF212",
}

// TestRelationDifferential checks the Matcher's spatial relations, with their shortcuts for
// features far from the filter geometry's edges, against plain simplefeatures calls for random
// polygons, lines and points over the world's countries: every answer must be the same.
func TestRelationDifferential(t *testing.T) {
	feats := countries(t)
	rng := rand.New(rand.NewPCG(17, 1))
	n := 14
	if testing.Short() {
		n = 7
	}
	var filters []orb.Geometry
	for i := range n {
		filters = append(filters, randomGeometry(rng, i, feats))
	}
	filters = append(filters, wavy(120), orb.Bound{Min: orb.Point{2e5, 6.4e6}, Max: orb.Point{8e5, 7.1e6}})

	for i, g := range filters {
		a := feature.Exact(g)
		ab := g.Bound()
		// The overlay of every country is slow: at most 16 of the features whose bound meets the
		// filter geometry's, and a few of the others.
		var near, rest []*feature.Feature
		for _, f := range feats {
			if f.Bound.Intersects(ab) {
				near = append(near, f)
			} else {
				rest = append(rest, f)
			}
		}
		if len(near) > 16 {
			near = slices.Collect(sample(near, 16))
		}
		near = slices.AppendSeq(near, sample(rest, 4))
		for _, f := range near {
			checkRelations(t, fmt.Sprintf("filter %d (%s)", i, a.Type()), g, a, f, relatePatterns)
		}
	}
}

// countries are the world's countries, every feature of the sample layer.
func countries(t *testing.T) []*feature.Feature {
	l := load(t, "world_countries_50m_3857.gpkg", "countries", 3857)
	var feats []*feature.Feature
	if err := l.Scan(context.Background(), &feature.Query{}, func(f *feature.Feature) error {
		feats = append(feats, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return feats
}

// checkRelations compares the Matcher's answer for filter geometry g (a in simplefeatures) and
// feature f with simplefeatures' for every named relation and each DE-9IM pattern.
func checkRelations(t *testing.T, name string, g orb.Geometry, a geom.Geometry, f *feature.Feature, patterns []string) {
	t.Helper()
	b := feature.Exact(f.Geom)
	matrix, err := geom.Relate(a, b)
	if err != nil {
		t.Fatalf("%s, feature %d: Relate: %v", name, f.ID, err)
	}
	rels := []feature.Relation{feature.Intersects, feature.Touches, feature.Overlaps, feature.Crosses, feature.Within, feature.Contains}
	for _, rel := range rels {
		want := reference(t, rel, a, b)
		if got := matchOne(t, &feature.Spatial{Rel: rel, Geom: g}, f); got != want {
			t.Errorf("%s %v feature %d (matrix %s): got %v, want %v", name, rel, f.ID, matrix, got, want)
		}
	}
	for _, p := range patterns {
		want, err := geom.RelateMatches(matrix, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := matchOne(t, &feature.Spatial{Rel: feature.Relate, Geom: g, Pattern: p}, f); got != want {
			t.Errorf("%s relate %s feature %d (matrix %s): got %v, want %v", name, p, f.ID, matrix, got, want)
		}
	}
}

// sample yields n of the features spread evenly over them.
func sample(fs []*feature.Feature, n int) iter.Seq[*feature.Feature] {
	return func(yield func(*feature.Feature) bool) {
		for k := range min(n, len(fs)) {
			if !yield(fs[k*len(fs)/min(n, len(fs))]) {
				return
			}
		}
	}
}

// reference is simplefeatures' answer for the relation, the filter geometry a first.
func reference(t *testing.T, rel feature.Relation, a, b geom.Geometry) bool {
	t.Helper()
	var (
		ok  bool
		err error
	)
	switch rel {
	case feature.Intersects:
		ok = geom.Intersects(a, b)
	case feature.Touches:
		ok, err = geom.Touches(a, b)
	case feature.Overlaps:
		ok, err = geom.Overlaps(a, b)
	case feature.Crosses:
		ok, err = geom.Crosses(a, b)
	case feature.Within:
		ok, err = geom.Within(a, b)
	case feature.Contains:
		ok, err = geom.Contains(a, b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func matchOne(t *testing.T, s *feature.Spatial, f *feature.Feature) bool {
	t.Helper()
	m, err := (&feature.Query{Spatial: s}).Matcher(nil)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := m.Match(f)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// randomGeometry is the i-th filter geometry: in turn a star-shaped polygon (some with a hole,
// some of two parts), a line, a point, a multipoint and a triangle on a country's vertex, of
// sizes from a town to a continent.
func randomGeometry(rng *rand.Rand, i int, feats []*feature.Feature) orb.Geometry {
	c := orb.Point{(rng.Float64()*2 - 1) * 1.8e7, (rng.Float64()*2 - 1) * 1.2e7}
	r := math.Pow(10, 4+3*rng.Float64())
	switch i % 7 {
	case 0:
		return orb.Polygon{star(rng, c, r, 3+rng.IntN(60))}
	case 1:
		return orb.Polygon{star(rng, c, r, 3+rng.IntN(60)), star(rng, c, r/5, 3+rng.IntN(10))}
	case 2:
		d := orb.Point{c[0] + 3*r, c[1]}
		return orb.MultiPolygon{{star(rng, c, r, 5+rng.IntN(20))}, {star(rng, d, r, 5+rng.IntN(20))}}
	case 3:
		ls := orb.LineString{c}
		for range 1 + rng.IntN(20) {
			p := ls[len(ls)-1]
			ls = append(ls, orb.Point{p[0] + (rng.Float64()*2-1)*r, p[1] + (rng.Float64()*2-1)*r})
		}
		return ls
	case 4:
		return c
	case 5:
		mp := orb.MultiPoint{c}
		for range 2 + rng.IntN(10) {
			mp = append(mp, orb.Point{c[0] + (rng.Float64()*2-1)*r, c[1] + (rng.Float64()*2-1)*r})
		}
		return mp
	}
	// A triangle with a corner on a vertex of a country: touches and overlaps.
	f := feats[rng.IntN(len(feats))]
	var v orb.Point
	switch g := f.Geom.(type) {
	case orb.Polygon:
		v = g[0][rng.IntN(len(g[0]))]
	case orb.MultiPolygon:
		v = g[0][0][rng.IntN(len(g[0][0]))]
	default:
		panic(fmt.Sprintf("country %d is a %T", f.ID, f.Geom))
	}
	return orb.Polygon{{v, {v[0] + r, v[1]}, {v[0], v[1] + r}, v}}
}

// star is a closed ring of n vertices around c at distances from r/2 to r, counterclockwise.
func star(rng *rand.Rand, c orb.Point, r float64, n int) orb.Ring {
	ring := make(orb.Ring, 0, n+1)
	for k := range n {
		a := 2 * math.Pi * float64(k) / float64(n)
		d := r * (0.5 + 0.5*rng.Float64())
		ring = append(ring, orb.Point{c[0] + d*math.Cos(a), c[1] + d*math.Sin(a)})
	}
	return append(ring, ring[0])
}

// TestRelateDisjointPattern: a pattern that disjoint geometries match selects the features
// far from the filter geometry too, through the spatial index.
func TestRelateDisjointPattern(t *testing.T) {
	l := load(t, "world_countries_50m_3857.gpkg", "countries", 3857)
	ctx := context.Background()
	tri := orb.Polygon{{{2e5, 5.5e6}, {3e5, 5.5e6}, {2.5e5, 5.6e6}, {2e5, 5.5e6}}} // in France
	all, err := l.Count(ctx, &feature.Query{})
	if err != nil {
		t.Fatal(err)
	}
	meets, err := l.Count(ctx, &feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: tri}})
	if err != nil || meets != 1 {
		t.Fatalf("intersects = %d, %v; want 1", meets, err)
	}
	for _, p := range []string{"FF*FF****", "FF2FF1212", "FF*FF*2*2"} {
		n, err := l.Count(ctx, &feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: tri, Pattern: p}})
		if err != nil || n != all-meets {
			t.Errorf("relate %s = %d, %v; want %d", p, n, err, all-meets)
		}
	}
	// A point filter: every country but the one it lies in.
	pt := orb.Point{2.5e5, 5.52e6}
	if n, err := l.Count(ctx, &feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: pt, Pattern: "FF0FFF212"}}); err != nil || n != all-1 {
		t.Errorf("relate point FF0FFF212 = %d, %v; want %d", n, err, all-1)
	}
	if _, err := (&feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: pt, Pattern: "FF0FFF21X"}}).Matcher(nil); err == nil {
		t.Error("pattern FF0FFF21X compiled")
	}
}
