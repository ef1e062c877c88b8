package vectorfonts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTransformExact compares the distance transform with the brute-force one on random grids.
func TestTransformExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var e edt
	for trial := range 50 {
		w, h := 1+rng.IntN(20), 1+rng.IntN(20)
		g := make([]float64, w*h)
		for i := range g {
			if rng.IntN(4) == 0 {
				g[i] = 0
			} else {
				g[i] = inf
			}
		}
		g[rng.IntN(w*h)] = 0
		want := make([]float64, w*h)
		for y := range h {
			for x := range w {
				best := math.Inf(1)
				for q := range h {
					for p := range w {
						if g[q*w+p] == 0 {
							best = min(best, float64((x-p)*(x-p)+(y-q)*(y-q)))
						}
					}
				}
				want[y*w+x] = best
			}
		}
		m := max(w, h)
		e.f, e.z, e.v = make([]float64, m), make([]float64, m+1), make([]int, m)
		e.transform(g, w, h)
		for i := range g {
			if g[i] != want[i] {
				t.Fatalf("trial %d (%d×%d): cell %d: %g, want %g", trial, w, h, i, g[i], want[i])
			}
		}
	}
}
