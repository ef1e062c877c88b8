package symbology

// CharacterMarker symbols come from requests (CharacterMarkerSymbol in a LayerDrawingDescription, a
// selection symbol or a custom graphic), not from the YAML service definition: a marker drawn as a
// glyph of a font. Symbol.Size is the font size in points, Symbol.Color the glyph's colour, Angle,
// XOffset and YOffset turn and move it as for other markers, and CharacterStyle names the glyph.
const CharacterMarker SymbolType = "characterMarker"

// CharacterStyle is what a character marker symbol adds to Symbol.
type CharacterStyle struct {
	// Character is the Unicode code point of the glyph (CharacterIndex).
	Character rune
	// CharacterFont is its font; its Size is not used (Symbol.Size is). Every family is drawn
	// with DejaVu Sans, so a symbol font's private characters draw DejaVu Sans's glyph for the
	// same code point, if it has one.
	CharacterFont Font
}
