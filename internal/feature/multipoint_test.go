package feature_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// TestMultipointRelationDifferential checks the relations of filter multipoints, which the
// Matcher decides from the points within each feature's bound, against plain simplefeatures
// calls: multipoints of points spread over the world, of points near one country (some on its
// vertices, so on its boundary, some repeated), and of points all inside one.
func TestMultipointRelationDifferential(t *testing.T) {
	feats := countries(t)
	rng := rand.New(rand.NewPCG(25, 4))
	vertices := func(f *feature.Feature) orb.Ring {
		switch g := f.Geom.(type) {
		case orb.Polygon:
			return g[0]
		case orb.MultiPolygon:
			return g[0][0]
		}
		t.Fatalf("country %d is a %T", f.ID, f.Geom)
		return nil
	}
	inBound := func(b orb.Bound) orb.Point {
		return orb.Point{b.Min[0] + rng.Float64()*(b.Max[0]-b.Min[0]), b.Min[1] + rng.Float64()*(b.Max[1]-b.Min[1])}
	}
	type filter struct {
		name  string
		mp    orb.MultiPoint
		feats []*feature.Feature // the features to compare on
	}
	var filters []filter
	for k := range 6 {
		f := feats[rng.IntN(len(feats))]
		ring := vertices(f)
		var mp orb.MultiPoint
		for range 40 {
			mp = append(mp, inBound(f.Bound))
		}
		if k%2 == 0 {
			mp = append(mp, ring[rng.IntN(len(ring))], ring[rng.IntN(len(ring))]) // on the boundary
			mp = append(mp, mp[0])                                                // repeated
		}
		if k%3 == 0 {
			mp = append(mp, orb.Point{2e7, 2e7}) // far away
		}
		filters = append(filters, filter{"near a country", mp, []*feature.Feature{f, feats[rng.IntN(len(feats))]}})
	}
	world := make(orb.MultiPoint, 300)
	for i := range world {
		world[i] = orb.Point{(rng.Float64()*2 - 1) * 1.9e7, (rng.Float64()*2 - 1) * 1.5e7}
	}
	filters = append(filters, filter{"over the world", world, feats[:24]})
	// Points inside a country: its interior holds the multipoint (Within).
	for _, f := range feats[:40] {
		var mp orb.MultiPoint
		for range 200 {
			p := inBound(f.Bound)
			if geom.Intersects(feature.Exact(p), feature.Exact(f.Geom)) {
				mp = append(mp, p)
			}
		}
		if len(mp) > 0 {
			filters = append(filters, filter{"inside a country", mp, []*feature.Feature{f}})
			break
		}
	}

	for i, flt := range filters {
		a := feature.Exact(flt.mp)
		for _, f := range flt.feats {
			checkRelations(t, fmt.Sprintf("filter %d (%s)", i, flt.name), flt.mp, a, f,
				append(relatePatterns, "0FFFFF212", "00FFFF212", "000FFF212", "F0FFFF212"))
		}
	}
}
