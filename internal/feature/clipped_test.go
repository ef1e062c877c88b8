package feature_test

import (
	"context"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// TestClippedSeams: a polygon cut by a window, and one along the data's ±180° edge, come out as
// feature.Outlined: the polygon to fill, and its outline without the edges along the window's
// side or the data's edge; a polygon touching no seam comes out as it is.
func TestClippedSeams(t *testing.T) {
	world := orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}}
	square := func(x0, y0, x1, y1 float64) orb.Polygon {
		return orb.Polygon{{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}}
	}
	l := feature.NewLayer("t", proj.SR{WKID: 4326}, feature.Polygon, nil, []feature.Feature{
		{ID: 1, Geom: square(0, -40, 10, -20)},  // crosses the window's bottom (-30)
		{ID: 2, Geom: square(170, 0, 180, 10)},  // along the data's edge at 180°
		{ID: 3, Geom: square(20, 20, 30, 30)},   // inside, touching nothing
		{ID: 4, Geom: square(40, -60, 50, -50)}, // outside the window
	})
	window := []orb.Bound{{Min: orb.Point{-180, -30}, Max: orb.Point{180, 90}}}
	got := map[int64]orb.Geometry{}
	err := feature.Clipped(l, window, []orb.Bound{world}).Scan(context.Background(), &feature.Query{}, func(f *feature.Feature) error {
		got[f.ID] = f.Geom
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got[4]; ok || len(got) != 3 {
		t.Fatalf("features %v, want 1, 2, 3", got)
	}
	for id, seam := range map[int64]func(orb.Point) bool{
		1: func(p orb.Point) bool { return p[1] == -30 },
		2: func(p orb.Point) bool { return p[0] == 180 },
	} {
		fill, outline, ok := feature.Outlined(got[id])
		if !ok {
			t.Fatalf("feature %d: %T, want an outlined polygon", id, got[id])
		}
		if b := fill.Bound(); b.Min[1] < -30 {
			t.Errorf("feature %d filled down to %v, past the window", id, b.Min[1])
		}
		if len(outline) != 1 || !seam(outline[0][0]) || !seam(outline[0][len(outline[0])-1]) {
			t.Errorf("feature %d outline %v, want one line of the three sides off the seam, from it back to it", id, outline)
		}
		for _, ls := range outline {
			for i := 1; i < len(ls); i++ {
				if seam(ls[i-1]) && seam(ls[i]) {
					t.Errorf("feature %d outline %v has an edge along the seam", id, ls)
				}
			}
		}
	}
	if _, _, ok := feature.Outlined(got[3]); ok {
		t.Errorf("feature 3 came out outlined: %v", got[3])
	}
}
