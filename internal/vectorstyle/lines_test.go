package vectorstyle_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

// roads is a service of one polyline layer (the sample services have none): a dashed simple
// line, labelled along the line above it every 100 points.
func roads() *servicedef.Service {
	l := &servicedef.Layer{
		ID: 4, Name: "Roads", GeometryType: feature.Polyline, Visible: true,
		Renderer: symbology.Renderer{Type: symbology.SimpleRenderer, Symbol: &symbology.Symbol{
			Type: symbology.SimpleLine, LineStyle: symbology.LineDash, Width: 2, Color: symbology.Color{R: 200, A: 255},
		}},
		Labels: []symbology.Label{{
			Text: []symbology.TextPart{{Field: "NAME"}, {Literal: " road"}},
			Font: symbology.Font{Size: 6}, Color: symbology.Color{A: 255},
			Placement: symbology.LabelPlacement{Repeat: 100, Line: symbology.LineAbove},
		}},
	}
	return &servicedef.Service{Name: "roads", Maps: []*servicedef.Map{{Name: "Layers", Layers: []*servicedef.Layer{l}, BackgroundColor: symbology.Color{R: 255, G: 255, B: 255, A: 255}}}}
}

func TestLines(t *testing.T) {
	svc := roads()
	_, doc := generate(t, svc)
	checkStyle(t, doc, svc.Maps[0])
	line := styleLayer(t, doc, "Roads/line")
	want := map[string]any{"line-color": "rgb(200,0,0)", "line-width": 2.667, "line-dasharray": []any{2.0, 1.5}}
	if !reflect.DeepEqual(line["paint"], want) {
		t.Errorf("line paint %v, want %v (4-3 pt dashes in units of a 2 pt width)", line["paint"], want)
	}
	lay := styleLayer(t, doc, "Roads/label/0")["layout"].(map[string]any)
	if lay["symbol-placement"] != "line" || lay["symbol-spacing"] != 133.333 || lay["text-size"] != 8.0 {
		t.Errorf("label layout %v: want line placement every 133.333 px, 8 px text", lay)
	}
	if off := lay["text-offset"].([]any); off[1].(float64) >= 0 {
		t.Errorf("text-offset %v: want the label above the line (negative y)", off)
	}
	if got := eval(lay["text-field"], map[string]any{"NAME": "Main"}); got != "Main road" {
		t.Errorf("text-field gives %q, want %q", got, "Main road")
	}
	if got := eval(lay["text-field"], map[string]any{}); got != " road" {
		t.Errorf("text-field of a NULL name gives %q, want %q (NULL as empty, as the renderer)", got, " road")
	}
}

// roadsAtReferenceScale is roads on a map with a reference scale of 1:1,000,000.
func roadsAtReferenceScale() *servicedef.Service {
	svc := roads()
	svc.Name = "roads_refscale"
	svc.Maps[0].ReferenceScale = 1e6
	svc.Maps[0].Layers[0].ScaleSymbols = true
	return svc
}

// TestReferenceScale: on a map with a reference scale, a layer's sizes are their given sizes at
// the reference scale and double with every zoom in, as the raster renderer draws them.
func TestReferenceScale(t *testing.T) {
	svc := roadsAtReferenceScale()
	_, doc := generate(t, svc)
	checkStyle(t, doc, svc.Maps[0])
	z := math.Log2(vectorstyle.ZoomZeroScale / 1e6)
	line := styleLayer(t, doc, "Roads/line")["paint"].(map[string]any)
	label := styleLayer(t, doc, "Roads/label/0")["layout"].(map[string]any)
	for _, c := range []struct {
		what string
		expr any
		zoom float64
		want float64
	}{
		{"line-width", line["line-width"], z, 2.667},
		{"line-width", line["line-width"], z + 1, 2 * 2.667},
		{"line-width", line["line-width"], z - 2, 2.667 / 4},
		{"text-size", label["text-size"], z, 8},
		{"text-size", label["text-size"], z + 1, 16},
		{"symbol-spacing", label["symbol-spacing"], z, 133.333},
	} {
		got, ok := eval(c.expr, map[string]any{zoomKey: c.zoom}).(float64)
		if !ok || math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("%s at zoom %.3f: %v, want %g", c.what, c.zoom, got, c.want)
		}
	}
	// without a reference scale, sizes are fixed
	_, doc = generate(t, roads())
	if w := styleLayer(t, doc, "Roads/line")["paint"].(map[string]any)["line-width"]; w != 2.667 {
		t.Errorf("line-width %v without a reference scale, want 2.667", w)
	}
}

// A layer's vectorTiles.minZoom raises its style layers' minzoom (the tiles below hold nothing of
// it); a layer the tiles leave out has no style layer at all.
func TestVectorTilesChoices(t *testing.T) {
	svc := roads()
	svc.Maps[0].Layers[0].MinScale = 1e8 // zoom 1.565
	svc.Maps[0].Layers[0].VectorTiles.MinZoom = 9
	_, doc := generate(t, svc)
	for _, id := range []string{"Roads/line", "Roads/label/0"} {
		if z := styleLayer(t, doc, id)["minzoom"]; z != 9.0 {
			t.Errorf("%s: minzoom %v, want 9", id, z)
		}
	}
	no := false
	svc.Maps[0].Layers[0].VectorTiles.Include = &no
	st, err := vectorstyle.New(svc, svc.Maps[0], vectorstyle.Options{ServiceURL: "http://farm.test/arcgis/rest/services/roads/VectorTileServer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Layers) != 1 || st.Layers[0].ID != "background" {
		t.Errorf("layers of a map whose one layer is out of the tiles: %v", st.Layers)
	}
}
