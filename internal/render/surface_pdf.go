package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/klauspost/compress/zlib"
)

// PDFSurface is a Surface that writes a one-page PDF 1.4 document with a minimal writer of its own:
// one compressed content stream of path operators (m, l, h, f, S), colours with constant alpha
// through ExtGState (ca, CA), text, images as Flate-compressed RGB image XObjects with an alpha
// soft mask, pattern fills as coloured tiling patterns, and opacity groups as transparency-group
// form XObjects.
//
// Text is drawn in the font it is measured and placed with, DejaVu Sans in the style asked for,
// embedded as a TrueType subset of the glyphs the page uses: a Type0 font with Identity-H encoding
// over a CIDFontType2 whose CIDs are the subset's glyph ids, with its widths (/W) from the font's
// advances and a ToUnicode CMap, so labels are searchable and copyable text in any script, and
// look the same in every viewer. A character DejaVu Sans lacks is drawn as '?', as on the raster,
// and keeps its own Unicode value in the ToUnicode map. Glyph runs (curved labels) place each
// glyph with its own text matrix; underlines and strikethroughs are filled paths.
//
// Coordinates are pixels, y down, mapped to a page of width×height pixels at the DPI given to
// NewPDFSurface (72 points per inch).
//
// A PDFSurface is not safe for concurrent use. Bytes returns the finished document.
type PDFSurface struct {
	vecPath
	k      float64          // points per pixel
	bufs   []*bytes.Buffer  // content of the page, then of each open group
	gs     map[[2]uint8]int // ExtGState number by (fill alpha, stroke alpha)
	xobj   [][]byte         // image, form and pattern objects, numbered in order (Im, Fm and P names share the sequence)
	xnames []string         // their resource names ("" for soft masks)
	used   [4]*fontUse      // the characters drawn in each font variant (resources /F1 to /F4)
	num    []byte
	hex    []byte
	done   []byte
}

// NewPDFSurface returns a PDF surface of width×height pixels for a page at dpi (0 means 96),
// measuring text with fonts (nil parses a new set).
func NewPDFSurface(width, height int, dpi float64, fonts *Fonts) *PDFSurface {
	if dpi <= 0 {
		dpi = 96
	}
	s := &PDFSurface{vecPath: newVecPath(width, height, fonts), k: 72 / dpi, gs: map[[2]uint8]int{}}
	page := &bytes.Buffer{}
	page.Grow(min(2*width*height, 16<<20)) // about what a busy map takes; fewer regrowths
	s.bufs = []*bytes.Buffer{page}
	fmt.Fprintf(page, "%s 0 0 %s 0 %s cm\n", s.n(s.k), s.n(-s.k), s.n(float64(height)*s.k))
	return s
}

func (s *PDFSurface) out() *bytes.Buffer { return s.bufs[len(s.bufs)-1] }

func (s *PDFSurface) n(f float64) string {
	s.num = fmtNum(s.num[:0], f)
	return string(s.num)
}

func (s *PDFSurface) rgb(c color.NRGBA) string {
	return s.n(float64(c.R)/255) + " " + s.n(float64(c.G)/255) + " " + s.n(float64(c.B)/255)
}

// alpha selects an ExtGState with the given constant fill and stroke alpha, when not opaque.
func (s *PDFSurface) alpha(fill, stroke uint8) {
	if fill == 255 && stroke == 255 {
		return
	}
	k := [2]uint8{fill, stroke}
	n, ok := s.gs[k]
	if !ok {
		n = len(s.gs) + 1
		s.gs[k] = n
	}
	fmt.Fprintf(s.out(), "/GS%d gs\n", n)
}

// Clear implements Surface: the whole surface filled with c (nothing when c is transparent).
func (s *PDFSurface) Clear(c color.NRGBA) {
	if c.A == 0 {
		return
	}
	w := s.out()
	w.WriteString("q\n")
	s.alpha(c.A, 255)
	fmt.Fprintf(w, "%s rg 0 0 %d %d re f\nQ\n", s.rgb(c), s.w, s.h)
}

func (s *PDFSurface) path(pts []pathPoint, subs []subpath) {
	w := s.out()
	for _, sp := range subs {
		for i, p := range pts[sp.start:sp.end] {
			s.num = fmtNum(s.num[:0], p.x)
			s.num = append(s.num, ' ')
			s.num = fmtNum(s.num, p.y)
			w.Write(s.num)
			if i == 0 {
				w.WriteString(" m\n")
			} else {
				w.WriteString(" l\n")
			}
		}
		if sp.closed {
			w.WriteString("h\n")
		}
	}
}

func (s *PDFSurface) fill(pts []pathPoint, subs []subpath, c color.NRGBA) {
	if c.A == 0 || len(subs) == 0 {
		return
	}
	w := s.out()
	w.WriteString("q\n")
	s.alpha(c.A, 255)
	fmt.Fprintf(w, "%s rg\n", s.rgb(c))
	s.path(pts, subs)
	w.WriteString("f\nQ\n")
}

var pdfCaps = [...]int{CapButt: 0, CapRound: 1, CapSquare: 2}
var pdfJoins = [...]int{JoinRound: 1, JoinMiter: 0, JoinBevel: 2}

func (s *PDFSurface) stroke(pts []pathPoint, subs []subpath, st StrokeStyle, scale float64) {
	if st.Color.A == 0 || st.Width <= 0 || len(subs) == 0 {
		return
	}
	w := s.out()
	w.WriteString("q\n")
	s.alpha(255, st.Color.A)
	fmt.Fprintf(w, "%s RG %s w %d J %d j", s.rgb(st.Color), s.n(st.Width*scale), pdfCaps[st.Cap%3], pdfJoins[st.Join%3])
	if len(st.Dash) > 0 {
		w.WriteString(" [")
		for i, d := range st.Dash {
			if i > 0 {
				w.WriteByte(' ')
			}
			w.WriteString(s.n(d * scale))
		}
		w.WriteString("] 0 d")
	}
	w.WriteByte('\n')
	s.path(pts, subs)
	w.WriteString("S\nQ\n")
}

// Fill implements Surface.
func (s *PDFSurface) Fill(c color.NRGBA) { s.fill(s.pts, s.subs, c) }

// FillPattern implements Surface with a coloured tiling pattern whose cell draws the tile image.
func (s *PDFSurface) FillPattern(tile image.Image) {
	if len(s.subs) == 0 || tile == nil || tile.Bounds().Empty() {
		return
	}
	b := tile.Bounds()
	img := s.imageXObject(tile)
	var cell bytes.Buffer
	fmt.Fprintf(&cell, "q %d 0 0 %d 0 %d cm /%s Do Q", b.Dx(), -b.Dy(), b.Dy(), img)
	name := fmt.Sprintf("P%d", len(s.xobj)+1)
	// Pattern space is the default space of the content using it: the page's (points, y up) for
	// page content, pixel space for the forms of opacity groups, which are drawn in pixel space.
	matrix := fmt.Sprintf("%s 0 0 %s 0 %s", s.n(s.k), s.n(-s.k), s.n(float64(s.h)*s.k))
	if len(s.bufs) > 1 {
		matrix = "1 0 0 1 0 0"
	}
	s.addObject(name, fmt.Sprintf("/Type /Pattern /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 %d %d] /XStep %d /YStep %d /Resources %d 0 R /Matrix [%s]",
		b.Dx(), b.Dy(), b.Dx(), b.Dy(), pdfResources, matrix), cell.Bytes())
	w := s.out()
	fmt.Fprintf(w, "q\n/Pattern cs /%s scn\n", name)
	s.path(s.pts, s.subs)
	w.WriteString("f\nQ\n")
}

// Stroke implements Surface.
func (s *PDFSurface) Stroke(st StrokeStyle) { s.stroke(s.pts, s.subs, st, s.m.lineScale()) }

// pdfTm returns the text matrix putting the baseline's start at (x, y) (surface units, after the
// transform), running angle degrees anticlockwise: text space is y up, the page y down.
func (s *PDFSurface) pdfTm(x, y, angle float64) string {
	sin, cos := sincosDeg(angle)
	return s.n(cos) + " " + s.n(-sin) + " " + s.n(-sin) + " " + s.n(-cos) + " " + s.n(x) + " " + s.n(y) + " Tm"
}

// Text implements Surface.
func (s *PDFSurface) Text(str string, x, y float64, t TextStyle) {
	if t.Size <= 0 || (t.Color.A == 0 && t.Halo.A == 0) || str == "" {
		return
	}
	if t.Underline || t.Strikethrough {
		// Glyph by glyph, where DejaVu Sans puts them, so the lines (measured with DejaVu Sans) end
		// with the text.
		s.GlyphRun(s.fonts.face(t).layout(nil, str, x, y, t.Angle), t)
		return
	}
	x, y = s.m.Apply(x, y)
	tm := s.pdfTm(x, y, t.Angle)
	v := variantOf(t.Font, t.FontStyle)
	s.hex = s.hexString(s.hex[:0], v, str)
	s.textPasses(t, nil, func(w *bytes.Buffer) {
		w.WriteString(tm)
		w.WriteByte(' ')
		w.Write(s.hex)
		w.WriteString(" Tj\n")
	})
}

// hexString appends str as a hex string of two-byte character ids of font variant v (Identity-H),
// numbering the characters it has not seen yet.
func (s *PDFSurface) hexString(dst []byte, v int, str string) []byte {
	u := s.used[v]
	if u == nil {
		u = newFontUse(s.fonts, v)
		s.used[v] = u
	}
	const digits = "0123456789ABCDEF"
	dst = append(dst, '<')
	for _, r := range str {
		id := u.id(r)
		dst = append(dst, digits[id>>12], digits[id>>8&15], digits[id>>4&15], digits[id&15])
	}
	return append(dst, '>')
}

// GlyphRun implements Surface: one text object per pass (halo, then fill) with a text matrix per
// glyph.
func (s *PDFSurface) GlyphRun(run []Glyph, t TextStyle) {
	if t.Size <= 0 || (t.Color.A == 0 && t.Halo.A == 0) || len(run) == 0 {
		return
	}
	quads := s.decorationQuads(nil, run, t)
	v := variantOf(t.Font, t.FontStyle)
	s.textPasses(t, quads, func(w *bytes.Buffer) {
		for _, g := range run {
			x, y := s.m.Apply(g.X, g.Y)
			w.WriteString(s.pdfTm(x, y, g.Angle))
			w.WriteByte(' ')
			s.hex = s.hexString(s.hex[:0], v, string(g.Rune))
			w.Write(s.hex)
			w.WriteString(" Tj\n")
		}
	})
}

// textPasses draws text in t: the halo (glyph outlines stroked 2×HaloWidth wide, and the
// decorations' outlines), then the fill (glyphs and decorations). show writes the text-showing
// operators of a text object. Under a fill, the halo is marked content with an empty ActualText,
// so a reader extracting or copying text gets each label once.
func (s *PDFSurface) textPasses(t TextStyle, quads [][4]pathPoint, show func(w *bytes.Buffer)) {
	w := s.out()
	font := fmt.Sprintf("/F%d %s Tf", variantOf(t.Font, t.FontStyle)+1, s.n(t.Size))
	decos := func(op string) {
		for _, q := range quads {
			s.path(q[:], []subpath{{start: 0, end: 4, closed: true}})
		}
		w.WriteString(op + "\n")
	}
	if t.Halo.A > 0 && t.HaloWidth > 0 {
		w.WriteString("q\n")
		s.alpha(255, t.Halo.A)
		fmt.Fprintf(w, "%s RG %s w 1 j\n", s.rgb(t.Halo), s.n(2*t.HaloWidth))
		if t.Color.A > 0 {
			w.WriteString("/Span << /ActualText () >> BDC\n")
		}
		fmt.Fprintf(w, "BT %s 1 Tr\n", font)
		show(w)
		w.WriteString("ET\n")
		if t.Color.A > 0 {
			w.WriteString("EMC\n")
		}
		if len(quads) > 0 {
			decos("S")
		}
		w.WriteString("Q\n")
	}
	if t.Color.A > 0 {
		w.WriteString("q\n")
		s.alpha(t.Color.A, 255)
		fmt.Fprintf(w, "%s rg\nBT %s 0 Tr\n", s.rgb(t.Color), font)
		show(w)
		w.WriteString("ET\n")
		if len(quads) > 0 {
			decos("f")
		}
		w.WriteString("Q\n")
	}
}

// Marker implements Surface.
func (s *PDFSurface) Marker(x, y float64, m MarkerStyle, size, angle float64, fill color.NRGBA, stroke StrokeStyle) {
	if size <= 0 {
		return
	}
	pts, subs, filled, stroke := s.markerShape(x, y, m, size, angle, fill, stroke)
	if filled {
		s.fill(pts, subs, fill)
	}
	s.stroke(pts, subs, stroke, 1)
}

// DrawImage implements Surface.
func (s *PDFSurface) DrawImage(img image.Image, x, y, w, h float64) {
	sb := img.Bounds()
	if sb.Empty() || w <= 0 || h <= 0 {
		return
	}
	name := s.imageXObject(img)
	// The unit square of image space has the image's first row at y = 1.
	m := Matrix{XX: w, YY: -h, X0: x, Y0: y + h}.Then(s.m)
	fmt.Fprintf(s.out(), "q %s %s %s %s %s %s cm /%s Do Q\n", s.n(m.XX), s.n(m.YX), s.n(m.XY), s.n(m.YY), s.n(m.X0), s.n(m.Y0), name)
}

// imageXObject stores img as an RGB image XObject (with a soft mask when it has transparency) and
// returns its resource name.
func (s *PDFSurface) imageXObject(img image.Image) string {
	sb := img.Bounds()
	nrgba := image.NewNRGBA(image.Rect(0, 0, sb.Dx(), sb.Dy()))
	draw.Draw(nrgba, nrgba.Bounds(), img, sb.Min, draw.Src)
	rgb := make([]byte, 0, 3*sb.Dx()*sb.Dy())
	alpha := make([]byte, 0, sb.Dx()*sb.Dy())
	opaque := true
	for i := 0; i < len(nrgba.Pix); i += 4 {
		rgb = append(rgb, nrgba.Pix[i], nrgba.Pix[i+1], nrgba.Pix[i+2])
		alpha = append(alpha, nrgba.Pix[i+3])
		opaque = opaque && nrgba.Pix[i+3] == 255
	}
	smask := ""
	if !opaque {
		n := s.addObject("", fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", sb.Dx(), sb.Dy()), alpha)
		smask = fmt.Sprintf(" /SMask %d 0 R", n)
	}
	name := fmt.Sprintf("Im%d", len(s.xobj)+1)
	s.addObject(name, fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8%s", sb.Dx(), sb.Dy(), smask), rgb)
	return name
}

// addObject stores a compressed stream object and returns its object number; name is its
// resource name ("" for objects only referenced from others, such as soft masks).
func (s *PDFSurface) addObject(name, dict string, data []byte) int {
	s.xobj = append(s.xobj, pdfStream(dict, data))
	s.xnames = append(s.xnames, name)
	return pdfFirstXObject + len(s.xobj) - 1
}

// pdfStream returns a Flate-compressed stream object with the entries dict (besides /Filter and
// /Length).
func pdfStream(dict string, data []byte) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	_, _ = zw.Write(data)
	_ = zw.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "<< %s /Filter /FlateDecode /Length %d >>\nstream\n", dict, z.Len())
	b.Write(z.Bytes())
	b.WriteString("\nendstream")
	return b.Bytes()
}

// BeginGroup implements Surface.
func (s *PDFSurface) BeginGroup() { s.bufs = append(s.bufs, &bytes.Buffer{}) }

// EndGroup implements Surface: the group becomes a transparency-group form drawn with the opacity.
func (s *PDFSurface) EndGroup(opacity float64) {
	n := len(s.bufs)
	if n <= 1 {
		return
	}
	content := s.bufs[n-1]
	s.bufs = s.bufs[:n-1]
	a := uint8(max(0, min(1, opacity))*255 + 0.5)
	if a == 0 {
		return
	}
	name := fmt.Sprintf("Fm%d", len(s.xobj)+1)
	s.addObject(name, fmt.Sprintf("/Type /XObject /Subtype /Form /BBox [0 0 %d %d] /Group << /S /Transparency >> /Resources %d 0 R", s.w, s.h, pdfResources), content.Bytes())
	w := s.out()
	w.WriteString("q\n")
	s.alpha(a, a)
	fmt.Fprintf(w, "/%s Do\nQ\n", name)
}

// Object numbers of the fixed objects; XObjects follow, then the fonts (pdfFontObjects each).
const (
	pdfCatalog = 1 + iota
	pdfPages
	pdfPage
	pdfContent
	pdfResources
	pdfFirstXObject
)

// Bytes closes any open groups and returns the document. Drawing after Bytes is an error.
func (s *PDFSurface) Bytes() []byte {
	if s.done != nil {
		return s.done
	}
	for len(s.bufs) > 1 {
		s.EndGroup(1)
	}
	objs := make([][]byte, pdfFirstXObject-1, pdfFirstXObject-1+len(s.xobj)+len(s.used)*pdfFontObjects)
	objs[pdfCatalog-1] = fmt.Appendf(nil, "<< /Type /Catalog /Pages %d 0 R >>", pdfPages)
	objs[pdfPages-1] = fmt.Appendf(nil, "<< /Type /Pages /Kids [%d 0 R] /Count 1 >>", pdfPage)
	objs[pdfPage-1] = fmt.Appendf(nil, "<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources %d 0 R /Contents %d 0 R /Group << /S /Transparency /CS /DeviceRGB >> >>",
		pdfPages, s.n(float64(s.w)*s.k), s.n(float64(s.h)*s.k), pdfResources, pdfContent)
	objs[pdfContent-1] = pdfStream("", s.bufs[0].Bytes())
	objs = append(objs, s.xobj...)

	var res bytes.Buffer
	res.WriteString("<<")
	opened := false
	for v, u := range s.used {
		if u == nil {
			continue
		}
		if !opened {
			res.WriteString(" /Font <<")
			opened = true
		}
		fmt.Fprintf(&res, " /F%d %d 0 R", v+1, len(objs)+1)
		objs = s.appendFont(objs, u)
	}
	if opened {
		res.WriteString(" >>")
	}
	if len(s.gs) > 0 {
		keys := make([][2]uint8, 0, len(s.gs))
		for k := range s.gs {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return s.gs[keys[i]] < s.gs[keys[j]] })
		res.WriteString(" /ExtGState <<")
		for _, k := range keys {
			fmt.Fprintf(&res, " /GS%d << /ca %s /CA %s >>", s.gs[k], s.n(float64(k[0])/255), s.n(float64(k[1])/255))
		}
		res.WriteString(" >>")
	}
	for _, kind := range []struct{ dict, prefixes string }{{"XObject", "IF"}, {"Pattern", "P"}} {
		opened := false
		for i, name := range s.xnames {
			if name == "" || !strings.ContainsRune(kind.prefixes, rune(name[0])) {
				continue
			}
			if !opened {
				fmt.Fprintf(&res, " /%s <<", kind.dict)
				opened = true
			}
			fmt.Fprintf(&res, " /%s %d 0 R", name, pdfFirstXObject+i)
		}
		if opened {
			res.WriteString(" >>")
		}
	}
	res.WriteString(" >>")
	objs[pdfResources-1] = res.Bytes()

	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", i+1)
		b.Write(o)
		b.WriteString("\nendobj\n")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, pdfCatalog, xref)
	s.done = b.Bytes()
	return s.done
}

// pdfFontObjects is the number of objects of one embedded font: the Type0 font, its CIDFont, its
// font descriptor, the font file and the ToUnicode CMap, numbered in that order.
const pdfFontObjects = 5

// appendFont appends the objects of the font u records, the Type0 font first.
func (s *PDFSurface) appendFont(objs [][]byte, u *fontUse) [][]byte {
	f, file, err := u.subset()
	if err != nil {
		panic(err) // the embedded fonts are valid TrueType; see TestFontSubset
	}
	first := len(objs) + 1
	name := u.tag() + "+" + variantNames[u.variant].postScript
	k := 1000 / float64(f.unitsPerEm)
	fu := func(v int16) string { return s.n(float64(v) * k) }
	i16 := func(tag string, off int) int16 {
		if t := f.tables[tag]; len(t) >= off+2 {
			return int16(binary.BigEndian.Uint16(t[off:]))
		}
		return 0
	}

	objs = append(objs, fmt.Appendf(nil, "<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>",
		name, first+1, first+4))

	var w bytes.Buffer
	w.WriteString("[0 [")
	for id, g := range u.glyphs {
		if id > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(s.n(float64(f.advance(g)) * k))
	}
	w.WriteString("]]")
	objs = append(objs, fmt.Appendf(nil, "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /%s /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /CIDToGIDMap /Identity /W %s >>",
		name, first+2, w.Bytes()))

	flags, stemV := 4, 80 // symbolic (a CID font's glyphs are not the standard Latin set)
	if u.variant&variantItalic != 0 {
		flags |= 64
	}
	if u.variant&variantBold != 0 {
		flags |= 1 << 18
		stemV = 140
	}
	var italic float64
	if post := f.tables["post"]; len(post) >= 8 {
		italic = float64(int32(binary.BigEndian.Uint32(post[4:]))) / 65536
	}
	capHeight := i16("OS/2", 88)
	if capHeight == 0 {
		capHeight = i16("hhea", 4)
	}
	objs = append(objs, fmt.Appendf(nil, "<< /Type /FontDescriptor /FontName /%s /Flags %d /FontBBox [%s %s %s %s] /ItalicAngle %s /Ascent %s /Descent %s /CapHeight %s /StemV %d /FontFile2 %d 0 R >>",
		name, flags, fu(i16("head", 36)), fu(i16("head", 38)), fu(i16("head", 40)), fu(i16("head", 42)),
		s.n(italic), fu(i16("hhea", 4)), fu(i16("hhea", 6)), fu(capHeight), stemV, first+3))

	objs = append(objs, pdfStream(fmt.Sprintf("/Length1 %d", len(file)), file))
	return append(objs, pdfStream("", toUnicodeCMap(u.runes)))
}

// toUnicodeCMap returns a ToUnicode CMap mapping the two-byte character id i to runes[i] (UTF-16BE),
// for every id but 0 (.notdef).
func toUnicodeCMap(runes []rune) []byte {
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n")
	for start := 1; start < len(runes); start += 100 { // at most 100 entries a block
		end := min(start+100, len(runes))
		fmt.Fprintf(&b, "%d beginbfchar\n", end-start)
		for id := start; id < end; id++ {
			fmt.Fprintf(&b, "<%04X> <", id)
			for _, c := range utf16.Encode([]rune{runes[id]}) {
				fmt.Fprintf(&b, "%04X", c)
			}
			b.WriteString(">\n")
		}
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.Bytes()
}

var _ Surface = (*PDFSurface)(nil)
