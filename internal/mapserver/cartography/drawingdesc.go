package cartography

import (
	"context"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// GetDefaultLayerDrawingDescriptions describes how each layer asked for (all when LayerIDs is
// empty) is drawn by default: a FeatureLayerDrawingDescription with the layer's renderer and
// label classes in schema types.
//
// SymbolOutputOptions: PictureOutputType says how picture symbols are returned; the catalog's
// renderers have none (they are simple fill, line and marker symbols), so it changes nothing.
// ConvertLabelExpressions (default true) returns label expressions in the simple [FIELD] syntax
// with LabelExpressionType gisLabelExpressionSimple; false returns them as VBScript, the
// ArcMap default ("[NAME] & \" (\" & [ISO_N3] & \")\"").
func (s *Service) GetDefaultLayerDrawingDescriptions(ctx context.Context, c *operation.Call, req *gisxml.GetDefaultLayerDrawingDescriptions) (*gisxml.GetDefaultLayerDrawingDescriptionsResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	convert := true
	if o := req.SymbolOutputOptions; o != nil && o.ConvertLabelExpressions != nil {
		convert = *o.ConvertLabelExpressions
	}
	layers := m.Layers
	if len(req.LayerIDs) > 0 {
		layers = nil
		for _, id := range req.LayerIDs {
			l, ok := m.Layer(id)
			if !ok {
				return nil, operation.Invalid("LayerIDs: map %s has no layer %d", m.Name, id)
			}
			layers = append(layers, l)
		}
	}
	out := gisxml.ArrayOfLayerDrawingDescription{}
	for _, l := range layers {
		out = append(out, drawingDescriptionOut(ctx, m, l, convert))
	}
	return &gisxml.GetDefaultLayerDrawingDescriptionsResponse{Result: out}, nil
}

func drawingDescriptionOut(ctx context.Context, m *catalog.Map, l *catalog.Layer, convertLabels bool) *gisxml.FeatureLayerDrawingDescription {
	d := &gisxml.FeatureLayerDrawingDescription{
		FeatureRenderer: rendererOut(&l.Def.Renderer, func(field string) float64 { return fieldMin(ctx, l, field) }),
		ScaleSymbols:    operation.Ptr(operation.ScaleSymbolsDefault(m, l)), Transparency: operation.Ptr(int16(0)), Brightness: operation.Ptr(int16(0)), Contrast: operation.Ptr(int16(0)),
		SourceLayerID: operation.Ptr(l.ID),
	}
	if len(l.Def.Labels) > 0 {
		d.LabelingDescription = &gisxml.LabelingDescription{LabelClassDescriptions: gisxml.ArrayOfLabelClassDescription{}}
		for i := range l.Def.Labels {
			d.LabelingDescription.LabelClassDescriptions = append(d.LabelingDescription.LabelClassDescriptions, labelOut(&l.Def.Labels[i], l.Data.Info().GeometryType, convertLabels))
		}
	}
	return d
}

// The …Out maps are the …In maps of drawing.go read backwards, so that each pairing of a
// schema style with the model's is written once; SLSInsideFrame, read as a solid line, is
// never written.
var (
	fillStylesOut   = inverse(fillStylesIn)
	lineStylesOut   = inverse(lineStylesIn, gisxml.SLSInsideFrame)
	markerStylesOut = inverse(markerStylesIn)
)

// inverse is m read backwards, leaving out the keys in skip (aliases of another key).
func inverse[K, V comparable](m map[K]V, skip ...K) map[V]K {
	out := make(map[V]K, len(m))
	for k, v := range m {
		if !slices.Contains(skip, k) {
			out[v] = k
		}
	}
	return out
}

// symbolOut describes a catalog symbol in schema types.
func symbolOut(s *symbology.Symbol) gisxml.Symbol {
	if s == nil {
		return nil
	}
	switch s.Type {
	case symbology.SimpleFill:
		fs := &gisxml.SimpleFillSymbol{Style: fillStylesOut[s.FillStyle], FillSymbolFields: gisxml.FillSymbolFields{Color: operation.RGB(s.Color)}}
		if fs.Style == "" {
			fs.Style = gisxml.SFSSolid
		}
		if o := s.Outline; o != nil {
			fs.Outline = lineOut(o.Color, o.Width, o.Style)
		}
		return fs
	case symbology.SimpleLine:
		return lineOut(s.Color, s.Width, s.LineStyle)
	case symbology.SimpleMarker:
		ms := &gisxml.SimpleMarkerSymbol{MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: operation.RGB(s.Color), Size: s.Size, Angle: s.Angle, XOffset: s.XOffset, YOffset: s.YOffset},
			Style: markerStylesOut[s.MarkerStyle], OutlineColor: operation.RGB(symbology.Color{A: 255})}
		if ms.Style == "" {
			ms.Style = gisxml.SMSCircle
		}
		if o := s.Outline; o != nil && o.Style != symbology.LineNull {
			ms.Outline, ms.OutlineSize, ms.OutlineColor = true, o.Width, operation.RGB(o.Color)
		}
		return ms
	case symbology.PictureMarker:
		pm := &gisxml.PictureMarkerSymbol{CartographicMarkerSymbolFields: gisxml.CartographicMarkerSymbolFields{
			MarkerSymbolFields: gisxml.MarkerSymbolFields{Size: s.Size, Angle: s.Angle, XOffset: s.XOffset, YOffset: s.YOffset},
			XScale:             scaleOut(s.XScale), YScale: scaleOut(s.YScale)}, Picture: s.Picture,
			FgColor: optRGB(s.FgColor), BgColor: optRGB(s.BgColor), BitmapTransColor: optRGB(s.TransparentColor), Swap1BitColor: operation.Ptr(s.Swap1Bit)}
		if s.Width > 0 {
			pm.Width = operation.Ptr(s.Width)
		}
		return pm
	case symbology.PictureFill:
		ps := &gisxml.PictureFillSymbol{FillSymbolFields: gisxml.FillSymbolFields{Color: operation.RGB(s.Color)}, Picture: s.Picture,
			XScale: operation.Ptr(scaleOut(s.XScale)), YScale: operation.Ptr(scaleOut(s.YScale)), XSeparation: operation.Ptr(s.XSeparation), YSeparation: operation.Ptr(s.YSeparation),
			Angle: operation.Ptr(s.Angle), XOffset: operation.Ptr(s.XOffset), YOffset: operation.Ptr(s.YOffset),
			FgColor: optRGB(s.FgColor), BgColor: optRGB(s.BgColor), BitmapTransColor: optRGB(s.TransparentColor), Swap1BitColor: operation.Ptr(s.Swap1Bit)}
		if s.Width > 0 {
			ps.Width = operation.Ptr(s.Width)
		}
		if s.Height > 0 {
			ps.Height = operation.Ptr(s.Height)
		}
		if o := s.Outline; o != nil {
			ps.Outline = lineOut(o.Color, o.Width, o.Style)
		}
		return ps
	}
	return nil
}

// scaleOut is a picture scale in schema terms (0, unset, is 1).
func scaleOut(f float64) float64 {
	if f > 0 {
		return f
	}
	return 1
}

// optRGB describes an optional colour; nil stays absent.
func optRGB(c *symbology.Color) gisxml.Color {
	if c == nil {
		return nil
	}
	return operation.RGB(*c)
}

func lineOut(c symbology.Color, width float64, style symbology.LineStyle) *gisxml.SimpleLineSymbol {
	st := lineStylesOut[style]
	if st == "" {
		st = gisxml.SLSSolid
	}
	return &gisxml.SimpleLineSymbol{LineSymbolFields: gisxml.LineSymbolFields{Color: operation.RGB(c), Width: width}, Style: st}
}

// fieldMin is the smallest value of a numeric field of a layer (0 when it has none), computed
// by the layer's source.
func fieldMin(ctx context.Context, l *catalog.Layer, field string) float64 {
	i := l.Data.Info().FieldIndex(field)
	if i < 0 {
		return 0
	}
	rows, err := l.Data.Stats(ctx, &feature.Query{}, []feature.Stat{{Kind: feature.StatMin, Column: i}}, nil)
	if err != nil || len(rows) == 0 {
		return 0
	}
	switch v := rows[0].Values[0].(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

// rendererOut describes a catalog renderer in schema types; dataMin gives a field's smallest value,
// the MinimumValue of a class breaks renderer without a lower bound.
func rendererOut(r *symbology.Renderer, dataMin func(field string) float64) gisxml.FeatureRenderer {
	switch r.Type {
	case symbology.UniqueValueRenderer:
		u := &gisxml.UniqueValueRenderer{FieldDelimiter: operation.Ptr(r.FieldDelimiter), DefaultLabel: operation.Ptr(r.DefaultLabel), UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{}}
		for i, f := range r.Fields {
			switch i {
			case 0:
				u.Field1 = f
			case 1:
				u.Field2 = operation.Ptr(f)
			case 2:
				u.Field3 = operation.Ptr(f)
			}
		}
		if r.DefaultSymbol != nil {
			u.DefaultSymbol = symbolOut(r.DefaultSymbol)
		}
		for i := range r.Values {
			v := &r.Values[i]
			u.UniqueValueInfos = append(u.UniqueValueInfos, &gisxml.UniqueValueInfo{Value: strings.Join(v.Values, r.FieldDelimiter),
				Label: operation.Ptr(v.Label), Description: operation.Ptr(v.Description), Symbol: symbolOut(&v.Symbol)})
		}
		return u
	case symbology.ClassBreaksRenderer:
		cb := &gisxml.ClassBreaksRenderer{Field: r.Field, ClassBreakInfos: gisxml.ArrayOfClassBreakInfo{}}
		lo := 0.0
		if r.MinValue != nil {
			lo = *r.MinValue
		} else {
			lo = dataMin(r.Field)
			if len(r.Breaks) > 0 {
				lo = min(lo, r.Breaks[0].MaxValue)
			}
		}
		cb.MinimumValue = lo
		for i := range r.Breaks {
			b := &r.Breaks[i]
			cb.ClassBreakInfos = append(cb.ClassBreakInfos, &gisxml.ClassBreakInfo{ClassMinimumValue: lo, ClassMaximumValue: b.MaxValue,
				Label: operation.Ptr(b.Label), Description: operation.Ptr(b.Description), Symbol: symbolOut(&b.Symbol)})
			lo = b.MaxValue
		}
		return cb
	}
	return &gisxml.SimpleRenderer{Symbol: symbolOut(r.Symbol), Label: operation.Ptr(r.Label), Description: operation.Ptr(r.Description)}
}

// labelOut describes a label class; convert keeps [FIELD] templates (simple expressions),
// otherwise they are written as VBScript concatenations.
func labelOut(lb *symbology.Label, gt feature.GeometryType, convert bool) *gisxml.LabelClassDescription {
	expr, typ := "", gisxml.LabelExpressionSimple
	if convert {
		for _, p := range lb.Text {
			if p.Field != "" {
				expr += "[" + p.Field + "]"
			} else {
				expr += p.Literal
			}
		}
	} else {
		typ = gisxml.LabelExpressionVBScript
		var parts []string
		for _, p := range lb.Text {
			if p.Field != "" {
				parts = append(parts, "["+p.Field+"]")
			} else {
				parts = append(parts, `"`+strings.ReplaceAll(p.Literal, `"`, `""`)+`"`)
			}
		}
		expr = strings.Join(parts, " & ")
	}
	ts := &gisxml.SimpleTextSymbol{Color: operation.RGB(lb.Color), Size: operation.Ptr(lb.Font.Size), FontFamilyName: operation.Ptr(lb.Font.Family),
		HorizontalAlignment: operation.Ptr(gisxml.SimpleTextHorizontalAlignmentCenter), VerticalAlignment: operation.Ptr(gisxml.SimpleTextVerticalAlignmentMiddle)}
	if lb.Halo != nil {
		ts.OutlineColor, ts.OutlineWidth = operation.RGB(lb.Halo.Color), operation.Ptr(lb.Halo.Width)
	}
	if lb.Font.Bold {
		ts.FontWeight = operation.Ptr(gisxml.FontWeightBold)
	}
	if lb.Font.Italic {
		ts.FontStyle = operation.Ptr(gisxml.FontStyleItalic)
	}
	if lb.Font.Underline {
		ts.FontDecoration = operation.Ptr(gisxml.FontDecorationUnderline)
	} else if lb.Font.Strikethrough {
		ts.FontDecoration = operation.Ptr(gisxml.FontDecorationLineThrough)
	}
	lc := &gisxml.LabelClassDescription{LabelExpression: operation.Ptr(expr), Symbol: ts, UseCodedValue: operation.Ptr(true),
		MinimumScale: operation.Ptr(lb.MinScale), MaximumScale: operation.Ptr(lb.MaxScale), LabelExpressionType: operation.Ptr(typ), WhereClause: operation.Ptr("")}
	lc.LabelPlacementDescription = placementOut(lb.Placement, gt)
	return lc
}
