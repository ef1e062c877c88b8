package render

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"

	"github.com/paulmach/orb"
)

func solidPicture(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// fillAll is a map of one polygon larger than the view, filled with sym.
func fillAll(sym Symbol) Map {
	return Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
		Features: Features{{Geom: orb.Polygon{{{-10, -10}, {110, -10}, {110, 110}, {-10, 110}, {-10, -10}}}}},
		Symbol:   sym,
	}}}
}

// redMask says, for each pixel of img, whether it is (nearly) red.
func redMask(img image.Image) func(x, y int) bool {
	return func(x, y int) bool {
		c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
		return c.R > 180 && c.G < 90 && c.B < 90
	}
}

// TestPictureFillGapOffset: a 4×4 px red picture in 8×8 px cells (3 pt tiles 3 pt apart at 96 DPI),
// the pattern moved 2 px right and 2 px down (1.5 pt, -1.5 pt), paints exactly the pixels whose
// position less the offset falls in the first half of a cell, on the raster; the SVG and PDF
// rasterizations agree on all but a few pixels of edges.
func TestPictureFillGapOffset(t *testing.T) {
	red := color.NRGBA{220, 20, 20, 255}
	m := fillAll(Symbol{Pattern: solidPicture(4, 4, red), PatternWidth: 3, PatternGap: [2]float64{3, 3}, PatternOffset: [2]float64{1.5, -1.5}})
	v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: 64, Height: 64, DPI: 96}
	want := func(x, y int) bool { return posMod(x-2, 8) < 4 && posMod(y-2, 8) < 4 }
	raster, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(raster)
	check := func(name string, img image.Image, maxOff int) {
		got, off := redMask(img), 0
		for y := 0; y < 64; y++ {
			for x := 0; x < 64; x++ {
				if got(x, y) != want(x, y) {
					off++
				}
			}
		}
		if off > maxOff {
			t.Errorf("%s: %d of 4096 pixels differ from the 4 px tiles every 8 px from (2, 2)", name, off)
		}
	}
	check("raster", raster, 0)
	for _, f := range []Format{SVG, PDF} {
		check(f.String(), rasterizeVector(t, f, drawVector(t, f, m, v), 96), 200)
	}
}

// TestPictureFillAngle: vertical red stripes (a 4 px picture, 4 px gap across) turned 90°, by the
// symbol's angle or by the view's rotation, are horizontal stripes: every row all red or all white,
// in runs of 4 rows.
func TestPictureFillAngle(t *testing.T) {
	red := color.NRGBA{220, 20, 20, 255}
	for _, c := range []struct {
		name            string
		angle, rotation float64
	}{{"angle", 90, 0}, {"rotation", 0, 90}, {"both", 45, 45}} {
		sym := Symbol{Pattern: solidPicture(4, 4, red), PatternWidth: 3, PatternGap: [2]float64{3, 0}, PatternAngle: c.angle}
		v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: 48, Height: 48, DPI: 96, Rotation: c.rotation}
		raster, err := Draw(context.Background(), fillAll(sym), v)
		if err != nil {
			t.Fatal(err)
		}
		imgs := map[string]image.Image{"raster": raster}
		if c.name == "angle" { // the turned pattern is a surface-sized tile: SVG and PDF draw it too
			for _, f := range []Format{SVG, PDF} {
				imgs[f.String()] = rasterizeVector(t, f, drawVector(t, f, fillAll(sym), v), 96)
			}
		}
		for name, img := range imgs {
			isRed := redMask(img)
			var rows []int // red pixels per row
			for y := 4; y < 44; y++ {
				n := 0
				for x := 4; x < 44; x++ {
					if isRed(x, y) {
						n++
					}
				}
				rows = append(rows, n)
			}
			full, empty := 0, 0
			for _, n := range rows {
				switch {
				case n >= 39:
					full++
				case n <= 1:
					empty++
				}
			}
			if full < 18 || empty < 18 {
				t.Errorf("%s %s: red pixels per row %v, want whole rows of red or white", c.name, name, rows)
			}
		}
		Release(raster)
	}
}

// TestPictureFillDetailsGolden draws picture fills with a tile size, gaps, an offset, scales and
// angles in one image.
func TestPictureFillDetailsGolden(t *testing.T) {
	pic := image.NewNRGBA(image.Rect(0, 0, 8, 8)) // an orange arrow pointing right, transparent around
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			if (x < 5 && y >= 3 && y <= 4) || (x >= 5 && math.Abs(float64(y)-3.5) <= float64(7-x)+0.5) {
				pic.SetNRGBA(x, y, color.NRGBA{230, 110, 0, 255})
			}
		}
	}
	square := func(x, y float64) orb.Polygon {
		return orb.Polygon{{{x + 3, y + 3}, {x + 47, y + 3}, {x + 47, y + 47}, {x + 3, y + 47}, {x + 3, y + 3}}}
	}
	outline := func(s Symbol) *Symbol {
		s.Stroke, s.StrokeWidth = color.NRGBA{0, 0, 0, 255}, 0.75
		return &s
	}
	m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{Features: Features{
		{Geom: square(0, 50), Symbol: outline(Symbol{Pattern: pic})},
		{Geom: square(50, 50), Symbol: outline(Symbol{Pattern: pic, PatternWidth: 9, PatternHeight: 4.5, PatternGap: [2]float64{3, 1.5}})},
		{Geom: square(0, 0), Symbol: outline(Symbol{Pattern: pic, PatternWidth: 6, PatternGap: [2]float64{1.5, 1.5}, PatternOffset: [2]float64{3, 3}, PatternAngle: 30})},
		{Geom: square(50, 0), Symbol: outline(Symbol{Pattern: pic, PatternWidth: 6, PatternGap: [2]float64{4.5, 0}, PatternAngle: -90})},
	}}}}
	v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: 160, Height: 160, DPI: 96}
	img, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	checkGolden(t, "picture_fill_details", img)
}

// TestSymbolScaled: Scaled multiplies every size, fills in the defaults first, caps sizes and
// leaves the original alone.
func TestSymbolScaled(t *testing.T) {
	pic := solidPicture(8, 4, color.NRGBA{A: 255})
	s := Symbol{StrokeWidth: 1, Dash: []float64{4, 2}, MarkerSize: 6, MarkerOffset: [2]float64{1, -2}, Hatch: HatchCross,
		Pattern: pic, PatternGap: [2]float64{1, 2}, PatternOffset: [2]float64{3, 4}, MarkerAngle: 30}
	got := s.Scaled(2)
	want := Symbol{StrokeWidth: 2, Dash: []float64{8, 4}, MarkerSize: 12, MarkerOffset: [2]float64{2, -4}, Hatch: HatchCross, HatchSpacing: 12,
		Pattern: pic, PatternWidth: 12, PatternHeight: 6, PatternGap: [2]float64{2, 4}, PatternOffset: [2]float64{6, 8}, MarkerAngle: 30}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Scaled(2) = %+v\nwant %+v", got, want)
	}
	if s.Dash[0] != 4 || s.StrokeWidth != 1 {
		t.Errorf("Scaled changed the original: %+v", s)
	}
	if p := (Symbol{Picture: pic}).Scaled(0.5); p.MarkerSize != 3 {
		t.Errorf("picture marker of its own size (6 pt) at 0.5: %v pt", p.MarkerSize)
	}
	if big := (Symbol{StrokeWidth: 10}).Scaled(1e6); big.StrokeWidth != MaxScaledPoints {
		t.Errorf("stroke scaled a million times: %v pt, want the cap %v", big.StrokeWidth, MaxScaledPoints)
	}
	if same := s.Scaled(1); fmt.Sprint(same) != fmt.Sprint(s) {
		t.Errorf("Scaled(1) changed the symbol")
	}
	ls := (&LabelStyle{HaloWidth: 1, Offset: 3}).Scaled(3)
	if ls.Size != 24 || ls.HaloWidth != 3 || ls.Offset != 9 {
		t.Errorf("label Scaled(3) = %+v", ls)
	}
}

// TestDPIMarkerSize: a 15 pt marker is 20 px wide at 96 DPI and 40 px at 192 DPI, on the raster and
// in SVG and PDF (rasterized at the view's DPI): the same map at twice the pixels.
func TestDPIMarkerSize(t *testing.T) {
	m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
		Features: Features{{Geom: orb.Point{50, 50}}},
		Symbol:   Symbol{Fill: color.NRGBA{220, 20, 20, 255}, Marker: MarkerSquare, MarkerSize: 15},
	}}}
	width := func(img image.Image) int {
		isRed, b := redMask(img), img.Bounds()
		x0, x1 := b.Max.X, -1
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if isRed(x, y) {
					x0, x1 = min(x0, x), max(x1, x)
				}
			}
		}
		return x1 - x0 + 1
	}
	for _, c := range []struct {
		dpi  float64
		size int
	}{{96, 100}, {192, 200}} {
		v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: c.size, Height: c.size, DPI: c.dpi}
		want := int(c.dpi * 15 / 72)
		img, err := Draw(context.Background(), m, v)
		if err != nil {
			t.Fatal(err)
		}
		if w := width(img); w < want-1 || w > want+1 {
			t.Errorf("raster at %v DPI: marker %d px wide, want %d", c.dpi, w, want)
		}
		Release(img)
		for _, f := range []Format{SVG, PDF} {
			vimg := rasterizeVector(t, f, drawVector(t, f, m, v), c.dpi)
			if b := vimg.Bounds(); b.Dx() != c.size {
				t.Errorf("%v at %v DPI rasterizes to %v", f, c.dpi, b)
			}
			if w := width(vimg); w < want-1 || w > want+1 {
				t.Errorf("%v at %v DPI: marker %d px wide, want %d", f, c.dpi, w, want)
			}
		}
	}
}

// BenchmarkPictureFill fills a 1024×768 image with a picture pattern, unturned (one tile
// repeated) and turned (computed per pixel).
func BenchmarkPictureFill(b *testing.B) {
	pic := solidPicture(8, 8, color.NRGBA{220, 20, 20, 255})
	v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: 1024, Height: 768, DPI: 96}
	for _, angle := range []float64{0, 30} {
		m := fillAll(Symbol{Pattern: pic, PatternWidth: 6, PatternGap: [2]float64{3, 3}, PatternAngle: angle})
		b.Run(fmt.Sprintf("angle%v", angle), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				img, err := Draw(context.Background(), m, v)
				if err != nil {
					b.Fatal(err)
				}
				Release(img)
			}
		})
	}
}
