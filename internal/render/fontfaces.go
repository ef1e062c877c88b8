package render

import "golang.org/x/image/font/sfnt"

// SFNT returns the embedded DejaVu Sans style drawn for bold and italic text, for code that
// rasterises glyphs by itself (the SDF glyph ranges of vector tile styles, internal/vectorfonts).
// The font is read-only and safe for concurrent use as long as each caller passes its own
// sfnt.Buffer.
func (fs *Fonts) SFNT(bold, italic bool) *sfnt.Font {
	v := 0
	if bold {
		v |= variantBold
	}
	if italic {
		v |= variantItalic
	}
	return fs.fonts[v]
}
