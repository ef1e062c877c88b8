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
	// Pattern, when not nil, fills polygons with the image tiled, PatternWidth points wide (its
	// own width in pixels at 96 DPI when 0), instead of Fill (a picture fill).
	Pattern      image.Image
	PatternWidth float64
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
	Font      string // font family; "" or an unknown name is DejaVu Sans, the only embedded font
	Size      float64
	Color     color.NRGBA
	Halo      color.NRGBA // zero alpha draws no halo
	HaloWidth float64
	// Priority orders labels across all layers: higher values are placed first, so they win
	// collisions. Within one priority, larger features (by area in pixels, or length for lines) go
	// first.
	Priority int
	// Offset is the distance in points between a point feature and its label; 0 means 2 points plus
	// half the marker size.
	Offset float64
	// AllowOverlap places labels even when they collide with others (they still stay inside the
	// image).
	AllowOverlap bool
}

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

// TextStyle is Surface text in surface units (pixels for the raster backend).
type TextStyle struct {
	Font      string
	Size      float64
	Color     color.NRGBA
	Halo      color.NRGBA
	HaloWidth float64
	// Angle rotates the text about the start of its baseline, in degrees anticlockwise on screen.
	Angle float64
}

// TextMetrics is the size of a string: its advance width and how far its glyphs' ink reaches above
// (Ascent) and below (Descent) the baseline, both positive or zero.
type TextMetrics struct {
	Width, Ascent, Descent float64
}
