package symbology

import (
	"image/color"
	"reflect"
)

// Drawing is what a request changes of how one layer is drawn: its LayerDrawingDescription
// (renderer, labels, transparency) and its selection. The zero value changes nothing. It does
// not travel in the farm's task payload as it is: the payload has plain types of its own
// (task.Drawing), converted both ways at the queue edge (mapdraw/payload.go).
type Drawing struct {
	// Renderer replaces the layer's renderer when not nil.
	Renderer *Renderer
	// Labels replace the layer's label classes when not nil (empty: no labels).
	Labels []Label
	// Transparency is the layer's transparency in percent, 0 (opaque) to 100 (invisible).
	Transparency float64
	// ScaleSymbols, when not nil, replaces the layer's scaleSymbols (LayerDescription and
	// FeatureLayerDrawingDescription ScaleSymbols): whether its symbol sizes scale with the map's
	// reference scale (see mapdraw.SymbolScale).
	ScaleSymbols *bool

	// Selection lists the ids of the selected features, drawn over the layer in SelectionColor
	// (or the map's) or with SelectionSymbol.
	Selection       []int64
	SelectionColor  *color.NRGBA
	SelectionSymbol *Symbol
	// BufferDistance, in map units, with ShowBuffer draws a buffer around each selected feature
	// with BufferSymbol (a fill; default the selection colour at 50% opacity) under the selection.
	BufferDistance float64
	ShowBuffer     bool
	BufferSymbol   *Symbol
}

// IsZero reports whether d changes nothing (an empty, non-nil Labels does: it removes the labels).
func (d *Drawing) IsZero() bool { return reflect.ValueOf(d).Elem().IsZero() }

// Opacity is the opacity the transparency leaves, from 0 (invisible) to 1 (opaque).
func (d Drawing) Opacity() float64 {
	return 1 - max(0, min(100, d.Transparency))/100
}

// GraphicKind is the kind of a custom graphic.
type GraphicKind string

// Graphic kinds. Rectangles, circles and ellipses arrive as polygons; groups are flattened.
const (
	GraphicMarker  GraphicKind = "marker"
	GraphicLine    GraphicKind = "line"
	GraphicPolygon GraphicKind = "polygon"
	GraphicText    GraphicKind = "text"
)

// Graphic is one custom graphic in map coordinates: a marker at Parts[0][0], a line of Parts, a
// polygon of rings Parts, or Text anchored at Parts[0][0].
type Graphic struct {
	Kind   GraphicKind
	Parts  [][][2]float64
	Symbol *Symbol
	Text   string
	Font   *GraphicFont
	// Align anchors text: horizontally 0 left, 0.5 centre, 1 right; vertically 0 the first
	// line's baseline, 1 the top, 0.5 the middle, -1 the bottom of the block.
	Align [2]float64
	Angle float64 // text angle, degrees anticlockwise
}

// GraphicFont is the font of a text graphic: a label's font (Size in points; drawn with DejaVu
// Sans in its weight, slant and decorations, see mapdraw.DrawGraphics) with its colour, halo and
// background box.
type GraphicFont struct {
	Font
	Color Color
	Halo  *Halo
	Back  *Color // a background box colour
}
