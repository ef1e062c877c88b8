package servicedef

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

func (l *loader) renderer(n *yaml.Node, gt feature.GeometryType, refs *[]fieldRef) symbology.Renderer {
	r := symbology.Renderer{Type: symbology.SimpleRenderer, FieldDelimiter: ", ", DefaultLabel: "<all other values>"}
	var typeNode, symNode, fieldsNode, valuesNode, fieldNode, breaksNode, minNode *yaml.Node
	var labelNode *yaml.Node
	if !l.fields(n, "renderer", map[string]func(*yaml.Node){
		"type":           func(v *yaml.Node) { typeNode = v; r.Type = symbology.RendererType(l.str(v, "renderer type")) },
		"symbol":         func(v *yaml.Node) { symNode = v },
		"label":          func(v *yaml.Node) { labelNode = v; r.Label = l.str(v, "label") },
		"description":    func(v *yaml.Node) { r.Description = l.str(v, "description") },
		"fields":         func(v *yaml.Node) { fieldsNode = v },
		"fieldDelimiter": func(v *yaml.Node) { r.FieldDelimiter = l.str(v, "fieldDelimiter") },
		"values":         func(v *yaml.Node) { valuesNode = v },
		"field":          func(v *yaml.Node) { fieldNode = v; r.Field = l.str(v, "field") },
		"minValue":       func(v *yaml.Node) { minNode = v; x := l.float(v, "minValue"); r.MinValue = &x },
		"breaks":         func(v *yaml.Node) { breaksNode = v },
		"defaultSymbol": func(v *yaml.Node) {
			s := l.symbol(v, gt)
			r.DefaultSymbol = &s
		},
		"defaultLabel": func(v *yaml.Node) { r.DefaultLabel = l.str(v, "defaultLabel") },
	}) {
		return symbology.DefaultRenderer(gt)
	}
	at := resolve(n)
	// keys that belong to another renderer type are mistakes, not silently ignored
	misplaced := func(key *yaml.Node, name string) {
		if key != nil {
			l.errorf(resolve(key), "%q does not apply to a %s renderer", name, r.Type)
		}
	}
	switch r.Type {
	case symbology.SimpleRenderer:
		if symNode == nil {
			l.errorf(at, "simple renderer: missing required key \"symbol\"")
		} else {
			s := l.symbol(symNode, gt)
			r.Symbol = &s
		}
		misplaced(fieldsNode, "fields")
		misplaced(valuesNode, "values")
		misplaced(fieldNode, "field")
		misplaced(breaksNode, "breaks")
		misplaced(minNode, "minValue")
	case symbology.UniqueValueRenderer:
		misplaced(symNode, "symbol")
		misplaced(fieldNode, "field")
		misplaced(breaksNode, "breaks")
		misplaced(minNode, "minValue")
		if fieldsNode == nil {
			l.errorf(at, "uniqueValue renderer: missing required key \"fields\"")
		} else {
			l.seq(fieldsNode, "fields", func(it *yaml.Node) {
				name := l.str(it, "field")
				r.Fields = append(r.Fields, name)
				*refs = append(*refs, fieldRef{name, it, "renderer field"})
			})
			if len(r.Fields) < 1 || len(r.Fields) > 3 {
				l.errorf(resolve(fieldsNode), "uniqueValue renderer needs 1 to 3 fields, not %d", len(r.Fields))
			}
		}
		seen := map[string]*yaml.Node{}
		l.seq(valuesNode, "values", func(it *yaml.Node) {
			uv, ok := l.uniqueValue(it, gt, len(r.Fields), r.FieldDelimiter)
			if !ok {
				return
			}
			key := strings.Join(uv.Values, "\x00")
			if prev, dup := seen[key]; dup {
				l.errorf(resolve(it), "value %q listed twice (first at line %d)", strings.Join(uv.Values, r.FieldDelimiter), prev.Line)
				return
			}
			seen[key] = resolve(it)
			r.Values = append(r.Values, uv)
		})
		if len(r.Values) == 0 && r.DefaultSymbol == nil {
			l.errorf(at, "uniqueValue renderer needs values or a defaultSymbol")
		}
	case symbology.ClassBreaksRenderer:
		misplaced(symNode, "symbol")
		misplaced(fieldsNode, "fields")
		misplaced(valuesNode, "values")
		if fieldNode == nil || r.Field == "" {
			l.errorf(at, "classBreaks renderer: missing required key \"field\"")
		} else {
			*refs = append(*refs, fieldRef{r.Field, fieldNode, "renderer field"})
		}
		if breaksNode == nil {
			l.errorf(at, "classBreaks renderer: missing required key \"breaks\"")
		}
		prev := r.MinValue
		l.seq(breaksNode, "breaks", func(it *yaml.Node) {
			cb, maxNode, ok := l.classBreak(it, gt)
			if !ok {
				return
			}
			if prev != nil && cb.MaxValue <= *prev {
				l.errorf(resolve(maxNode), "maxValue %g must be greater than the previous bound %g", cb.MaxValue, *prev)
			}
			if cb.Label == "" {
				lo := "-∞"
				if prev != nil {
					lo = strconv.FormatFloat(*prev, 'f', -1, 64)
				}
				cb.Label = lo + " - " + strconv.FormatFloat(cb.MaxValue, 'f', -1, 64)
			}
			x := cb.MaxValue
			prev = &x
			r.Breaks = append(r.Breaks, cb)
		})
		if breaksNode != nil && len(r.Breaks) == 0 {
			l.errorf(resolve(breaksNode), "classBreaks renderer needs at least one break")
		}
	default:
		l.errorf(resolve(typeNode), "renderer type %q: want simple, uniqueValue or classBreaks", r.Type)
	}
	if r.Type != symbology.SimpleRenderer && labelNode != nil {
		l.errorf(resolve(labelNode), "\"label\" applies to simple renderers only; use defaultLabel or each class's label")
	}
	return r
}

func (l *loader) uniqueValue(n *yaml.Node, gt feature.GeometryType, nFields int, delim string) (symbology.UniqueValue, bool) {
	var uv symbology.UniqueValue
	var valNode, symNode *yaml.Node
	if !l.fields(n, "unique value", map[string]func(*yaml.Node){
		"value":       func(v *yaml.Node) { valNode = v },
		"label":       func(v *yaml.Node) { uv.Label = l.str(v, "label") },
		"description": func(v *yaml.Node) { uv.Description = l.str(v, "description") },
		"symbol":      func(v *yaml.Node) { symNode = v },
	}) {
		return uv, false
	}
	if valNode == nil {
		l.errorf(resolve(n), "unique value: missing required key \"value\"")
		return uv, false
	}
	if v := resolve(valNode); v.Kind == yaml.SequenceNode {
		for _, it := range v.Content {
			uv.Values = append(uv.Values, l.str(it, "value"))
		}
	} else {
		uv.Values = []string{l.str(v, "value")}
		if v.Tag == "!!null" {
			uv.Values[0] = symbology.NullValue
		}
	}
	if nFields > 0 && len(uv.Values) != nFields {
		l.errorf(resolve(valNode), "value has %d parts but the renderer has %d fields", len(uv.Values), nFields)
	}
	if uv.Label == "" {
		uv.Label = strings.Join(uv.Values, delim)
	}
	if symNode == nil {
		l.errorf(resolve(n), "unique value: missing required key \"symbol\"")
		return uv, false
	}
	uv.Symbol = l.symbol(symNode, gt)
	return uv, true
}

func (l *loader) classBreak(n *yaml.Node, gt feature.GeometryType) (symbology.ClassBreak, *yaml.Node, bool) {
	var cb symbology.ClassBreak
	var maxNode, symNode *yaml.Node
	if !l.fields(n, "class break", map[string]func(*yaml.Node){
		"maxValue":    func(v *yaml.Node) { maxNode = v; cb.MaxValue = l.float(v, "maxValue") },
		"label":       func(v *yaml.Node) { cb.Label = l.str(v, "label") },
		"description": func(v *yaml.Node) { cb.Description = l.str(v, "description") },
		"symbol":      func(v *yaml.Node) { symNode = v },
	}) {
		return cb, nil, false
	}
	if maxNode == nil {
		l.errorf(resolve(n), "class break: missing required key \"maxValue\"")
		return cb, nil, false
	}
	if symNode == nil {
		l.errorf(resolve(n), "class break: missing required key \"symbol\"")
		return cb, nil, false
	}
	cb.Symbol = l.symbol(symNode, gt)
	return cb, maxNode, true
}

func (l *loader) symbol(n *yaml.Node, gt feature.GeometryType) symbology.Symbol {
	s := symbology.Symbol{Color: symbology.Color{R: 0, G: 0, B: 0, A: 255}}
	var typeNode, styleNode, widthNode, sizeNode, outlineNode *yaml.Node
	if !l.fields(n, "symbol", map[string]func(*yaml.Node){
		"type":    func(v *yaml.Node) { typeNode = v; s.Type = symbology.SymbolType(l.str(v, "symbol type")) },
		"color":   func(v *yaml.Node) { s.Color = l.color(v, "color") },
		"style":   func(v *yaml.Node) { styleNode = v },
		"width":   func(v *yaml.Node) { widthNode = v; s.Width = l.nonNeg(v, "width") },
		"size":    func(v *yaml.Node) { sizeNode = v; s.Size = l.nonNeg(v, "size") },
		"outline": func(v *yaml.Node) { outlineNode = v },
	}) {
		return s
	}
	at := resolve(n)
	if typeNode == nil {
		l.errorf(at, "symbol: missing required key \"type\" (simpleFill, simpleLine or simpleMarker)")
		return s
	}
	style := ""
	if styleNode != nil {
		style = l.str(styleNode, "style")
	}
	misplaced := func(key *yaml.Node, name string) {
		if key != nil {
			l.errorf(resolve(key), "%q does not apply to a %s symbol", name, s.Type)
		}
	}
	switch s.Type {
	case symbology.SimpleFill:
		misplaced(widthNode, "width")
		misplaced(sizeNode, "size")
		s.FillStyle = symbology.FillSolid
		if style != "" {
			s.FillStyle = symbology.FillStyle(style)
			if !oneOf(style, symbology.FillSolid, symbology.FillNull, symbology.FillHorizontal, symbology.FillVertical, symbology.FillCross, symbology.FillForwardDiagonal, symbology.FillBackwardDiagonal, symbology.FillDiagonalCross) {
				l.errorf(resolve(styleNode), "fill style %q: want solid, null, horizontal, vertical, cross, forwardDiagonal, backwardDiagonal or diagonalCross", style)
			}
		}
	case symbology.SimpleLine:
		misplaced(sizeNode, "size")
		misplaced(outlineNode, "outline")
		outlineNode = nil
		if widthNode == nil {
			s.Width = 1
		}
		s.LineStyle = symbology.LineSolid
		if style != "" {
			s.LineStyle = l.lineStyle(styleNode)
		}
	case symbology.SimpleMarker:
		misplaced(widthNode, "width")
		if sizeNode == nil {
			s.Size = 6
		}
		s.MarkerStyle = symbology.MarkerCircle
		if style != "" {
			s.MarkerStyle = symbology.MarkerStyle(style)
			if !oneOf(style, symbology.MarkerCircle, symbology.MarkerSquare, symbology.MarkerCross, symbology.MarkerX, symbology.MarkerDiamond) {
				l.errorf(resolve(styleNode), "marker style %q: want circle, square, cross, x or diamond", style)
			}
		}
	default:
		l.errorf(resolve(typeNode), "symbol type %q: want simpleFill, simpleLine or simpleMarker", s.Type)
		return s
	}
	if want := symbology.SimpleSymbolType(gt); want != "" && s.Type != want {
		l.errorf(resolve(typeNode), "a %s symbol cannot draw %s features: use %s", s.Type, gt.Name(), want)
	}
	if outlineNode != nil {
		o := &symbology.Outline{Color: symbology.Color{R: 0, G: 0, B: 0, A: 255}, Width: 1, Style: symbology.LineSolid}
		l.fields(outlineNode, "outline", map[string]func(*yaml.Node){
			"color": func(v *yaml.Node) { o.Color = l.color(v, "outline color") },
			"width": func(v *yaml.Node) { o.Width = l.nonNeg(v, "outline width") },
			"style": func(v *yaml.Node) { o.Style = l.lineStyle(v) },
		})
		s.Outline = o
	}
	return s
}

func (l *loader) lineStyle(n *yaml.Node) symbology.LineStyle {
	s := l.str(n, "line style")
	if !oneOf(s, symbology.LineSolid, symbology.LineDash, symbology.LineDot, symbology.LineDashDot, symbology.LineDashDotDot, symbology.LineNull) {
		l.errorf(resolve(n), "line style %q: want solid, dash, dot, dashDot, dashDotDot or null", s)
		return symbology.LineSolid
	}
	return symbology.LineStyle(s)
}

// keyword reads one of opts (an error names them otherwise; the first is then returned).
func (l *loader) keyword(n *yaml.Node, what string, opts ...string) string {
	s := l.str(n, what)
	if !oneOf(s, opts...) {
		l.errorf(resolve(n), "%s %q: want one of %s", what, s, strings.Join(opts, ", "))
		return opts[0]
	}
	return s
}

func oneOf[T ~string](s string, opts ...T) bool {
	for _, o := range opts {
		if s == string(o) {
			return true
		}
	}
	return false
}

func (l *loader) label(n *yaml.Node, refs *[]fieldRef) (symbology.Label, bool) {
	lb := symbology.Label{Font: symbology.Font{Family: "DejaVuSans", Size: 8}, Color: symbology.Color{R: 0, G: 0, B: 0, A: 255}}
	var fieldNode, exprNode, minNode *yaml.Node
	if !l.fields(n, "label", map[string]func(*yaml.Node){
		"field":      func(v *yaml.Node) { fieldNode = v; lb.Field = l.str(v, "field") },
		"expression": func(v *yaml.Node) { exprNode = v; lb.Expression = l.str(v, "expression") },
		"font": func(v *yaml.Node) {
			l.fields(v, "font", map[string]func(*yaml.Node){
				"family": func(x *yaml.Node) { lb.Font.Family = l.str(x, "font family") },
				"size": func(x *yaml.Node) {
					if lb.Font.Size = l.float(x, "font size"); lb.Font.Size <= 0 {
						l.errorf(resolve(x), "font size must be positive")
					}
				},
				"weight": func(x *yaml.Node) {
					lb.Font.Bold = l.keyword(x, "font weight", "normal", "bold") == "bold"
				},
				"style": func(x *yaml.Node) {
					lb.Font.Italic = l.keyword(x, "font style", "normal", "italic", "oblique") != "normal"
				},
				"decoration": func(x *yaml.Node) {
					d := l.keyword(x, "font decoration", "none", "underline", "line-through")
					lb.Font.Underline, lb.Font.Strikethrough = d == "underline", d == "line-through"
				},
			})
		},
		"color": func(v *yaml.Node) { lb.Color = l.color(v, "label color") },
		"halo": func(v *yaml.Node) {
			h := &symbology.Halo{Color: symbology.Color{R: 255, G: 255, B: 255, A: 255}, Width: 1}
			l.fields(v, "halo", map[string]func(*yaml.Node){
				"color": func(x *yaml.Node) { h.Color = l.color(x, "halo color") },
				"width": func(x *yaml.Node) { h.Width = l.nonNeg(x, "halo width") },
			})
			lb.Halo = h
		},
		"minScale":  func(v *yaml.Node) { minNode = v; lb.MinScale = l.nonNeg(v, "minScale") },
		"maxScale":  func(v *yaml.Node) { lb.MaxScale = l.nonNeg(v, "maxScale") },
		"priority":  func(v *yaml.Node) { lb.Priority = l.int(v, "priority") },
		"placement": func(v *yaml.Node) { lb.Placement = l.labelPlacement(v) },
	}) {
		return lb, false
	}
	l.scaleRange(minNode, lb.ScaleRange)
	switch {
	case fieldNode != nil && exprNode != nil:
		l.errorf(resolve(exprNode), "label: set either field or expression, not both")
		return lb, false
	case fieldNode != nil:
		if lb.Field == "" {
			l.errorf(resolve(fieldNode), "label field must not be empty")
			return lb, false
		}
		lb.Text = []symbology.TextPart{{Field: lb.Field}}
		*refs = append(*refs, fieldRef{lb.Field, fieldNode, "label field"})
	case exprNode != nil:
		parts, err := symbology.ParseLabelExpression(lb.Expression)
		if err != nil {
			l.errorf(resolve(exprNode), "label expression: %v", err)
			return lb, false
		}
		lb.Text = parts
		for _, p := range parts {
			if p.Field != "" {
				*refs = append(*refs, fieldRef{p.Field, exprNode, "label expression field"})
			}
		}
	default:
		l.errorf(resolve(n), "label: missing required key \"field\" or \"expression\"")
		return lb, false
	}
	return lb, true
}

// labelPlacement reads a label class's placement.
func (l *loader) labelPlacement(n *yaml.Node) symbology.LabelPlacement {
	var p symbology.LabelPlacement
	positions := []string{"right", "above-right", "below-right", "left", "above-left", "below-left", "above", "below", "center"}
	l.fields(n, "placement", map[string]func(*yaml.Node){
		"point": func(v *yaml.Node) {
			if rv := resolve(v); rv.Kind == yaml.ScalarNode {
				l.keyword(v, "point placement", "best")
				return
			}
			l.seq(v, "point placement", func(it *yaml.Node) {
				p.Points = append(p.Points, symbology.PointPosition(l.keyword(it, "point position", positions...)))
			})
		},
		"offset": func(v *yaml.Node) { p.Offset = l.nonNeg(v, "placement offset") },
		"line": func(v *yaml.Node) {
			p.Line = symbology.LineSide(l.keyword(v, "line placement", "on", "above", "below"))
		},
		"along": func(v *yaml.Node) {
			p.Along = symbology.LineAnchor(l.keyword(v, "line placement along", "middle", "start", "end"))
		},
		"orientation": func(v *yaml.Node) {
			p.Orientation = symbology.LineOrientation(l.keyword(v, "line orientation", "curved", "straight", "horizontal"))
		},
		"repeat": func(v *yaml.Node) { p.Repeat = l.nonNeg(v, "line label repeat") },
		"parts":  func(v *yaml.Node) { p.AllParts = l.keyword(v, "line label parts", "longest", "all") == "all" },
		"polygon": func(v *yaml.Node) {
			p.PolygonStraight = l.keyword(v, "polygon placement", "horizontal", "straight") == "straight"
		},
		"outside":    func(v *yaml.Node) { p.Outside = l.bool(v, "outside") },
		"duplicates": func(v *yaml.Node) { p.RemoveDuplicates = l.keyword(v, "duplicates", "keep", "remove") == "remove" },
	})
	// The defaults are stored as "".
	if p.Line == symbology.LineOn {
		p.Line = ""
	}
	if p.Along == symbology.LineMiddle {
		p.Along = ""
	}
	if p.Orientation == symbology.LineCurved {
		p.Orientation = ""
	}
	return p
}
