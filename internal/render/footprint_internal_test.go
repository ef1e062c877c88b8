package render

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// plainSurface hides GGSurface's footprint methods: every polygon is filled and stroked.
type plainSurface struct{ Surface }

// smallRegion is the region scene of the differential suite at 96×72: 48 m parcels, 65 m a pixel.
func smallRegion() (Map, View) {
	sc := parcelScene("region", 96, 72, orb.Bound{Min: orb.Point{10, 10}, Max: orb.Point{10 + 96*65, 10 + 72*65}}, diffLimits{})
	return sc.mapfarm()
}

// TestSubPixelOutlines: a map of polygons smaller than a pixel is their outlines' colour blended
// with a little of their fill, as every outline covers a share of its pixels (before, outlines
// that collapsed to one pixel were dropped and the map was mostly fill).
func TestSubPixelOutlines(t *testing.T) {
	m, v := smallRegion()
	img, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	_, mean := luminance(img)
	// Outline (80,80,80), fill (200,200,150): MapServer draws (91,91,86) (see the suite).
	if mean[0] > 100 || mean[0] < 80 || mean[2] > 95 {
		t.Errorf("mean colour %.0f, want within (80–100, 80–100, ≤ 95)", mean)
	}
}

// TestFootprintsMatchOutlines: polygons drawn from their footprints (accumulated coverage) give
// the picture that filling and stroking each one gives, and a source's Footprint features the
// picture of their geometry.
func TestFootprintsMatchOutlines(t *testing.T) {
	m, v := smallRegion()
	ctx := context.Background()
	fast, err := Draw(ctx, m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(fast)
	slow := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	if err := defaultRenderer().DrawTo(ctx, plainSurface{NewGGSurface(slow, nil)}, m, v); err != nil {
		t.Fatal(err)
	}
	if d := compareImages(fast, slow); d.meanDiff > 2 || d.ssim < 0.95 {
		t.Errorf("footprints vs outlines: %v; want mean colour diff ≤ 2, SSIM ≥ 0.95", d)
	}
	// The same parcels as footprints only, as a source that reduces them would yield them.
	fs := m.Layers[0].Features.(Features)
	reduced := make(Features, len(fs))
	for i, f := range fs {
		reduced[i] = Feature{Footprint: footprintOf(t, f.Geom)}
	}
	m.Layers[0].Features = reduced
	fromFootprints, err := Draw(ctx, m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(fromFootprints)
	if d := compareImages(fast, fromFootprints); d.meanDiff > 0.5 || d.ssim < 0.99 {
		t.Errorf("Footprint features vs geometry: %v; want mean colour diff ≤ 0.5, SSIM ≥ 0.99", d)
	}
	// On a vector surface a Footprint feature is its bounding box.
	if doc := drawVector(t, SVG, m, v); !bytes.Contains(doc, []byte("<path")) {
		t.Errorf("SVG of Footprint features draws nothing:\n%.400s", doc)
	}
}

// footprintOf is the footprint of a polygon or multipolygon, as an Overview keeps it.
func footprintOf(t testing.TB, g orb.Geometry) Footprint {
	area, perimeter, ok := feature.PolygonMeasures(g)
	if !ok {
		t.Fatalf("%T has no footprint", g)
	}
	return Footprint{Bound: g.Bound(), Area: area, Perimeter: perimeter}
}

// TestSnappedLineNeverCollapses: a one-pixel outline of a ring within one pixel (drawn through the
// Surface, where nothing turns it into a footprint) is drawn, not snapped to a single point and
// dropped.
func TestSnappedLineNeverCollapses(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	s := NewGGSurface(img, nil)
	s.Clear(color.NRGBA{255, 255, 255, 255})
	s.NewPath()
	s.MoveTo(3.2, 3.2)
	s.LineTo(3.7, 3.2)
	s.LineTo(3.7, 3.7)
	s.LineTo(3.2, 3.7)
	s.ClosePath()
	s.Stroke(StrokeStyle{Color: color.NRGBA{0, 0, 0, 255}, Width: 1})
	if c := nrgbaAt(img, 3, 3); c.R > 128 {
		t.Errorf("pixel (3, 3) under a one-pixel outline is %v, want dark", c)
	}
}

// TestSharedBorderOnce: the border two polygons share is as dark as an outer border, not darker
// (drawn twice), with a hairline outline.
func TestSharedBorderOnce(t *testing.T) {
	m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
		Features: Features{
			{Geom: orb.Polygon{{{2, 2}, {10, 2}, {10, 14}, {2, 14}, {2, 2}}}},
			{Geom: orb.Polygon{{{10, 2}, {18, 2}, {18, 14}, {10, 14}, {10, 2}}}},
		},
		Symbol: Symbol{Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 0.375}, // 0.5 px
	}}}
	v := View{Extent: orb.Bound{Max: orb.Point{20, 16}}, Width: 20, Height: 16, DPI: 96}
	img, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	// x = 2 and x = 10 are pixel edges: each border covers a quarter of the pixels on either side.
	outer, shared := nrgbaAt(img, 2, 8), nrgbaAt(img, 10, 8)
	if d := int(outer.R) - int(shared.R); d > 8 || d < -8 {
		t.Errorf("shared border pixel %v, outer border pixel %v: want the same", shared, outer)
	}
}

// TestNoSeam: the street scene of the suite (a 2 m gap between parcels on a pixel column, every
// 128 px) has no column or row lighter than the gaps' share of outline and fill allows: before,
// both outlines snapped away from the gap and left a white line.
func TestNoSeam(t *testing.T) {
	sc := diffScenes()[0]
	m, v := sc.mapfarm()
	img, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	lum, _ := luminance(img)
	w, h := v.Width, v.Height
	for x := range w {
		var s float64
		for y := range h {
			s += lum[y*w+x]
		}
		if s /= float64(h); s > 235 {
			t.Errorf("column %d: mean luminance %.0f, a seam", x, s)
		}
	}
	for y := range h {
		var s float64
		for x := range w {
			s += lum[y*w+x]
		}
		if s /= float64(w); s > 235 {
			t.Errorf("row %d: mean luminance %.0f, a seam", y, s)
		}
	}
}
