package render

import (
	"image"
	"image/color"
)

// Symbol says how a feature is drawn. Sizes are in points (1/72 inch) and are converted to pixels with
// the View's DPI. A colour with zero alpha is not drawn.
//
// Polygons use Fill and the outline (Stroke, StrokeWidth, Dash); lines use the outline only; points
// draw a Marker of MarkerSize filled with Fill and outlined with the outline.
type Symbol struct {
	Fill        color.NRGBA
	Stroke      color.NRGBA
	StrokeWidth float64   // points; 0 draws no outline
	Dash        []float64 // points, alternating on and off lengths; empty draws a solid line
	Marker      MarkerStyle
	MarkerSize  float64 // points, the marker's width
	// MarkerAngle rotates markers and pictures, in degrees anticlockwise on the image (they do not
	// turn with the map's rotation).
	MarkerAngle float64
	// MarkerOffset moves markers and pictures from their point, in points, x right and y up.
	MarkerOffset [2]float64
	// Picture, when not nil, is drawn for points instead of Marker, MarkerSize wide (its own width
	// in pixels at 96 DPI when MarkerSize is 0) with its aspect ratio kept.
	Picture image.Image
	// Hatch, when not HatchNone, fills polygons with lines of the Fill colour instead of solid
	// Fill, HatchSpacing points apart (0 means 6).
	Hatch        HatchStyle
	HatchSpacing float64
	// Pattern, when not nil, fills polygons with the image tiled instead of Fill (a picture
	// fill): each tile PatternWidth × PatternHeight points (when one is 0 it follows from the
	// other and the image's aspect ratio; when both are, the image's own size in pixels at 96
	// DPI), PatternGap points apart (x, y), the whole pattern moved by PatternOffset points (x
	// right, y up) and turned by PatternAngle degrees anticlockwise plus the view's rotation (the
	// pattern turns with the map). See pattern.go.
	Pattern       image.Image
	PatternWidth  float64
	PatternHeight float64
	PatternGap    [2]float64
	PatternOffset [2]float64
	PatternAngle  float64
	// Character, when not 0, is drawn for points instead of Marker (a character marker): the glyph of
	// that Unicode code point in CharacterFont and CharacterStyle (DejaVu Sans; see Fonts), at a font
	// size of MarkerSize points, filled with Fill (outlined when there is an outline), its ink box
	// centred on the point, turned by MarkerAngle and moved by MarkerOffset.
	Character      rune
	CharacterFont  string
	CharacterStyle FontStyle
}

// HatchStyle is the line pattern of a hatched fill (ArcGIS's esriSimpleFillStyle hatches).
type HatchStyle int

// Hatch styles; the zero value is a solid fill.
const (
	HatchNone HatchStyle = iota
	HatchHorizontal
	HatchVertical
	HatchForwardDiagonal  // "/"
	HatchBackwardDiagonal // "\"
	HatchCross
	HatchDiagonalCross
)

// MarkerStyle is the shape of a point symbol.
type MarkerStyle int

// Marker shapes. The zero value is a circle.
const (
	MarkerCircle MarkerStyle = iota
	MarkerSquare
	MarkerTriangle
	MarkerDiamond
	MarkerCross
	MarkerX
)

// LabelStyle says how a layer's labels are drawn. Size and HaloWidth are in points.
type LabelStyle struct {
	Font string // font family; every name draws DejaVu Sans (see Fonts)
	FontStyle
	Size      float64
	Color     color.NRGBA
	Halo      color.NRGBA // zero alpha draws no halo
	HaloWidth float64
	// Priority orders labels across all layers: higher values are placed first, so they win
	// collisions. Within one priority, larger features (by area in pixels, or length for lines) go
	// first.
	Priority int
	// Offset is the distance in points between a point feature and its label (0 means 2 points
	// plus half the marker size); between the edge of a line's stroke and a label above or below
	// it (0 means 2 points); and between a polygon's label point and a label placed outside the
	// polygon (0 means 2 points).
	Offset float64
	// AllowOverlap places labels even when they collide with others (they still stay inside the
	// image).
	AllowOverlap bool
	// Placement says where labels go around points, along lines and in polygons; the zero value is
	// the default placement of each.
	Placement LabelPlacement
}

// LabelPlacement holds the placement options of a layer's labels (see labels.go). The zero value
// places point labels at the first default position that fits (see Points), line labels once on the
// middle of the longest part of each line, curved along it, and polygon labels horizontally inside.
type LabelPlacement struct {
	// Points lists the positions tried around a point, in order, until one fits; empty means
	// right, above-right, below-right, left, above-left, below-left, above, below. The distance from the point is LabelStyle.Offset.
	Points []PointPosition
	// LineSide puts line labels on the line (centred on it), above it or below it (on screen, the
	// text's ink LabelStyle.Offset from the line, default half the stroke plus 2 points).
	LineSide LineSide
	// LineAnchor is where along the visible part of the line the first position tried is: its
	// middle, its start or its end.
	LineAnchor LineAnchor
	// LineOrientation draws line labels curved along the line, straight along the chord of the
	// stretch they cover, or horizontal.
	LineOrientation LineOrientation
	// LineRepeat, when positive, repeats a line's label along it: one label per stretch of this
	// many points (from the anchor outwards), each still clear of the others.
	LineRepeat float64
	// LineAllParts labels every part of a multipart line instead of only the longest.
	LineAllParts bool
	// PolygonStraight turns polygon labels to the main direction of the polygon (its longest axis)
	// instead of drawing them horizontally.
	PolygonStraight bool
	// PolygonOutside lets a polygon label that fits nowhere inside be placed around its anchor like
	// a point label (at the default positions), Offset plus half the larger side of the polygon
	// part's box away, instead of being dropped.
	PolygonOutside bool
	// RemoveDuplicates drops a label whose text this layer has already placed (so one name is
	// shown once per layer and drawing); the first placed wins (priority, then feature size).
	RemoveDuplicates bool
}

// PointPosition is a position of a label around its point.
type PointPosition int

// Point label positions: centre-right, above-right, and so on round the point, and centred on it.
const (
	PointRight PointPosition = iota
	PointAboveRight
	PointBelowRight
	PointLeft
	PointAboveLeft
	PointBelowLeft
	PointAbove
	PointBelow
	PointCenter
)

// LineSide is the side of its line a line label is drawn on.
type LineSide int

// Line sides; the zero value centres the label on the line.
const (
	LineOn LineSide = iota
	LineAbove
	LineBelow
)

// LineAnchor is where along a line its label is tried first.
type LineAnchor int

// Line anchors; the zero value is the middle of the line's visible part.
const (
	LineMiddle LineAnchor = iota
	LineStart
	LineEnd
)

// LineOrientation is how a line label's text follows its line.
type LineOrientation int

// Line orientations; the zero value follows the line's curves glyph by glyph.
const (
	LineCurved LineOrientation = iota
	LineStraight
	LineHorizontal
)

// StrokeStyle is a Surface outline in surface units (pixels for the raster backend).
type StrokeStyle struct {
	Color color.NRGBA
	Width float64
	Dash  []float64
	Cap   LineCap
	Join  LineJoin
}

// LineCap is the shape of the ends of stroked lines.
type LineCap int

// Line caps; the zero value is butt.
const (
	CapButt LineCap = iota
	CapRound
	CapSquare
)

// LineJoin is the shape of the corners of stroked lines.
type LineJoin int

// Line joins; the zero value is round.
const (
	JoinRound LineJoin = iota
	JoinMiter
	JoinBevel
)

// FontStyle is the weight, slant and decorations of text. Bold and Italic select DejaVu Sans Bold,
// Oblique or Bold Oblique; Underline and Strikethrough draw a line under or through the glyphs,
// following them along curved labels.
type FontStyle struct {
	Bold, Italic             bool
	Underline, Strikethrough bool
}

// TextStyle is Surface text in surface units (pixels for the raster backend).
type TextStyle struct {
	Font string
	FontStyle
	Size      float64
	Color     color.NRGBA
	Halo      color.NRGBA
	HaloWidth float64
	// Angle rotates the text about the start of its baseline, in degrees anticlockwise on screen.
	Angle float64
}

// Glyph is one character of a glyph run (Surface.GlyphRun): its baseline starts at (X, Y) and runs
// Angle degrees anticlockwise on screen.
type Glyph struct {
	Rune        rune
	X, Y, Angle float64
}

// TextMetrics is the size of a string: its advance width and how far its glyphs' ink reaches above
// (Ascent) and below (Descent) the baseline, both positive or zero.
type TextMetrics struct {
	Width, Ascent, Descent float64
}
