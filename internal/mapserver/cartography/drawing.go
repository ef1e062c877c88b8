package cartography

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/symbology"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// This file converts symbols, renderers, drawing descriptions and custom graphics between the
// schema's types and the one model of a drawing (package symbology), in both directions:
// requests bring LayerDrawingDescriptions and graphics to draw (…In, once, into a
// symbology.Drawing or symbology.Graphic), GetDefaultLayerDrawingDescriptions describes the
// catalog's renderers (…Out).

var fillStylesIn = map[gisxml.SimpleFillStyle]symbology.FillStyle{
	gisxml.SFSSolid: symbology.FillSolid, gisxml.SFSNull: symbology.FillNull, gisxml.SFSHorizontal: symbology.FillHorizontal,
	gisxml.SFSVertical: symbology.FillVertical, gisxml.SFSForwardDiagonal: symbology.FillForwardDiagonal,
	gisxml.SFSBackwardDiagonal: symbology.FillBackwardDiagonal, gisxml.SFSCross: symbology.FillCross, gisxml.SFSDiagonalCross: symbology.FillDiagonalCross,
}

var lineStylesIn = map[gisxml.SimpleLineStyle]symbology.LineStyle{
	gisxml.SLSSolid: symbology.LineSolid, gisxml.SLSDash: symbology.LineDash, gisxml.SLSDot: symbology.LineDot,
	gisxml.SLSDashDot: symbology.LineDashDot, gisxml.SLSDashDotDot: symbology.LineDashDotDot, gisxml.SLSNull: symbology.LineNull,
	gisxml.SLSInsideFrame: symbology.LineSolid,
}

var markerStylesIn = map[gisxml.SimpleMarkerStyle]symbology.MarkerStyle{
	gisxml.SMSCircle: symbology.MarkerCircle, gisxml.SMSSquare: symbology.MarkerSquare, gisxml.SMSCross: symbology.MarkerCross,
	gisxml.SMSX: symbology.MarkerX, gisxml.SMSDiamond: symbology.MarkerDiamond,
}

// colorIn is a schema colour as the model's; def when c is nil.
func colorIn(c gisxml.Color, def symbology.Color) (symbology.Color, error) {
	if c == nil {
		return def, nil
	}
	n, err := ColorOf(c)
	if err != nil {
		return def, err
	}
	return symbology.Color{R: n.R, G: n.G, B: n.B, A: n.A}, nil
}

// symbolIn converts a request symbol; what names it in errors.
func symbolIn(s gisxml.Symbol, what string) (*symbology.Symbol, error) {
	black := symbology.Color{A: 255}
	var err error
	out := &symbology.Symbol{}
	switch v := s.(type) {
	case *gisxml.SimpleFillSymbol:
		out.Type, out.FillStyle = symbology.SimpleFill, fillStylesIn[v.Style]
		if out.FillStyle == "" {
			out.FillStyle = symbology.FillSolid
		}
		if out.Color, err = colorIn(v.Color, black); err != nil {
			return nil, operation.Invalid("%s/Color: %v", what, err)
		}
		if out.Outline, err = outlineIn(v.Outline, what+"/Outline"); err != nil {
			return nil, err
		}
	case *gisxml.PictureFillSymbol:
		if err := checkPicture(v.Picture, v.PictureUri, what); err != nil {
			return nil, err
		}
		out.Type, out.Picture = symbology.PictureFill, v.Picture
		out.Width, out.Height = deref(v.Width), deref(v.Height)
		out.XScale, out.YScale = deref(v.XScale), deref(v.YScale)
		out.XSeparation, out.YSeparation = deref(v.XSeparation), deref(v.YSeparation)
		out.Angle, out.XOffset, out.YOffset = deref(v.Angle), deref(v.XOffset), deref(v.YOffset)
		if out.Color, err = colorIn(v.Color, symbology.Color{R: 128, G: 128, B: 128, A: 255}); err != nil {
			return nil, operation.Invalid("%s/Color: %v", what, err)
		}
		if err := pictureStyleIn(&out.PictureStyle, v.FgColor, v.Color, v.BgColor, v.BitmapTransColor, v.Swap1BitColor, what); err != nil {
			return nil, err
		}
		if out.Outline, err = outlineIn(v.Outline, what+"/Outline"); err != nil {
			return nil, err
		}
	case *gisxml.SimpleLineSymbol:
		out.Type, out.LineStyle, out.Width = symbology.SimpleLine, lineStylesIn[v.Style], v.Width
		if out.LineStyle == "" {
			out.LineStyle = symbology.LineSolid
		}
		if out.Color, err = colorIn(v.Color, black); err != nil {
			return nil, operation.Invalid("%s/Color: %v", what, err)
		}
	case *gisxml.SimpleMarkerSymbol:
		out.Type, out.MarkerStyle, out.Size = symbology.SimpleMarker, markerStylesIn[v.Style], v.Size
		out.Angle, out.XOffset, out.YOffset = v.Angle, v.XOffset, v.YOffset
		if out.MarkerStyle == "" {
			out.MarkerStyle = symbology.MarkerCircle
		}
		if out.Color, err = colorIn(v.Color, black); err != nil {
			return nil, operation.Invalid("%s/Color: %v", what, err)
		}
		if v.Outline && v.OutlineSize > 0 {
			oc, err := colorIn(v.OutlineColor, black)
			if err != nil {
				return nil, operation.Invalid("%s/OutlineColor: %v", what, err)
			}
			out.Outline = &symbology.Outline{Color: oc, Width: v.OutlineSize, Style: symbology.LineSolid}
		}
	case *gisxml.PictureMarkerSymbol:
		if err := checkPicture(v.Picture, v.PictureUri, what); err != nil {
			return nil, err
		}
		out.Type, out.Picture, out.Size, out.Width = symbology.PictureMarker, v.Picture, v.Size, deref(v.Width)
		out.XScale, out.YScale = v.XScale, v.YScale
		out.Angle, out.XOffset, out.YOffset = v.Angle, v.XOffset, v.YOffset
		if out.Color, err = colorIn(v.Color, symbology.Color{R: 128, G: 128, B: 128, A: 255}); err != nil {
			return nil, operation.Invalid("%s/Color: %v", what, err)
		}
		if err := pictureStyleIn(&out.PictureStyle, v.FgColor, v.Color, v.BgColor, v.BitmapTransColor, v.Swap1BitColor, what); err != nil {
			return nil, err
		}
	case *gisxml.CharacterMarkerSymbol:
		if err := characterIn(v, out, what); err != nil {
			return nil, err
		}
	case nil:
		return nil, operation.Invalid("%s: a symbol is required", what)
	default:
		return nil, operation.Invalid("%s: symbol type %s is not supported (SimpleFillSymbol, SimpleLineSymbol, SimpleMarkerSymbol, PictureMarkerSymbol, CharacterMarkerSymbol, PictureFillSymbol)", what, s.GisType())
	}
	if err := checkSize(out.Size, what+"/Size"); err != nil {
		return nil, err
	}
	if err := checkSize(out.Width, what+"/Width"); err != nil {
		return nil, err
	}
	if !(math.Abs(out.XOffset) <= maxSymbolPoints && math.Abs(out.YOffset) <= maxSymbolPoints && math.Abs(out.Angle) <= 1e6) {
		return nil, operation.Invalid("%s: offsets must be within ±%d points and the angle finite", what, maxSymbolPoints)
	}
	if out.Outline != nil {
		if err := checkSize(out.Outline.Width, what+"/Outline width"); err != nil {
			return nil, err
		}
	}
	if err := checkPictureSizes(&out.PictureStyle, what); err != nil {
		return nil, err
	}
	return out, nil
}

func outlineIn(ls gisxml.LineSymbol, what string) (*symbology.Outline, error) {
	if ls == nil {
		return nil, nil
	}
	f := ls.LineSymbolPart()
	c, err := colorIn(f.Color, symbology.Color{A: 255})
	if err != nil {
		return nil, operation.Invalid("%s/Color: %v", what, err)
	}
	o := &symbology.Outline{Color: c, Width: f.Width, Style: symbology.LineSolid}
	if sl, ok := ls.(*gisxml.SimpleLineSymbol); ok {
		if st, ok := lineStylesIn[sl.Style]; ok {
			o.Style = st
		}
	}
	return o, nil
}

// maxSymbolPoints bounds request sizes (symbol sizes, line widths, text sizes, in points): a
// glyph or stroke of absurd size would cost the worker memory and time for nothing.
const maxSymbolPoints = 1000

// checkSize rejects a negative, non-finite or absurd size in points.
func checkSize(v float64, what string) error {
	if !(v >= 0 && v <= maxSymbolPoints) {
		return operation.Invalid("%s %g must be between 0 and %d points", what, v, maxSymbolPoints)
	}
	return nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// rendererIn converts a request renderer for a layer, checking its fields.
func rendererIn(fr gisxml.FeatureRenderer, l *catalog.Layer, what string) (*symbology.Renderer, error) {
	hasField := func(name, w string) error {
		if l.Data.Info().FieldIndex(name) < 0 {
			return operation.Invalid("%s: %q is not a field of layer %d", w, name, l.ID)
		}
		return nil
	}
	switch v := fr.(type) {
	case *gisxml.SimpleRenderer:
		sym, err := symbolIn(v.Symbol, what+"/Symbol")
		if err != nil {
			return nil, err
		}
		return &symbology.Renderer{Type: symbology.SimpleRenderer, Symbol: sym, Label: str(v.Label), Description: str(v.Description)}, nil
	case *gisxml.UniqueValueRenderer:
		r := &symbology.Renderer{Type: symbology.UniqueValueRenderer, FieldDelimiter: ", ", DefaultLabel: "<all other values>"}
		for _, f := range []*string{&v.Field1, v.Field2, v.Field3} {
			if f == nil || *f == "" {
				continue
			}
			if err := hasField(*f, what+"/Field"); err != nil {
				return nil, err
			}
			r.Fields = append(r.Fields, *f)
		}
		if len(r.Fields) == 0 {
			return nil, operation.Invalid("%s: Field1 is required", what)
		}
		if v.FieldDelimiter != nil {
			r.FieldDelimiter = *v.FieldDelimiter
		}
		if v.DefaultLabel != nil {
			r.DefaultLabel = *v.DefaultLabel
		}
		if v.DefaultSymbol != nil {
			sym, err := symbolIn(v.DefaultSymbol, what+"/DefaultSymbol")
			if err != nil {
				return nil, err
			}
			r.DefaultSymbol = sym
		}
		for i, uv := range v.UniqueValueInfos {
			if uv == nil || uv.Symbol == nil {
				continue
			}
			sym, err := symbolIn(uv.Symbol, fmt.Sprintf("%s/UniqueValueInfos[%d]/Symbol", what, i))
			if err != nil {
				return nil, err
			}
			vals := []string{uv.Value}
			if len(r.Fields) > 1 {
				vals = strings.Split(uv.Value, r.FieldDelimiter)
			}
			label := str(uv.Label)
			if label == "" {
				label = uv.Value
			}
			r.Values = append(r.Values, symbology.UniqueValue{Values: vals, Label: label, Description: str(uv.Description), Symbol: *sym})
		}
		return r, nil
	case *gisxml.ClassBreaksRenderer:
		if err := hasField(v.Field, what+"/Field"); err != nil {
			return nil, err
		}
		switch l.Data.Info().Fields[l.Data.Info().FieldIndex(v.Field)].Type {
		case feature.FieldOID, feature.FieldInteger, feature.FieldSmallInteger, feature.FieldDouble, feature.FieldSingle:
		default:
			return nil, operation.Invalid("%s/Field: %q of layer %d is not numeric", what, v.Field, l.ID)
		}
		r := &symbology.Renderer{Type: symbology.ClassBreaksRenderer, Field: v.Field, MinValue: operation.Ptr(v.MinimumValue)}
		prev := v.MinimumValue
		for i, cb := range v.ClassBreakInfos {
			if cb == nil {
				continue
			}
			sym, err := symbolIn(cb.Symbol, fmt.Sprintf("%s/ClassBreakInfos[%d]/Symbol", what, i))
			if err != nil {
				return nil, err
			}
			if cb.ClassMaximumValue < prev {
				return nil, operation.Invalid("%s/ClassBreakInfos[%d]: ClassMaximumValue %g is below the previous bound %g", what, i, cb.ClassMaximumValue, prev)
			}
			label := str(cb.Label)
			if label == "" {
				label = strconv.FormatFloat(prev, 'f', -1, 64) + " - " + strconv.FormatFloat(cb.ClassMaximumValue, 'f', -1, 64)
			}
			r.Breaks = append(r.Breaks, symbology.ClassBreak{MaxValue: cb.ClassMaximumValue, Label: label, Description: str(cb.Description), Symbol: *sym})
			prev = cb.ClassMaximumValue
		}
		if len(r.Breaks) == 0 {
			return nil, operation.Invalid("%s: ClassBreakInfos must hold at least one class", what)
		}
		return r, nil
	case nil:
		return nil, nil
	}
	return nil, operation.Invalid("%s: renderer type %s is not supported (SimpleRenderer, UniqueValueRenderer, ClassBreaksRenderer)", what, fr.GisType())
}

// labelsIn converts a LabelingDescription to label classes.
func labelsIn(ld *gisxml.LabelingDescription, l *catalog.Layer, what string) ([]symbology.Label, error) {
	out := []symbology.Label{}
	for i, lc := range ld.LabelClassDescriptions {
		if lc == nil {
			continue
		}
		w := fmt.Sprintf("%s/LabelClassDescriptions[%d]", what, i)
		lb := symbology.Label{Font: symbology.Font{Family: "DejaVuSans", Size: 8}, Color: symbology.Color{A: 255}}
		expr := strings.TrimSpace(str(lc.LabelExpression))
		if expr == "" {
			expr = "[" + l.DisplayField + "]"
		}
		parts, err := symbology.ParseLabelExpression(expr)
		if err != nil {
			return nil, operation.Invalid("%s/LabelExpression %q: %v (only [FIELD] templates are supported)", w, expr, err)
		}
		for _, p := range parts {
			if p.Field != "" && l.Data.Info().FieldIndex(p.Field) < 0 {
				return nil, operation.Invalid("%s/LabelExpression: %q is not a field of layer %d", w, p.Field, l.ID)
			}
		}
		lb.Expression, lb.Text = expr, parts
		if wc := strings.TrimSpace(str(lc.WhereClause)); wc != "" {
			if _, err := mapdraw.Compile(wc, l.Data.Info().Fields); err != nil {
				return nil, operation.Invalid("%s/WhereClause %q: %v", w, wc, err)
			}
			lb.Where = wc
		}
		lb.Placement = placementIn(lc.LabelPlacementDescription, l.Data.Info().GeometryType)
		if lc.MinimumScale != nil {
			lb.MinScale = *lc.MinimumScale
		}
		if lc.MaximumScale != nil {
			lb.MaxScale = *lc.MaximumScale
		}
		if ts := lc.Symbol; ts != nil {
			if lb.Color, err = colorIn(ts.Color, lb.Color); err != nil {
				return nil, operation.Invalid("%s/Symbol/Color: %v", w, err)
			}
			if ts.Size != nil && *ts.Size > 0 {
				if err := checkSize(*ts.Size, w+"/Symbol/Size"); err != nil {
					return nil, err
				}
				lb.Font.Size = *ts.Size
			}
			if ts.FontFamilyName != nil {
				lb.Font.Family = *ts.FontFamilyName
			}
			simpleTextFont(ts, &lb.Font)
			if ts.OutlineColor != nil {
				hc, err := colorIn(ts.OutlineColor, symbology.Color{R: 255, G: 255, B: 255, A: 255})
				if err != nil {
					return nil, operation.Invalid("%s/Symbol/OutlineColor: %v", w, err)
				}
				width := 1.0
				if ts.OutlineWidth != nil {
					width = *ts.OutlineWidth
				}
				if err := checkSize(width, w+"/Symbol/OutlineWidth"); err != nil {
					return nil, err
				}
				lb.Halo = &symbology.Halo{Color: hc, Width: width}
			}
		}
		out = append(out, lb)
	}
	return out, nil
}

// The label placement types of the schema and the model's placements (symbology.LabelPlacement), both ways
// (docs/cartography.md, "Label placement"). A point type is one position; a line type is a side
// (Above, Below, Center: on the line) and a position along the line (Along: the middle; Start and
// Before: the start; End and After: the end); the one polygon type is horizontal.
var (
	pointPlacements = map[gisxml.ServerPointLabelPlacementType]symbology.PointPosition{
		gisxml.ServerPointLabelPlacementAboveCenter: symbology.PointAbove, gisxml.ServerPointLabelPlacementAboveLeft: symbology.PointAboveLeft,
		gisxml.ServerPointLabelPlacementAboveRight: symbology.PointAboveRight, gisxml.ServerPointLabelPlacementBelowCenter: symbology.PointBelow,
		gisxml.ServerPointLabelPlacementBelowLeft: symbology.PointBelowLeft, gisxml.ServerPointLabelPlacementBelowRight: symbology.PointBelowRight,
		gisxml.ServerPointLabelPlacementCenterCenter: symbology.PointCenter, gisxml.ServerPointLabelPlacementCenterLeft: symbology.PointLeft,
		gisxml.ServerPointLabelPlacementCenterRight: symbology.PointRight,
	}
	lineSides   = map[string]symbology.LineSide{"Above": symbology.LineAbove, "Below": symbology.LineBelow, "Center": ""}
	lineAnchors = map[string]symbology.LineAnchor{"Along": "", "Start": symbology.LineStart, "Before": symbology.LineStart, "End": symbology.LineEnd, "After": symbology.LineEnd}
)

// placementIn is the placement of a request's LabelPlacementDescription for a layer of geometry
// type gt: the default when there is none or it is for another geometry type.
func placementIn(d gisxml.LabelPlacementDescription, gt feature.GeometryType) symbology.LabelPlacement {
	var p symbology.LabelPlacement
	switch v := d.(type) {
	case *gisxml.PointLabelPlacementDescription:
		if v == nil || (gt != feature.Point && gt != feature.Multipoint) {
			break
		}
		if pos, ok := pointPlacements[v.Type]; ok {
			p.Points = []symbology.PointPosition{pos}
		}
	case *gisxml.LineLabelPlacementDescription:
		if v != nil && gt == feature.Polyline {
			rest := strings.TrimPrefix(string(v.Type), "gisServerLinePlacement")
			for side, s := range lineSides {
				if along, ok := strings.CutPrefix(rest, side); ok {
					p.Line, p.Along = s, lineAnchors[along]
				}
			}
		}
	}
	return p
}

// placementOut is the schema's description of a placement for a layer of geometry type gt: the
// first point position (right for the default order), the line side and position along (the
// middle as Along), always horizontal for polygons (the schema has no other type).
func placementOut(p symbology.LabelPlacement, gt feature.GeometryType) gisxml.LabelPlacementDescription {
	switch gt {
	case feature.Polygon:
		return &gisxml.PolygonLabelPlacementDescription{Type: gisxml.ServerPolygonPlacementAlwaysHorizontal}
	case feature.Polyline:
		side, along := "Center", "Along"
		switch p.Line {
		case symbology.LineAbove:
			side = "Above"
		case symbology.LineBelow:
			side = "Below"
		}
		switch p.Along {
		case symbology.LineStart:
			along = "Start"
		case symbology.LineEnd:
			along = "End"
		}
		return &gisxml.LineLabelPlacementDescription{Type: gisxml.ServerLineLabelPlacementType("gisServerLinePlacement" + side + along)}
	}
	first := symbology.PointRight
	if len(p.Points) > 0 {
		first = p.Points[0]
	}
	for t, pos := range pointPlacements {
		if pos == first {
			return &gisxml.PointLabelPlacementDescription{Type: t}
		}
	}
	return &gisxml.PointLabelPlacementDescription{Type: gisxml.ServerPointLabelPlacementCenterRight}
}

// drawingOf reads what a LayerDescription changes of how its layer is drawn; nil when nothing.
func drawingOf(ld *gisxml.LayerDescription, l *catalog.Layer, i int) (*symbology.Drawing, error) {
	what := fmt.Sprintf("LayerDescriptions[%d]", i)
	d := &symbology.Drawing{}
	changed := false
	if dd, ok := ld.DrawingDescription.(*gisxml.FeatureLayerDrawingDescription); ok && dd != nil {
		r, err := rendererIn(dd.FeatureRenderer, l, what+"/DrawingDescription/FeatureRenderer")
		if err != nil {
			return nil, err
		}
		if r != nil {
			if err := fitsGeometry(r, l, what+"/DrawingDescription/FeatureRenderer"); err != nil {
				return nil, err
			}
			d.Renderer, changed = r, true
		}
		if dd.Transparency != nil {
			if *dd.Transparency < 0 || *dd.Transparency > 100 {
				return nil, operation.Invalid("%s/DrawingDescription/Transparency %d must be between 0 and 100", what, *dd.Transparency)
			}
			d.Transparency, changed = float64(*dd.Transparency), true
		}
		if dd.LabelingDescription != nil {
			labels, err := labelsIn(dd.LabelingDescription, l, what+"/DrawingDescription/LabelingDescription")
			if err != nil {
				return nil, err
			}
			d.Labels, changed = labels, true
		}
	} else if ld.DrawingDescription != nil {
		return nil, operation.Invalid("%s/DrawingDescription: %s does not apply to feature layers", what, ld.DrawingDescription.GisType())
	}
	if len(ld.SelectionFeatures) > 0 {
		changed = true
		for _, id := range ld.SelectionFeatures {
			d.Selection = append(d.Selection, int64(id))
		}
		if ld.SelectionColor != nil {
			c, err := ColorOf(ld.SelectionColor)
			if err != nil {
				return nil, operation.Invalid("%s/SelectionColor: %v", what, err)
			}
			d.SelectionColor = &c
		}
		if ld.SetSelectionSymbol && ld.SelectionSymbol != nil {
			sym, err := symbolIn(ld.SelectionSymbol, what+"/SelectionSymbol")
			if err != nil {
				return nil, err
			}
			d.SelectionSymbol = sym
		}
		if bd := ld.SelectionBufferDistance; ld.ShowSelectionBuffer && (!(bd >= 0) || math.IsInf(bd, 0)) {
			return nil, operation.Invalid("%s/SelectionBufferDistance %g must be a finite number, not negative", what, bd)
		}
		if ld.ShowSelectionBuffer && ld.SelectionBufferDistance > 0 {
			d.ShowBuffer, d.BufferDistance = true, ld.SelectionBufferDistance
			if ld.SelectionBufferSymbol != nil {
				bs, _ := ld.SelectionBufferSymbol.(gisxml.Symbol)
				sym, err := symbolIn(bs, what+"/SelectionBufferSymbol")
				if err != nil {
					return nil, err
				}
				d.BufferSymbol = sym
			}
		}
	}
	if !changed {
		return nil, nil
	}
	return d, nil
}

// fitsGeometry checks that a renderer's symbols can draw the layer's geometry.
func fitsGeometry(r *symbology.Renderer, l *catalog.Layer, what string) error {
	gt := l.Data.Info().GeometryType
	check := func(s *symbology.Symbol) error {
		if s == nil || s.Type.Draws(gt) {
			return nil
		}
		return operation.Invalid("%s: a %s symbol cannot draw the %s features of layer %d", what, s.Type, gt.Name(), l.ID)
	}
	if err := check(r.Symbol); err != nil {
		return err
	}
	if err := check(r.DefaultSymbol); err != nil {
		return err
	}
	for i := range r.Values {
		if err := check(&r.Values[i].Symbol); err != nil {
			return err
		}
	}
	for i := range r.Breaks {
		if err := check(&r.Breaks[i].Symbol); err != nil {
			return err
		}
	}
	return nil
}

// graphicsIn converts CustomGraphics to graphics in map coordinates (groups flattened; rectangles,
// circles and ellipses as polygons inscribed in their envelope).
func graphicsIn(els gisxml.ArrayOfGraphicElement, what string) ([]symbology.Graphic, error) {
	var out []symbology.Graphic
	for i, el := range els {
		w := fmt.Sprintf("%s[%d]", what, i)
		gs, err := graphicIn(el, w)
		if err != nil {
			return nil, err
		}
		out = append(out, gs...)
	}
	return out, nil
}

func graphicIn(el gisxml.GraphicElement, w string) ([]symbology.Graphic, error) {
	symOf := func(s gisxml.Symbol) (*symbology.Symbol, error) {
		if s == nil {
			return nil, nil
		}
		return symbolIn(s, w+"/Symbol")
	}
	geom := func(g gisxml.GeometryKind, name string) (orb.Geometry, error) {
		og, _, err := operation.GeometryIn(g, w+"/"+name)
		return og, err
	}
	bound := func(g gisxml.GeometryKind) (orb.Bound, error) {
		og, err := geom(g, "Rectangle")
		if err != nil {
			return orb.Bound{}, err
		}
		return og.Bound(), nil
	}
	// pathGraphic is a graphic of kind k along the paths or rings of a line or polygon element.
	pathGraphic := func(k symbology.GraphicKind, g gisxml.GeometryKind, name string, s gisxml.Symbol) ([]symbology.Graphic, error) {
		og, err := geom(g, name)
		if err != nil {
			return nil, err
		}
		sym, err := symOf(s)
		if err != nil {
			return nil, err
		}
		return []symbology.Graphic{{Kind: k, Parts: partsOf(og), Symbol: sym}}, nil
	}
	switch e := el.(type) {
	case *gisxml.MarkerElement:
		p, err := operation.PointIn(e.Point, w+"/Point")
		if err != nil {
			return nil, err
		}
		sym, err := symOf(e.Symbol)
		if err != nil {
			return nil, err
		}
		return []symbology.Graphic{{Kind: symbology.GraphicMarker, Parts: [][][2]float64{{p}}, Symbol: sym}}, nil
	case *gisxml.LineElement:
		return pathGraphic(symbology.GraphicLine, e.Line, "Line", e.Symbol)
	case *gisxml.PolygonElement:
		return pathGraphic(symbology.GraphicPolygon, e.Polygon, "Polygon", e.Symbol)
	case *gisxml.RectangleElement, *gisxml.CircleElement, *gisxml.EllipseElement:
		var rect gisxml.GeometryKind
		var s gisxml.Symbol
		round := true
		switch e := el.(type) {
		case *gisxml.RectangleElement:
			rect, s, round = e.Rectangle, e.Symbol, false
		case *gisxml.CircleElement:
			rect, s = e.Rectangle, e.Symbol
		case *gisxml.EllipseElement:
			rect, s = e.Rectangle, e.Symbol
		}
		b, err := bound(rect)
		if err != nil {
			return nil, err
		}
		sym, err := symOf(s)
		if err != nil {
			return nil, err
		}
		if _, ok := el.(*gisxml.CircleElement); ok {
			r := math.Min(b.Max[0]-b.Min[0], b.Max[1]-b.Min[1]) / 2
			cx, cy := (b.Min[0]+b.Max[0])/2, (b.Min[1]+b.Max[1])/2
			b = orb.Bound{Min: orb.Point{cx - r, cy - r}, Max: orb.Point{cx + r, cy + r}}
		}
		var ring [][2]float64
		if round {
			cx, cy := (b.Min[0]+b.Max[0])/2, (b.Min[1]+b.Max[1])/2
			rx, ry := (b.Max[0]-b.Min[0])/2, (b.Max[1]-b.Min[1])/2
			for k := 0; k <= 72; k++ {
				a := 2 * math.Pi * float64(k%72) / 72
				ring = append(ring, [2]float64{cx + rx*math.Cos(a), cy + ry*math.Sin(a)})
			}
		} else {
			ring = [][2]float64{{b.Min[0], b.Min[1]}, {b.Max[0], b.Min[1]}, {b.Max[0], b.Max[1]}, {b.Min[0], b.Max[1]}, {b.Min[0], b.Min[1]}}
		}
		return []symbology.Graphic{{Kind: symbology.GraphicPolygon, Parts: [][][2]float64{ring}, Symbol: sym}}, nil
	case *gisxml.TextElement:
		return textGraphic(str(e.Text), e.TextGeometry, e.Symbol, w, false)
	case *gisxml.ParagraphTextElement:
		return textGraphic(str(e.Text), e.TextGeometry, e.Symbol, w, true)
	case nil:
		return nil, nil
	}
	return nil, operation.Invalid("%s: graphic element %s is not supported", w, el.GisType())
}

// textGraphic anchors text at a point, or for paragraph text in an envelope at its top left.
func textGraphic(text string, g gisxml.GeometryKind, s gisxml.Symbol, w string, paragraph bool) ([]symbology.Graphic, error) {
	og, _, err := operation.GeometryIn(g, w+"/TextGeometry")
	if err != nil {
		return nil, err
	}
	gr := symbology.Graphic{Kind: symbology.GraphicText, Text: text}
	b := og.Bound()
	if p, ok := og.(orb.Point); ok {
		gr.Parts = [][][2]float64{{p}}
	} else if paragraph {
		gr.Parts = [][][2]float64{{{b.Min[0], b.Max[1]}}}
		gr.Align[1] = 1
	} else {
		gr.Parts = [][][2]float64{{b.Center()}}
		gr.Align = [2]float64{0.5, 0.5}
	}
	font := &symbology.GraphicFont{Font: symbology.Font{Size: 10}, Color: symbology.Color{A: 255}}
	switch ts := s.(type) {
	case *gisxml.TextSymbol:
		if font.Color, err = colorIn(ts.Color, font.Color); err != nil {
			return nil, operation.Invalid("%s/Symbol/Color: %v", w, err)
		}
		if ts.Size > 0 {
			font.Size = ts.Size
		}
		font.Family = str(ts.FontName)
		font.Bold, font.Italic = fontWeightBold(ts.FontWeight), isTrue(ts.FontItalic)
		font.Underline, font.Strikethrough = isTrue(ts.FontUnderline), isTrue(ts.FontStrikethrough)
		gr.Angle = ts.Angle
		switch ts.HorizontalAlignment {
		case gisxml.THACenter:
			gr.Align[0] = 0.5
		case gisxml.THARight:
			gr.Align[0] = 1
		case gisxml.THALeft, gisxml.THAFull:
			gr.Align[0] = 0
		}
		if !paragraph {
			switch ts.VerticalAlignment {
			case gisxml.TVATop:
				gr.Align[1] = 1
			case gisxml.TVACenter:
				gr.Align[1] = 0.5
			case gisxml.TVABottom:
				gr.Align[1] = -1
			case gisxml.TVABaseline:
				gr.Align[1] = 0
			}
		}
		if gr.Text == "" {
			gr.Text = ts.Text
		}
	case *gisxml.SimpleTextSymbol:
		if font.Color, err = colorIn(ts.Color, font.Color); err != nil {
			return nil, operation.Invalid("%s/Symbol/Color: %v", w, err)
		}
		if ts.Size != nil && *ts.Size > 0 {
			font.Size = *ts.Size
		}
		font.Family = str(ts.FontFamilyName)
		simpleTextFont(ts, &font.Font)
		if ts.Angle != nil {
			gr.Angle = *ts.Angle
		}
		if ts.OutlineColor != nil {
			hc, err := colorIn(ts.OutlineColor, symbology.Color{R: 255, G: 255, B: 255, A: 255})
			if err != nil {
				return nil, operation.Invalid("%s/Symbol/OutlineColor: %v", w, err)
			}
			hw := 1.0
			if ts.OutlineWidth != nil {
				hw = *ts.OutlineWidth
			}
			font.Halo = &symbology.Halo{Color: hc, Width: hw}
		}
		if ts.BackgroundColor != nil {
			bc, err := colorIn(ts.BackgroundColor, symbology.Color{})
			if err != nil {
				return nil, operation.Invalid("%s/Symbol/BackgroundColor: %v", w, err)
			}
			font.Back = &bc
		}
	case nil:
	default:
		return nil, operation.Invalid("%s/Symbol: %s cannot draw text (TextSymbol, SimpleTextSymbol)", w, s.GisType())
	}
	if err := checkSize(font.Size, w+"/Symbol/Size"); err != nil {
		return nil, err
	}
	if font.Halo != nil {
		if err := checkSize(font.Halo.Width, w+"/Symbol/OutlineWidth"); err != nil {
			return nil, err
		}
	}
	gr.Font = font
	if strings.TrimSpace(gr.Text) == "" {
		return nil, nil
	}
	return []symbology.Graphic{gr}, nil
}

// partsOf returns the paths or rings of a line or polygon geometry.
func partsOf(g orb.Geometry) [][][2]float64 {
	var out [][][2]float64
	add := func(ps []orb.Point) error {
		part := make([][2]float64, len(ps))
		for i, p := range ps {
			part[i] = p
		}
		out = append(out, part)
		return nil
	}
	switch v := g.(type) {
	case orb.LineString, orb.MultiLineString, orb.Ring, orb.Polygon, orb.MultiPolygon:
		_ = proj.EachSlice(v, add)
	case orb.Bound:
		add(v.ToRing())
	case orb.Point:
		add([]orb.Point{v})
	}
	return out
}

// colorNRGBA4 returns c as the farm's RGBA array.
func colorNRGBA4(c color.NRGBA) *[4]uint8 { return &[4]uint8{c.R, c.G, c.B, c.A} }

// characterIn reads a CharacterMarkerSymbol: the glyph of the code point CharacterIndex (Unicode) in
// its font, Size points, in Color, turned by Angle and moved by XOffset, YOffset points. Every font
// is drawn with DejaVu Sans in the weight and slant asked for; XScale, YScale and the font's
// decorations are not drawn.
func characterIn(v *gisxml.CharacterMarkerSymbol, out *symbology.Symbol, what string) error {
	c := rune(v.CharacterIndex)
	if c <= 0 || c > unicode.MaxRune || (c >= 0xd800 && c <= 0xdfff) {
		return operation.Invalid("%s/CharacterIndex %d is not a Unicode character", what, v.CharacterIndex)
	}
	out.Type, out.Size, out.Character = symbology.CharacterMarker, v.Size, c
	out.Angle, out.XOffset, out.YOffset = v.Angle, v.XOffset, v.YOffset
	out.CharacterFont = symbology.Font{Family: str(v.FontName), Bold: fontWeightBold(v.FontWeight), Italic: isTrue(v.FontItalic)}
	var err error
	if out.Color, err = colorIn(v.Color, symbology.Color{A: 255}); err != nil {
		return operation.Invalid("%s/Color: %v", what, err)
	}
	return nil
}

// simpleTextFont reads a SimpleTextSymbol's FontWeight (bold and bolder are bold), FontStyle
// (italic and oblique are italic) and FontDecoration into f.
func simpleTextFont(ts *gisxml.SimpleTextSymbol, f *symbology.Font) {
	if ts.FontWeight != nil {
		f.Bold = *ts.FontWeight == gisxml.FontWeightBold || *ts.FontWeight == gisxml.FontWeightBolder
	}
	if ts.FontStyle != nil {
		f.Italic = *ts.FontStyle == gisxml.FontStyleItalic || *ts.FontStyle == gisxml.FontStyleOblique
	}
	if ts.FontDecoration != nil {
		f.Underline = *ts.FontDecoration == gisxml.FontDecorationUnderline
		f.Strikethrough = *ts.FontDecoration == gisxml.FontDecorationLineThrough
	}
}

// fontWeightBold reports whether a Windows font weight (TextSymbol, CharacterMarkerSymbol:
// 400 normal, 700 bold) is bold: 600 and above.
func fontWeightBold(w *int) bool { return w != nil && *w >= 600 }

func isTrue(b *bool) bool { return b != nil && *b }
