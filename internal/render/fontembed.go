package render

import (
	"fmt"
	"hash/fnv"

	"golang.org/x/image/font/sfnt"
)

// Embedding the fonts labels are measured with into vector documents: PDFSurface and SVGSurface
// note every character they draw in each DejaVu Sans style (fontUse) and, when the document is
// finished, embed a subset of that style holding only those glyphs (fontsubset.go).
//
// Script coverage is DejaVu Sans's: Latin (with diacritics), Greek, Cyrillic, Armenian, Georgian,
// Hebrew and Arabic letters, IPA, many symbols. It has no CJK, Indic or Thai glyphs. A character
// the font lacks is drawn as '?', as on the raster, but the PDF's text keeps the real character
// (its ToUnicode entry), so a search or a copy finds the name. Text is not shaped: Arabic and Hebrew
// are drawn letter by letter, left to right, in isolated forms.

// variantNames are the name-table names of DejaVu Sans's four styles, by variant.
var variantNames = [4]struct{ subfamily, postScript string }{
	{"Book", "DejaVuSans"},
	{"Bold", "DejaVuSans-Bold"},
	{"Oblique", "DejaVuSans-Oblique"},
	{"Bold Oblique", "DejaVuSans-BoldOblique"},
}

// fontFile returns the embedded font file of variant v.
func fontFile(v int) []byte {
	return [4][]byte{dejaVuSans, dejaVuSansBold, dejaVuSansOblique, dejaVuSansBoldOblique}[v]
}

// fontUse numbers the characters a document draws in one font variant: id 0 is .notdef, the others
// in the order first drawn. Each id has its glyph in the font ('?' for a character the font lacks);
// two characters the font lacks have two ids with the same glyph, so each keeps its own Unicode
// value in a PDF's ToUnicode map.
type fontUse struct {
	variant int
	font    *sfnt.Font
	buf     sfnt.Buffer
	ids     map[rune]uint16
	runes   []rune   // by id
	glyphs  []uint16 // the font's glyph index, by id
	covered []bool   // whether the font has the character, by id
}

func newFontUse(fs *Fonts, v int) *fontUse {
	return &fontUse{variant: v, font: fs.fonts[v], ids: map[rune]uint16{}, runes: []rune{0}, glyphs: []uint16{0}, covered: []bool{false}}
}

// id returns the id of r, numbering it when it is new. Past 65,535 distinct characters, new ones
// share the id of the first character the font lacks.
func (u *fontUse) id(r rune) uint16 {
	if id, ok := u.ids[r]; ok {
		return id
	}
	g, err := u.font.GlyphIndex(&u.buf, r)
	covered := err == nil && g != 0
	if !covered {
		if g, err = u.font.GlyphIndex(&u.buf, '?'); err != nil {
			g = 0
		}
	}
	if len(u.runes) == 0xffff {
		return 0
	}
	id := uint16(len(u.runes))
	u.ids[r] = id
	u.runes = append(u.runes, r)
	u.glyphs = append(u.glyphs, uint16(g))
	u.covered = append(u.covered, covered)
	return id
}

// tag returns the six capital letters that name this subset (PDF's "ABCDEF+" prefix), from the
// characters in it, so the same text gives the same document.
func (u *fontUse) tag() string {
	h := fnv.New64a()
	for _, r := range u.runes {
		fmt.Fprintf(h, "%d,", r)
	}
	s := h.Sum64()
	b := make([]byte, 6)
	for i := range b {
		b[i] = byte('A' + s%26)
		s /= 26
	}
	return string(b)
}

// subset returns the parsed full font and the subset's font file, whose glyph i is the glyph of
// id i; its cmap maps the characters the font has to their ids.
func (u *fontUse) subset() (*ttfFont, []byte, error) {
	f, err := parseTTF(fontFile(u.variant))
	if err != nil {
		return nil, nil, err
	}
	cmap := make(map[rune]uint16, len(u.runes))
	for id, r := range u.runes {
		if u.covered[id] {
			cmap[r] = uint16(id)
		}
	}
	names := fontNames{
		copyright:  "Copyright (c) 2003 by Bitstream, Inc. All Rights Reserved. DejaVu changes are in public domain",
		family:     DefaultFont,
		subfamily:  variantNames[u.variant].subfamily,
		full:       DefaultFont + " " + variantNames[u.variant].subfamily,
		postScript: variantNames[u.variant].postScript,
	}
	return f, f.subset(u.glyphs, cmap, names), nil
}
