package vectorstyle

import (
	"fmt"
	"math"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// classes is a layer's renderer as the style reads it: its symbols with their icon names, the
// expression choosing among them and the filter dropping what none takes.
type classes struct {
	r      *symbology.Renderer
	layer  *servicedef.Layer
	filter any // nil: every feature is drawn
	key    any // the match input (unique values)
}

func classesOf(l *servicedef.Layer) (*classes, error) {
	c := &classes{r: &l.Renderer, layer: l}
	switch c.r.Type {
	case symbology.UniqueValueRenderer:
		c.key = uniqueKey(c.r)
		if c.r.DefaultSymbol == nil {
			keys := make([]any, 0, len(c.r.Values))
			seen := map[string]bool{}
			for _, uv := range c.r.Values {
				if k := joinValues(c.r, uv); !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
			c.filter = []any{"match", c.key, keys, true, false}
		}
	case symbology.ClassBreaksRenderer:
		if c.r.DefaultSymbol == nil && len(c.r.Breaks) > 0 {
			get := []any{"get", c.r.Field}
			f := []any{"all", []any{"==", []any{"typeof", get}, "number"}}
			if c.r.MinValue != nil {
				f = append(f, []any{">=", get, *c.r.MinValue})
			}
			c.filter = append(f, []any{"<=", get, c.r.Breaks[len(c.r.Breaks)-1].MaxValue})
		}
	default:
		if c.r.Symbol == nil {
			return nil, fmt.Errorf("%w: layer %q", errNoSymbol, l.Name)
		}
	}
	return c, nil
}

// uniqueKey is the expression of a feature's unique value key: each field's value as text
// (NULL as "<Null>"), joined by the renderer's delimiter.
func uniqueKey(r *symbology.Renderer) any {
	parts := []any{"concat"}
	for i, f := range r.Fields {
		if i > 0 {
			parts = append(parts, r.FieldDelimiter)
		}
		parts = append(parts, []any{"to-string", []any{"coalesce", []any{"get", f}, symbology.NullValue}})
	}
	if len(parts) == 2 {
		return parts[1]
	}
	return parts
}

func joinValues(r *symbology.Renderer, uv symbology.UniqueValue) string {
	k := ""
	for i, v := range uv.Values {
		if i > 0 {
			k += r.FieldDelimiter
		}
		k += v
	}
	return k
}

// symbol is one symbol of a renderer with its icon name.
type symbol struct {
	name string
	s    *symbology.Symbol
}

// named lists the renderer's symbols with their names: the default one first.
func (c *classes) named() []symbol {
	id := c.layer.ID
	var out []symbol
	if c.r.DefaultSymbol != nil && c.r.Type != symbology.SimpleRenderer {
		out = append(out, symbol{IconName(id, "default"), c.r.DefaultSymbol})
	}
	switch c.r.Type {
	case symbology.UniqueValueRenderer:
		for i := range c.r.Values {
			out = append(out, symbol{IconName(id, fmt.Sprintf("value%d", i)), &c.r.Values[i].Symbol})
		}
	case symbology.ClassBreaksRenderer:
		for i := range c.r.Breaks {
			out = append(out, symbol{IconName(id, fmt.Sprintf("break%d", i)), &c.r.Breaks[i].Symbol})
		}
	default:
		out = append(out, symbol{IconName(id, "symbol"), c.r.Symbol})
	}
	return out
}

// symbols lists the symbols features are drawn with, in class order (the default last).
func (c *classes) symbols() []*symbology.Symbol {
	var out []*symbology.Symbol
	for _, s := range c.named() {
		if s.s != c.r.DefaultSymbol || c.r.Type == symbology.SimpleRenderer {
			out = append(out, s.s)
		}
	}
	if c.r.DefaultSymbol != nil && c.r.Type != symbology.SimpleRenderer {
		out = append(out, c.r.DefaultSymbol)
	}
	return out
}

func (c *classes) any(pred func(*symbology.Symbol) bool) bool {
	for _, s := range c.symbols() {
		if pred(s) {
			return true
		}
	}
	return false
}

func (c *classes) all(pred func(*symbology.Symbol) bool) bool {
	return !c.any(func(s *symbology.Symbol) bool { return !pred(s) })
}

// circles reports whether every symbol is a simple circle marker: a circle layer draws them,
// without icons.
func (c *classes) circles() bool {
	return c.all(func(s *symbology.Symbol) bool {
		return s.Type == symbology.SimpleMarker && s.MarkerStyle == symbology.MarkerCircle
	})
}

// expr is a property's value for every feature, from each class's symbol.
func (c *classes) expr(val func(*symbology.Symbol) any) any {
	return c.exprNamed(func(_ string, s *symbology.Symbol) any { return val(s) })
}

// exprNamed is expr with the symbol's icon name: a literal when every class gives the same value,
// else a match (unique values, keys of equal output grouped) or a step (class breaks).
func (c *classes) exprNamed(val func(string, *symbology.Symbol) any) any {
	ns := c.named()
	if c.r.Type == symbology.SimpleRenderer {
		return val(ns[0].name, ns[0].s)
	}
	var def any
	if c.r.DefaultSymbol != nil {
		def, ns = val(ns[0].name, ns[0].s), ns[1:]
	}
	vals := make([]any, len(ns))
	same := true
	for i, s := range ns {
		vals[i] = val(s.name, s.s)
		same = same && vals[i] == vals[0]
	}
	if len(vals) == 0 {
		return def
	}
	if def == nil {
		def = vals[0] // never used: the filter drops what no class takes
	}
	if same && vals[0] == def {
		return def
	}
	switch c.r.Type {
	case symbology.UniqueValueRenderer:
		out := []any{"match", c.key}
		var order []any
		groups := map[any][]any{}
		seen := map[string]bool{}
		for i, uv := range c.r.Values {
			k := joinValues(c.r, uv)
			if seen[k] { // the first class of a key wins, as in SymbolFor
				continue
			}
			seen[k] = true
			if _, ok := groups[vals[i]]; !ok {
				order = append(order, vals[i])
			}
			groups[vals[i]] = append(groups[vals[i]], k)
		}
		for _, v := range order {
			keys := groups[v]
			if len(keys) == 1 {
				out = append(out, keys[0], v)
			} else {
				out = append(out, keys, v)
			}
		}
		return append(out, def)
	default: // class breaks
		get := []any{"get", c.r.Field}
		step := []any{"step", []any{"to-number", get}}
		if c.r.MinValue != nil {
			step = append(step, def, *c.r.MinValue)
		}
		for i, b := range c.r.Breaks {
			step = append(step, vals[i], math.Nextafter(b.MaxValue, math.Inf(1)))
		}
		step = append(step, def)
		return []any{"case", []any{"==", []any{"typeof", get}, "number"}, step, def}
	}
}

// IconName is the sprite name of a marker symbol of layer id: key is "symbol" (a simple
// renderer), "valueN" or "breakN" (the Nth class, from 0) or "default".
func IconName(layerID int, key string) string { return fmt.Sprintf("layer%d-%s", layerID, key) }

// Icon is a marker symbol a style's icon layers name, for the sprite sheet.
type Icon struct {
	Name   string
	Symbol *symbology.Symbol
}

// Icons lists the marker symbols of m's point layers that its style draws as sprite icons: those of
// every point layer not drawn as circles (a layer is when all its symbols are simple circles).
func Icons(m *servicedef.Map) []Icon {
	var out []Icon
	for _, l := range m.Layers {
		if l.GeometryType != feature.Point && l.GeometryType != feature.Multipoint {
			continue
		}
		c, err := classesOf(l)
		if err != nil {
			continue
		}
		if c.circles() {
			continue
		}
		for _, s := range c.named() {
			out = append(out, Icon{s.name, s.s})
		}
	}
	return out
}
