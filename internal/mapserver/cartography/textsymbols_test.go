package cartography_test

import (
	"image/color"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// charMarker is a CharacterMarkerSymbol of code point c, size points, in rgb.
func charMarker(c int, size float64, r, g, b uint8) *gisxml.CharacterMarkerSymbol {
	return &gisxml.CharacterMarkerSymbol{CharacterIndex: c, FontName: operation.Ptr("ESRI Default Marker"),
		CartographicMarkerSymbolFields: gisxml.CartographicMarkerSymbolFields{
			MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: &gisxml.RgbColor{Red: r, Green: g, Blue: b}, Size: size}, XScale: 1, YScale: 1}}
}

// TestCharacterMarkersAndFontStyles draws the country points with a CharacterMarkerSymbol, the
// countries' labels bold italic from a LabelingDescription, and graphics with a character marker
// and a bold, italic, underlined TextSymbol; and checks the legend swatch and the faults.
func TestCharacterMarkersAndFontStyles(t *testing.T) {
	f, _ := newCartoFixture(t)
	orange := color.NRGBA{230, 120, 0, 255}
	star := charMarker(0x2605, 14, orange.R, orange.G, orange.B)
	labels := &gisxml.LabelingDescription{LabelClassDescriptions: gisxml.ArrayOfLabelClassDescription{{
		Symbol: &gisxml.SimpleTextSymbol{FontWeight: operation.Ptr(gisxml.FontWeightBold), FontStyle: operation.Ptr(gisxml.FontStyleItalic), Size: operation.Ptr(9.0),
			Color: &gisxml.RgbColor{Blue: 100}, OutlineColor: &gisxml.RgbColor{Red: 255, Green: 255, Blue: 255}},
	}}}
	px, py := mercator(2.35, 48.86)
	rotated := charMarker('A', 28, 0, 110, 0)
	rotated.Angle = 30
	graphics := gisxml.ArrayOfGraphicElement{
		&gisxml.MarkerElement{Point: &gisxml.PointN{X: px, Y: py}, Symbol: rotated},
		&gisxml.TextElement{Text: operation.Ptr("Bold italic underlined"), TextGeometry: &gisxml.PointN{X: px, Y: py - 4e5},
			Symbol: &gisxml.TextSymbol{Size: 11, Color: &gisxml.RgbColor{Red: 120}, HorizontalAlignment: gisxml.THACenter,
				FontWeight: operation.Ptr(700), FontItalic: operation.Ptr(true), FontUnderline: operation.Ptr(true)}},
	}
	x0, y0 := mercator(-12, 34)
	x1, y1 := mercator(32, 60)
	md := mapservertest.MapDesc(x0, y0, x1, y1, 0)
	md.LayerDescriptions = gisxml.ArrayOfLayerDescription{
		{LayerID: 0, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.SimpleRenderer{Symbol: star}}},
		{LayerID: 1, Visible: true, ShowLabels: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{LabelingDescription: labels}},
	}
	md.CustomGraphics = graphics
	r := mapservertest.Must[gisxml.ExportMapImageResponse](f, "world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
		ImageDescription: &gisxml.ImageDescription{ImageType: mimePNG32, ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 320, ImageHeight: 240, ImageDPI: 96}}})
	img := decodePNG(t, r.Result.ImageData)
	checkGolden(t, "carto_character_fonts", img)
	// Stars in the marker's colour: a few dozen countries, each star about a hundred pixels.
	if n := countNear(img, img.Bounds(), orange, 10); n < 500 {
		t.Errorf("%d pixels in the character marker's colour, want stars on the country points", n)
	}

	// The legend swatch of the request's renderer is the star.
	md.LayerDescriptions = md.LayerDescriptions[:1]
	lg := mapservertest.Must[gisxml.GetLegendInfo2Response](f, "world", "GetLegendInfo2", &gisxml.GetLegendInfo2{MapDescription: md, LayerIDs: gisxml.ArrayOfInt{0}, ImageType: mimePNG32,
		LegendPatch: &gisxml.MapServerLegendPatch{Width: 24, Height: 24, ImageDPI: 96}})
	sw := decodePNG(t, lg.Result[0].LegendGroups[0].LegendClasses[0].SymbolImage.ImageData)
	if c := pixel(sw, 12, 12); !close3(c, orange, 4) {
		t.Errorf("legend swatch centre %v, want the star's %v", c, orange)
	}
	if c := pixel(sw, 1, 1); c.A != 0 {
		t.Errorf("legend swatch corner %v, want transparent", c)
	}

	// Faults: no such character; a character marker for polygons.
	for _, tc := range []struct {
		ld   *gisxml.LayerDescription
		want string
	}{
		{&gisxml.LayerDescription{LayerID: 0, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{
			FeatureRenderer: &gisxml.SimpleRenderer{Symbol: charMarker(0xd800, 10, 0, 0, 0)}}}, "CharacterIndex 55296 is not a Unicode character"},
		{&gisxml.LayerDescription{LayerID: 1, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{
			FeatureRenderer: &gisxml.SimpleRenderer{Symbol: star}}}, "a characterMarker symbol cannot draw"},
	} {
		md := mapservertest.MapDesc(x0, y0, x1, y1, 0)
		md.LayerDescriptions = gisxml.ArrayOfLayerDescription{tc.ld}
		msg := f.ClientFault("world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
			ImageDescription: &gisxml.ImageDescription{ImageType: mimePNG32, ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 100, ImageHeight: 100, ImageDPI: 96}}})
		if !strings.Contains(msg, tc.want) {
			t.Errorf("fault %q does not say %q", msg, tc.want)
		}
	}
}
