package vectorstyle

import (
	"fmt"
	"math"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
)

// anchors are MapLibre's text anchors for the positions of a label around its point: a label to
// the right of its point is anchored by its left side.
var anchors = map[symbology.PointPosition]string{
	symbology.PointRight: "left", symbology.PointAboveRight: "bottom-left", symbology.PointBelowRight: "top-left",
	symbology.PointLeft: "right", symbology.PointAboveLeft: "bottom-right", symbology.PointBelowLeft: "top-right",
	symbology.PointAbove: "bottom", symbology.PointBelow: "top", symbology.PointCenter: "center",
}

// best is the order of the `best` point placement.
var best = []symbology.PointPosition{
	symbology.PointRight, symbology.PointAboveRight, symbology.PointBelowRight, symbology.PointLeft,
	symbology.PointAboveLeft, symbology.PointBelowLeft, symbology.PointAbove, symbology.PointBelow,
}

// textField is the text of a label class: its field, or its expression's literals and fields
// concatenated (NULL as "").
func textField(lb *symbology.Label) any {
	parts := []any{"concat"}
	for _, p := range lb.Text {
		if p.Field == "" {
			parts = append(parts, p.Literal)
		} else {
			parts = append(parts, []any{"to-string", []any{"get", p.Field}})
		}
	}
	if len(parts) == 2 {
		return parts[1]
	}
	return parts
}

// labelLayerOf is the symbol layer of label class j of l; false when the class has no text.
func labelLayerOf(l *servicedef.Layer, j int, sz sizes) (Layer, bool) {
	lb := &l.Labels[j]
	if len(lb.Text) == 0 {
		return Layer{}, false
	}
	out := base(l, fmt.Sprintf("label/%d", j), "symbol", intersect(l.ScaleRange, lb.ScaleRange))
	if out.Layout == nil {
		out.Layout = map[string]any{}
	}
	size := px(lb.Font.Size)
	lay := out.Layout
	lay["text-field"] = textField(lb)
	lay["text-font"] = []any{vectorfonts.StackName(lb.Font.Bold, lb.Font.Italic)}
	lay["text-size"] = sz.scaled(size)
	p := lb.Placement
	switch l.GeometryType {
	case feature.Polyline:
		if p.Repeat > 0 {
			lay["symbol-placement"] = "line"
			lay["symbol-spacing"] = sz.scaled(px(p.Repeat))
		} else {
			lay["symbol-placement"] = "line-center"
		}
		if p.Orientation == symbology.LineHorizontal {
			lay["text-rotation-alignment"] = "viewport"
		}
		off := p.Offset
		if off == 0 {
			off = 2
		}
		switch p.Line {
		case symbology.LineAbove:
			lay["text-offset"] = []any{0, -em(px(off)+size/2, size)}
		case symbology.LineBelow:
			lay["text-offset"] = []any{0, em(px(off)+size/2, size)}
		}
	case feature.Polygon:
		lay["symbol-placement"] = "point"
	default:
		pos := p.Points
		if len(pos) == 0 {
			pos = best
		}
		var as []any
		for _, q := range pos {
			as = append(as, anchors[q])
		}
		lay["text-variable-anchor"] = as
		off := p.Offset
		if off == 0 {
			off = 2 + markerSize(l)/2
		}
		lay["text-radial-offset"] = em(px(off), size)
	}
	paint := map[string]any{"text-color": color(lb.Color)}
	if lb.Halo != nil && lb.Halo.Width > 0 {
		paint["text-halo-color"] = color(lb.Halo.Color)
		paint["text-halo-width"] = sz.scaled(px(lb.Halo.Width))
	}
	out.Paint = paint
	return out, true
}

// em is a length in ems of a text of size pixels, to 1/1000.
func em(pixels, size float64) float64 { return math.Round(pixels/size*1000) / 1000 }

// markerSize is the largest marker of a point layer, in points.
func markerSize(l *servicedef.Layer) float64 {
	c, err := classesOf(l)
	if err != nil {
		return 0
	}
	m := 0.0
	for _, s := range c.symbols() {
		m = max(m, s.Size)
	}
	return m
}
