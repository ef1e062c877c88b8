package proj_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// TestApproximate: the approximate transformer of a drawing agrees with the exact one to
// within its error bound (checked at cell centres and side middles; allowed half as much again anywhere), for the
// built-in Web Mercator → 4326 and, with PROJ, Web Mercator → Equal Earth, Robinson and LAEA
// Europe.
func TestApproximate(t *testing.T) {
	sys := proj.NewSystems(0)
	world := orb.Bound{Min: orb.Point{-proj.MaxExtent, -proj.MaxExtent}, Max: orb.Point{proj.MaxExtent, proj.MaxExtent}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, wkid := range []int{4326, 8857, 54030, 3035} {
		exact, err := sys.Transformer(proj.SR{WKID: 3857}, proj.SR{WKID: wkid})
		if errors.Is(err, proj.ErrUnsupported) {
			continue // the built-in engine
		}
		if err != nil {
			t.Fatal(err)
		}
		region := world
		maxErr := 1e-3 // a thousandth of a degree, or a metre
		if !exact.Target.Geographic {
			maxErr = 1000
		}
		// The view: the whole world, or (for a regional system) its windows, in the target.
		view, err := exact.Bound(region)
		if windows, werr := sys.DrawWindows(proj.SR{WKID: 3857}, proj.SR{WKID: wkid}); werr == nil && windows != nil {
			region = windows[0] // what a drawing in a regional system is clipped to
			view, err = exact.Bound(region)
		}
		if err != nil {
			t.Fatal(err)
		}
		approx, err := sys.DrawTransformer(proj.SR{WKID: 3857}, proj.SR{WKID: wkid}, view, maxErr)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for range 20000 {
			p := orb.Point{region.Min[0] + rng.Float64()*(region.Max[0]-region.Min[0]), region.Min[1] + rng.Float64()*(region.Max[1]-region.Min[1])}
			a, err1 := approx.Point(p)
			e, err2 := exact.Point(p)
			if err1 != nil || err2 != nil {
				if (err1 == nil) != (err2 == nil) {
					t.Errorf("%d at %v: approximate error %v, exact error %v", wkid, p, err1, err2)
				}
				continue
			}
			worst = math.Max(worst, math.Hypot(a[0]-e[0], a[1]-e[1]))
		}
		if worst > 1.5*maxErr {
			t.Errorf("%d: approximate off by up to %g, bound %g", wkid, worst, maxErr)
		}
		t.Logf("%d: largest error %.3g (bound %g)", wkid, worst, maxErr)
	}
}
