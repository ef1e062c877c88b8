package vectorstyle_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
)

// Rules of the style specification (v8) the generator's output must keep, checked on the decoded
// JSON: the root keys, each layer's keys and type, paint and layout properties of its type, and
// the shape of every expression.

var layerTypes = map[string]string{
	"background": "background-", "fill": "fill-", "line": "line-", "circle": "circle-", "symbol": "",
}

// operators are the expression operators the generator may write, with their argument counts
// (min, max; -1: any).
var operators = map[string][2]int{
	"get": {1, 1}, "to-string": {1, 1}, "to-number": {1, -1}, "typeof": {1, 1}, "coalesce": {1, -1},
	"concat": {1, -1}, "match": {4, -1}, "step": {2, -1}, "case": {3, -1}, "all": {0, -1},
	"interpolate": {4, -1}, "zoom": {0, 0}, "*": {2, -1},
	"==": {2, 2}, "!=": {2, 2}, "<": {2, 2}, "<=": {2, 2}, ">": {2, 2}, ">=": {2, 2},
}

var colorRE = regexp.MustCompile(`^rgb\((\d{1,3}),(\d{1,3}),(\d{1,3})\)$|^rgba\((\d{1,3}),(\d{1,3}),(\d{1,3}),(0|1|0?\.\d+)\)$`)

func checkStyle(t *testing.T, doc map[string]any, m *servicedef.Map) {
	t.Helper()
	for _, k := range []string{"version", "sources", "layers", "glyphs", "sprite"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("root: no %q", k)
		}
	}
	for k := range doc {
		if !slices.Contains([]string{"version", "name", "sources", "layers", "glyphs", "sprite", "metadata", "center", "zoom"}, k) {
			t.Errorf("root: unexpected key %q", k)
		}
	}
	if doc["version"] != 8.0 {
		t.Errorf("version %v, want 8", doc["version"])
	}
	g, _ := doc["glyphs"].(string)
	if !strings.Contains(g, "{fontstack}") || !strings.Contains(g, "{range}") {
		t.Errorf("glyphs %q lacks {fontstack} or {range}", g)
	}
	srcs, _ := doc["sources"].(map[string]any)
	for name, s := range srcs {
		s := s.(map[string]any)
		tiles, _ := s["tiles"].([]any)
		if s["type"] != "vector" || len(tiles) != 1 || !strings.HasSuffix(tiles[0].(string), "/VectorTileServer/tile/{z}/{y}/{x}.pbf") {
			t.Errorf("source %s: %v", name, s)
		}
	}
	names := map[string]bool{}
	for _, l := range m.Layers {
		names[l.Name] = true
	}
	ids := map[string]bool{}
	layers, _ := doc["layers"].([]any)
	if len(layers) == 0 {
		t.Fatal("no layers")
	}
	for i, x := range layers {
		l := x.(map[string]any)
		id, _ := l["id"].(string)
		where := fmt.Sprintf("layer %d %q", i, id)
		if id == "" || ids[id] {
			t.Errorf("%s: id empty or repeated", where)
		}
		ids[id] = true
		typ, _ := l["type"].(string)
		prefix, ok := layerTypes[typ]
		if !ok {
			t.Errorf("%s: type %q", where, typ)
			continue
		}
		if typ != "background" {
			if _, ok := srcs[fmt.Sprint(l["source"])]; !ok {
				t.Errorf("%s: source %v is not in sources", where, l["source"])
			}
			if !names[fmt.Sprint(l["source-layer"])] {
				t.Errorf("%s: source-layer %v is not a layer of the map", where, l["source-layer"])
			}
		}
		minZ, hasMin := l["minzoom"].(float64)
		maxZ, hasMax := l["maxzoom"].(float64)
		if hasMin && (minZ < 0 || minZ > 24) || hasMax && (maxZ < 0 || maxZ > 24) || hasMin && hasMax && minZ >= maxZ {
			t.Errorf("%s: zooms %v–%v", where, l["minzoom"], l["maxzoom"])
		}
		if f, ok := l["filter"]; ok {
			checkExpr(t, where+" filter", f)
		}
		paint, _ := l["paint"].(map[string]any)
		for k, v := range paint {
			if typ == "symbol" && !strings.HasPrefix(k, "text-") && !strings.HasPrefix(k, "icon-") || typ != "symbol" && !strings.HasPrefix(k, prefix) {
				t.Errorf("%s: paint %q does not belong to a %s layer", where, k, typ)
			}
			checkExpr(t, where+" "+k, v)
			if strings.HasSuffix(k, "-color") {
				checkColors(t, where+" "+k, v)
			}
		}
		layout, _ := l["layout"].(map[string]any)
		for k, v := range layout {
			switch {
			case k == "visibility":
				if v != "none" && v != "visible" {
					t.Errorf("%s: visibility %v", where, v)
				}
			case typ == "symbol" && (strings.HasPrefix(k, "text-") || strings.HasPrefix(k, "icon-") || strings.HasPrefix(k, "symbol-")):
			case typ == "line" && (k == "line-join" || k == "line-cap"):
			default:
				t.Errorf("%s: layout %q does not belong to a %s layer", where, k, typ)
			}
			if k == "text-font" {
				for _, f := range v.([]any) {
					if _, _, err := vectorfonts.ParseStack(f.(string)); err != nil {
						t.Errorf("%s: text-font %q: %v", where, f, err)
					}
				}
				continue
			}
			checkExpr(t, where+" "+k, v)
		}
	}
	if layers[0].(map[string]any)["type"] != "background" {
		t.Error("the first layer is not the background")
	}
}

func checkColors(t *testing.T, where string, v any) {
	switch x := v.(type) {
	case string:
		if !colorRE.MatchString(x) {
			t.Errorf("%s: colour %q", where, x)
		}
	case []any:
		// an expression: its outputs are colours; the inputs are strings too, but checked by eval
		if x[0] == "match" {
			for i := 3; i < len(x)-1; i += 2 {
				checkColors(t, where, x[i])
			}
			checkColors(t, where, x[len(x)-1])
		}
	}
}

// checkExpr checks the shape of an expression and of every expression in it.
func checkExpr(t *testing.T, where string, v any) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return
	}
	op, ok := a[0].(string)
	if !ok {
		return // a literal array (a dash pattern, anchors)
	}
	n, ok := operators[op]
	if !ok {
		if where != "" && (strings.HasSuffix(where, "text-variable-anchor")) {
			return
		}
		t.Errorf("%s: unknown operator %q", where, op)
		return
	}
	args := len(a) - 1
	if args < n[0] || n[1] >= 0 && args > n[1] {
		t.Errorf("%s: %s with %d arguments", where, op, args)
	}
	switch op {
	case "match":
		// input, (label, output)+, fallback
		if (args-2)%2 != 0 {
			t.Errorf("%s: match with %d arguments, want input, pairs and a fallback", where, args)
		}
		seen := map[any]bool{}
		for i := 2; i < len(a)-1; i += 2 {
			labels, isArr := a[i].([]any)
			if !isArr {
				labels = []any{a[i]}
			} else if len(labels) == 0 {
				t.Errorf("%s: match with an empty label list", where)
			}
			for _, l := range labels {
				if _, ok := l.(string); !ok {
					t.Errorf("%s: match label %v is not a string", where, l)
				}
				if seen[l] {
					t.Errorf("%s: match label %v twice", where, l)
				}
				seen[l] = true
			}
		}
	case "step":
		// input, output0, (stop, output)*
		if (args-2)%2 != 0 {
			t.Errorf("%s: step with %d arguments", where, args)
		}
		prev := -1e308
		for i := 3; i < len(a); i += 2 {
			s, ok := a[i].(float64)
			if !ok || s <= prev {
				t.Errorf("%s: step stop %v not a number above %v", where, a[i], prev)
			}
			prev = s
		}
	case "case":
		if args%2 != 1 {
			t.Errorf("%s: case with %d arguments, want pairs and a fallback", where, args)
		}
	case "get", "typeof":
		if _, ok := a[1].(string); op == "get" && !ok {
			t.Errorf("%s: get %v", where, a[1])
		}
	}
	if op == "interpolate" {
		if typ, ok := a[1].([]any); !ok || len(typ) == 0 || typ[0] != "linear" && typ[0] != "exponential" {
			t.Errorf("%s: interpolation type %v", where, a[1])
		}
		if z, ok := a[2].([]any); !ok || len(z) != 1 || z[0] != "zoom" {
			t.Errorf("%s: interpolate over %v, want the zoom", where, a[2])
		}
		if (args-2)%2 != 0 {
			t.Errorf("%s: interpolate with %d arguments", where, args)
		}
		for i := 4; i < len(a); i += 2 {
			checkExpr(t, where, a[i])
		}
		return
	}
	for i, x := range a[1:] {
		if op == "match" && i >= 1 && i%2 == 1 && i < len(a)-2 {
			continue // a label or a list of labels, not an expression
		}
		checkExpr(t, where, x)
	}
}

// styleSpec returns a directory whose node_modules holds npm's @maplibre/maplibre-gl-style-spec,
// the style specification's own code: $MAPFARM_TEST_STYLE_SPEC, or a directory under the system's
// temporary directory, installed there on first use and kept for the next run. It skips the test
// without node and npm.
func styleSpec(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	dir := os.Getenv("MAPFARM_TEST_STYLE_SPEC")
	if dir != "" {
		// The test command installs it there (scripts/install.sh): it must be found.
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@maplibre", "maplibre-gl-style-spec", "package.json")); err != nil {
			t.Fatalf("MAPFARM_TEST_STYLE_SPEC=%s: %v", dir, err)
		}
		return dir
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "mapfarm-style-spec")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@maplibre", "maplibre-gl-style-spec", "package.json")); err == nil {
		return dir
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm to install @maplibre/maplibre-gl-style-spec")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "@maplibre/maplibre-gl-style-spec").CombinedOutput()
	if err != nil {
		t.Skipf("npm install @maplibre/maplibre-gl-style-spec: %v\n%s", err, out)
	}
	return dir
}

// TestStyleSpecValidator validates the styles with the style specification's own validator,
// gl-style-validate.
func TestStyleSpecValidator(t *testing.T) {
	bin := filepath.Join(styleSpec(t), "node_modules", ".bin", "gl-style-validate")
	samples := load(t, filepath.Join("..", "..", "services", "services.yaml"))
	symbology := load(t, filepath.Join("testdata", "symbology.yaml"))
	for _, svc := range []*servicedef.Service{service(t, samples, "world"), service(t, samples, "usa"), service(t, samples, "world_geographic"), service(t, symbology, "symbology"), roads(), roadsAtReferenceScale()} {
		raw, _ := generate(t, svc)
		f := filepath.Join(t.TempDir(), svc.Name+".json")
		if err := os.WriteFile(f, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, f).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("%s: gl-style-validate: %v\n%s", svc.Name, err, out)
		}
	}
}
