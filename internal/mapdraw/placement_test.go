package mapdraw

import (
	"context"
	"image/color"
	"reflect"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/symbology"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/render"
)

// TestLabelPlacement: every service-definition placement option reaches the renderer's.
func TestLabelPlacement(t *testing.T) {
	in := symbology.Label{Placement: symbology.LabelPlacement{
		Points: []symbology.PointPosition{symbology.PointAboveLeft, symbology.PointCenter, "nowhere"},
		Offset: 4, Line: symbology.LineBelow, Along: symbology.LineEnd, Orientation: symbology.LineStraight,
		Repeat: 120, AllParts: true, PolygonStraight: true, Outside: true, RemoveDuplicates: true,
	}}
	ls := labelStyle(&in)
	want := render.LabelPlacement{
		Points:   []render.PointPosition{render.PointAboveLeft, render.PointCenter},
		LineSide: render.LineBelow, LineAnchor: render.LineEnd, LineOrientation: render.LineStraight,
		LineRepeat: 120, LineAllParts: true, PolygonStraight: true, PolygonOutside: true, RemoveDuplicates: true,
	}
	if ls.Offset != 4 || !reflect.DeepEqual(ls.Placement, want) {
		t.Errorf("placement %+v offset %v, want %+v offset 4", ls.Placement, ls.Offset, want)
	}
	for _, c := range []struct {
		in   symbology.LabelPlacement
		want render.LabelPlacement
	}{
		{symbology.LabelPlacement{}, render.LabelPlacement{}},
		{symbology.LabelPlacement{Line: symbology.LineAbove, Along: symbology.LineStart, Orientation: symbology.LineHorizontal},
			render.LabelPlacement{LineSide: render.LineAbove, LineAnchor: render.LineStart, LineOrientation: render.LineHorizontal}},
	} {
		if got := labelPlacement(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("labelPlacement(%+v) = %+v, want %+v", c.in, got, c.want)
		}
	}
	// Repeat scales with the reference scale, like the text.
	if got := labelStyle(&in).Scaled(2).Placement.LineRepeat; got != 240 {
		t.Errorf("repeat scaled by 2: %v", got)
	}
}

// TestScaleRangeGeographic: on the geographic world service, a layer's scale range is checked
// against the map scale ComputeScale reports (degrees counted as metres on the equator), not the
// map units taken as metres.
func TestScaleRangeGeographic(t *testing.T) {
	c := catalogtest.Samples(t)
	svc, ok := c.Service("world_geographic")
	if !ok {
		t.Fatal("no world_geographic service")
	}
	m, _ := svc.Map("Layers")
	countries, _ := m.Layer(1)
	def := *countries.Def
	countries.Def = &def
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	// 60° of longitude over 600 px at 96 DPI: 1:42,073,500. Europe's land is at (15°E, 50°N).
	v := render.View{Extent: orb.Bound{Min: orb.Point{-15, 30}, Max: orb.Point{45, 70}}, Width: 600, Height: 400, DPI: 96}
	scale := MapScale(m, v)
	if scale < 42e6 || scale > 42.2e6 {
		t.Fatalf("map scale 1:%.0f, want about 1:42,073,500", scale)
	}
	land := color.NRGBA{232, 228, 216, 255}
	for _, tc := range []struct {
		minScale, maxScale float64
		shown              bool
	}{
		{0, 0, true},
		{50e6, 0, true},    // zoomed in beyond 1:50M
		{40e6, 0, false},   // 1:42M is zoomed out beyond 1:40M
		{0, 40e6, true},    // not zoomed in beyond 1:40M
		{0, 50e6, false},   // zoomed in beyond 1:50M
		{0, 1000, true},    // in degrees taken as metres the map would be at 1:378 and hidden
		{50e6, 40e6, true}, // inside the range
	} {
		def.MinScale, def.MaxScale = tc.minScale, tc.maxScale
		req := Request{Map: m, View: v, Layers: []LayerState{{ID: 1, Visible: true}}}
		rm, err := Build(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		img, err := r.Draw(context.Background(), rm, v)
		if err != nil {
			t.Fatal(err)
		}
		// Land pixels in a box over central Europe.
		n := 0
		for y := 120; y < 160; y++ {
			for x := 280; x < 320; x++ {
				if img.RGBAAt(x, y) == (color.RGBA{land.R, land.G, land.B, 255}) {
					n++
				}
			}
		}
		r.Release(img)
		if shown := n > 400; shown != tc.shown {
			t.Errorf("minScale %.0f maxScale %.0f at 1:%.0f: %d land pixels, shown %v, want %v", tc.minScale, tc.maxScale, scale, n, shown, tc.shown)
		}
	}
}
