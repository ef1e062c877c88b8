package render

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

// The label test maps use map units of one pixel (y up) at 96 DPI.
func labelView(w, h int) View {
	return View{Extent: orb.Bound{Max: orb.Point{float64(w), float64(h)}}, Width: w, Height: h, DPI: 96}
}

var (
	paper     = color.NRGBA{250, 250, 245, 255}
	riverBlue = color.NRGBA{70, 130, 200, 255}
	riverInk  = color.NRGBA{20, 60, 140, 255}
	roadGrey  = color.NRGBA{150, 150, 150, 255}
)

// sineLine is y = y0 + amp·sin((x - x0)/period) for x from x0 to x1, one vertex every 2 units.
func sineLine(x0, x1, y0, amp, period float64) orb.LineString {
	var l orb.LineString
	for x := x0; x <= x1; x += 2 {
		l = append(l, orb.Point{x, y0 + amp*math.Sin((x-x0)/period)})
	}
	return l
}

// curvedMap is a 300×200 map: a sinuous river with a long name, a straight road crossing it on
// another layer, both labelled along their lines, and a zigzag too tight for its label.
func curvedMap() Map {
	return Map{
		Background: paper,
		Layers: []Layer{
			{
				Name:     "rivers",
				Features: Features{{Geom: sineLine(10, 290, 100, 40, 45), Label: "Sinuous River Label"}},
				Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 2},
				Label:    &LabelStyle{Size: 10, Color: riverInk, Halo: paper, HaloWidth: 1, FontStyle: FontStyle{Italic: true}, Priority: 1},
			},
			{
				Name: "roads",
				Features: Features{
					{Geom: orb.LineString{{40, 10}, {260, 190}}, Label: "Straight Road"},
					{Geom: orb.LineString{{200, 20}, {210, 40}, {220, 20}, {230, 40}, {240, 20}, {250, 40}}, Label: "Zigzag Lane"},
				},
				Symbol: Symbol{Stroke: roadGrey, StrokeWidth: 1.5},
				Label:  &LabelStyle{Size: 8, Color: color.NRGBA{40, 40, 40, 255}, Halo: color.NRGBA{255, 255, 255, 255}, HaloWidth: 1, FontStyle: FontStyle{Bold: true}},
			},
		},
	}
}

// edgeMap is a 200×120 map with a line whose middle is far outside the image: it enters from the
// left 6 px above the bottom edge, too close to it for a label, and turns up near the right edge.
// Its label must be placed whole, on the part that rises away from the edge.
func edgeMap() Map {
	l := orb.LineString{{-300, 6}, {120, 6}, {140, 10}, {160, 25}, {175, 45}, {185, 70}, {190, 100}, {192, 140}}
	return Map{
		Background: paper,
		Layers: []Layer{{
			Name:     "edge",
			Features: Features{{Geom: l, Label: "Edge Street"}},
			Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 2},
			Label:    &LabelStyle{Size: 9, Color: riverInk, Halo: paper, HaloWidth: 1},
		}},
	}
}

// stylesMap shows the font styles on point labels and a bold curved label.
func stylesMap() Map {
	dot := Symbol{Fill: color.NRGBA{200, 0, 0, 255}, MarkerSize: 4}
	ink := color.NRGBA{0, 0, 0, 255}
	halo := color.NRGBA{255, 255, 255, 255}
	point := func(y float64, text string, st FontStyle) Layer {
		return Layer{
			Features: Features{{Geom: orb.Point{20, y}, Label: text}},
			Symbol:   dot,
			Label:    &LabelStyle{Size: 10, Color: ink, Halo: halo, HaloWidth: 1, FontStyle: st},
		}
	}
	return Map{
		Background: paper,
		Layers: []Layer{
			point(180, "Regular Label", FontStyle{}),
			point(160, "Bold Label", FontStyle{Bold: true}),
			point(140, "Italic Label", FontStyle{Italic: true}),
			point(120, "Bold Italic Label", FontStyle{Bold: true, Italic: true}),
			point(100, "Underlined Label", FontStyle{Underline: true}),
			point(80, "Struck Label", FontStyle{Strikethrough: true}),
			{
				Features: Features{{Geom: sineLine(130, 290, 60, 25, 30), Label: "Bold curved underlined"}},
				Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 1.5},
				Label:    &LabelStyle{Size: 9, Color: riverInk, Halo: halo, HaloWidth: 1, FontStyle: FontStyle{Bold: true, Underline: true}},
			},
			{
				// An unknown font name: DejaVu Sans, bold from the name.
				Features: Features{{Geom: orb.Point{160, 180}, Label: "Arial Bold"}},
				Symbol:   dot,
				Label:    &LabelStyle{Font: "Arial Bold", Size: 10, Color: ink},
			},
		},
	}
}

// characterMap has a layer of character markers: a star, a rotated letter, a moved diamond suit and
// a bold italic ampersand, with labels.
func characterMap() Map {
	green := color.NRGBA{0, 140, 60, 255}
	return Map{
		Background: paper,
		Layers: []Layer{{
			Name: "characters",
			Features: Features{
				{Geom: orb.Point{30, 50}, Label: "Star"},
				{Geom: orb.Point{80, 50}, Label: "A 30°", Symbol: &Symbol{Fill: riverInk, Character: 'A', MarkerSize: 18, MarkerAngle: 30}},
				{Geom: orb.Point{130, 50}, Label: "Offset", Symbol: &Symbol{Fill: color.NRGBA{200, 0, 0, 255}, Character: '♦', MarkerSize: 16, MarkerOffset: [2]float64{0, 6}}},
				{Geom: orb.Point{210, 50}, Symbol: &Symbol{Fill: green, Character: '&', MarkerSize: 20, CharacterStyle: FontStyle{Bold: true, Italic: true},
					Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 0.75}},
			},
			Symbol: Symbol{Fill: color.NRGBA{230, 160, 0, 255}, Character: '★', MarkerSize: 20},
			Label:  &LabelStyle{Size: 8, Color: color.NRGBA{0, 0, 0, 255}},
		}},
	}
}

func TestLabelGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Map
		v    View
	}{
		{"label_curved", curvedMap(), labelView(300, 200)},
		{"label_edge", edgeMap(), labelView(200, 120)},
		{"label_styles", stylesMap(), labelView(300, 200)},
		{"character_markers", characterMap(), labelView(240, 100)},
		{"label_point_positions", pointPositionsMap(), labelView(320, 210)},
		{"label_line_sides", lineSideMap(), labelView(300, 160)},
		{"label_line_repeat", repeatMap(), labelView(600, 200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Draw(context.Background(), tc.m, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			defer Release(img)
			checkGolden(t, tc.name, img)
		})
	}
}

// recorder records the text a Surface draws.
type recorder struct {
	Surface
	runs  [][]Glyph
	texts []recordedText
}

type recordedText struct {
	s    string
	x, y float64
	t    TextStyle
}

func (r *recorder) GlyphRun(run []Glyph, t TextStyle) {
	r.runs = append(r.runs, append([]Glyph(nil), run...))
	r.Surface.GlyphRun(run, t)
}

func (r *recorder) Text(s string, x, y float64, t TextStyle) {
	r.texts = append(r.texts, recordedText{s, x, y, t})
	r.Surface.Text(s, x, y, t)
}

// drawRecorded draws m on a raster surface through a recorder and returns it with the image and the
// labeller's state.
func drawRecorded(t *testing.T, m Map, v View) (*recorder, *image.RGBA, *labeller) {
	t.Helper()
	r := defaultRenderer()
	img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	rec := &recorder{Surface: NewGGSurface(img, r.Fonts())}
	st := &drawState{}
	if err := r.drawTo(context.Background(), rec, st, m, v); err != nil {
		t.Fatal(err)
	}
	return rec, img, &st.labels
}

// distToLine is the distance from p to the polyline l (pixels; l in map units of labelView).
func distToLine(v View, l orb.LineString, x, y float64) float64 {
	best := math.Inf(1)
	m := v.Matrix()
	for i := 0; i+1 < len(l); i++ {
		ax, ay := m.Apply(l[i][0], l[i][1])
		bx, by := m.Apply(l[i+1][0], l[i+1][1])
		dx, dy := bx-ax, by-ay
		t := 0.0
		if l2 := dx*dx + dy*dy; l2 > 0 {
			t = max(0, min(1, ((x-ax)*dx+(y-ay)*dy)/l2))
		}
		best = min(best, math.Hypot(x-(ax+t*dx), y-(ay+t*dy)))
	}
	return best
}

// glyphCentre returns the middle of a glyph's ink-centred box: half its advance along the baseline
// and mid up from it.
func glyphCentre(g Glyph, adv, mid float64) (float64, float64) {
	sin, cos := sincosDeg(g.Angle)
	return g.X + cos*adv/2 - sin*mid, g.Y - sin*adv/2 - cos*mid
}

func TestCurvedLabelFollowsLine(t *testing.T) {
	v := labelView(300, 200)
	m := curvedMap()
	river := m.Layers[0].Features.(Features)[0].Geom.(orb.LineString)
	for _, reversed := range []bool{false, true} {
		if reversed {
			// The same river digitised the other way: the label must still read left to right.
			r := append(orb.LineString(nil), river...)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			m.Layers[0].Features = Features{{Geom: r, Label: "Sinuous River Label"}}
		}
		rec, _, _ := drawRecorded(t, m, v)
		if len(rec.runs) != 1 {
			t.Fatalf("reversed %v: %d glyph runs, want 1 (the river's); texts %v", reversed, len(rec.runs), rec.texts)
		}
		run := rec.runs[0]
		if got := string(runesOf(run)); got != "Sinuous River Label" {
			t.Fatalf("run reads %q", got)
		}
		style := TextStyle{Size: v.PointsToPixels(10), FontStyle: FontStyle{Italic: true}}
		f := defaultRenderer().Fonts().face(style)
		w, a, d := f.measure("Sinuous River Label")
		adv := f.advances(nil, "Sinuous River Label")
		mid := (a - d) / 2
		minA, maxA := math.Inf(1), math.Inf(-1)
		for i, g := range run {
			cx, cy := glyphCentre(g, adv[i], mid)
			if dd := distToLine(v, river, cx, cy); dd > 1.5 {
				t.Errorf("glyph %d %q centre (%.1f, %.1f) is %.1f px off the line", i, g.Rune, cx, cy, dd)
			}
			minA, maxA = min(minA, g.Angle), max(maxA, g.Angle)
			if i > 0 {
				// Left to right: each glyph starts about one advance after the previous, along the line.
				p := run[i-1]
				if step := math.Hypot(g.X-p.X, g.Y-p.Y); math.Abs(step-adv[i-1]) > 1.5 {
					t.Errorf("glyph %d is %.1f px from the previous, advance %.1f", i, step, adv[i-1])
				}
				if turn := math.Abs(g.Angle - p.Angle); turn > 30.01 {
					t.Errorf("glyphs %d and %d turn by %.1f°", i-1, i, turn)
				}
			}
			if math.Abs(g.Angle) >= 90 {
				t.Errorf("glyph %d %q is upside down (angle %.1f°)", i, g.Rune, g.Angle)
			}
		}
		if maxA-minA < 20 {
			t.Errorf("glyph angles span %.1f° to %.1f°: the label does not curve", minA, maxA)
		}
		if dx := run[len(run)-1].X - run[0].X; dx < w/2 {
			t.Errorf("the label runs %.1f px to the right, want about %.1f", dx, w)
		}
		// The straight road is drawn as one straight text, the zigzag is not labelled (too tight).
		var road, zigzag bool
		for _, tx := range rec.texts {
			road = road || tx.s == "Straight Road"
			zigzag = zigzag || tx.s == "Zigzag Lane"
		}
		if !road || zigzag {
			t.Errorf("straight road labelled %v (want true), zigzag labelled %v (want false)", road, zigzag)
		}
	}
}

func runesOf(run []Glyph) []rune {
	var rs []rune
	for _, g := range run {
		rs = append(rs, g.Rune)
	}
	return rs
}

func TestLineLabelsAvoidEachOther(t *testing.T) {
	// The river's label has the higher priority; the road crosses the river near the middle of both,
	// so the road's label must move along the road (or be dropped), never overlap the river's.
	v := labelView(300, 200)
	_, _, lb := drawRecorded(t, curvedMap(), v)
	owners := map[int]bool{}
	for i, b := range lb.placed {
		owners[lb.owner[i]] = true
		if b.x0 < 0 || b.y0 < 0 || b.x1 > 300 || b.y1 > 200 {
			t.Errorf("box %v outside the image", b)
		}
		for j, o := range lb.placed[:i] {
			if lb.owner[j] != lb.owner[i] && b.overlaps(o) {
				t.Errorf("boxes %v (label %d) and %v (label %d) overlap", b, lb.owner[i], o, lb.owner[j])
			}
		}
	}
	if len(owners) != 2 {
		t.Errorf("%d labels placed, want 2 (river and road)", len(owners))
	}
	// With overlap allowed, the road's label stays at the middle of the road.
	m := curvedMap()
	m.Layers[1].Label.AllowOverlap = true
	rec, _, _ := drawRecorded(t, m, v)
	for _, tx := range rec.texts {
		if tx.s == "Straight Road" {
			if d := math.Hypot(tx.x-150, tx.y-100); d > 60 {
				t.Errorf("overlapping road label starts at (%.0f, %.0f), want near the middle of the road", tx.x, tx.y)
			}
		}
	}
}

func TestLineLabelNearEdge(t *testing.T) {
	v := labelView(200, 120)
	rec, img, lb := drawRecorded(t, edgeMap(), v)
	if len(rec.runs)+len(rec.texts) != 1 {
		t.Fatalf("%d runs and %d texts, want the one label", len(rec.runs), len(rec.texts))
	}
	for _, b := range lb.placed {
		if b.x0 < 0 || b.y0 < 0 || b.x1 > 200 || b.y1 > 120 {
			t.Errorf("glyph box %v is cut by the image edge", b)
		}
	}
	// No label ink or halo on the image's border.
	b := img.Bounds()
	for x := 0; x < b.Dx(); x++ {
		for _, y := range []int{0, b.Dy() - 1} {
			if c := nrgbaAt(img, x, y); c.B < 120 && c.R < 60 {
				t.Errorf("label ink at the edge, pixel (%d, %d) %v", x, y, c)
			}
		}
	}
	for y := 0; y < b.Dy(); y++ {
		for _, x := range []int{0, b.Dx() - 1} {
			if c := nrgbaAt(img, x, y); c.B < 120 && c.R < 60 {
				t.Errorf("label ink at the edge, pixel (%d, %d) %v", x, y, c)
			}
		}
	}
}

func TestLineLabelTooShort(t *testing.T) {
	m := Map{Background: paper, Layers: []Layer{{
		Features: Features{{Geom: orb.LineString{{50, 50}, {80, 50}}, Label: "A label longer than its line"}},
		Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 1},
		Label:    &LabelStyle{Size: 8, Color: riverInk},
	}}}
	rec, _, _ := drawRecorded(t, m, labelView(200, 100))
	if len(rec.runs)+len(rec.texts) != 0 {
		t.Errorf("a label longer than its line was drawn: %v %v", rec.runs, rec.texts)
	}
}

func TestFontStyles(t *testing.T) {
	fs := defaultRenderer().Fonts()
	regular, _, _ := fs.face(TextStyle{Size: 13}).measure("Canada")
	bold, _, _ := fs.face(TextStyle{Size: 13, FontStyle: FontStyle{Bold: true}}).measure("Canada")
	italic, _, _ := fs.face(TextStyle{Size: 13, FontStyle: FontStyle{Italic: true}}).measure("Canada")
	if !(bold > regular*1.05) {
		t.Errorf("bold width %.1f, regular %.1f: bold should be wider", bold, regular)
	}
	if math.Abs(italic-regular) > 1 {
		t.Errorf("oblique width %.1f, regular %.1f: should be the same", italic, regular)
	}
	for _, c := range []struct {
		name         string
		st           FontStyle
		bold, italic bool
	}{
		{"DejaVu Sans", FontStyle{}, false, false},
		{"Arial", FontStyle{Bold: true}, true, false},
		{"Times New Roman Bold Italic", FontStyle{}, true, true},
		{"Verdana Oblique", FontStyle{}, false, true},
	} {
		if b, i := resolveStyle(c.name, c.st); b != c.bold || i != c.italic {
			t.Errorf("resolveStyle(%q, %+v) = %v, %v, want %v, %v", c.name, c.st, b, i, c.bold, c.italic)
		}
	}
	// Drawn: bold ink is heavier, and the underline puts a row of ink under the baseline.
	ink := func(st FontStyle) (total, below int) {
		img := image.NewRGBA(image.Rect(0, 0, 120, 30))
		s := NewGGSurface(img, fs)
		s.Clear(color.NRGBA{255, 255, 255, 255})
		s.Text("Canada", 5, 20, TextStyle{Size: 16, Color: color.NRGBA{0, 0, 0, 255}, FontStyle: st})
		total = countDark(img, img.Bounds(), 128)
		below = countDark(img, image.Rect(0, 21, 120, 25), 128)
		return total, below
	}
	r, rb := ink(FontStyle{})
	b, _ := ink(FontStyle{Bold: true})
	_, ub := ink(FontStyle{Underline: true})
	if b < r*5/4 {
		t.Errorf("bold has %d dark pixels, regular %d", b, r)
	}
	if ub < rb+40 {
		t.Errorf("underlined text has %d dark pixels under the baseline, plain %d", ub, rb)
	}
	// The underline is unbroken where it crosses descenders, and from glyph to glyph.
	img := image.NewRGBA(image.Rect(0, 0, 120, 50))
	s := NewGGSurface(img, fs)
	s.Clear(color.NRGBA{255, 255, 255, 255})
	s.Text("gyg", 5, 30, TextStyle{Size: 40, Color: color.NRGBA{0, 0, 0, 255}, FontStyle: FontStyle{Underline: true}})
	w, _, _ := fs.face(TextStyle{Size: 40}).measure("gyg")
	for x := 6; x < 5+int(w)-1; x++ {
		if c := nrgbaAt(img, x, 34); c.R > 100 {
			t.Errorf("underline broken at x %d: %v", x, c)
		}
	}
}

func TestCharacterMarker(t *testing.T) {
	v := labelView(240, 100)
	m := characterMap()
	img, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	// The star is centred on its point and drawn in the layer's fill colour, about 20 pt = 27 px
	// wide; nothing of it beyond 16 px from the point.
	star := color.NRGBA{230, 160, 0, 255}
	if c := nrgbaAt(img, 30, 50); !near(c, star, 4) {
		t.Errorf("star centre pixel %v, want %v", c, star)
	}
	n, x0, x1 := 0, 1000, -1
	for y := 30; y < 70; y++ {
		for x := 5; x < 55; x++ {
			if near(nrgbaAt(img, x, y), star, 40) {
				n++
				x0, x1 = min(x0, x), max(x1, x)
			}
		}
	}
	if w := x1 - x0 + 1; w < 14 || w > 30 || n < 80 {
		t.Errorf("star: %d pixels %d wide, want a star about 22 px wide", n, w)
	}
	// The offset diamond is 6 pt = 8 px above its point.
	red := color.NRGBA{200, 0, 0, 255}
	if c := nrgbaAt(img, 130, 42); !near(c, red, 30) {
		t.Errorf("offset diamond pixel (130, 42) = %v, want %v", c, red)
	}
	// Vector output draws the same glyphs as paths.
	for _, f := range []Format{SVG, PDF} {
		doc := drawVector(t, f, m, v)
		got := rasterizeVector(t, f, doc, 96)
		if c := color.NRGBAModel.Convert(got.At(30, 50)).(color.NRGBA); !near(c, star, 8) {
			t.Errorf("%v: star centre pixel %v, want %v", f, c, star)
		}
	}
}

// TestLabelsVector draws the curved-label and font-style maps as SVG and PDF: one element per glyph
// on its own baseline, the font styles as attributes and embedded DejaVu Sans styles, and the documents
// rasterized by rsvg-convert and pdftoppm match golden images.
func TestLabelsVector(t *testing.T) {
	v := labelView(300, 200)
	for _, tc := range []struct {
		name string
		f    Format
		m    Map
		want []string
	}{
		{"label_curved_svg", SVG, curvedMap(), []string{`font-style="italic"`, `font-weight="bold"`, `rotate(`}},
		{"label_curved_pdf", PDF, curvedMap(), []string{"+DejaVuSans-Oblique /Encoding /Identity-H", "+DejaVuSans-Bold /Encoding /Identity-H"}},
		{"label_styles_svg", SVG, stylesMap(), []string{`text-decoration="underline"`, `text-decoration="line-through"`, `font-weight="bold" font-style="italic"`}},
		{"label_styles_pdf", PDF, stylesMap(), []string{"+DejaVuSans-BoldOblique /Encoding /Identity-H"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := drawVector(t, tc.f, tc.m, v)
			if tc.f == SVG {
				if err := xml.Unmarshal(doc, new(struct{})); err != nil {
					t.Fatalf("SVG is not well-formed XML: %v", err)
				}
			}
			for _, want := range tc.want {
				if !bytes.Contains(doc, []byte(want)) {
					t.Errorf("%v has no %s", tc.f, want)
				}
			}
			if tc.name == "label_curved_svg" {
				// The river's label: one rotated <text> per glyph, for its halo and its fill.
				if n := strings.Count(string(doc), `rotate(`); n < 2*len("Sinuous River Label") {
					t.Errorf("SVG has %d rotated glyphs, want at least %d", n, 2*len("Sinuous River Label"))
				}
			}
			img := rasterizeVector(t, tc.f, doc, 96)
			if got := img.Bounds().Size(); got != image.Pt(v.Width, v.Height) {
				t.Fatalf("%s decodes to %v", tc.f, got)
			}
			checkGolden(t, tc.name, img)
		})
	}
}

// BenchmarkCurvedLabels draws a 1024×768 map of 120 sinuous labelled lines (many of them
// crossing, so most candidate positions collide) and encodes it as PNG: the cost of placing and
// drawing curved labels.
func BenchmarkCurvedLabels(b *testing.B) {
	var fs Features
	for i := 0; i < 120; i++ {
		y := float64(20 + (i*97)%730)
		x0 := float64((i * 53) % 300)
		fs = append(fs, Feature{Geom: sineLine(x0, x0+700, y, 15+float64(i%4)*8, 40+float64(i%5)*10), Label: "Curved label " + string(rune('A'+i%26))})
	}
	m := Map{Background: paper, Layers: []Layer{{
		Features: NewIndex(fs),
		Symbol:   Symbol{Stroke: riverBlue, StrokeWidth: 1},
		Label:    &LabelStyle{Size: 8, Color: riverInk, Halo: paper, HaloWidth: 1},
	}}}
	benchMap(b, m, labelView(1024, 768), true)
}
