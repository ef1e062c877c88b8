package feature

import (
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// grid makes n×n unit squares with a gap, ids 1…n².
func grid(n int) []Feature {
	var fs []Feature
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x, y := float64(i)*10, float64(j)*10
			ring := orb.Ring{{x, y}, {x + 8, y}, {x + 8, y + 8}, {x, y + 8}, {x, y}}
			fs = append(fs, Feature{ID: int64(i*n + j + 1), Geom: orb.Polygon{ring}})
		}
	}
	return fs
}

// TestSearchVisitsOnlyIntersecting proves the index prunes: a query over
// a few features examines only the leaves of the nodes whose boxes touch
// it, not the whole layer.
func TestSearchVisitsOnlyIntersecting(t *testing.T) {
	l := NewLayer("grid", proj.SR{WKID: 3857}, Polygon, nil, grid(100)) // 10,000 features
	if got := len(l.index.levels); got != 4 {
		t.Fatalf("levels = %d, want 4 (10000 → 625 → 40 → 3)", got)
	}
	tests := []struct {
		name         string
		b            orb.Bound
		want         int
		maxLeafVisit int
	}{
		{"one square", orb.Bound{Min: orb.Point{501, 501}, Max: orb.Point{502, 502}}, 1, 4 * nodeSize},
		{"2x2 squares", orb.Bound{Min: orb.Point{505, 505}, Max: orb.Point{515, 515}}, 4, 4 * nodeSize},
		{"gap between squares", orb.Bound{Min: orb.Point{508.5, 508.5}, Max: orb.Point{509.5, 509.5}}, 0, 4 * nodeSize},
		{"10x10 block", orb.Bound{Min: orb.Point{200, 200}, Max: orb.Point{298, 298}}, 100, 16 * nodeSize},
		{"outside", orb.Bound{Min: orb.Point{-50, -50}, Max: orb.Point{-10, -10}}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st searchStats
			got := 0
			l.index.search(&tc.b, l.features, func(f *Feature) bool {
				if !f.Bound.Intersects(tc.b) {
					t.Errorf("feature %d does not intersect", f.ID)
				}
				got++
				return true
			}, &st)
			if got != tc.want || st.reported != tc.want {
				t.Errorf("found %d (reported %d), want %d", got, st.reported, tc.want)
			}
			if st.visited > tc.maxLeafVisit {
				t.Errorf("visited %d leaves for %d hits, want ≤ %d of %d", st.visited, got, tc.maxLeafVisit, l.Len())
			}
		})
	}
}

// TestSearchMatchesBruteForce compares the index with a linear scan on
// random boxes of random sizes.
func TestSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var fs []Feature
	for i := range 5000 {
		x, y := r.Float64()*1000, r.Float64()*1000
		w, h := r.Float64()*20, r.Float64()*20
		var g orb.Geometry = orb.LineString{{x, y}, {x + w, y + h}}
		if i%7 == 0 {
			g = orb.Point{x, y}
		}
		if i%101 == 0 {
			g = nil // NULL geometry: kept, never found
		}
		fs = append(fs, Feature{ID: int64(i), Geom: g})
	}
	l := NewLayer("random", proj.SR{WKID: 3857}, Polyline, nil, fs)
	for range 200 {
		x, y := r.Float64()*1100-50, r.Float64()*1100-50
		b := orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x + r.Float64()*200, y + r.Float64()*200}}
		want := map[int64]bool{}
		for _, f := range l.features {
			if f.Geom != nil && f.Bound.Intersects(b) {
				want[f.ID] = true
			}
		}
		got := map[int64]bool{}
		l.Search(b, func(f *Feature) bool {
			if got[f.ID] {
				t.Fatalf("feature %d reported twice", f.ID)
			}
			got[f.ID] = true
			return true
		})
		if len(got) != len(want) {
			t.Fatalf("box %v: got %d features, want %d", b, len(got), len(want))
		}
		for id := range want {
			if !got[id] {
				t.Fatalf("box %v: missing feature %d", b, id)
			}
		}
	}
}

func TestSearchStops(t *testing.T) {
	l := NewLayer("grid", proj.SR{WKID: 3857}, Polygon, nil, grid(20))
	n := 0
	l.Search(l.Info().Extent, func(*Feature) bool { n++; return n < 5 })
	if n != 5 {
		t.Errorf("callback ran %d times after asking to stop at 5", n)
	}
}

func TestSmallLayers(t *testing.T) {
	for _, n := range []int{0, 1, 2, 4, 5} { // 0, 1, 4, 16, 25 features
		l := NewLayer("grid", proj.SR{WKID: 3857}, Polygon, nil, grid(n))
		got := 0
		l.Search(orb.Bound{Min: orb.Point{-1, -1}, Max: orb.Point{1000, 1000}}, func(*Feature) bool { got++; return true })
		if got != n*n {
			t.Errorf("%d features: found %d", n*n, got)
		}
	}
}
