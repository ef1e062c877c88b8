package render

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paulmach/orb"
)

// rasterizeVector turns an SVG or PDF document into an image with Debian's rsvg-convert
// (librsvg2-bin) or pdftoppm (poppler-utils); the test is skipped when the tool is missing, unless
// MAPFARM_REQUIRE_SERVICES is set.
func rasterizeVector(t *testing.T, f Format, doc []byte, dpi float64) image.Image {
	t.Helper()
	tool := map[Format]string{SVG: "rsvg-convert", PDF: "pdftoppm"}[f]
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatalf("%s not installed (apt-get install librsvg2-bin poppler-utils)", tool)
		}
		t.Skipf("%s not installed (apt-get install librsvg2-bin poppler-utils)", tool)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "doc."+f.String())
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	out := filepath.Join(dir, "out.png")
	if f == SVG {
		cmd = exec.Command(tool, "-o", out, in)
	} else {
		if dpi <= 0 {
			dpi = 96
		}
		cmd = exec.Command(tool, "-png", "-r", fmtFloat(dpi), "-singlefile", in, filepath.Join(dir, "out"))
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, b)
	}
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("%s output: %v", tool, err)
	}
	return img
}

func fmtFloat(f float64) string { return string(fmtNum(nil, f)) }

func drawVector(t *testing.T, f Format, m Map, v View) []byte {
	t.Helper()
	var buf bytes.Buffer
	r := defaultRenderer()
	if err := r.DrawEncoded(context.Background(), &buf, m, v, f, EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestVectorFormats draws the synthetic map as SVG and PDF, checks that standard tools read the
// documents at the requested size, that the shapes land on the same pixels as the raster render,
// and compares the rasterized documents with golden images.
func TestVectorFormats(t *testing.T) {
	raster, err := Draw(context.Background(), syntheticMap(), syntheticView())
	if err != nil {
		t.Fatal(err)
	}
	defer Release(raster)
	rotated := syntheticView()
	rotated.Rotation = 30
	for _, tc := range []struct {
		name string
		f    Format
		v    View
	}{
		{"format_svg", SVG, syntheticView()},
		{"format_pdf", PDF, syntheticView()},
		{"format_svg_rotated30", SVG, rotated},
		{"format_pdf_rotated30", PDF, rotated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := drawVector(t, tc.f, syntheticMap(), tc.v)
			switch tc.f {
			case SVG:
				if err := xml.Unmarshal(doc, new(struct{})); err != nil {
					t.Fatalf("SVG is not well-formed XML: %v", err)
				}
			case PDF:
				if !bytes.HasPrefix(doc, []byte("%PDF-1.4")) || !bytes.HasSuffix(doc, []byte("%%EOF\n")) {
					t.Fatalf("not a PDF: %q…", doc[:min(20, len(doc))])
				}
			}
			img := rasterizeVector(t, tc.f, doc, tc.v.DPI)
			if got := img.Bounds().Size(); got != image.Pt(tc.v.Width, tc.v.Height) {
				t.Fatalf("%s decodes to %v, want %d×%d", tc.f, got, tc.v.Width, tc.v.Height)
			}
			if tc.v.Rotation == 0 {
				// What a user sees: the blue polygon fill, the red multipolygon and the background
				// where the raster has them.
				for _, p := range []image.Point{{30, 130}, {150, 50}, {190, 110}} {
					want := color.NRGBAModel.Convert(raster.At(p.X, p.Y)).(color.NRGBA)
					got := color.NRGBAModel.Convert(img.At(p.X, p.Y)).(color.NRGBA)
					if !near(got, want, 6) {
						t.Errorf("pixel %v = %v, raster has %v", p, got, want)
					}
				}
			}
			checkGolden(t, tc.name, img)
		})
	}
}

func TestVectorText(t *testing.T) {
	m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
		Features: Features{{Geom: syntheticMap().Layers[0].Features.(Features)[0].Geom, Label: `A<&>"(b)\`}},
		Symbol:   Symbol{Fill: color.NRGBA{200, 200, 200, 255}},
		Label:    &LabelStyle{Size: 10, Color: color.NRGBA{0, 0, 0, 255}},
	}}}
	svg := string(drawVector(t, SVG, m, syntheticView()))
	if !strings.Contains(svg, `A&lt;&amp;&gt;&quot;(b)\</text>`) {
		t.Errorf("SVG label not escaped: %s", svg)
	}
	pdf := drawVector(t, PDF, m, syntheticView())
	if !bytes.Contains(pdf, []byte("+DejaVuSans /Encoding /Identity-H")) {
		t.Errorf("PDF has no DejaVu Sans font resource")
	}
	if text := pdfTool(t, pdf, "pdftotext", "-enc", "UTF-8"); strings.TrimSpace(text) != `A<&>"(b)\` {
		t.Errorf("pdftotext reads %q", text)
	}
}

func TestVectorGroupsAndImages(t *testing.T) {
	pic := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for i := range pic.Pix {
		pic.Pix[i] = 255
	}
	pic.Pix[3] = 0 // one transparent pixel: a soft mask in PDF
	for _, f := range []Format{SVG, PDF} {
		s, err := defaultRenderer().NewVectorSurface(f, 50, 50, 96)
		if err != nil {
			t.Fatal(err)
		}
		s.Clear(color.NRGBA{0, 0, 255, 255})
		s.BeginGroup()
		s.BeginGroup()
		rectPath(s, 0, 0, 50, 25)
		s.Fill(color.NRGBA{255, 0, 0, 255})
		s.EndGroup(1)
		s.EndGroup(0.5)
		s.DrawImage(pic, 10, 30, 20, 20)
		img := rasterizeVector(t, f, s.Bytes(), 96)
		top := color.NRGBAModel.Convert(img.At(40, 10)).(color.NRGBA)
		if !near(top, color.NRGBA{128, 0, 127, 255}, 3) {
			t.Errorf("%v: half-opaque red over blue = %v", f, top)
		}
		if c := color.NRGBAModel.Convert(img.At(20, 40)).(color.NRGBA); !near(c, color.NRGBA{255, 255, 255, 255}, 3) {
			t.Errorf("%v: image pixel = %v, want white", f, c)
		}
	}
	if _, err := defaultRenderer().NewVectorSurface(PNG, 1, 1, 96); err == nil {
		t.Error("NewVectorSurface(PNG) succeeded")
	}
}

// patternMap has one square per hatch style and one with a picture fill.
func patternMap() Map {
	pic := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			c := color.NRGBA{230, 120, 0, 255}
			if (x < 4) != (y < 4) {
				c = color.NRGBA{0, 0, 0, 0}
			}
			pic.SetNRGBA(x, y, c)
		}
	}
	var fs Features
	blue := color.NRGBA{0, 60, 200, 255}
	for i, h := range []HatchStyle{HatchHorizontal, HatchVertical, HatchForwardDiagonal, HatchBackwardDiagonal, HatchCross, HatchDiagonalCross} {
		x := float64(i%4) * 25
		y := float64(i/4) * 50
		fs = append(fs, Feature{Geom: orb.Polygon{{{x + 2, y + 2}, {x + 23, y + 2}, {x + 23, y + 45}, {x + 2, y + 45}, {x + 2, y + 2}}},
			Symbol: &Symbol{Fill: blue, Hatch: h, Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 0.75}})
	}
	fs = append(fs, Feature{Geom: orb.Polygon{{{52, 52}, {98, 52}, {98, 98}, {52, 98}, {52, 52}}},
		Symbol: &Symbol{Pattern: pic, PatternWidth: 9, Stroke: color.NRGBA{0, 0, 0, 255}, StrokeWidth: 0.75}})
	return Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{Features: fs}}}
}

// TestPatternFills draws hatched and picture fills on every surface: the same share of each
// square is inked in the raster and in the rasterized SVG and PDF.
func TestPatternFills(t *testing.T) {
	v := syntheticView()
	raster, err := Draw(context.Background(), patternMap(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(raster)
	checkGolden(t, "pattern_fills", raster)
	inked := func(img image.Image, r image.Rectangle, c color.NRGBA) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if near(color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA), c, 60) {
					n++
				}
			}
		}
		return n
	}
	// Inside the first hatched square (pixels 8..42 × 112..186) and the picture square.
	hatch, picture := image.Rect(8, 112, 42, 186), image.Rect(108, 8, 192, 92)
	blue, orange := color.NRGBA{0, 60, 200, 255}, color.NRGBA{230, 120, 0, 255}
	wantH, wantP := inked(raster, hatch, blue), inked(raster, picture, orange)
	if wantH < 100 || wantH > 700 || wantP < 2000 || wantP > 5000 {
		t.Fatalf("raster: %d hatch pixels, %d picture pixels", wantH, wantP)
	}
	// In an opacity group too (a PDF form XObject has its own pattern space): the same pixels are
	// inked, paler.
	grouped := patternMap()
	grouped.Layers[0].Opacity = 0.7
	groupRaster, err := Draw(context.Background(), grouped, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(groupRaster)
	paleBlue := nrgbaAt(groupRaster, 8, 112)
	if n := inked(groupRaster, hatch, paleBlue); paleBlue.B < 200 || paleBlue.R < 50 || n < 100 {
		t.Fatalf("raster in a group: hatch colour %v on %d pixels", paleBlue, n)
	}
	for _, f := range []Format{SVG, PDF} {
		img := rasterizeVector(t, f, drawVector(t, f, grouped, v), v.DPI)
		if got, want := inked(img, hatch, paleBlue), inked(groupRaster, hatch, paleBlue); got < want*6/10 || got > want*14/10 {
			t.Errorf("%v in a group: %d hatch pixels of %v, raster %d", f, got, paleBlue, want)
		}
	}
	for _, f := range []Format{SVG, PDF} {
		img := rasterizeVector(t, f, drawVector(t, f, patternMap(), v), v.DPI)
		gotH, gotP := inked(img, hatch, blue), inked(img, picture, orange)
		if gotH < wantH*6/10 || gotH > wantH*14/10 || gotP < wantP*8/10 || gotP > wantP*12/10 {
			t.Errorf("%v: %d hatch and %d picture pixels, raster %d and %d", f, gotH, gotP, wantH, wantP)
		}
		checkGolden(t, "pattern_fills_"+f.String(), img)
	}
}

// TestPDFPatternSpace: a pattern tile lands on the same pixels on the page and inside an opacity
// group (whose form XObject has its own pattern space). The 4×5 tile has one red row: the red rows
// of the fill are every fifth pixel row, from the top.
func TestPDFPatternSpace(t *testing.T) {
	tile := image.NewNRGBA(image.Rect(0, 0, 4, 5))
	for y := 0; y < 5; y++ {
		for x := 0; x < 4; x++ {
			c := color.NRGBA{0, 0, 255, 255}
			if y == 0 {
				c = color.NRGBA{255, 0, 0, 255}
			}
			tile.SetNRGBA(x, y, c)
		}
	}
	for _, group := range []bool{false, true} {
		s := NewPDFSurface(40, 42, 96, defaultRenderer().Fonts())
		if group {
			s.BeginGroup()
		}
		rectPath(s, 20, 0, 40, 20)
		s.FillPattern(tile)
		if group {
			s.EndGroup(0.99)
		}
		img := rasterizeVector(t, PDF, s.Bytes(), 96)
		var red []int
		for y := 0; y < 20; y++ {
			if r, _, _, _ := img.At(30, y).RGBA(); r > 0x8000 {
				red = append(red, y)
			}
		}
		if fmt.Sprint(red) != "[0 5 10 15]" {
			t.Errorf("group %v: red rows %v, want [0 5 10 15]", group, red)
		}
	}
}

// TestMarkerAngleOffset: a square marker turned 45° is a diamond (corners of the square empty, the
// diamond's points inked), moved by its offset, on every surface.
func TestMarkerAngleOffset(t *testing.T) {
	red := color.NRGBA{200, 0, 0, 255}
	m := Map{Background: color.NRGBA{255, 255, 255, 255}, Layers: []Layer{{
		Features: Features{{Geom: orb.Point{50, 50}}},
		// 30 pt = 40 px wide at 96 DPI, moved 7.5 pt = 10 px right and 10 px down.
		Symbol: Symbol{Fill: red, Marker: MarkerSquare, MarkerSize: 30, MarkerAngle: 45, MarkerOffset: [2]float64{7.5, -7.5}},
	}}}
	v := View{Extent: orb.Bound{Max: orb.Point{100, 100}}, Width: 100, Height: 100, DPI: 96}
	raster, err := Draw(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(raster)
	check := func(name string, img image.Image) {
		cx, cy := 60, 60 // the centre, moved by the offset
		at := func(dx, dy int) color.NRGBA { return color.NRGBAModel.Convert(img.At(cx+dx, cy+dy)).(color.NRGBA) }
		for _, p := range [][2]int{{25, 0}, {-25, 0}, {0, 25}, {0, -25}, {0, 0}} {
			if c := at(p[0], p[1]); !near(c, red, 10) {
				t.Errorf("%s: diamond point %v is %v", name, p, c)
			}
		}
		for _, p := range [][2]int{{16, 16}, {-16, -16}, {16, -16}, {-16, 16}} {
			if c := at(p[0], p[1]); near(c, red, 60) {
				t.Errorf("%s: square corner %v is inked %v", name, p, c)
			}
		}
	}
	check("raster", raster)
	for _, f := range []Format{SVG, PDF} {
		check(f.String(), rasterizeVector(t, f, drawVector(t, f, m, v), 96))
	}
}
