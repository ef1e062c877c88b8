package render

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"testing"

	"github.com/paulmach/orb"
	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// syntheticMap exercises every geometry kind and symbol option in a 100×100 map-unit square.
func syntheticMap() Map {
	red := &Symbol{Fill: color.NRGBA{220, 60, 60, 255}, Stroke: color.NRGBA{120, 0, 0, 255}, StrokeWidth: 1.5}
	return Map{
		Background: color.NRGBA{250, 250, 245, 255},
		Layers: []Layer{
			{
				Name: "polygons",
				Features: Features{
					// A square with a hole (holes need no particular ring orientation).
					{Geom: orb.Polygon{
						{{10, 10}, {60, 10}, {60, 60}, {10, 60}, {10, 10}},
						{{25, 25}, {25, 45}, {45, 45}, {45, 25}, {25, 25}},
					}, Label: "Holed"},
					{Geom: orb.MultiPolygon{
						{{{70, 70}, {95, 70}, {95, 95}, {70, 95}, {70, 70}}},
						{{{70, 10}, {72, 10}, {72, 12}, {70, 12}, {70, 10}}},
					}, Label: "Multi", Symbol: red},
				},
				Symbol: Symbol{Fill: color.NRGBA{120, 170, 220, 255}, Stroke: color.NRGBA{20, 40, 80, 255}, StrokeWidth: 1},
				Label:  &LabelStyle{Size: 9, Color: color.NRGBA{0, 0, 0, 255}, Halo: color.NRGBA{255, 255, 255, 255}, HaloWidth: 1},
			},
			{
				Name:    "lines",
				Opacity: 0.6,
				Features: Features{
					{Geom: orb.LineString{{0, 80}, {30, 90}, {60, 75}, {100, 85}}, Label: "Road"},
					{Geom: orb.MultiLineString{{{5, 5}, {95, 40}}}, Symbol: &Symbol{Stroke: color.NRGBA{0, 128, 0, 255}, StrokeWidth: 4}},
				},
				Symbol: Symbol{Stroke: color.NRGBA{200, 100, 0, 255}, StrokeWidth: 2, Dash: []float64{6, 3}},
				Label:  &LabelStyle{Size: 8, Color: color.NRGBA{90, 40, 0, 255}},
			},
			{
				Name: "points",
				Features: Features{
					{Geom: orb.Point{80, 50}, Label: "Circle"},
					{Geom: orb.Point{15, 90}, Label: "Square", Symbol: &Symbol{Fill: color.NRGBA{0, 0, 200, 255}, Marker: MarkerSquare, MarkerSize: 8}},
					{Geom: orb.MultiPoint{{50, 95}, {55, 95}}, Symbol: &Symbol{Fill: color.NRGBA{0, 0, 0, 255}, Marker: MarkerCross, MarkerSize: 8}},
					{Geom: orb.Point{90, 20}, Symbol: &Symbol{Fill: color.NRGBA{255, 200, 0, 255}, Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 1, Marker: MarkerTriangle, MarkerSize: 10}},
				},
				Symbol: Symbol{Fill: color.NRGBA{200, 0, 200, 255}, Stroke: color.NRGBA{255, 255, 255, 255}, StrokeWidth: 1, MarkerSize: 9},
				Label:  &LabelStyle{Size: 8, Color: color.NRGBA{60, 0, 60, 255}, Halo: color.NRGBA{255, 255, 255, 200}, HaloWidth: 1.5, Priority: 1},
			},
		},
	}
}

func syntheticView() View {
	return View{Extent: orb.Bound{Min: orb.Point{0, 0}, Max: orb.Point{100, 100}}, Width: 200, Height: 200, DPI: 96}
}

func TestSyntheticGolden(t *testing.T) {
	rotated := syntheticView()
	rotated.Rotation = 30
	transparent := syntheticMap()
	transparent.Transparent = true
	for _, tc := range []struct {
		name string
		m    Map
		v    View
	}{
		{"synthetic", syntheticMap(), syntheticView()},
		{"synthetic_rotated30", syntheticMap(), rotated},
		{"synthetic_transparent", transparent, syntheticView()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Draw(context.Background(), tc.m, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, img)
		})
	}
}

func TestSyntheticPixels(t *testing.T) {
	img, err := Draw(context.Background(), syntheticMap(), syntheticView())
	if err != nil {
		t.Fatal(err)
	}
	v := syntheticView()
	at := func(x, y float64) color.NRGBA {
		px, py := v.Matrix().Apply(x, y)
		return nrgbaAt(img, int(px), int(py))
	}
	if got := at(15, 30); !near(got, color.NRGBA{120, 170, 220, 255}, 2) {
		t.Errorf("polygon fill: %v", got)
	}
	if got := at(35, 28); !near(got, color.NRGBA{250, 250, 245, 255}, 2) {
		t.Errorf("inside the hole: %v, want background", got)
	}
	if got := at(2, 50); !near(got, color.NRGBA{250, 250, 245, 255}, 2) {
		t.Errorf("background: %v", got)
	}
	if got := at(90, 75); !near(got, color.NRGBA{220, 60, 60, 255}, 2) {
		t.Errorf("per-feature symbol: %v", got)
	}
}

func TestRotation(t *testing.T) {
	v := View{Extent: orb.Bound{Min: orb.Point{0, 0}, Max: orb.Point{100, 100}}, Width: 100, Height: 100, Rotation: 90}
	m := v.Matrix()
	// Anticlockwise by 90°: east of the centre appears above it, north of it to the left.
	for _, c := range []struct{ x, y, px, py float64 }{{50, 50, 50, 50}, {100, 50, 50, 0}, {50, 100, 0, 50}} {
		px, py := m.Apply(c.x, c.y)
		if abs(px-c.px) > 1e-9 || abs(py-c.py) > 1e-9 {
			t.Errorf("(%v, %v) -> (%v, %v), want (%v, %v)", c.x, c.y, px, py, c.px, c.py)
		}
	}
	inv, ok := m.Invert()
	if !ok {
		t.Fatal("not invertible")
	}
	x, y := inv.Apply(m.Apply(12, 34))
	if abs(x-12) > 1e-9 || abs(y-34) > 1e-9 {
		t.Errorf("round trip: (%v, %v)", x, y)
	}
	b := v.Bounds()
	if b.Min[0] > 0 || b.Max[0] < 100 {
		t.Errorf("bounds %v do not cover the extent", b)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestScale(t *testing.T) {
	// 1 pixel = 100 m at 96 DPI: 100 / (0.0254 / 96) = 377952.76.
	v := View{Extent: orb.Bound{Max: orb.Point{100000, 100000}}, Width: 1000, Height: 1000, DPI: 96}
	if got, want := v.Scale(), 377952.755905; abs(got-want) > 1e-3 {
		t.Errorf("Scale = %v, want %v", got, want)
	}
}

func TestEncodeFormats(t *testing.T) {
	img, err := Draw(context.Background(), syntheticMap(), syntheticView())
	if err != nil {
		t.Fatal(err)
	}
	tr := syntheticMap()
	tr.Transparent = true
	timg, err := Draw(context.Background(), tr, syntheticView())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{PNG, PNG32, PNG8, JPG, GIF, BMP, TIFF, JPGPNG} {
		for _, src := range []*image.RGBA{img, timg} {
			var buf bytes.Buffer
			if err := Encode(&buf, src, f, EncodeOptions{}); err != nil {
				t.Fatalf("%v: %v", f, err)
			}
			var got image.Image
			switch f.Resolve(src) {
			case JPG:
				got, err = jpeg.Decode(&buf)
			case GIF:
				got, err = gif.Decode(&buf)
			case BMP:
				got, err = bmp.Decode(&buf)
			case TIFF:
				got, err = tiff.Decode(&buf)
			default:
				got, err = png.Decode(&buf)
			}
			if err != nil {
				t.Fatalf("%v: decoding: %v", f, err)
			}
			if got.Bounds().Size() != src.Bounds().Size() {
				t.Errorf("%v: size %v", f, got.Bounds().Size())
			}
			// A fill pixel survives every format (JPEG lossily).
			want := color.NRGBAModel.Convert(src.At(30, 130)).(color.NRGBA)
			c := color.NRGBAModel.Convert(got.At(30, 130)).(color.NRGBA)
			if tol := map[Format]int{JPG: 12, PNG8: 10, GIF: 10, JPGPNG: 12}[f]; !near(c, want, tol) && !(f == JPG && want.A < 255) {
				t.Errorf("%v: pixel %v, want %v", f, c, want)
			}
			if src == timg && (f == PNG32 || f == PNG) {
				if _, _, _, a := got.At(1, 1).RGBA(); a != 0 {
					t.Errorf("%v: transparent background has alpha %d", f, a)
				}
			}
		}
	}
	if _, err := ParseFormat("emf"); !errors.Is(err, ErrUnsupportedFormat) {
		t.Errorf("ParseFormat(emf) = %v, want ErrUnsupportedFormat", err)
	}
	if got := JPGPNG.Resolve(img); got != JPG {
		t.Errorf("JPGPNG resolves to %v for an opaque image", got)
	}
	if got := JPGPNG.Resolve(timg); got != PNG32 {
		t.Errorf("JPGPNG resolves to %v for a transparent image", got)
	}
	for name, want := range map[string]Format{"gisImagePNG24": PNG, "png32": PNG32, "JPEG": JPG, "esriImageGIF": GIF, "png8": PNG8, "esriImageDIB": BMP, "tiff": TIFF, "esriImageJPGPNG": JPGPNG, "image/png": PNG} {
		if got, err := ParseFormat(name); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}

func TestPNGMatchesStdlib(t *testing.T) {
	tr := syntheticMap()
	tr.Transparent = true
	for _, m := range []Map{syntheticMap(), tr} {
		img, err := Draw(context.Background(), m, syntheticView())
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Encode(&buf, img, PNG32, EncodeOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				w := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
				if !near(w, g, 1) {
					t.Fatalf("pixel (%d, %d): encoded %v, image %v", x, y, g, w)
				}
			}
		}
	}
}

func TestDrawErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Draw(ctx, syntheticMap(), syntheticView()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	big := syntheticView()
	big.Width = MaxImageSize + 1
	if _, err := Draw(context.Background(), syntheticMap(), big); !errors.Is(err, ErrImageTooLarge) {
		t.Errorf("too large: %v", err)
	}
	bad := syntheticView()
	bad.Extent = orb.Bound{}
	if _, err := Draw(context.Background(), syntheticMap(), bad); !errors.Is(err, ErrInvalidView) {
		t.Errorf("empty extent: %v", err)
	}
	srcErr := errors.New("boom")
	m := Map{Layers: []Layer{{Features: SourceFunc(func(context.Context, orb.Bound, func(Feature) bool) error { return srcErr })}}}
	if _, err := Draw(context.Background(), m, syntheticView()); !errors.Is(err, srcErr) {
		t.Errorf("source error: %v", err)
	}
}

func TestInteriorPoint(t *testing.T) {
	// A U shape: its centroid lies in the notch, outside the polygon.
	u := []pathPoint{{0, 0}, {30, 0}, {30, 100}, {20, 100}, {20, 10}, {10, 10}, {10, 100}, {0, 100}}
	rings := []subpath{{start: 0, end: len(u), closed: true}}
	var q cellQueue
	p, d := interiorPoint(u, rings, 0.5, &q)
	if !pointInRings(u, rings, p.x, p.y) || d <= 0 {
		t.Errorf("interior point %v (distance %v) is not inside", p, d)
	}
}

func TestLabelsStayInside(t *testing.T) {
	fs := loadCountries(t)
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []View{worldView(), tileView(tileZ4), tileView(tileZ8)} {
		img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
		st := &drawState{surface: NewGGSurface(img, r.Fonts())}
		if err := r.drawTo(context.Background(), st.surface, st, worldMap(fs), v); err != nil {
			t.Fatal(err)
		}
		if len(st.labels.placed) == 0 {
			t.Errorf("%v: no labels placed", v.Extent)
		}
		for i, b := range st.labels.placed {
			if b.x0 < 0 || b.y0 < 0 || b.x1 > float64(v.Width) || b.y1 > float64(v.Height) {
				t.Errorf("label box %v outside the image", b)
			}
			for j, o := range st.labels.placed[:i] {
				if st.labels.owner[j] != st.labels.owner[i] && b.overlaps(o) {
					t.Errorf("label boxes %v and %v overlap", b, o)
				}
			}
		}
	}
}

func TestFonts(t *testing.T) {
	fs, err := NewFonts()
	if err != nil {
		t.Fatal(err)
	}
	w, a, d := fs.face(TextStyle{Size: 10.67}).measure("Canada")
	if w < 30 || w > 50 || a < 6 || a > 10 || d > 1 {
		t.Errorf("measure(Canada) = %v, %v, %v", w, a, d)
	}
}

func TestPictureMarker(t *testing.T) {
	pic := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := range pic.Pix {
		pic.Pix[i] = 255 // opaque white
	}
	for i := 0; i < len(pic.Pix); i += 4 {
		pic.Pix[i+1], pic.Pix[i+2] = 0, 0 // red
	}
	m := Map{Background: color.NRGBA{0, 0, 0, 255}, Layers: []Layer{{
		Features: Features{{Geom: orb.Point{50, 50}}},
		Symbol:   Symbol{Picture: pic, MarkerSize: 12},
	}}}
	img, err := Draw(context.Background(), m, syntheticView())
	if err != nil {
		t.Fatal(err)
	}
	if got := nrgbaAt(img, 100, 100); !near(got, color.NRGBA{255, 0, 0, 255}, 4) {
		t.Errorf("picture marker centre: %v, want red", got)
	}
	if got := nrgbaAt(img, 120, 100); !near(got, color.NRGBA{0, 0, 0, 255}, 4) {
		t.Errorf("outside the picture: %v, want black", got)
	}
}

func TestTransparentColor(t *testing.T) {
	img, err := Draw(context.Background(), syntheticMap(), syntheticView())
	if err != nil {
		t.Fatal(err)
	}
	bg := syntheticMap().Background
	var buf bytes.Buffer
	if err := Encode(&buf, img, PNG, EncodeOptions{TransparentColor: &bg}); err != nil {
		t.Fatal(err)
	}
	got, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, a := got.At(1, 1).RGBA(); a != 0 {
		t.Errorf("background pixel alpha %d, want 0", a)
	}
	if _, _, _, a := got.At(30, 130).RGBA(); a != 0xffff {
		t.Errorf("fill pixel alpha %d, want opaque", a)
	}
}

func TestConcurrentDraw(t *testing.T) {
	fs := loadCountries(t)
	done := make(chan error)
	for i := 0; i < 4; i++ {
		go func() {
			v := []View{worldView(), tileView(tileZ4), tileView(tileZ8)}[i%3]
			img, err := Draw(context.Background(), worldMap(fs), v)
			if err == nil {
				var buf bytes.Buffer
				err = Encode(&buf, img, PNG, EncodeOptions{})
				Release(img)
			}
			done <- err
		}()
	}
	for i := 0; i < 4; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestDegenerateGeometry(t *testing.T) {
	nan := math.NaN()
	fs := Features{
		{Geom: orb.Polygon{}},
		{Geom: orb.Polygon{{}}},
		{Geom: orb.Polygon{{{1, 1}, {1, 1}, {1, 1}, {1, 1}}}, Label: "dot"},
		{Geom: orb.LineString{{5, 5}}, Label: "short"},
		{Geom: orb.LineString{{5, 5}, {5, 5}, {5, 5}}, Label: "zero"},
		{Geom: orb.MultiPoint{}},
		{Geom: orb.Polygon{{{-1e12, -1e12}, {1e12, -1e12}, {1e12, 1e12}, {-1e12, 1e12}, {-1e12, -1e12}}}, Label: "huge"},
		{Geom: orb.LineString{{-1e9, 50}, {1e9, 50}}, Label: "long"},
		{Geom: orb.Polygon{{{nan, 1}, {2, nan}, {3, 3}, {nan, nan}}}, Label: "nan"},
		{Geom: orb.Collection{orb.Point{50, 50}, orb.LineString{{0, 0}, {100, 100}}}, Label: "mixed"},
		{Geom: orb.Bound{Min: orb.Point{20, 20}, Max: orb.Point{30, 30}}},
		{Geom: orb.Point{50, 50}, Label: "   "},
	}
	m := Map{Layers: []Layer{{
		Features: fs,
		Symbol:   Symbol{Fill: color.NRGBA{100, 100, 100, 255}, Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 5, MarkerSize: 4},
		Label:    &LabelStyle{Size: 8, Color: color.NRGBA{0, 0, 0, 255}},
	}}}
	for _, rot := range []float64{0, 45, -720} {
		v := syntheticView()
		v.Rotation = rot
		img, err := Draw(context.Background(), m, v)
		if err != nil {
			t.Fatal(err)
		}
		Release(img)
	}
}

func TestDPIScalesSymbols(t *testing.T) {
	// A 3 pt vertical line: 4 px wide at 96 DPI, 8 px at 192 DPI.
	m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
		Features: Features{{Geom: orb.LineString{{50, 0}, {50, 100}}}},
		Symbol:   Symbol{Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 3},
	}}}
	for _, c := range []struct {
		dpi  float64
		size int
		want int
	}{{96, 100, 4}, {192, 200, 8}} {
		v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: c.size, Height: c.size, DPI: c.dpi}
		img, err := Draw(context.Background(), m, v)
		if err != nil {
			t.Fatal(err)
		}
		dark := 0
		for x := 0; x < c.size; x++ {
			if nrgbaAt(img, x, c.size/2).R < 128 {
				dark++
			}
		}
		if dark != c.want {
			t.Errorf("DPI %v: line %d px wide, want %d", c.dpi, dark, c.want)
		}
	}
}
