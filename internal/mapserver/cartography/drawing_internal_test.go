package cartography

import (
	"reflect"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// TestRendererRoundTrip converts request renderers to the service definition's and back, as
// GetDefaultLayerDrawingDescriptions would describe them, and in again: nothing is lost.
func TestRendererRoundTrip(t *testing.T) {
	c := catalogtest.Samples(t)
	svc, _ := c.Service("world")
	m, _ := svc.Map("Layers")
	countries, _ := m.Layer(1)
	rgb := func(r, g, b uint8) *gisxml.RgbColor {
		return &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: operation.Ptr(uint8(255))}, Red: r, Green: g, Blue: b}
	}
	fill := func(st gisxml.SimpleFillStyle, r, g, b uint8) *gisxml.SimpleFillSymbol {
		return &gisxml.SimpleFillSymbol{Style: st, FillSymbolFields: gisxml.FillSymbolFields{Color: rgb(r, g, b),
			Outline: &gisxml.SimpleLineSymbol{Style: gisxml.SLSDashDot, LineSymbolFields: gisxml.LineSymbolFields{Color: rgb(1, 2, 3), Width: 1.5}}}}
	}
	for name, fr := range map[string]gisxml.FeatureRenderer{
		"simple": &gisxml.SimpleRenderer{Symbol: fill(gisxml.SFSCross, 10, 20, 30), Label: operation.Ptr("All"), Description: operation.Ptr("every country")},
		"uniqueValue": &gisxml.UniqueValueRenderer{Field1: "NAME", Field2: operation.Ptr("ISO_N3"), FieldDelimiter: operation.Ptr("|"),
			DefaultSymbol: fill(gisxml.SFSSolid, 9, 9, 9), DefaultLabel: operation.Ptr("Others"),
			UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{
				{Value: "France|250", Label: operation.Ptr("France"), Description: operation.Ptr(""), Symbol: fill(gisxml.SFSHorizontal, 1, 1, 200)},
				{Value: "Spain|724", Label: operation.Ptr("Spain"), Description: operation.Ptr("sunny"), Symbol: fill(gisxml.SFSNull, 200, 1, 1)},
			}},
		"classBreaks": &gisxml.ClassBreaksRenderer{Field: "fid", MinimumValue: 1, ClassBreakInfos: gisxml.ArrayOfClassBreakInfo{
			{ClassMinimumValue: 1, ClassMaximumValue: 100, Label: operation.Ptr("small"), Description: operation.Ptr(""), Symbol: fill(gisxml.SFSSolid, 5, 5, 5)},
			{ClassMinimumValue: 100, ClassMaximumValue: 300, Label: operation.Ptr("large"), Description: operation.Ptr(""), Symbol: fill(gisxml.SFSDiagonalCross, 6, 6, 6)},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			first, err := rendererIn(fr, countries, "r")
			if err != nil {
				t.Fatal(err)
			}
			out := rendererOut(first, func(string) float64 { return 0 })
			if out.GisType() != fr.GisType() {
				t.Fatalf("described as %s", out.GisType())
			}
			second, err := rendererIn(out, countries, "r")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(first, second) {
				t.Errorf("round trip changed the renderer:\n%+v\n%+v", first, second)
			}
		})
	}
}
