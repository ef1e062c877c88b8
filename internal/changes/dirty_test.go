package changes_test

import (
	"math"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// Envelopes in a layer's SR are carried into a cache's: a 4326 envelope into Web Mercator.
func TestDirtyIn(t *testing.T) {
	tr, err := proj.NewSystems(8).Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: 3857})
	if err != nil {
		t.Fatal(err)
	}
	d := changes.Dirty{Layer: "parcels", SRID: 4326, Envelopes: []orb.Bound{{Min: orb.Point{0, 0}, Max: orb.Point{1, 1}}}}
	got, err := d.In(tr)
	if err != nil {
		t.Fatal(err)
	}
	const r = 6378137.0
	wantMaxX := r * math.Pi / 180
	wantMaxY := r * math.Log(math.Tan(math.Pi/4+math.Pi/360))
	e := got.Envelopes[0]
	if len(got.Envelopes) != 1 || math.Abs(e.Min[0]) > 1e-6 || math.Abs(e.Min[1]) > 1e-6 ||
		math.Abs(e.Max[0]-wantMaxX) > 1e-3 || math.Abs(e.Max[1]-wantMaxY) > 1e-3 {
		t.Fatalf("in 3857: %v, want [0 0 %.3f %.3f]", got.Envelopes, wantMaxX, wantMaxY)
	}
	whole, err := changes.Dirty{Layer: "roads", Whole: true}.In(tr)
	if err != nil || !whole.Whole {
		t.Fatalf("whole layer: %+v %v", whole, err)
	}
}
