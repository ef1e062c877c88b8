package render

import (
	"context"
	"image/color"
	"math"
	"testing"

	"github.com/paulmach/orb"
)

// Tests of the label placement options (LabelPlacement) and of layer scale ranges in map units
// other than metres.

var dotRed = Symbol{Fill: color.NRGBA{200, 0, 0, 255}, MarkerSize: 5}

// pointPositionsMap is a 320×210 map of nine dots in a 3×3 grid, each labelled at one position
// (named by its label).
func pointPositionsMap() Map {
	names := [...]string{"right", "above-right", "below-right", "left", "above-left", "below-left", "above", "below", "centre"}
	var layers []Layer
	for i, name := range names {
		x, y := 70+float64(i%3)*80, 175-float64(i/3)*70
		layers = append(layers, Layer{
			Name:     name,
			Features: Features{{Geom: orb.Point{x, y}, Label: name}},
			Symbol:   dotRed,
			Label: &LabelStyle{Size: 8, Color: color.NRGBA{0, 0, 0, 255}, Halo: paper, HaloWidth: 1,
				Placement: LabelPlacement{Points: []PointPosition{PointPosition(i)}}},
		})
	}
	return Map{Background: paper, Layers: layers}
}

func TestPointLabelPositions(t *testing.T) {
	v := labelView(320, 210)
	m := pointPositionsMap()
	rec, _, _ := drawRecorded(t, m, v)
	if len(rec.texts) != len(m.Layers) {
		t.Fatalf("%d labels drawn, want %d: %v", len(rec.texts), len(m.Layers), rec.texts)
	}
	fonts := defaultRenderer().Fonts()
	for _, tx := range rec.texts {
		var p orb.Point
		for _, l := range m.Layers {
			if l.Name == tx.s {
				p = l.Features.(Features)[0].Geom.(orb.Point)
			}
		}
		px, py := v.Matrix().Apply(p[0], p[1])
		w, a, d := fonts.face(tx.t).measure(tx.s)
		// The ink box of the label.
		x0, x1, y0, y1 := tx.x, tx.x+w, tx.y-a, tx.y+d
		cx, cy := (x0+x1)/2, (y0+y1)/2
		right, left := x0 > px, x1 < px
		above, below := y1 < py, y0 > py
		var ok bool
		switch tx.s {
		case "right":
			ok = right && math.Abs(cy-py) < 1
		case "left":
			ok = left && math.Abs(cy-py) < 1
		case "above":
			ok = above && math.Abs(cx-px) < 1
		case "below":
			ok = below && math.Abs(cx-px) < 1
		case "above-right":
			ok = above && right
		case "above-left":
			ok = above && left
		case "below-right":
			ok = below && right
		case "below-left":
			ok = below && left
		case "centre":
			ok = math.Abs(cx-px) < 1 && math.Abs(cy-py) < 1
		}
		if !ok {
			t.Errorf("label %q box (%.1f,%.1f)-(%.1f,%.1f) is not at its position around the point (%.1f, %.1f)", tx.s, x0, y0, x1, y1, px, py)
		}
	}
	// A single position that does not fit (out of the image) drops the label; the default
	// positions move it to the other side.
	one := func(pos []PointPosition) []recordedText {
		m := Map{Background: paper, Layers: []Layer{{
			Features: Features{{Geom: orb.Point{290, 50}, Label: "Edge"}}, Symbol: dotRed,
			Label: &LabelStyle{Size: 8, Placement: LabelPlacement{Points: pos}},
		}}}
		rec, _, _ := drawRecorded(t, m, labelView(300, 100))
		return rec.texts
	}
	if got := one([]PointPosition{PointRight}); len(got) != 0 {
		t.Errorf("a right-only label at the right edge was drawn at %v", got)
	}
	if got := one(nil); len(got) != 1 || got[0].x > 290 {
		t.Errorf("the default positions placed %v, want one label left of the point", got)
	}
	// Offset: the label's ink starts Offset points from the point.
	m2 := Map{Background: paper, Layers: []Layer{{
		Features: Features{{Geom: orb.Point{50, 50}, Label: "Far"}}, Symbol: dotRed,
		Label: &LabelStyle{Size: 8, Offset: 15, Placement: LabelPlacement{Points: []PointPosition{PointRight}}},
	}}}
	rec2, _, _ := drawRecorded(t, m2, labelView(200, 100))
	if len(rec2.texts) != 1 || math.Abs(rec2.texts[0].x-(50+v.PointsToPixels(15))) > 0.01 {
		t.Errorf("offset label at %v, want x %.1f", rec2.texts, 50+v.PointsToPixels(15))
	}
}

// lineSideMap is a 300×160 map of one straight line labelled above it and a curve labelled below.
func lineSideMap() Map {
	return Map{Background: paper, Layers: []Layer{
		{
			Name:     "above",
			Features: Features{{Geom: orb.LineString{{20, 110}, {280, 140}}, Label: "Above the line"}},
			Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 3},
			Label:    &LabelStyle{Size: 9, Color: riverInk, Halo: paper, HaloWidth: 1, Placement: LabelPlacement{LineSide: LineAbove}},
		},
		{
			Name:     "below",
			Features: Features{{Geom: sineLine(20, 280, 50, 15, 40), Label: "Below the curve"}},
			Symbol:   Symbol{Stroke: roadGrey, StrokeWidth: 2},
			Label:    &LabelStyle{Size: 9, Color: color.NRGBA{40, 40, 40, 255}, Halo: paper, HaloWidth: 1, Placement: LabelPlacement{LineSide: LineBelow}},
		},
	}}
}

func TestLineLabelSide(t *testing.T) {
	v := labelView(300, 160)
	m := lineSideMap()
	fonts := defaultRenderer().Fonts()
	for _, side := range []LineSide{LineOn, LineAbove, LineBelow} {
		m.Layers[0].Label.Placement.LineSide = side
		m.Layers = m.Layers[:1]
		rec, _, _ := drawRecorded(t, m, v)
		if len(rec.texts) != 1 {
			t.Fatalf("side %d: %d texts, want the straight label", side, len(rec.texts))
		}
		tx := rec.texts[0]
		f := fonts.face(tx.t)
		w, a, d := f.measure(tx.s)
		mid := (a - d) / 2
		g := Glyph{X: tx.x, Y: tx.y, Angle: tx.t.Angle}
		cx, cy := glyphCentre(g, w, mid)
		line := m.Layers[0].Features.(Features)[0].Geom.(orb.LineString)
		dist := distToLine(v, line, cx, cy)
		// The line is y = 110 + 30/260·x in map units, so y down on screen is 160 - that.
		lineY := 160 - (110 + (cx-20)*30/260)
		// Ink half height plus the gap: half the 3 pt stroke (2 px) plus 2 pt (2.7 px).
		want := (a+d)/2 + v.PointsToPixels(1.5) + v.PointsToPixels(2)
		switch side {
		case LineOn:
			if dist > 1 {
				t.Errorf("on the line: label centre %.1f px from it", dist)
			}
		case LineAbove:
			if cy > lineY || math.Abs(dist-want) > 1.5 {
				t.Errorf("above: label centre y %.1f, line y %.1f, %.1f px from it, want %.1f above", cy, lineY, dist, want)
			}
		case LineBelow:
			if cy < lineY || math.Abs(dist-want) > 1.5 {
				t.Errorf("below: label centre y %.1f, line y %.1f, %.1f px from it, want %.1f below", cy, lineY, dist, want)
			}
		}
	}
}

// repeatMap is a 600×200 map of a long gently curving line whose label repeats every 150 points.
func repeatMap() Map {
	return Map{Background: paper, Layers: []Layer{{
		Name:     "long",
		Features: Features{{Geom: sineLine(5, 595, 100, 30, 90), Label: "Long River"}},
		Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 2},
		Label: &LabelStyle{Size: 9, Color: riverInk, Halo: paper, HaloWidth: 1, FontStyle: FontStyle{Italic: true},
			Placement: LabelPlacement{LineRepeat: 150}},
	}}}
}

func TestLineLabelRepeat(t *testing.T) {
	v := labelView(600, 200)
	m := repeatMap()
	rec, _, lb := drawRecorded(t, m, v)
	n := len(rec.runs) + len(rec.texts)
	// The line is about 700 px long, the repeat distance 200 px: three or four labels.
	if n < 3 || n > 4 {
		t.Fatalf("%d labels along the line, want 3 or 4", n)
	}
	var xs []float64
	for _, r := range rec.runs {
		xs = append(xs, r[0].X)
	}
	for _, tx := range rec.texts {
		xs = append(xs, tx.x)
	}
	for i, a := range xs {
		for _, b := range xs[:i] {
			if math.Abs(a-b) < 100 {
				t.Errorf("repeated labels start %.0f px apart (x %.0f and %.0f), want about 200", math.Abs(a-b), a, b)
			}
		}
	}
	// One box per glyph, label after label: boxes of different labels never overlap.
	per := len("Long River")
	for i, b := range lb.placed {
		for j, o := range lb.placed[:i] {
			if i/per != j/per && b.overlaps(o) {
				t.Errorf("glyph boxes %d and %d of repeated labels %d and %d overlap", i, j, i/per, j/per)
			}
		}
	}
	// Without repeat: one label.
	m.Layers[0].Label.Placement.LineRepeat = 0
	rec, _, _ = drawRecorded(t, m, v)
	if n := len(rec.runs) + len(rec.texts); n != 1 {
		t.Errorf("%d labels without repeat, want 1", n)
	}
}

func TestLineLabelAnchorOrientationParts(t *testing.T) {
	v := labelView(300, 100)
	line := orb.LineString{{10, 50}, {290, 50}}
	draw := func(p LabelPlacement, g orb.Geometry) *recorder {
		m := Map{Background: paper, Layers: []Layer{{
			Features: Features{{Geom: g, Label: "Lane"}},
			Symbol:   Symbol{Stroke: roadGrey, StrokeWidth: 1},
			Label:    &LabelStyle{Size: 8, Placement: p},
		}}}
		rec, _, _ := drawRecorded(t, m, v)
		return rec
	}
	// Start and end: the label at that end of the line.
	if r := draw(LabelPlacement{LineAnchor: LineStart}, line); len(r.texts) != 1 || r.texts[0].x > 15 {
		t.Errorf("start: %v, want the label at x 10", r.texts)
	}
	if r := draw(LabelPlacement{LineAnchor: LineEnd}, line); len(r.texts) != 1 || r.texts[0].x < 250 {
		t.Errorf("end: %v, want the label ending at x 290", r.texts)
	}
	// Horizontal on a diagonal line: text at angle 0, centred on the line's middle.
	diag := orb.LineString{{100, 10}, {200, 90}}
	if r := draw(LabelPlacement{LineOrientation: LineHorizontal}, diag); len(r.texts) != 1 || r.texts[0].t.Angle != 0 {
		t.Errorf("horizontal: %v runs %v, want one unrotated text", r.texts, r.runs)
	}
	// Straight on a curve: one text along the chord of a straight enough stretch, never glyph
	// by glyph.
	curve := sineLine(10, 290, 50, 8, 60)
	if r := draw(LabelPlacement{LineOrientation: LineStraight}, curve); len(r.texts) != 1 || len(r.runs) != 0 || r.texts[0].t.Angle == 0 {
		t.Errorf("straight: %d texts, %d runs, want one rotated text", len(r.texts), len(r.runs))
	}
	// Parts: the longest only, or each.
	parts := orb.MultiLineString{{{10, 20}, {140, 20}}, {{10, 70}, {290, 70}}, {{160, 20}, {290, 20}}}
	if r := draw(LabelPlacement{}, parts); len(r.texts) != 1 {
		t.Errorf("longest part: %d labels, want 1", len(r.texts))
	}
	if r := draw(LabelPlacement{LineAllParts: true}, parts); len(r.texts) != 3 {
		t.Errorf("all parts: %d labels, want 3", len(r.texts))
	}
}

func TestPolygonPlacement(t *testing.T) {
	v := labelView(300, 200)
	// A long thin rectangle turned 30° anticlockwise about (150, 100).
	s, c := math.Sincos(30 * math.Pi / 180)
	var ring orb.Ring
	for _, p := range [][2]float64{{-120, -15}, {120, -15}, {120, 15}, {-120, 15}, {-120, -15}} {
		ring = append(ring, orb.Point{150 + p[0]*c - p[1]*s, 100 + p[0]*s + p[1]*c})
	}
	draw := func(p LabelPlacement, g orb.Geometry, label string) *recorder {
		m := Map{Background: paper, Layers: []Layer{
			{
				Features: Features{{Geom: g, Label: label}},
				Symbol:   Symbol{Fill: color.NRGBA{220, 230, 200, 255}},
				Label:    &LabelStyle{Size: 9, Placement: p},
			},
			// A label of higher priority over the small islet.
			{
				Features: Features{{Geom: orb.Point{265, 25}, Label: "X"}},
				Label:    &LabelStyle{Size: 9, Priority: 1, Placement: LabelPlacement{Points: []PointPosition{PointCenter}}},
			},
		}}
		rec, _, _ := drawRecorded(t, m, v)
		return rec
	}
	texts := func(r *recorder) (out []recordedText) {
		for _, tx := range r.texts {
			if tx.s != "X" {
				out = append(out, tx)
			}
		}
		return out
	}
	if r := texts(draw(LabelPlacement{PolygonStraight: true}, orb.Polygon{ring}, "Long Island")); len(r) != 1 || math.Abs(r[0].t.Angle-30) > 1 {
		t.Errorf("straight: %v, want one label at 30°", r)
	}
	if r := texts(draw(LabelPlacement{}, orb.Polygon{ring}, "Long Island")); len(r) != 1 || r[0].t.Angle != 0 {
		t.Errorf("horizontal: %v, want one label at 0°", r)
	}
	// A small islet under another label: its label is dropped, or placed outside around it.
	small := orb.Polygon{{{260, 20}, {270, 20}, {270, 30}, {260, 30}, {260, 20}}}
	if r := texts(draw(LabelPlacement{}, small, "Islet")); len(r) != 0 {
		t.Errorf("inside only: %v, want no label", r)
	}
	if r := texts(draw(LabelPlacement{PolygonOutside: true}, small, "Islet")); len(r) != 1 {
		t.Errorf("may go outside: %v, want one label around the islet", r)
	}
}

func TestRemoveDuplicates(t *testing.T) {
	v := labelView(300, 100)
	fs := Features{
		{Geom: orb.Point{50, 50}, Label: "Springfield"},
		{Geom: orb.Point{150, 50}, Label: "Springfield"},
		{Geom: orb.Point{250, 50}, Label: "Shelbyville"},
	}
	for _, remove := range []bool{false, true} {
		m := Map{Background: paper, Layers: []Layer{{Features: fs, Symbol: dotRed,
			Label: &LabelStyle{Size: 8, Placement: LabelPlacement{RemoveDuplicates: remove, Points: []PointPosition{PointAbove}}}}}}
		rec, _, _ := drawRecorded(t, m, v)
		want := 3
		if remove {
			want = 2
		}
		if len(rec.texts) != want {
			t.Errorf("remove duplicates %v: %d labels, want %d", remove, len(rec.texts), want)
		}
	}
	// Per layer: the same text on another layer is not a duplicate.
	m := Map{Background: paper, Layers: []Layer{
		{Features: fs[:1], Symbol: dotRed, Label: &LabelStyle{Size: 8, Placement: LabelPlacement{RemoveDuplicates: true}}},
		{Features: fs[1:2], Symbol: dotRed, Label: &LabelStyle{Size: 8, Placement: LabelPlacement{RemoveDuplicates: true}}},
	}}
	if rec, _, _ := drawRecorded(t, m, v); len(rec.texts) != 2 {
		t.Errorf("the same text on two layers: %d labels, want 2", len(rec.texts))
	}
}

// TestScaleRangeUnits: a layer's scale range is checked against the map's scale in metres, map
// units counting UnitMeters metres (a geographic map's degrees).
func TestScaleRangeUnits(t *testing.T) {
	const metersPerDegree = 111319.49079327357
	// 10 degrees over 400 px at 96 DPI: 1:10,518,377 on a geographic map, 1:94.5 in metres.
	v := View{Extent: orb.Bound{Max: orb.Point{10, 5}}, Width: 400, Height: 200, DPI: 96}
	geo := Map{Background: paper, UnitMeters: metersPerDegree}
	if s := geo.Scale(v); math.Abs(s-10.0/400*metersPerDegree*96/0.0254) > 1 {
		t.Fatalf("geographic scale %.0f", s)
	}
	square := Features{{Geom: orb.Polygon{{{2, 1}, {8, 1}, {8, 4}, {2, 4}, {2, 1}}}}}
	sym := Symbol{Fill: color.NRGBA{0, 0, 200, 255}}
	for _, tc := range []struct {
		minScale, maxScale float64
		units              float64
		shown              bool
	}{
		{20_000_000, 0, metersPerDegree, true},          // closer than the 1:20M limit: shown
		{5_000_000, 0, metersPerDegree, false},          // 1:10.5M is beyond the 1:5M limit: hidden
		{0, 20_000_000, metersPerDegree, false},         // maxScale 1:20M: only closer than that
		{0, 5_000_000, metersPerDegree, true},           //
		{11_000_000, 10_000_000, metersPerDegree, true}, // in a narrow range
		{5_000_000, 0, 0, true},                         // counted in metres the map is at 1:94: shown
		{0, 1_000, 0, false},                            // … and hidden under a maxScale of 1:1000
	} {
		m := geo
		m.UnitMeters = tc.units
		m.Layers = []Layer{{Features: square, Symbol: sym, MinScale: tc.minScale, MaxScale: tc.maxScale}}
		img, err := Draw(context.Background(), m, v)
		if err != nil {
			t.Fatal(err)
		}
		got := nrgbaAt(img, 200, 100) == sym.Fill
		Release(img)
		if got != tc.shown {
			t.Errorf("min %.0f max %.0f units %g (scale %.0f): shown %v, want %v", tc.minScale, tc.maxScale, tc.units, m.Scale(v), got, tc.shown)
		}
	}
}
