package servicedef_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

func TestLoadSamples(t *testing.T) {
	cfg, err := servicedef.Load(filepath.Join("..", "..", "services", "services.yaml"), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range cfg.Services {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "world,world_geographic,usa,usa_geographic" {
		t.Fatalf("services = %s", got)
	}
	world := cfg.Services[0]
	m := world.Maps[0]
	if m.Name != "Layers" || m.SpatialReference.WKID != 3857 || m.BackgroundColor != (symbology.Color{R: 198, G: 219, B: 239, A: 255}) {
		t.Errorf("world map = %q SR %v background %v", m.Name, m.SpatialReference, m.BackgroundColor)
	}
	if m.CopyrightText != "Natural Earth (public domain)" || world.DocumentInfo.Title != "World countries" {
		t.Errorf("copyright %q, title %q", m.CopyrightText, world.DocumentInfo.Title)
	}
	countries := m.Layers[1]
	if countries.ID != 1 || countries.Name != "Countries" || countries.GeometryType != feature.Polygon || !countries.Visible {
		t.Errorf("countries layer = %+v", countries)
	}
	if src, ok := countries.Source.(gpkg.Definition); !ok || !filepath.IsAbs(src.File) || filepath.Base(src.File) != "world_countries_50m_3857.gpkg" {
		t.Errorf("source = %+v", countries.Source)
	}
	sym := countries.Renderer.Symbol
	if countries.Renderer.Type != symbology.SimpleRenderer || sym.Type != symbology.SimpleFill ||
		sym.Color != (symbology.Color{R: 232, G: 228, B: 216, A: 255}) || sym.Outline.Color != (symbology.Color{R: 96, G: 96, B: 96, A: 255}) ||
		sym.Outline.Width != 0.75 {
		t.Errorf("countries symbol = %+v outline %+v", sym, sym.Outline)
	}
	lb := countries.Labels[0]
	if lb.Field != "NAME" || lb.Font != (symbology.Font{Family: "DejaVuSans", Size: 8}) ||
		lb.Color != (symbology.Color{R: 32, G: 32, B: 32, A: 255}) || lb.Halo.Color != (symbology.Color{R: 255, G: 255, B: 255, A: 255}) {
		t.Errorf("countries label = %+v", lb)
	}
	if got := lb.Format(func(string) any { return "France" }); got != "France" {
		t.Errorf("label text = %q", got)
	}
	if len(countries.Fields) != 3 || countries.Fields[1] != (servicedef.Field{Name: "NAME", Alias: "Name"}) {
		t.Errorf("fields = %+v", countries.Fields)
	}
	if pts := m.Layers[0]; pts.Visible || pts.GeometryType != feature.Point || pts.Renderer.Symbol.MarkerStyle != symbology.MarkerCircle {
		t.Errorf("points layer = %+v", pts)
	}
	usa := cfg.Services[2].Maps[0]
	if usa.InitialExtent == nil || usa.InitialExtent.Min[0] != -14000000 || len(usa.Tables) != 1 || usa.Tables[0].ID != 2 {
		t.Errorf("usa map extent %v tables %+v", usa.InitialExtent, usa.Tables)
	}
	if states := usa.Layers[0]; states.Labels[0].MinScale != 50000000 || states.Renderer.Symbol.FillStyle != symbology.FillNull {
		t.Errorf("states = %+v", states)
	}
}

// writeConfig writes body to a temp services.yaml; SAMPLE in body names data/sample, through a
// link beside the file so the YAML (and so every column in an error message) is the same
// wherever the repository is checked out.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	sample, err := filepath.Abs(filepath.Join("..", "..", "data", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(sample, filepath.Join(dir, "sample")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "SAMPLE", "sample")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const good = `services:
  - name: world
    maps:
      - spatialReference: 3857
        layers:
          - name: Countries
            source: {geopackage: SAMPLE/world_countries_50m_4326.gpkg, table: countries}
`

func TestDefaults(t *testing.T) {
	cfg, err := servicedef.Load(writeConfig(t, good), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Services[0].Maps[0]
	l := m.Layers[0]
	if m.Name != "Layers" || m.BackgroundColor != (symbology.Color{R: 255, G: 255, B: 255, A: 255}) || m.InitialExtent != nil {
		t.Errorf("map defaults: %+v", m)
	}
	if l.ID != 0 || !l.Visible || l.GeometryType != feature.Polygon || l.DisplayField != "ISO_N3" || len(l.Fields) != 3 ||
		l.Renderer.Type != symbology.SimpleRenderer || l.Renderer.Symbol.Type != symbology.SimpleFill {
		t.Errorf("layer defaults: %+v", l)
	}
}

func TestRenderers(t *testing.T) {
	cfg, err := servicedef.Load(writeConfig(t, `services:
  - name: r
    maps:
      - spatialReference: 4326
        layers:
          - name: By state
            definitionExpression: "STATEFP IN ('51', '06') AND fid > 0"
            source: {geopackage: SAMPLE/us_counties_10m_4326.gpkg, table: counties}
            renderer:
              type: uniqueValue
              fields: [statefp, NAME]
              values:
                - {value: ["51", Arlington], symbol: {type: simpleFill, color: "#ff0000"}}
                - value: ["06", Alameda]
                  label: Alameda CA
                  symbol: {type: simpleFill, color: [0, 0, 255, 128]}
              defaultSymbol: {type: simpleFill, style: "null", outline: {color: [0, 0, 0], width: 0.5, style: dash}}
          - name: By id
            source: {geopackage: SAMPLE/us_counties_10m_4326.gpkg, table: counties}
            renderer:
              type: classBreaks
              field: fid
              minValue: 1
              breaks:
                - {maxValue: 1000, symbol: {type: simpleFill, color: [1, 1, 1]}}
                - {maxValue: 2000, label: middle, symbol: {type: simpleFill, color: [2, 2, 2]}}
            labels:
              - expression: "[name] ([[[STATE]]])"
                priority: 2
`), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	uv := &cfg.Services[0].Maps[0].Layers[0].Renderer
	tests := []struct {
		vals []any
		want *symbology.Symbol
	}{
		{[]any{"51", "Arlington"}, &uv.Values[0].Symbol},
		{[]any{"06", "Alameda"}, &uv.Values[1].Symbol},
		{[]any{"06", nil}, uv.DefaultSymbol},
	}
	for _, tc := range tests {
		if got := uv.SymbolFor(tc.vals); got != tc.want {
			t.Errorf("SymbolFor(%v) = %+v", tc.vals, got)
		}
	}
	if uv.Fields[0] != "STATEFP" {
		t.Errorf("renderer field name not made canonical: %q", uv.Fields[0])
	}
	if uv.Values[0].Label != "51, Arlington" || uv.Values[1].Symbol.Color.A != 128 || uv.DefaultSymbol.Outline.Style != symbology.LineDash {
		t.Errorf("unique values = %+v", uv.Values)
	}
	cb := &cfg.Services[0].Maps[0].Layers[1].Renderer
	for _, tc := range []struct {
		v    any
		want *symbology.Symbol
	}{
		{int64(0), nil}, {int64(1), &cb.Breaks[0].Symbol}, {int64(1000), &cb.Breaks[0].Symbol},
		{1000.5, &cb.Breaks[1].Symbol}, {int64(2001), nil}, {nil, nil},
	} {
		if got := cb.SymbolFor([]any{tc.v}); got != tc.want {
			t.Errorf("class breaks SymbolFor(%v) = %+v, want %+v", tc.v, got, tc.want)
		}
	}
	if cb.Breaks[0].Label != "1 - 1000" || cb.Breaks[1].Label != "middle" {
		t.Errorf("break labels %q %q", cb.Breaks[0].Label, cb.Breaks[1].Label)
	}
	lb := cfg.Services[0].Maps[0].Layers[1].Labels[0]
	vals := map[string]any{"NAME": "Arlington", "STATE": "Virginia"}
	if got := lb.Format(func(f string) any { return vals[f] }); got != "Arlington ([Virginia])" || lb.Priority != 2 {
		t.Errorf("label = %q (priority %d)", got, lb.Priority)
	}
}

// TestValidation checks that each mistake is reported at its position,
// and that all of them are reported, not just the first.
func TestValidation(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string // "line:col: substring"
	}{
		{"yaml syntax", "services:\n  - name: [oops\n", []string{"services.yaml:1: invalid YAML (here or on the next line): did not find expected ',' or ']'"}},
		{"empty", "", []string{"file is empty"}},
		{"no services", "other: 1\n", []string{`1:1: unknown key "other"`, `1:1: missing required key "services"`}},
		{"typo and duplicates", `services:
  - name: world
    descripton: typo
    maps:
      - spatialReference: 3857
        layers:
          - name: A
            source: {geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: countries}
          - name: a
            id: 0
            source: {geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: countries}
  - name: WORLD
    maps:
      - spatialReference: 3857
      - spatialReference: 3857
`, []string{
			`3:5: unknown key "descripton" in service (did you mean "description"?)`,
			`9:19: duplicate layer/table name "a"`,
			`10:17: duplicate layer/table id 0`,
			`12:11: duplicate service name "WORLD"`,
			`15:9: duplicate map name "Layers"`,
		}},
		{"data problems", `services:
  - name: s
    maps:
      - spatialReference: 3857
        layers:
          - name: Missing file
            source: {geopackage: nowhere.gpkg, table: countries}
          - name: Missing table
            source: {geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: country}
          - name: Bad fields
            source: {geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: countries}
            fields: [NAME, {name: POP}]
            displayField: NAMES
            labels: [{field: LABEL}]
          - name: Wrong type
            definitionExpression: "NAME = 'France' AND"
            geometryType: point
            source: {geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: countries}
`, []string{
			`7:34: data file`,
			`9:79: table "country" not found in world_countries_50m_3857.gpkg (tables: countries)`,
			`12:35: field "POP" is not a column of table "countries" (columns: fid, ISO_N3, NAME)`,
			`13:27: displayField "NAMES" is not a column`,
			`14:30: label field "LABEL" is not a column`,
			`16:35: definitionExpression: `,
			`17:27: geometryType point does not match the data`,
		}},
		{"values", `services:
  - name: s
    maps:
      - spatialReference: 4326
        backgroundColor: [300, 0, 0]
        initialExtent: [10, 0, 0, 10]
        layers:
          - name: L
            minScale: 1000
            maxScale: 5000
            visible: yes please
            source: {geopackage: SAMPLE/world_countries_50m_4326.gpkg, table: countries}
            renderer:
              type: simple
              symbol: {type: simpleLine, color: "#12345", style: wavy}
            labels:
              - {field: NAME, color: "red", minScale: 10, maxScale: 20}
      - name: Other
        spatialReference: 99999
        layers:
          - name: L
            source: {geopackage: SAMPLE/world_countries_50m_4326.gpkg, table: countries}
`, []string{
			`5:27: backgroundColor component must be an integer 0–255`,
			`6:24: initialExtent is empty or inverted`,
			`9:23: inverted scale range`,
			`11:22: visible must be true or false`,
			`15:30: a simpleLine symbol cannot draw polygon features: use simpleFill`,
			`15:49: color "#12345" is not a colour`,
			`15:66: line style "wavy"`,
			`17:38: label color must be [r, g, b]`,
			`17:55: inverted scale range`,
			`22:21: table "countries" is stored in EPSG:4326 and cannot be reprojected to the map's EPSG:99999`,
		}},
		{"renderers", `services:
  - name: s
    maps:
      - name: M
        layers:
          - name: UV
            source: {geopackage: SAMPLE/us_states_10m_4326.gpkg, table: states}
            definitionExpression: POPULATION > 5
            renderer:
              type: uniqueValue
              fields: [NAME, STATEFP, fid, NAME]
              symbol: {type: simpleFill}
              values:
                - {value: a, symbol: {type: simpleFill, size: 3}}
          - name: CB
            source: {geopackage: SAMPLE/us_states_10m_4326.gpkg, table: states}
            renderer:
              type: classBreaks
              field: fid
              breaks:
                - {maxValue: 10, symbol: {type: simpleFill}}
                - {maxValue: 5, symbol: {type: simpleFill}}
              label: nope
          - name: Merged
            id: 7
            <<: {visible: false, colour: red}
            source: {geopackage: SAMPLE/us_states_10m_4326.gpkg, table: states}
            name: Dup
`, []string{
			`4:9: map "M": missing required key "spatialReference"`,
			`8:35: definitionExpression: where: unknown field "POPULATION"`,
			`11:23: uniqueValue renderer needs 1 to 3 fields, not 4`,
			`12:23: "symbol" does not apply to a uniqueValue renderer`,
			`14:27: value has 1 parts but the renderer has 4 fields`,
			`14:63: "size" does not apply to a simpleFill symbol`,
			`23:22: "label" applies to simple renderers only`,
			`22:30: maxValue 5 must be greater than the previous bound 10`,
			`26:34: unknown key "colour" in layer (known keys: attachments, copyrightText,`,
			`28:13: duplicate key "name"`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.body)
			_, err := servicedef.Load(path, providers.Registry())
			var ve *servicedef.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want *ValidationError", err)
			}
			for _, p := range ve.Problems {
				if p.File != path {
					t.Errorf("problem file = %q, want %q", p.File, path)
				}
			}
			text := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(text, path+":"+w) && !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			if len(ve.Problems) != len(tc.want) {
				t.Errorf("got %d problems, want %d:\n%s", len(ve.Problems), len(tc.want), text)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := servicedef.Load(filepath.Join(t.TempDir(), "none.yaml"), providers.Registry())
	var ve *servicedef.ValidationError
	if err == nil || errors.As(err, &ve) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want a plain not-exist error", err)
	}
}

// TestDocsExample keeps the example in docs/service-definitions.md valid.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "service-definitions.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## Example\n\n```yaml\n")
	if !ok {
		t.Fatal("no example in docs/service-definitions.md")
	}
	example, _, _ := strings.Cut(after, "```")
	cfg, err := servicedef.Load(writeConfig(t, strings.ReplaceAll(example, "../data/sample", "SAMPLE")), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Services[0].Maps[0].Layers[1].Renderer
	if r.Type != symbology.UniqueValueRenderer || r.Values[0].Label != "France" || r.DefaultSymbol == nil {
		t.Errorf("renderer = %+v", r)
	}
}

func TestGeoJSONSource(t *testing.T) {
	places, err := filepath.Abs(filepath.Join("..", "feature", "geojson", "testdata", "places.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := servicedef.Load(writeConfig(t, `services:
  - name: places
    maps:
      - spatialReference: 3857
        layers:
          - name: Places
            source: {geojson: `+places+`}
            definitionExpression: "population > 1000000"
            labels: [{field: NAME}]
`), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Services[0].Maps[0].Layers[0]
	if l.Source != (geojson.Definition{File: places}) || l.GeometryType != feature.Point || l.DisplayField != "name" || l.Labels[0].Field != "name" {
		t.Errorf("layer = %+v", l)
	}
	_, err = servicedef.Load(writeConfig(t, `services:
  - name: places
    maps:
      - spatialReference: 3857
        layers:
          - name: Places
            source: {geojson: `+places+`, table: x}
          - name: Places2
            source: {geojson: `+places+`}
            fields: [pop]
`), providers.Registry())
	if err == nil || !strings.Contains(err.Error(), ":7:21: source: set either geojson or geopackage") ||
		!strings.Contains(err.Error(), `:10:22: field "pop" is not a column of table "places"`) {
		t.Errorf("err = %v", err)
	}
}
