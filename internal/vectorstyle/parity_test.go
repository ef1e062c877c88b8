package vectorstyle_test

import (
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

// styleLayer finds a layer of the decoded style by id.
func styleLayer(t *testing.T, doc map[string]any, id string) map[string]any {
	t.Helper()
	for _, x := range doc["layers"].([]any) {
		if l := x.(map[string]any); l["id"] == id {
			return l
		}
	}
	t.Fatalf("no style layer %q", id)
	return nil
}

// drawn evaluates a layer's filter for a feature: whether a client draws it.
func drawn(t *testing.T, l map[string]any, props map[string]any) bool {
	f, ok := l["filter"]
	if !ok {
		return true
	}
	v := eval(f, props)
	if e, isErr := v.(errValue); isErr {
		return e.msg == "" // an erroring filter drops the feature
	}
	return v == true
}

func rgb(c servicedef.Color) string {
	st := &servicedef.Map{BackgroundColor: c}
	s, _ := vectorstyle.New(&servicedef.Service{Name: "x"}, st, vectorstyle.Options{ServiceURL: "http://h/VectorTileServer"})
	return s.Layers[0].Paint["background-color"].(string)
}

// TestRendererParity: for features with the attribute values of every class, of the class
// boundaries, of no class and of none at all (NULL), the style draws a feature when the raster
// renderer does, in the colour and with the icon the renderer's SymbolFor gives it.
func TestRendererParity(t *testing.T) {
	cfg := load(t, filepath.Join("testdata", "symbology.yaml"))
	svc := cfg.Services[0]
	m := svc.Maps[0]
	_, doc := generate(t, svc)
	layer := func(name string) *servicedef.Layer {
		for _, l := range m.Layers {
			if l.Name == name {
				return l
			}
		}
		t.Fatalf("no layer %q", name)
		return nil
	}
	type feature struct {
		tile []any // the renderer fields' values as a client decodes them from a tile
		gpkg []any // as the renderer reads them from the GeoPackage
	}
	num := func(x float64) feature { return feature{[]any{x}, []any{x}} }
	integer := func(x int64) feature { return feature{[]any{float64(x)}, []any{x}} }
	null := feature{[]any{nil}, []any{nil}}
	for _, c := range []struct {
		layer, styleLayer, prop string
		features                []feature
		value                   func(*servicedef.Symbol) any
	}{
		{"Regions", "Regions/fill", "fill-color",
			[]feature{integer(1), integer(2), integer(3), integer(4), integer(9), null, {[]any{"1"}, []any{"1"}}},
			func(s *servicedef.Symbol) any {
				if s.FillStyle == servicedef.FillNull {
					return rgb(servicedef.Color{})
				}
				return rgb(s.Color)
			}},
		{"Regions", "Regions/outline", "line-width",
			[]feature{integer(1), integer(9), null},
			func(s *servicedef.Symbol) any { return float64(int(s.Outline.Width*4/3*1000+0.5)) / 1000 }},
		{"County counts", "County counts/fill", "fill-color",
			[]feature{num(0), num(0.999), integer(1), num(49.5), integer(50), num(50.000001), integer(100), integer(101), integer(300), integer(301), null, {[]any{"60"}, []any{"60"}}},
			func(s *servicedef.Symbol) any { return rgb(s.Color) }},
		{"Region pairs", "Region pairs/fill", "fill-color",
			[]feature{{[]any{3.0, "48"}, []any{int64(3), "48"}}, {[]any{4.0, "06"}, []any{int64(4), "06"}}, {[]any{3.0, "06"}, []any{int64(3), "06"}}, {[]any{nil, "48"}, []any{nil, "48"}}},
			func(s *servicedef.Symbol) any { return rgb(s.Color) }},
		{"Country points", "Country points/icon", "icon-image",
			[]feature{{[]any{"250"}, []any{"250"}}, {[]any{"276"}, []any{"276"}}, {[]any{"004"}, []any{"004"}}, null},
			nil},
	} {
		l := layer(c.layer)
		sl := styleLayer(t, doc, c.styleLayer)
		fields := l.Renderer.RendererFields()
		for _, f := range c.features {
			props := map[string]any{}
			for i, name := range fields {
				if f.tile[i] != nil {
					props[name] = f.tile[i]
				}
			}
			sym := l.Renderer.SymbolFor(f.gpkg)
			if got := drawn(t, sl, props); got != (sym != nil) {
				t.Errorf("%s %v: drawn %v, the renderer draws it: %v", c.styleLayer, f.tile, got, sym != nil)
				continue
			}
			if sym == nil {
				continue
			}
			var want any
			if c.value != nil {
				want = c.value(sym)
			} else {
				want = iconOf(l, sym)
			}
			expr := sl["paint"]
			if c.prop == "icon-image" {
				expr = sl["layout"]
			}
			if got := eval(expr.(map[string]any)[c.prop], props); got != want {
				t.Errorf("%s %v: %s %v, want %v", c.styleLayer, f.tile, c.prop, got, want)
			}
		}
	}
}

// iconOf is the icon name of the class whose symbol sym is.
func iconOf(l *servicedef.Layer, sym *servicedef.Symbol) string {
	r := &l.Renderer
	if sym == r.DefaultSymbol {
		return vectorstyle.IconName(l.ID, "default")
	}
	for i := range r.Values {
		if &r.Values[i].Symbol == sym {
			return vectorstyle.IconName(l.ID, "value"+string(rune('0'+i)))
		}
	}
	return ""
}
