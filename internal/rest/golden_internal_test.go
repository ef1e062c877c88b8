package rest

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/golden"
)

// The renderers and symbols the sample services do not use are written byte for byte as pinned
// in testdata/golden/renderers.json: numbers (integral, fractional, NaN), absent and null
// members, strings that need escaping.
func TestGoldenRenderers(t *testing.T) {
	str := func(s string) *string { return &s }
	alpha := uint8(128)
	var tr int16 = 40
	odd := "a<b>&\"c\"\\\n\u2028\xff"
	line := &gisxml.SimpleLineSymbol{Style: "gisSLSDash", LineSymbolFields: gisxml.LineSymbolFields{Width: 1.5, Color: &gisxml.RgbColor{Red: 1, Green: 2, Blue: 3}}}
	marker := &gisxml.SimpleMarkerSymbol{Style: "gisSMSCircle", Outline: true, OutlineSize: math.NaN(), OutlineColor: &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: &alpha}},
		MarkerSymbolFields: gisxml.MarkerSymbolFields{Angle: 45, Size: 0.25, XOffset: -3, YOffset: math.Inf(1)}}
	fill := &gisxml.SimpleFillSymbol{Style: "gisSFSSolid", FillSymbolFields: gisxml.FillSymbolFields{Outline: line}}
	dds := []gisxml.LayerDrawingDescription{
		nil,
		&gisxml.FeatureLayerDrawingDescription{},
		&gisxml.FeatureLayerDrawingDescription{Transparency: &tr, FeatureRenderer: &gisxml.SimpleRenderer{Symbol: marker, Label: str(odd)}},
		&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.UniqueValueRenderer{Field1: "A", Field3: str(""), DefaultSymbol: fill, DefaultLabel: str("other"),
			UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{{Value: odd, Symbol: line, Description: str("d")}, {Value: "2"}}}},
		&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.UniqueValueRenderer{Field1: "B", Field2: str("C"), FieldDelimiter: str("|")}},
		&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.ClassBreaksRenderer{Field: "POP", MinimumValue: -0.5,
			ClassBreakInfos: gisxml.ArrayOfClassBreakInfo{{ClassMinimumValue: 0, ClassMaximumValue: 1e20, Symbol: fill, Label: str("big")}, {ClassMaximumValue: 2}}}},
	}
	infos := make([]*drawingInfoJSON, 0, len(dds))
	for _, dd := range dds {
		infos = append(infos, drawingInfo(dd))
	}
	got, err := encode(infos)
	if err != nil {
		t.Fatal(err)
	}
	CheckGolden(t, "renderers", append(got, '\n'))
}

// CheckGolden compares body with testdata/golden/<name>.json (MAPFARM_UPDATE_GOLDEN=1 rewrites
// it after a deliberate change). It is exported for the package's external tests.
func CheckGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name+".json"), body)
}
