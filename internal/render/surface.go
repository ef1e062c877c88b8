package render

import (
	"image"
	"image/color"
)

// Surface is the set of drawing calls the renderer makes, so that one drawing routine can target a
// raster image (GGSurface) or, later, a vector document (SVG, PDF).
//
// Coordinates are surface units: pixels with the origin at the top left and y down for raster
// surfaces. Every coordinate passes through the current transform, which starts as the identity;
// Push concatenates a transform (applied before the current one) and saves the state, Pop restores it.
// Text is neither rotated nor scaled by the transform, only its anchor point is moved; TextStyle.Angle
// rotates it.
//
// Paths are built with MoveTo, LineTo and ClosePath and stay until NewPath, so one path can be filled
// and then stroked. Fill uses the non-zero winding rule; the renderer orients polygon holes opposite
// to their exterior ring.
type Surface interface {
	// Size returns the surface's size in surface units.
	Size() (width, height int)
	// Clear sets every pixel of the surface (or of the current group) to c, without blending.
	Clear(c color.NRGBA)

	Push(m Matrix)
	Pop()

	NewPath()
	MoveTo(x, y float64)
	LineTo(x, y float64)
	ClosePath()
	Fill(c color.NRGBA)
	// FillPattern fills the path (non-zero) with tile repeated, one tile pixel per surface unit,
	// the tiles aligned on the surface's origin whatever the current transform.
	FillPattern(tile image.Image)
	Stroke(s StrokeStyle)

	// Text draws s with its baseline starting at (x, y), with a halo when t.Halo is not transparent.
	Text(s string, x, y float64, t TextStyle)
	// GlyphRun draws each glyph of run on its own baseline (curved labels), in t (whose Angle is
	// ignored), with the halo of the whole run drawn under all of its glyphs. Only the glyphs'
	// origins pass through the current transform, as for Text.
	GlyphRun(run []Glyph, t TextStyle)
	// MeasureText returns the size of s in t, in surface units.
	MeasureText(s string, t TextStyle) TextMetrics
	// Marker draws a marker of the given width centred on (x, y), rotated by angle degrees
	// anticlockwise on screen.
	Marker(x, y float64, m MarkerStyle, size, angle float64, fill color.NRGBA, stroke StrokeStyle)
	// DrawImage draws img scaled into the rectangle of corner (x, y) and size w×h (before the current
	// transform, which applies to it whole, rotation included), for picture markers and graphics.
	DrawImage(img image.Image, x, y, w, h float64)

	// BeginGroup starts drawing into a new transparent layer; EndGroup composites it onto what was
	// below with the given opacity (0 to 1). Groups nest.
	BeginGroup()
	EndGroup(opacity float64)
}

// rectPath makes the axis-aligned rectangle from (x0, y0) to (x1, y1) the current path of s.
func rectPath(s Surface, x0, y0, x1, y1 float64) {
	s.NewPath()
	s.MoveTo(x0, y0)
	s.LineTo(x1, y0)
	s.LineTo(x1, y1)
	s.LineTo(x0, y1)
	s.ClosePath()
}
