package symbology

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// RendererType selects how a layer's features get their symbol.
type RendererType string

// Renderer types (YAML `type`).
const (
	// SimpleRenderer draws every feature with one symbol.
	SimpleRenderer RendererType = "simple"
	// UniqueValueRenderer picks a symbol by the values of 1–3 fields.
	UniqueValueRenderer RendererType = "uniqueValue"
	// ClassBreaksRenderer picks a symbol by the numeric range a field's
	// value falls in.
	ClassBreaksRenderer RendererType = "classBreaks"
)

// Renderer describes a layer's symbology. Which keys apply depends on Type.
type Renderer struct {
	// Type (`type`, default "simple") is simple, uniqueValue or classBreaks.
	Type RendererType
	// Symbol (`symbol`, required for simple) is the symbol of a simple
	// renderer.
	Symbol *Symbol
	// Label (`label`, default "") is the legend label of a simple renderer.
	Label string
	// Description (`description`, default "") is the legend description.
	Description string

	// Fields (`fields`, uniqueValue, 1–3 names) are the fields whose values
	// select the symbol.
	Fields []string
	// FieldDelimiter (`fieldDelimiter`, default ", ") joins the values of
	// several fields into one key, as ArcGIS does.
	FieldDelimiter string
	// Values (`values`, uniqueValue) map value combinations to symbols.
	Values []UniqueValue

	// Field (`field`, classBreaks) is the numeric field classified.
	Field string
	// MinValue (`minValue`, classBreaks, default: no lower bound) is the
	// lower bound of the first class.
	MinValue *float64
	// Breaks (`breaks`, classBreaks, at least one) are the classes with
	// strictly ascending upper bounds.
	Breaks []ClassBreak

	// DefaultSymbol (`defaultSymbol`, uniqueValue and classBreaks, default
	// none: unmatched features are not drawn).
	DefaultSymbol *Symbol
	// DefaultLabel (`defaultLabel`, default "<all other values>").
	DefaultLabel string
}

// UniqueValue is one class of a unique value renderer.
type UniqueValue struct {
	// Values (`value`, required) holds one value per renderer field, as
	// text. In YAML a scalar for one field or a list for several. NULL is
	// written "<Null>".
	Values []string
	// Label (`label`, default: the values joined by the delimiter).
	Label string
	// Description (`description`, default "").
	Description string
	// Symbol (`symbol`, required).
	Symbol Symbol
}

// ClassBreak is one class of a class breaks renderer: values in
// (previous MaxValue, MaxValue], the first class starting at MinValue
// inclusive.
type ClassBreak struct {
	// MaxValue (`maxValue`, required) is the inclusive upper bound.
	MaxValue float64
	// Label (`label`, default: "lower - upper").
	Label string
	// Description (`description`, default "").
	Description string
	// Symbol (`symbol`, required).
	Symbol Symbol
}

// NullValue is how a NULL attribute is written in unique value keys.
const NullValue = "<Null>"

// FormatValue renders an attribute value the way unique value renderers
// compare it: integers in decimal, floats in shortest form, dates as
// RFC 3339, NULL as NullValue.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return NullValue
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format(time.RFC3339)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// SymbolFor returns the symbol for a feature whose renderer field values
// are vals: for simple renderers vals is ignored; for unique value
// renderers vals holds the values of Fields in order; for class breaks one
// value, of Field. It returns nil when the feature is not drawn (no class
// matches and there is no default symbol).
func (r *Renderer) SymbolFor(vals []any) *Symbol {
	switch r.Type {
	case UniqueValueRenderer:
	outer:
		for i := range r.Values {
			uv := &r.Values[i]
			if len(uv.Values) != len(vals) {
				continue
			}
			for j, v := range vals {
				if FormatValue(v) != uv.Values[j] {
					continue outer
				}
			}
			return &uv.Symbol
		}
		return r.DefaultSymbol
	case ClassBreaksRenderer:
		if len(vals) != 1 {
			return r.DefaultSymbol
		}
		var x float64
		switch v := vals[0].(type) {
		case int64:
			x = float64(v)
		case float64:
			x = v
		default:
			return r.DefaultSymbol
		}
		if r.MinValue != nil && x < *r.MinValue {
			return r.DefaultSymbol
		}
		for i := range r.Breaks {
			if x <= r.Breaks[i].MaxValue {
				return &r.Breaks[i].Symbol
			}
		}
		return r.DefaultSymbol
	}
	return r.Symbol
}

// RendererFields returns the attribute names the renderer reads, in the
// order SymbolFor expects their values.
func (r *Renderer) RendererFields() []string {
	switch r.Type {
	case UniqueValueRenderer:
		return r.Fields
	case ClassBreaksRenderer:
		return []string{r.Field}
	}
	return nil
}

// DefaultRenderer is the simple renderer used when a layer has none: a
// grey symbol fitting the geometry type.
func DefaultRenderer(gt feature.GeometryType) Renderer {
	grey := Color{110, 110, 110, 255}
	var s Symbol
	switch gt {
	case feature.Polygon:
		s = Symbol{Type: SimpleFill, FillStyle: FillSolid, Color: Color{204, 204, 204, 255},
			Outline: &Outline{Color: grey, Width: 0.4, Style: LineSolid}}
	case feature.Polyline:
		s = Symbol{Type: SimpleLine, LineStyle: LineSolid, Color: grey, Width: 1}
	default:
		s = Symbol{Type: SimpleMarker, MarkerStyle: MarkerCircle, Color: grey, Size: 6}
	}
	return Renderer{Type: SimpleRenderer, Symbol: &s}
}

// SimpleSymbolType is the simple symbol type a geometry type is drawn with
// ("" for none): the one a service definition's symbols must have.
func SimpleSymbolType(gt feature.GeometryType) SymbolType {
	switch gt {
	case feature.Polygon:
		return SimpleFill
	case feature.Polyline:
		return SimpleLine
	case feature.Point, feature.Multipoint:
		return SimpleMarker
	}
	return ""
}

// Draws reports whether a symbol of type t can draw features of geometry
// type gt: simple and picture fills draw polygons, simple lines polylines,
// simple, picture and character markers points and multipoints. Any type
// draws a geometry type not listed.
func (t SymbolType) Draws(gt feature.GeometryType) bool {
	switch gt {
	case feature.Polygon:
		return t == SimpleFill || t == PictureFill
	case feature.Polyline:
		return t == SimpleLine
	case feature.Point, feature.Multipoint:
		return t == SimpleMarker || t == PictureMarker || t == CharacterMarker
	}
	return true
}
