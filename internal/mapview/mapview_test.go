package mapview_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

type fakeMap struct {
	sr  proj.SR
	ext orb.Bound
	sys *proj.Systems
}

func (m fakeMap) Systems() *proj.Systems { return m.sys }

func (m fakeMap) SpatialReference() proj.SR { return m.sr }
func (m fakeMap) DefaultExtent() orb.Bound  { return m.ext }
func (m fakeMap) FeatureBounds(int, []int) (orb.Bound, error) {
	return orb.Bound{Min: orb.Point{10, 20}, Max: orb.Point{10, 20}}, nil // a single point
}

var mercator = fakeMap{sr: proj.SR{WKID: 3857}, ext: orb.Bound{Min: orb.Point{-100, -50}, Max: orb.Point{100, 50}}}

func display(w, h int, dpi float64) *gisxml.ImageDisplay {
	return &gisxml.ImageDisplay{ImageWidth: w, ImageHeight: h, ImageDPI: dpi}
}

func extent(xmin, ymin, xmax, ymax float64) *gisxml.MapExtent {
	return &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: xmin, YMin: ymin, XMax: xmax, YMax: ymax}}}
}

func TestResolveAreas(t *testing.T) {
	pt := func(x, y float64) gisxml.Point { return &gisxml.PointN{X: x, Y: y} }
	dpi := 48.0
	cases := []struct {
		name string
		area gisxml.MapArea
		disp *gisxml.ImageDisplay
		want orb.Bound
		sr   proj.SR
	}{
		{"no area: initial extent", nil, display(200, 100, 96), mercator.ext, mercator.sr},
		{"extent wider than image grows in y", extent(0, 0, 400, 100), display(200, 100, 96), orb.Bound{Min: orb.Point{0, -50}, Max: orb.Point{400, 150}}, mercator.sr},
		{"extent taller than image grows in x", extent(0, 0, 100, 100), display(200, 100, 96), orb.Bound{Min: orb.Point{-50, 0}, Max: orb.Point{150, 100}}, mercator.sr},
		// 1:96000 at 96 DPI: one pixel is 96000 * 0.0254 / 96 = 25.4 m.
		{"center and scale", &gisxml.CenterAndScale{Center: pt(1000, 2000), Scale: 96000}, display(100, 50, 96),
			orb.Bound{Min: orb.Point{1000 - 1270, 2000 - 635}, Max: orb.Point{1000 + 1270, 2000 + 635}}, mercator.sr},
		{"center and scale, own DPI", &gisxml.CenterAndScale{Center: pt(0, 0), Scale: 96000, DPI: &dpi}, display(100, 50, 96),
			orb.Bound{Min: orb.Point{-2540, -1270}, Max: orb.Point{2540, 1270}}, mercator.sr},
		{"center and size in km", &gisxml.CenterAndSize{Center: pt(0, 0), Width: 2, Height: 1, Units: "gisKilometers"}, display(200, 100, 96),
			orb.Bound{Min: orb.Point{-1000, -500}, Max: orb.Point{1000, 500}}, mercator.sr},
		{"center and size in degrees on a geographic map", &gisxml.CenterAndSize{Center: pt(0, 0), Width: 20, Height: 10, Units: "esriDecimalDegrees"}, display(200, 100, 96),
			orb.Bound{Min: orb.Point{-10, -5}, Max: orb.Point{10, 5}}, proj.SR{WKID: 4326}},
		// A point feature falls back to the default scale: 1:9600 at 96 DPI is 2.54 m a pixel.
		{"feature extent of a point", &gisxml.FeatureExtent{LayerID: 0, DefaultScale: 9600, ExpandRatio: 1}, display(100, 100, 96),
			orb.Bound{Min: orb.Point{10 - 127, 20 - 127}, Max: orb.Point{10 + 127, 20 + 127}}, mercator.sr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mercator
			m.sr = tc.sr
			v, err := mapview.Resolve(m, &gisxml.MapDescription{MapArea: tc.area}, tc.disp, mapview.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !near(v.Extent.Min, tc.want.Min) || !near(v.Extent.Max, tc.want.Max) {
				t.Fatalf("extent %v, want %v", v.Extent, tc.want)
			}
		})
	}
}

func near(a, b orb.Point) bool { return math.Abs(a[0]-b[0]) < 1e-6 && math.Abs(a[1]-b[1]) < 1e-6 }

func TestScale(t *testing.T) {
	v, err := mapview.Resolve(mercator, &gisxml.MapDescription{MapArea: extent(0, 0, 25.4*100, 25.4*50)}, display(100, 50, 96), mapview.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Scale(); math.Abs(got-96000) > 1e-6 {
		t.Fatalf("scale %v, want 96000", got)
	}
	geo := fakeMap{sr: proj.SR{WKID: 4326}}
	v, _ = mapview.Resolve(geo, &gisxml.MapDescription{MapArea: extent(0, 0, 1, 1)}, display(96, 96, 96), mapview.Limits{})
	// One degree across 96 px at 96 DPI: one inch shows 111,319.49 m.
	if got := v.Scale(); math.Abs(got-mapview.MetersPerDegree/0.0254) > 1e-3 {
		t.Fatalf("geographic scale %v", got)
	}
}

// ToMap and ToPixel are inverses, rotation included, and rotation turns anticlockwise.
func TestPixelRoundTrip(t *testing.T) {
	for _, rot := range []float64{0, 30, 90, 180, -45} {
		v, err := mapview.Resolve(mercator, &gisxml.MapDescription{MapArea: extent(0, 0, 400, 300), Rotation: rot}, display(400, 300, 96), mapview.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, px := range [][2]float64{{0, 0}, {399, 299}, {17.5, 250}, {200, 150}} {
			p := v.ToMap(px[0], px[1])
			x, y := v.ToPixel(p)
			if math.Abs(x-px[0]) > 1e-9 || math.Abs(y-px[1]) > 1e-9 {
				t.Errorf("rotation %v: pixel %v → %v → %v,%v", rot, px, p, x, y)
			}
		}
	}
	v, _ := mapview.Resolve(mercator, &gisxml.MapDescription{MapArea: extent(0, 0, 400, 400), Rotation: 90}, display(400, 400, 96), mapview.Limits{})
	// Rotated 90° anticlockwise, the map's east edge (x=400, centre y) is at the top of the image.
	x, y := v.ToPixel(orb.Point{400, 200})
	if math.Abs(x-200) > 1e-9 || math.Abs(y-0) > 1e-9 {
		t.Fatalf("east edge at pixel %v,%v, want 200,0", x, y)
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		name string
		md   *gisxml.MapDescription
		disp *gisxml.ImageDisplay
		lim  mapview.Limits
	}{
		{"no display", &gisxml.MapDescription{}, nil, mapview.Limits{}},
		{"zero size", &gisxml.MapDescription{}, display(0, 10, 96), mapview.Limits{}},
		{"too large", &gisxml.MapDescription{}, display(5000, 10, 96), mapview.Limits{MaxWidth: 4096, MaxHeight: 4096}},
		{"inverted extent", &gisxml.MapDescription{MapArea: extent(10, 0, 0, 10)}, display(10, 10, 96), mapview.Limits{}},
		{"NaN extent", &gisxml.MapDescription{MapArea: extent(math.NaN(), 0, 1, 1)}, display(10, 10, 96), mapview.Limits{}},
		{"negative scale", &gisxml.MapDescription{MapArea: &gisxml.CenterAndScale{Scale: -5}}, display(10, 10, 96), mapview.Limits{}},
		{"DPI NaN", &gisxml.MapDescription{}, display(10, 10, math.NaN()), mapview.Limits{}},
		{"DPI negative", &gisxml.MapDescription{}, display(10, 10, -96), mapview.Limits{}},
		{"DPI +Inf", &gisxml.MapDescription{}, display(10, 10, math.Inf(1)), mapview.Limits{}},
		{"DPI 1e300", &gisxml.MapDescription{}, display(10, 10, 1e300), mapview.Limits{}},
		{"DPI 2401", &gisxml.MapDescription{}, display(10, 10, 2401), mapview.Limits{}},
		{"DPI 0.5", &gisxml.MapDescription{}, display(10, 10, 0.5), mapview.Limits{}},
		{"MapArea DPI NaN", &gisxml.MapDescription{MapArea: &gisxml.CenterAndScale{Scale: 1000, DPI: ptr(math.NaN())}}, display(10, 10, 96), mapview.Limits{}},
		{"unknown units", &gisxml.MapDescription{MapArea: &gisxml.CenterAndSize{Width: 1, Height: 1, Units: "cubits"}}, display(10, 10, 96), mapview.Limits{}},
		{"other spatial reference", &gisxml.MapDescription{SpatialReference: &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(4326)}}}, display(10, 10, 96), mapview.Limits{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mapview.Resolve(mercator, tc.md, tc.disp, tc.lim)
			var bad *mapview.BadRequestError
			if err == nil || !errors.As(err, &bad) {
				t.Fatalf("err = %v, want a BadRequestError", err)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestResolveOtherSystem: a MapDescription in another system than the map's draws in it, its
// default extent transformed; an Extent in a third system is transformed; a system the engine
// does not know is a bad request naming its WKID.
func TestResolveOtherSystem(t *testing.T) {
	m := fakeMap{sr: proj.SR{WKID: 3857}, ext: orb.Bound{Min: orb.Point{-proj.MaxExtent, 0}, Max: orb.Point{proj.MaxExtent, proj.MaxExtent}}, sys: proj.NewSystems(0)}
	geo := &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(4326)}}
	v, err := mapview.Resolve(m, &gisxml.MapDescription{SpatialReference: geo}, display(400, 200, 96), mapview.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := orb.Bound{Min: orb.Point{-180, -2.5}, Max: orb.Point{180, 177.5}} // 0..85.05° grown to 2:1 about its centre
	if v.SR.WKID != 4326 || math.Abs(v.Extent.Min[0]-want.Min[0]) > 1e-9 || math.Abs(v.Extent.Max[1]-v.Extent.Min[1]-180) > 1e-9 {
		t.Errorf("extent = %v (SR %v), want about %v", v.Extent, v.SR, want)
	}
	if got, want := v.Scale(), 360.0/400*proj.MetersPerDegree*96/0.0254; math.Abs(got-want) > 1e-3 {
		t.Errorf("scale = %g, want %g (degrees counted on the equator)", got, want)
	}
	// An Extent in Web Mercator for a map drawn in 4326.
	merc := &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(102100)}}
	area := &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: 0, YMin: 0, XMax: proj.MaxExtent / 2, YMax: proj.MaxExtent / 4, SpatialReference: merc}}}
	v, err = mapview.Resolve(m, &gisxml.MapDescription{SpatialReference: geo, MapArea: area}, display(400, 200, 96), mapview.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(v.Extent.Max[0]-90) > 1e-9 || math.Abs(v.Extent.Center()[1]-proj.FromMercator(orb.Point{0, proj.MaxExtent / 8})[1]) > 30 {
		t.Errorf("extent from Web Mercator = %v", v.Extent)
	}
	unknown := &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(99999)}}
	_, err = mapview.Resolve(m, &gisxml.MapDescription{SpatialReference: unknown}, display(10, 10, 96), mapview.Limits{})
	var bad *mapview.BadRequestError
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "WKID 99999") {
		t.Errorf("unknown system: err = %v, want a BadRequestError naming WKID 99999", err)
	}
	if sr := mapview.SR(&gisxml.UnknownCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKT: ptr(" PROJCS[x] ")}}); sr.Text != "PROJCS[x]" || sr.WKID != 0 {
		t.Errorf("SR of a WKT = %+v", sr)
	}
}
