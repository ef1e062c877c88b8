package symbology

import (
	"fmt"
	"image/color"
)

// SymbolType is the kind of a symbol.
type SymbolType string

// Symbol types (YAML `type`).
const (
	SimpleFill   SymbolType = "simpleFill"   // polygons
	SimpleLine   SymbolType = "simpleLine"   // polylines (and outlines)
	SimpleMarker SymbolType = "simpleMarker" // points and multipoints
)

// FillStyle is the pattern of a simple fill (esriSimpleFillStyle).
type FillStyle string

// Fill styles (YAML `style` of a simpleFill).
const (
	FillSolid            FillStyle = "solid"
	FillNull             FillStyle = "null" // outline only
	FillHorizontal       FillStyle = "horizontal"
	FillVertical         FillStyle = "vertical"
	FillCross            FillStyle = "cross"
	FillForwardDiagonal  FillStyle = "forwardDiagonal"
	FillBackwardDiagonal FillStyle = "backwardDiagonal"
	FillDiagonalCross    FillStyle = "diagonalCross"
)

// LineStyle is the dash pattern of a simple line (esriSimpleLineStyle).
type LineStyle string

// Line styles (YAML `style` of a simpleLine or outline).
const (
	LineSolid      LineStyle = "solid"
	LineDash       LineStyle = "dash"
	LineDot        LineStyle = "dot"
	LineDashDot    LineStyle = "dashDot"
	LineDashDotDot LineStyle = "dashDotDot"
	LineNull       LineStyle = "null" // invisible
)

// MarkerStyle is the shape of a simple marker (esriSimpleMarkerStyle).
type MarkerStyle string

// Marker styles (YAML `style` of a simpleMarker).
const (
	MarkerCircle  MarkerStyle = "circle"
	MarkerSquare  MarkerStyle = "square"
	MarkerCross   MarkerStyle = "cross"
	MarkerX       MarkerStyle = "x"
	MarkerDiamond MarkerStyle = "diamond"
)

// Symbol is a simple fill, line or marker symbol. Sizes and widths are in
// points (1/72 inch; at the ArcGIS default of 96 DPI one point is 4/3
// pixels).
type Symbol struct {
	// Type (`type`, required) is simpleFill, simpleLine or simpleMarker and
	// must fit the layer's geometry type.
	Type SymbolType
	// Color (`color`, default opaque black) is the fill, line or marker
	// colour.
	Color Color
	// FillStyle (`style` of a simpleFill, default solid).
	FillStyle FillStyle
	// LineStyle (`style` of a simpleLine, default solid).
	LineStyle LineStyle
	// MarkerStyle (`style` of a simpleMarker, default circle).
	MarkerStyle MarkerStyle
	// Width (`width` of a simpleLine, default 1) in points.
	Width float64
	// Size (`size` of a simpleMarker, default 6) in points.
	Size float64
	// Outline (`outline` of a simpleFill or simpleMarker, default none) is
	// the border.
	Outline *Outline
	// Picture is the image (PNG, JPEG or GIF bytes) of a pictureMarker or
	// pictureFill symbol; see picture.go. Not set from YAML.
	Picture []byte
	// Angle (degrees anticlockwise) and XOffset, YOffset (points, y up)
	// turn and move a marker, or a picture fill's pattern. Set from
	// requests, not from YAML.
	Angle, XOffset, YOffset float64
	// PictureStyle holds the further details of picture symbols; see
	// picture.go.
	PictureStyle
	// CharacterStyle is the character and font of a characterMarker
	// symbol; see character.go.
	CharacterStyle
}

// Outline is the border of a fill or marker symbol.
type Outline struct {
	// Color (`color`, default opaque black).
	Color Color
	// Width (`width`, default 1) in points.
	Width float64
	// Style (`style`, default solid).
	Style LineStyle
}

// Color is an 8-bit sRGB colour with straight (non-premultiplied) alpha.
// In YAML: `[r, g, b]`, `[r, g, b, a]` (0–255 each) or "#rrggbb" /
// "#rrggbbaa". Alpha defaults to 255 (opaque).
type Color struct {
	R, G, B, A uint8
}

// NRGBA returns the colour as an image/color value.
func (c Color) NRGBA() color.NRGBA { return color.NRGBA{R: c.R, G: c.G, B: c.B, A: c.A} }

// RGBA implements image/color.Color.
func (c Color) RGBA() (r, g, b, a uint32) { return c.NRGBA().RGBA() }

// String returns "#rrggbb" or "#rrggbbaa" when not opaque.
func (c Color) String() string {
	if c.A == 255 {
		return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
	}
	return fmt.Sprintf("#%02x%02x%02x%02x", c.R, c.G, c.B, c.A)
}
