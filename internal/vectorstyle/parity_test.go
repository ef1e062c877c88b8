package vectorstyle_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
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

// parityCase is a feature of a style layer with what the raster renderer does with it: whether it
// draws it and the property's value from the symbol it draws it with.
type parityCase struct {
	Layer string         `json:"layer"` // style layer id
	Kind  string         `json:"kind"`  // paint or layout
	Prop  string         `json:"prop"`
	Props map[string]any `json:"props"`          // the feature's attributes as a client decodes them from a tile
	Zoom  float64        `json:"zoom,omitempty"` // 5 when 0
	drawn bool
	want  any
}

func rgb(c symbology.Color) string {
	st := &servicedef.Map{BackgroundColor: c}
	s, _ := vectorstyle.New(&servicedef.Service{Name: "x"}, st, vectorstyle.Options{ServiceURL: "http://h/VectorTileServer"})
	return s.Layers[0].Paint["background-color"].(string)
}

// parityCases are the test symbology's features with the attribute values of every class, of the
// class boundaries, of no class and of none at all (NULL), with the renderer's SymbolFor.
func parityCases(t *testing.T) (map[string]any, []parityCase) {
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
	var out []parityCase
	for _, c := range []struct {
		layer, styleLayer, prop string
		features                []feature
		value                   func(*symbology.Symbol) any
	}{
		{"Regions", "Regions/fill", "fill-color",
			[]feature{integer(1), integer(2), integer(3), integer(4), integer(9), null, {[]any{"1"}, []any{"1"}}},
			func(s *symbology.Symbol) any {
				if s.FillStyle == symbology.FillNull {
					return rgb(symbology.Color{})
				}
				return rgb(s.Color)
			}},
		{"Regions", "Regions/outline", "line-width",
			[]feature{integer(1), integer(9), null},
			func(s *symbology.Symbol) any { return float64(int(s.Outline.Width*4/3*1000+0.5)) / 1000 }},
		{"County counts", "County counts/fill", "fill-color",
			[]feature{num(0), num(0.999), integer(1), num(49.5), integer(50), num(50.000001), integer(100), integer(101), integer(300), integer(301), null, {[]any{"60"}, []any{"60"}}},
			func(s *symbology.Symbol) any { return rgb(s.Color) }},
		{"Region pairs", "Region pairs/fill", "fill-color",
			[]feature{{[]any{3.0, "48"}, []any{int64(3), "48"}}, {[]any{4.0, "06"}, []any{int64(4), "06"}}, {[]any{3.0, "06"}, []any{int64(3), "06"}}, {[]any{nil, "48"}, []any{nil, "48"}}},
			func(s *symbology.Symbol) any { return rgb(s.Color) }},
		{"Country points", "Country points/icon", "icon-image",
			[]feature{{[]any{"250"}, []any{"250"}}, {[]any{"276"}, []any{"276"}}, {[]any{"004"}, []any{"004"}}, null},
			nil},
	} {
		l := layer(c.layer)
		fields := l.Renderer.RendererFields()
		for _, f := range c.features {
			pc := parityCase{Layer: c.styleLayer, Kind: "paint", Prop: c.prop, Props: map[string]any{}}
			if c.prop == "icon-image" {
				pc.Kind = "layout"
			}
			for i, name := range fields {
				if f.tile[i] != nil {
					pc.Props[name] = f.tile[i]
				}
			}
			sym := l.Renderer.SymbolFor(f.gpkg)
			pc.drawn = sym != nil
			switch {
			case sym == nil:
			case c.value != nil:
				pc.want = c.value(sym)
			default:
				pc.want = iconOf(l, sym)
			}
			out = append(out, pc)
		}
	}
	return doc, out
}

// iconOf is the icon name of the class whose symbol sym is.
func iconOf(l *servicedef.Layer, sym *symbology.Symbol) string {
	r := &l.Renderer
	if sym == r.DefaultSymbol {
		return vectorstyle.IconName(l.ID, "default")
	}
	for i := range r.Values {
		if &r.Values[i].Symbol == sym {
			return vectorstyle.IconName(l.ID, fmt.Sprintf("value%d", i))
		}
	}
	return ""
}

// TestRendererParity: evaluated as the style specification says (eval), the style draws a
// feature when the raster renderer does, in the colour, width and icon the renderer's SymbolFor
// gives it.
func TestRendererParity(t *testing.T) {
	doc, cases := parityCases(t)
	for _, c := range cases {
		sl := styleLayer(t, doc, c.Layer)
		drawn := true
		if f, ok := sl["filter"]; ok {
			drawn = eval(f, c.Props) == true // an erroring filter drops the feature
		}
		if drawn != c.drawn {
			t.Errorf("%s %v: drawn %v, the renderer draws it: %v", c.Layer, c.Props, drawn, c.drawn)
			continue
		}
		if !drawn {
			continue
		}
		if got := eval(sl[c.Kind].(map[string]any)[c.Prop], c.Props); got != c.want {
			t.Errorf("%s %v: %s %v, want %v", c.Layer, c.Props, c.Prop, got, c.want)
		}
	}
}

// clientScript evaluates the cases read from stdin with the style specification's own
// expression engine (MapLibre GL's), writing one result per case.
const clientScript = `
const ss = require(process.argv[2]);
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const out = input.cases.map((c) => {
  const i = input.layers.findIndex((l) => l.id === c.layer);
  const l = input.layers[i];
  const feature = {type: l.type === 'symbol' ? 1 : 3, properties: c.props};
  const globals = {zoom: c.zoom || 5};
  let drawn = true;
  if (l.filter) drawn = ss.featureFilter(l.filter, 'layers[' + i + '].filter').filter(globals, feature);
  const spec = ss.latest[c.kind + '_' + l.type][c.prop];
  const e = ss.createPropertyExpression(l[c.kind][c.prop], 'layers[' + i + '].' + c.kind + '.' + c.prop, spec);
  if (e.result !== 'success') return {drawn, error: JSON.stringify(e.value)};
  let v = e.value.evaluate(globals, feature);
  if (v && v.name !== undefined) v = v.name;
  else if (v instanceof ss.Color) v = v.toString();
  return {drawn, value: v};
});
process.stdout.write(JSON.stringify(out));
`

var rgbaRE = regexp.MustCompile(`^rgba?\(([\d.]+),([\d.]+),([\d.]+)(?:,([\d.]+))?\)$`)

// sameColor compares CSS colours as rgb(…)/rgba(…) write them, alpha to 1/100.
func sameColor(a, b string) bool {
	pa, pb := rgbaRE.FindStringSubmatch(a), rgbaRE.FindStringSubmatch(b)
	if pa == nil || pb == nil {
		return a == b
	}
	for i := 1; i <= 4; i++ {
		x, y := pa[i], pb[i]
		if x == "" {
			x = "1"
		}
		if y == "" {
			y = "1"
		}
		fx, _ := strconv.ParseFloat(x, 64)
		fy, _ := strconv.ParseFloat(y, 64)
		if d := fx - fy; d > 0.01 || d < -0.01 {
			return false
		}
	}
	return true
}

// clientResult is what MapLibre's engine makes of a case.
type clientResult struct {
	Drawn bool   `json:"drawn"`
	Value any    `json:"value"`
	Error string `json:"error"`
}

// evalClient evaluates cases over a style's layers with MapLibre's expression engine (npm
// @maplibre/maplibre-gl-style-spec in node; the test skips without node).
func evalClient(t *testing.T, layers any, cases []parityCase) []clientResult {
	t.Helper()
	dir := styleSpec(t)
	in, err := json.Marshal(map[string]any{"layers": layers, "cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "eval.cjs")
	if err := os.WriteFile(script, []byte(clientScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, filepath.Join(dir, "node_modules", "@maplibre", "maplibre-gl-style-spec"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res []clientResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(cases) {
		t.Fatalf("node answered %d results for %d cases (%v): %s", len(res), len(cases), err, out)
	}
	return res
}

// TestRendererParityMapLibre checks the parity cases with MapLibre's own expression engine.
func TestRendererParityMapLibre(t *testing.T) {
	doc, cases := parityCases(t)
	res := evalClient(t, doc["layers"], cases)
	for i, c := range cases {
		r := res[i]
		if r.Error != "" {
			t.Errorf("%s %s: MapLibre does not parse it: %s", c.Layer, c.Prop, r.Error)
			continue
		}
		if r.Drawn != c.drawn {
			t.Errorf("%s %v: MapLibre draws it: %v, the renderer: %v", c.Layer, c.Props, r.Drawn, c.drawn)
			continue
		}
		if !c.drawn {
			continue
		}
		ws, wantString := c.want.(string)
		gs, gotString := r.Value.(string)
		if wantString && gotString && sameColor(gs, ws) || r.Value == c.want {
			continue
		}
		t.Errorf("%s %v: MapLibre gives %s %v, the renderer %v", c.Layer, c.Props, c.Prop, r.Value, c.want)
	}
}

// TestReferenceScaleMapLibre: MapLibre draws a reference-scaled line at its width at the
// reference scale, and twice as wide a zoom in.
func TestReferenceScaleMapLibre(t *testing.T) {
	_, doc := generate(t, roadsAtReferenceScale())
	z := math.Log2(vectorstyle.ZoomZeroScale / 1e6)
	cases := []parityCase{
		{Layer: "Roads/line", Kind: "paint", Prop: "line-width", Props: map[string]any{}, Zoom: z, want: 2.667},
		{Layer: "Roads/line", Kind: "paint", Prop: "line-width", Props: map[string]any{}, Zoom: z + 1, want: 5.334},
		{Layer: "Roads/label/0", Kind: "layout", Prop: "text-size", Props: map[string]any{}, Zoom: z, want: 8.0},
	}
	for i, r := range evalClient(t, doc["layers"], cases) {
		got, ok := r.Value.(float64)
		if want := cases[i].want.(float64); r.Error != "" || !ok || math.Abs(got-want) > 1e-3 {
			t.Errorf("%s at zoom %.3f: %v (%s), want %g", cases[i].Prop, cases[i].Zoom, r.Value, r.Error, want)
		}
	}
}
