package mapdraw

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func at(img image.Image, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

// TestPictureColours: a 1-bit picture's black pixels take FgColor and its white ones BgColor
// (swapped by Swap1Bit); a picture's pixels of the transparent colour are cleared; colour
// pictures keep their colours.
func TestPictureColours(t *testing.T) {
	// A 1-bit paletted PNG: a black left half, a white right half.
	bw := image.NewPaletted(image.Rect(0, 0, 4, 2), color.Palette{color.Black, color.White})
	for y := 0; y < 2; y++ {
		for x := 2; x < 4; x++ {
			bw.SetColorIndex(x, y, 1)
		}
	}
	red, blue := &symbology.Color{R: 200, A: 255}, &symbology.Color{B: 200, A: 255}
	for _, c := range []struct {
		name        string
		style       symbology.PictureStyle
		left, right color.NRGBA
	}{
		{"own colours", symbology.PictureStyle{}, color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}},
		{"fg and bg", symbology.PictureStyle{FgColor: red, BgColor: blue}, red.NRGBA(), blue.NRGBA()},
		{"swapped", symbology.PictureStyle{FgColor: red, BgColor: blue, Swap1Bit: true}, blue.NRGBA(), red.NRGBA()},
		{"fg only", symbology.PictureStyle{FgColor: red}, red.NRGBA(), color.NRGBA{255, 255, 255, 255}},
		{"white transparent", symbology.PictureStyle{FgColor: red, TransparentColor: &symbology.Color{R: 255, G: 255, B: 255, A: 255}}, red.NRGBA(), color.NRGBA{}},
	} {
		img := pictureImage(&symbology.Symbol{Type: symbology.PictureFill, Picture: encodePNG(t, bw), PictureStyle: c.style})
		if l, r := at(img, 0, 1), at(img, 3, 1); l != c.left || r != c.right {
			t.Errorf("%s: left %v right %v, want %v and %v", c.name, l, r, c.left, c.right)
		}
	}
	// A colour picture: FgColor does not apply; the transparent colour does.
	col := image.NewNRGBA(image.Rect(0, 0, 3, 1))
	col.SetNRGBA(0, 0, color.NRGBA{10, 20, 30, 255})
	col.SetNRGBA(1, 0, color.NRGBA{0, 255, 0, 255})
	col.SetNRGBA(2, 0, color.NRGBA{90, 90, 90, 255})
	img := pictureImage(&symbology.Symbol{Type: symbology.PictureFill, Picture: encodePNG(t, col),
		PictureStyle: symbology.PictureStyle{FgColor: red, TransparentColor: &symbology.Color{G: 255, A: 255}}})
	if a, b, c := at(img, 0, 0), at(img, 1, 0), at(img, 2, 0); a != (color.NRGBA{10, 20, 30, 255}) || b.A != 0 || c != (color.NRGBA{90, 90, 90, 255}) {
		t.Errorf("colour picture: %v %v %v", a, b, c)
	}
	if pictureImage(&symbology.Symbol{Picture: []byte("not a picture")}) != nil {
		t.Error("garbage decoded")
	}
}

// TestPictureSizes: a picture marker's Size is its larger side (its width with Width), the aspect
// ratio kept unless both are given, then XScale and YScale stretch it; a picture fill's tile is
// Width × Height, a missing side from the aspect ratio.
func TestPictureSizes(t *testing.T) {
	wide := encodePNG(t, image.NewNRGBA(image.Rect(0, 0, 40, 20))) // 2:1
	tall := encodePNG(t, image.NewNRGBA(image.Rect(0, 0, 20, 40)))
	for _, c := range []struct {
		name string
		s    symbology.Symbol
		w, h float64 // points
	}{
		{"own size", symbology.Symbol{Picture: wide}, 30, 15},
		{"size is the wide side", symbology.Symbol{Picture: wide, Size: 10}, 10, 5},
		{"size is the tall side", symbology.Symbol{Picture: tall, Size: 10}, 5, 10},
		{"width and size", symbology.Symbol{Picture: wide, Size: 10, Width: 10}, 10, 10},
		{"width alone", symbology.Symbol{Picture: tall, Width: 6}, 6, 12},
		{"scales", symbology.Symbol{Picture: wide, Size: 10, PictureStyle: symbology.PictureStyle{XScale: 2, YScale: 3}}, 20, 15},
	} {
		c.s.Type = symbology.PictureMarker
		rs := convertSymbol(&c.s)
		b := rs.Picture.Bounds()
		h := rs.MarkerSize * float64(b.Dy()) / float64(b.Dx())
		if math.Abs(rs.MarkerSize-c.w) > 0.01 || math.Abs(h-c.h) > c.h/50 {
			t.Errorf("marker %s: %.2f × %.2f pt, want %v × %v", c.name, rs.MarkerSize, h, c.w, c.h)
		}
	}
	for _, c := range []struct {
		name string
		s    symbology.Symbol
		w, h float64
	}{
		{"own size", symbology.Symbol{Picture: wide}, 30, 15},
		{"width", symbology.Symbol{Picture: wide, Width: 10}, 10, 5},
		{"height", symbology.Symbol{Picture: wide, PictureStyle: symbology.PictureStyle{Height: 10}}, 20, 10},
		{"both, scaled", symbology.Symbol{Picture: wide, Width: 10, PictureStyle: symbology.PictureStyle{Height: 10, XScale: 0.5}}, 5, 10},
	} {
		c.s.Type = symbology.PictureFill
		c.s.XSeparation, c.s.YSeparation, c.s.Angle, c.s.XOffset = 1, 2, 30, 4
		rs := convertSymbol(&c.s)
		if math.Abs(rs.PatternWidth-c.w) > 0.01 || math.Abs(rs.PatternHeight-c.h) > 0.01 || rs.PatternGap != [2]float64{1, 2} ||
			rs.PatternAngle != 30 || rs.PatternOffset != [2]float64{4, 0} {
			t.Errorf("fill %s: %+v", c.name, rs)
		}
	}
	// A picture that cannot be drawn falls back to the symbol's colour.
	if rs := convertSymbol(&symbology.Symbol{Type: symbology.PictureFill, Color: symbology.Color{R: 9, A: 255}}); rs.Pattern != nil || rs.Fill.R != 9 {
		t.Errorf("fill without a picture: %+v", rs)
	}
}

// TestSymbolScale: symbols scale by reference scale / map scale when the map has a reference
// scale and the layer (or the request) scales them; map scales of geographic maps count degrees
// as metres on the equator.
func TestSymbolScale(t *testing.T) {
	m := &catalog.Map{Def: &servicedef.Map{ReferenceScale: 1e6}}
	l := &catalog.Layer{Def: &servicedef.Layer{ScaleSymbols: true}}
	off, on := false, true
	for _, c := range []struct {
		name  string
		ref   float64
		layer bool
		req   *bool
		scale float64
		want  float64
	}{
		{"zoomed in", 1e6, true, nil, 5e5, 2},
		{"zoomed out", 1e6, true, nil, 4e6, 0.25},
		{"layer off", 1e6, false, nil, 5e5, 1},
		{"request off", 1e6, true, &off, 5e5, 1},
		{"request on", 1e6, false, &on, 5e5, 2},
		{"no reference scale", 0, true, &on, 5e5, 1},
		{"no scale", 1e6, true, nil, 0, 1},
	} {
		m.Def.ReferenceScale, l.Def.ScaleSymbols = c.ref, c.layer
		if got := SymbolScale(m, l, LayerState{Drawing: symbology.Drawing{ScaleSymbols: c.req}}, c.scale); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	v := render.View{Extent: orb.Bound{Max: orb.Point{1, 1}}, Width: 100, Height: 100, DPI: 96}
	merc, geo := &catalog.Map{SR: proj.SR{WKID: 3857}}, &catalog.Map{SR: proj.SR{WKID: 4326}}
	if s := MapScale(merc, v); math.Abs(s-v.Scale()) > 1e-9 {
		t.Errorf("Web Mercator map scale %v, want %v", s, v.Scale())
	}
	// One degree across 100 px at 96 DPI: 111,319.49 m over 100/96 in = 1:4,207,351.
	if s := MapScale(geo, v); math.Abs(s-4207350.8) > 1 {
		t.Errorf("geographic map scale %v, want 1:4,207,351", s)
	}
}
