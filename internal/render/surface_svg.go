package render

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
)

// SVGSurface is a Surface that writes an SVG 1.1 document: paths become <path> elements, text
// <text> in DejaVu Sans (the font labels are measured with) with font-weight, font-style and
// text-decoration for the font style, halos a stroke painted under the text, glyph runs (curved
// labels) one <text> per glyph, groups <g> with an opacity, images embedded PNG data. Coordinates
// are pixels of a width×height viewBox; the document's width and height are given in pixels too, so
// a viewer at 96 DPI shows it at the raster's size.
//
// Each DejaVu Sans style the text uses is embedded as an @font-face rule whose source is a TrueType
// subset of the characters drawn in it (a data: URI), so a browser draws the raster's glyphs with
// the raster's advances whether or not DejaVu Sans is installed; a character DejaVu Sans lacks is
// left out of the subset and drawn by the viewer's fallback font (the raster draws '?'). librsvg
// (rsvg-convert) ignores @font-face and draws the installed DejaVu Sans through fontconfig.
//
// An SVGSurface is not safe for concurrent use. Bytes returns the finished document.
type SVGSurface struct {
	vecPath
	buf      bytes.Buffer
	groups   []int // offsets of the open groups' opacity values
	patterns int   // patterns defined so far, for their ids
	num      []byte
	quads    [][4]pathPoint
	used     [4]*fontUse // the characters drawn in each font variant
	defsAt   int         // where the font definitions go: after the <svg> start tag
	done     []byte
}

// NewSVGSurface returns an SVG surface of width×height pixels measuring text with fonts (nil parses
// a new set).
func NewSVGSurface(width, height int, fonts *Fonts) *SVGSurface {
	s := &SVGSurface{vecPath: newVecPath(width, height, fonts)}
	s.buf.Grow(min(width*height, 8<<20)) // about what a busy map takes; fewer regrowths
	fmt.Fprintf(&s.buf, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" width="%dpx" height="%dpx" viewBox="0 0 %d %d">`+"\n",
		width, height, width, height)
	s.defsAt = s.buf.Len()
	return s
}

// Bytes closes any open groups and returns the document. Drawing after Bytes is an error.
func (s *SVGSurface) Bytes() []byte {
	if s.done != nil {
		return s.done
	}
	for len(s.groups) > 0 {
		s.EndGroup(1)
	}
	s.buf.WriteString("</svg>\n")
	defs := s.fontFaces()
	if len(defs) == 0 {
		s.done = s.buf.Bytes()
		return s.done
	}
	doc := s.buf.Bytes()
	out := make([]byte, 0, len(doc)+len(defs))
	out = append(out, doc[:s.defsAt]...)
	out = append(out, defs...)
	s.done = append(out, doc[s.defsAt:]...)
	return s.done
}

// fontFaces returns a <defs> element with an @font-face rule for each font variant drawn, or nil.
func (s *SVGSurface) fontFaces() []byte {
	var b bytes.Buffer
	for v, u := range s.used {
		if u == nil {
			continue
		}
		_, file, err := u.subset()
		if err != nil {
			panic(err) // the embedded fonts are valid TrueType; see TestFontSubset
		}
		if b.Len() == 0 {
			b.WriteString("<defs><style type=\"text/css\"><![CDATA[\n")
		}
		weight, style := "normal", "normal"
		if v&variantBold != 0 {
			weight = "bold"
		}
		if v&variantItalic != 0 {
			style = "italic"
		}
		fmt.Fprintf(&b, `@font-face{font-family:"%s";font-weight:%s;font-style:%s;src:url(data:font/ttf;base64,`, DefaultFont, weight, style)
		b.WriteString(base64.StdEncoding.EncodeToString(file))
		b.WriteString(") format(\"truetype\")}\n")
	}
	if b.Len() == 0 {
		return nil
	}
	b.WriteString("]]></style></defs>\n")
	return b.Bytes()
}

// note records the characters of str as drawn in t's font variant, for the embedded subsets.
func (s *SVGSurface) note(str string, t TextStyle) {
	v := variantOf(t.Font, t.FontStyle)
	u := s.used[v]
	if u == nil {
		u = newFontUse(s.fonts, v)
		s.used[v] = u
	}
	for _, r := range str {
		u.id(r)
	}
}

func (s *SVGSurface) n(f float64) string {
	s.num = fmtNum(s.num[:0], f)
	return string(s.num)
}

func svgColor(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func (s *SVGSurface) opacityAttr(name string, a uint8) {
	if a < 255 {
		fmt.Fprintf(&s.buf, ` %s="%s"`, name, s.n(float64(a)/255))
	}
}

// Clear implements Surface: a rectangle over the whole surface (nothing for a transparent colour).
func (s *SVGSurface) Clear(c color.NRGBA) {
	if c.A == 0 {
		return
	}
	fmt.Fprintf(&s.buf, `<rect x="0" y="0" width="%d" height="%d" fill="%s"`, s.w, s.h, svgColor(c))
	s.opacityAttr("fill-opacity", c.A)
	s.buf.WriteString("/>\n")
}

func (s *SVGSurface) pathData(pts []pathPoint, subs []subpath, closedOnly bool) bool {
	any := false
	s.buf.WriteString(` d="`)
	for _, sp := range subs {
		if closedOnly && !sp.closed {
			continue
		}
		any = true
		for i, p := range pts[sp.start:sp.end] {
			if i == 0 {
				s.buf.WriteByte('M')
			} else {
				s.buf.WriteByte('L')
			}
			s.num = fmtNum(s.num[:0], p.x)
			s.num = append(s.num, ' ')
			s.num = fmtNum(s.num, p.y)
			s.buf.Write(s.num)
		}
		if sp.closed {
			s.buf.WriteByte('Z')
		}
	}
	s.buf.WriteByte('"')
	return any
}

func (s *SVGSurface) fill(pts []pathPoint, subs []subpath, c color.NRGBA) {
	if c.A == 0 || len(subs) == 0 {
		return
	}
	s.buf.WriteString("<path")
	s.pathData(pts, subs, false)
	fmt.Fprintf(&s.buf, ` fill="%s"`, svgColor(c))
	s.opacityAttr("fill-opacity", c.A)
	s.buf.WriteString("/>\n")
}

var svgCaps = [...]string{CapButt: "butt", CapRound: "round", CapSquare: "square"}
var svgJoins = [...]string{JoinRound: "round", JoinMiter: "miter", JoinBevel: "bevel"}

func (s *SVGSurface) stroke(pts []pathPoint, subs []subpath, st StrokeStyle) {
	if st.Color.A == 0 || st.Width <= 0 || len(subs) == 0 {
		return
	}
	scale := s.m.lineScale()
	s.buf.WriteString("<path")
	s.pathData(pts, subs, false)
	fmt.Fprintf(&s.buf, ` fill="none" stroke="%s" stroke-width="%s" stroke-linecap="%s" stroke-linejoin="%s"`,
		svgColor(st.Color), s.n(st.Width*scale), svgCaps[st.Cap%3], svgJoins[st.Join%3])
	s.opacityAttr("stroke-opacity", st.Color.A)
	if len(st.Dash) > 0 {
		s.buf.WriteString(` stroke-dasharray="`)
		for i, d := range st.Dash {
			if i > 0 {
				s.buf.WriteByte(' ')
			}
			s.buf.WriteString(s.n(d * scale))
		}
		s.buf.WriteByte('"')
	}
	s.buf.WriteString("/>\n")
}

// Fill implements Surface.
func (s *SVGSurface) Fill(c color.NRGBA) { s.fill(s.pts, s.subs, c) }

// FillPattern implements Surface with a <pattern> of the tile embedded as PNG.
func (s *SVGSurface) FillPattern(tile image.Image) {
	if len(s.subs) == 0 || tile == nil || tile.Bounds().Empty() {
		return
	}
	var pb bytes.Buffer
	if err := png.Encode(&pb, tile); err != nil {
		return
	}
	s.patterns++
	b := tile.Bounds()
	fmt.Fprintf(&s.buf, `<defs><pattern id="p%d" patternUnits="userSpaceOnUse" width="%d" height="%d"><image width="%d" height="%d" xlink:href="data:image/png;base64,`,
		s.patterns, b.Dx(), b.Dy(), b.Dx(), b.Dy())
	s.buf.WriteString(base64.StdEncoding.EncodeToString(pb.Bytes()))
	s.buf.WriteString("\"/></pattern></defs>\n<path")
	s.pathData(s.pts, s.subs, false)
	fmt.Fprintf(&s.buf, ` fill="url(#p%d)"/>`+"\n", s.patterns)
}

// Stroke implements Surface.
func (s *SVGSurface) Stroke(st StrokeStyle) { s.stroke(s.pts, s.subs, st) }

// fontAttrs writes the font attributes of t: DejaVu Sans (the font text is measured and placed
// with, whatever t.Font says) in t's weight and slant.
func (s *SVGSurface) fontAttrs(t TextStyle) {
	fmt.Fprintf(&s.buf, ` font-family="%s, sans-serif" font-size="%s"`, DefaultFont, s.n(t.Size))
	bold, italic := resolveStyle(t.Font, t.FontStyle)
	if bold {
		s.buf.WriteString(` font-weight="bold"`)
	}
	if italic {
		s.buf.WriteString(` font-style="italic"`)
	}
}

// decorationAttr writes t's text-decoration, if any.
func (s *SVGSurface) decorationAttr(t TextStyle) {
	switch {
	case t.Underline && t.Strikethrough:
		s.buf.WriteString(` text-decoration="underline line-through"`)
	case t.Underline:
		s.buf.WriteString(` text-decoration="underline"`)
	case t.Strikethrough:
		s.buf.WriteString(` text-decoration="line-through"`)
	}
}

// haloAttrs writes the stroke attributes of t's halo.
func (s *SVGSurface) haloAttrs(t TextStyle) {
	fmt.Fprintf(&s.buf, ` stroke="%s" stroke-width="%s" stroke-linejoin="round"`, svgColor(t.Halo), s.n(2*t.HaloWidth))
	s.opacityAttr("stroke-opacity", t.Halo.A)
}

// Text implements Surface.
func (s *SVGSurface) Text(str string, x, y float64, t TextStyle) {
	if t.Size <= 0 || (t.Color.A == 0 && t.Halo.A == 0) || str == "" {
		return
	}
	s.note(str, t)
	x, y = s.m.Apply(x, y)
	fmt.Fprintf(&s.buf, `<text x="%s" y="%s"`, s.n(x), s.n(y))
	s.fontAttrs(t)
	s.decorationAttr(t)
	fmt.Fprintf(&s.buf, ` fill="%s"`, svgColor(t.Color))
	s.opacityAttr("fill-opacity", t.Color.A)
	if t.Halo.A > 0 && t.HaloWidth > 0 {
		s.haloAttrs(t)
		s.buf.WriteString(` paint-order="stroke"`)
	}
	if t.Angle != 0 {
		fmt.Fprintf(&s.buf, ` transform="rotate(%s %s %s)"`, s.n(-t.Angle), s.n(x), s.n(y))
	}
	s.buf.WriteString(` xml:space="preserve">`)
	s.buf.WriteString(xmlEscape(str))
	s.buf.WriteString("</text>\n")
}

// GlyphRun implements Surface: a group of one <text> per glyph, translated and rotated onto its
// baseline; with a halo, every glyph's halo (a stroke) is drawn first, then every glyph's fill.
func (s *SVGSurface) GlyphRun(run []Glyph, t TextStyle) {
	if t.Size <= 0 || (t.Color.A == 0 && t.Halo.A == 0) || len(run) == 0 {
		return
	}
	for _, g := range run {
		s.note(string(g.Rune), t)
	}
	s.buf.WriteString("<g")
	s.fontAttrs(t)
	s.buf.WriteString(` xml:space="preserve">` + "\n")
	// Underlines and strikethroughs follow the glyphs as paths: viewers differ on text-decoration
	// of rotated single-glyph texts.
	s.quads = s.decorationQuads(s.quads[:0], run, t)
	if t.Halo.A > 0 && t.HaloWidth > 0 {
		s.buf.WriteString(`<g fill="none"`)
		s.haloAttrs(t)
		s.buf.WriteString(">\n")
		s.glyphTexts(run)
		s.decorationPath()
		s.buf.WriteString("</g>\n")
	}
	if t.Color.A > 0 {
		fmt.Fprintf(&s.buf, `<g fill="%s"`, svgColor(t.Color))
		s.opacityAttr("fill-opacity", t.Color.A)
		s.buf.WriteString(">\n")
		s.glyphTexts(run)
		s.decorationPath()
		s.buf.WriteString("</g>\n")
	}
	s.buf.WriteString("</g>\n")
}

// decorationPath writes s.quads as one path, painted as its group says.
func (s *SVGSurface) decorationPath() {
	if len(s.quads) == 0 {
		return
	}
	s.buf.WriteString(`<path d="`)
	for i := range s.quads {
		if i > 0 {
			s.buf.WriteByte(' ')
		}
		for j, p := range s.quads[i] {
			s.buf.WriteByte("MLLL"[j])
			s.num = fmtNum(s.num[:0], p.x)
			s.num = append(s.num, ' ')
			s.num = fmtNum(s.num, p.y)
			s.buf.Write(s.num)
		}
		s.buf.WriteByte('Z')
	}
	s.buf.WriteString("\"/>\n")
}

func (s *SVGSurface) glyphTexts(run []Glyph) {
	for _, g := range run {
		x, y := s.m.Apply(g.X, g.Y)
		s.buf.WriteString("<text")
		if g.Angle == 0 {
			fmt.Fprintf(&s.buf, ` x="%s" y="%s"`, s.n(x), s.n(y))
		} else {
			fmt.Fprintf(&s.buf, ` transform="translate(%s %s) rotate(%s)"`, s.n(x), s.n(y), s.n(-g.Angle))
		}
		s.buf.WriteByte('>')
		s.buf.WriteString(xmlEscape(string(g.Rune)))
		s.buf.WriteString("</text>\n")
	}
}

// Marker implements Surface.
func (s *SVGSurface) Marker(x, y float64, m MarkerStyle, size, angle float64, fill color.NRGBA, stroke StrokeStyle) {
	if size <= 0 {
		return
	}
	pts, subs, filled, stroke := s.markerShape(x, y, m, size, angle, fill, stroke)
	if filled {
		s.fill(pts, subs, fill)
	}
	s.push(Identity())
	s.stroke(pts, subs, stroke)
	s.pop()
}

// push and pop bracket drawing of points already transformed, so stroke widths are not scaled twice.
func (s *SVGSurface) push(m Matrix) { s.stack = append(s.stack, s.m); s.m = m }
func (s *SVGSurface) pop()          { s.Pop() }

// DrawImage implements Surface: the image is embedded as PNG data.
func (s *SVGSurface) DrawImage(img image.Image, x, y, w, h float64) {
	sb := img.Bounds()
	if sb.Empty() || w <= 0 || h <= 0 {
		return
	}
	var pb bytes.Buffer
	if err := png.Encode(&pb, img); err != nil {
		return
	}
	m := s.imageMatrix(img, x, y, w, h)
	fmt.Fprintf(&s.buf, `<image width="%d" height="%d" preserveAspectRatio="none" transform="matrix(%s %s %s %s %s %s)" xlink:href="data:image/png;base64,`,
		sb.Dx(), sb.Dy(), s.n(m.XX), s.n(m.YX), s.n(m.XY), s.n(m.YY), s.n(m.X0), s.n(m.Y0))
	s.buf.WriteString(base64.StdEncoding.EncodeToString(pb.Bytes()))
	s.buf.WriteString("\"/>\n")
}

// BeginGroup implements Surface.
func (s *SVGSurface) BeginGroup() {
	// The opacity is known only at EndGroup: write a fixed-width placeholder and patch it then.
	s.groups = append(s.groups, s.buf.Len()+len(`<g opacity="`))
	s.buf.WriteString(`<g opacity="1.00000">` + "\n")
}

// EndGroup implements Surface.
func (s *SVGSurface) EndGroup(opacity float64) {
	n := len(s.groups)
	if n == 0 {
		return
	}
	at := s.groups[n-1]
	s.groups = s.groups[:n-1]
	s.buf.WriteString("</g>\n")
	copy(s.buf.Bytes()[at:], fmt.Sprintf("%.5f", max(0, min(1, opacity))))
}

func xmlEscape(s string) string {
	if !strings.ContainsAny(s, `<>&"'`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var _ Surface = (*SVGSurface)(nil)
