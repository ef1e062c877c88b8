package render

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paulmach/orb"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// scriptNames are place names in the scripts a map may carry. DejaVu Sans covers the first
// four (drawn as the font draws them); it has Arabic letters, drawn unshaped and left to right;
// it has no CJK glyphs, drawn '?' as on the raster.
var scriptNames = []struct {
	script, name string
	covered      bool // DejaVu Sans has every glyph
}{
	{"Latin", "Zürich Łódź", true},
	{"Latin", "São Tomé", true},
	{"Greek", "Αθήνα", true},
	{"Cyrillic", "Москва", true},
	{"Arabic", "القاهرة", true},
	{"CJK", "東京", false},
}

// scriptsMap labels one point per name, in regular and, for the first three, bold italic type.
func scriptsMap() Map {
	var fs Features
	for i, s := range scriptNames {
		fs = append(fs, Feature{Geom: orb.Point{20, float64(180 - 28*i)}, Label: s.name})
	}
	return Map{Background: paper, Layers: []Layer{
		{
			Features: fs,
			Symbol:   Symbol{Fill: riverInk, Marker: MarkerCircle, MarkerSize: 5},
			Label:    &LabelStyle{Size: 12, Color: color.NRGBA{0, 0, 0, 255}, Halo: paper, HaloWidth: 1},
		},
		{
			Features: Features{{Geom: orb.Point{190, 180}, Label: "Ελλάδα"}, {Geom: orb.Point{190, 152}, Label: "Київ"}, {Geom: orb.Point{190, 124}, Label: "Ærøskøbing"}},
			Symbol:   Symbol{Fill: riverBlue, Marker: MarkerSquare, MarkerSize: 5},
			Label:    &LabelStyle{Size: 11, Color: riverInk, FontStyle: FontStyle{Bold: true, Italic: true}},
		},
	}}
}

func TestFontCoverage(t *testing.T) {
	fs, err := NewFonts()
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	for _, s := range scriptNames {
		covered := true
		for _, r := range s.name {
			if g, err := fs.fonts[0].GlyphIndex(&buf, r); err != nil || (g == 0 && r != ' ') {
				covered = false
			}
		}
		if covered != s.covered {
			t.Errorf("%s %q: DejaVu Sans covers it: %v, the table says %v", s.script, s.name, covered, s.covered)
		}
	}
}

// TestScriptLabels draws the names in every script on the raster, as SVG and as PDF, read back by
// rsvg-convert and pdftoppm, against golden images.
func TestScriptLabels(t *testing.T) {
	v := labelView(320, 200)
	img, err := Draw(t.Context(), scriptsMap(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	checkGolden(t, "label_scripts", img)
	for _, f := range []Format{SVG, PDF} {
		t.Run(f.String(), func(t *testing.T) {
			doc := drawVector(t, f, scriptsMap(), v)
			got := rasterizeVector(t, f, doc, 96)
			checkGolden(t, "label_scripts_"+f.String(), got)
		})
	}
}

// pdfTool runs one of poppler-utils' tools on a PDF document and returns what it prints; the test is
// skipped when the tool is missing, unless MAPFARM_REQUIRE_SERVICES is set.
func pdfTool(t *testing.T, doc []byte, tool string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatalf("%s not installed (apt-get install poppler-utils)", tool)
		}
		t.Skipf("%s not installed (apt-get install poppler-utils)", tool)
	}
	in := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, in)
	if tool == "pdftotext" {
		args = append(args, "-") // to standard output
	}
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
	return string(out)
}

// TestPDFFontsEmbedded: every font of a labelled PDF is an embedded TrueType subset with a
// Unicode map (pdffonts), and the labels are text a reader finds (pdftotext), in every script,
// the CJK name included (drawn '?', but its characters are in the text).
func TestPDFFontsEmbedded(t *testing.T) {
	doc := drawVector(t, PDF, scriptsMap(), labelView(320, 200))
	fonts := pdfTool(t, doc, "pdffonts")
	lines := strings.Split(strings.TrimSpace(fonts), "\n")
	if len(lines) != 4 { // the header, the rule, the regular and the bold oblique font
		t.Fatalf("pdffonts:\n%s", fonts)
	}
	for _, l := range lines[2:] {
		// name, type ("CID TrueType"), encoding, emb, sub, uni, object, generation
		f := strings.Fields(l)
		if len(f) != 9 || f[1]+" "+f[2] != "CID TrueType" || f[3] != "Identity-H" || f[4] != "yes" || f[5] != "yes" || f[6] != "yes" {
			t.Errorf("pdffonts: %q is not an embedded TrueType subset with a Unicode map", l)
		}
		if !strings.Contains(f[0], "+DejaVuSans") {
			t.Errorf("pdffonts: font %q is not a subset of DejaVu Sans", f[0])
		}
	}
	text := pdfTool(t, doc, "pdftotext", "-raw", "-enc", "UTF-8")
	for _, s := range scriptNames {
		want := s.name
		if s.script == "Arabic" {
			continue // below
		}
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext has no %s label %q:\n%s", s.script, want, text)
		}
	}
	for _, want := range []string{"Ελλάδα", "Київ", "Ærøskøbing"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext has no bold italic label %q:\n%s", want, text)
		}
	}
	// Arabic letters drawn left to right come back in either order, depending on the reader's
	// handling of right-to-left text.
	arabic := "القاهرة"
	rev := []rune(arabic)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if !strings.Contains(text, arabic) && !strings.Contains(text, string(rev)) {
		t.Errorf("pdftotext has no Arabic label %q:\n%s", arabic, text)
	}
}

// TestFontSubset: the embedded font is a subset (a few kilobytes, not DejaVu Sans's 740 kB)
// that x/image/font/sfnt reads back with the glyphs at their ids, widths and outlines as in the
// full font.
func TestFontSubset(t *testing.T) {
	fs, err := NewFonts()
	if err != nil {
		t.Fatal(err)
	}
	for v := range 4 {
		u := newFontUse(fs, v)
		for _, r := range "Åå Zürich Αθήνα Москва ﬁ東" {
			u.id(r)
		}
		full, file, err := u.subset()
		if err != nil {
			t.Fatal(err)
		}
		if len(file) > 40<<10 {
			t.Errorf("variant %d: subset of %d characters is %d bytes", v, len(u.runes), len(file))
		}
		sub, err := sfnt.Parse(file)
		if err != nil {
			t.Fatalf("variant %d: the subset does not parse: %v", v, err)
		}
		var buf sfnt.Buffer
		ppem := fixed.I(2048)
		for id, r := range u.runes[1:] {
			id++
			// The subset's cmap finds the characters the font has, at their ids.
			g, err := sub.GlyphIndex(&buf, r)
			if err != nil {
				t.Fatal(err)
			}
			if want := uint16(id); u.covered[id] && uint16(g) != want || !u.covered[id] && g != 0 {
				t.Errorf("variant %d: %q is glyph %d of the subset, want %d (covered %v)", v, r, g, want, u.covered[id])
			}
			a1, _ := sub.GlyphAdvance(&buf, sfnt.GlyphIndex(id), ppem, 0)
			if a2 := full.advance(u.glyphs[id]); int(a1>>6) != a2 {
				t.Errorf("variant %d: %q advance %d, full font %d", v, r, a1>>6, a2)
			}
			segs, err := sub.LoadGlyph(&buf, sfnt.GlyphIndex(id), ppem, nil)
			if err != nil || (r != ' ' && len(segs) == 0) {
				t.Errorf("variant %d: %q outline: %d segments, %v", v, r, len(segs), err)
			}
		}
	}
}

// TestSVGFontFace: the SVG carries the subsets of the styles it uses as @font-face data, and its
// text is the names themselves.
func TestSVGFontFace(t *testing.T) {
	doc := drawVector(t, SVG, scriptsMap(), labelView(320, 200))
	if err := xml.Unmarshal(doc, new(struct{})); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v", err)
	}
	if n := bytes.Count(doc, []byte("@font-face")); n != 2 {
		t.Errorf("%d @font-face rules, want 2 (regular, bold italic)", n)
	}
	for _, want := range []string{`src:url(data:font/ttf;base64,`, `font-weight:bold;font-style:italic`, "Москва", "東京"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("SVG has no %s", want)
		}
	}
}
