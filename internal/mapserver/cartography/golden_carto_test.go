package cartography_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/golden"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/render/rendertest"
)

// checkGolden compares img with testdata/name.png (or rewrites it with MAPFARM_UPDATE_GOLDEN=1).
func checkGolden(t *testing.T, name string, img image.Image) {
	t.Helper()
	rendertest.CheckGolden(t, "cartography", name, img, golden.Update(), "MAPFARM_UPDATE_GOLDEN=1 go test ./internal/mapserver/cartography -run Golden")
}

// TestCartographyGolden draws the world map through ExportMapImage with each request-side
// renderer, selection, buffer, graphics and a rotation, and compares with golden images.
func TestCartographyGolden(t *testing.T) {
	f, _ := newCartoFixture(t)
	size, dpi := [2]int{320, 240}, 96.0
	europe := func(lds gisxml.ArrayOfLayerDescription, graphics gisxml.ArrayOfGraphicElement, rotation float64) image.Image {
		x0, y0 := mercator(-12, 34)
		x1, y1 := mercator(32, 60)
		md := mapservertest.MapDesc(x0, y0, x1, y1, rotation)
		md.LayerDescriptions, md.CustomGraphics = lds, graphics
		md.SelectionColor = &gisxml.RgbColor{Red: 255, Green: 0, Blue: 0}
		r := mapservertest.Must[gisxml.ExportMapImageResponse](f, "world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
			ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData},
				ImageDisplay: &gisxml.ImageDisplay{ImageWidth: size[0], ImageHeight: size[1], ImageDPI: dpi}}})
		return decodePNG(t, r.Result.ImageData)
	}
	uv := &gisxml.UniqueValueRenderer{Field1: "NAME", DefaultSymbol: fill(235, 235, 225), UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{
		{Value: "France", Symbol: fill(70, 110, 200)}, {Value: "Germany", Symbol: fill(230, 190, 60)},
		{Value: "Spain", Symbol: fill(210, 80, 60)}, {Value: "Italy", Symbol: fill(90, 170, 90)},
	}}
	cb := &gisxml.ClassBreaksRenderer{Field: "fid", MinimumValue: 0, ClassBreakInfos: gisxml.ArrayOfClassBreakInfo{
		{ClassMaximumValue: 60, Symbol: fill(254, 240, 217)}, {ClassMaximumValue: 120, Symbol: fill(253, 204, 138)},
		{ClassMaximumValue: 180, Symbol: fill(252, 141, 89)}, {ClassMaximumValue: 260, Symbol: fill(215, 48, 31)},
	}}
	outline := &gisxml.SimpleLineSymbol{Style: gisxml.SLSDash, LineSymbolFields: gisxml.LineSymbolFields{Color: &gisxml.RgbColor{Blue: 120}, Width: 1.5}}
	hatched := &gisxml.SimpleRenderer{Symbol: &gisxml.SimpleFillSymbol{Style: gisxml.SFSSolid,
		FillSymbolFields: gisxml.FillSymbolFields{Color: &gisxml.RgbColor{Red: 200, Green: 230, Blue: 200}, Outline: outline}}}
	france, italy := featureID(t, f, "France"), featureID(t, f, "Italy")
	px, py := mercator(2.35, 48.86)
	lx0, ly0 := mercator(-10, 40)
	lx1, ly1 := mercator(25, 55)
	graphics := gisxml.ArrayOfGraphicElement{
		&gisxml.LineElement{Line: &gisxml.PolylineN{PathArray: gisxml.ArrayOfPath{&gisxml.Path{PointArray: gisxml.ArrayOfPoint{
			&gisxml.PointN{X: lx0, Y: ly0}, &gisxml.PointN{X: lx1, Y: ly1}}}}},
			Symbol: &gisxml.SimpleLineSymbol{Style: gisxml.SLSSolid, LineSymbolFields: gisxml.LineSymbolFields{Color: &gisxml.RgbColor{Red: 200}, Width: 3}}},
		&gisxml.CircleElement{Rectangle: &gisxml.EnvelopeN{XMin: px - 3e5, YMin: py - 3e5, XMax: px + 3e5, YMax: py + 3e5},
			Symbol: &gisxml.SimpleFillSymbol{Style: gisxml.SFSSolid, FillSymbolFields: gisxml.FillSymbolFields{
				Color: &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: operation.Ptr(uint8(128))}, Red: 255, Green: 120}}}},
		&gisxml.MarkerElement{Point: &gisxml.PointN{X: px, Y: py}, Symbol: &gisxml.SimpleMarkerSymbol{Style: gisxml.SMSDiamond, Outline: true, OutlineSize: 1,
			OutlineColor: &gisxml.RgbColor{}, MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: &gisxml.RgbColor{Red: 255, Green: 255}, Size: 14}}},
		&gisxml.TextElement{Text: operation.Ptr("Paris"), TextGeometry: &gisxml.PointN{X: px, Y: py - 2.5e5},
			Symbol: &gisxml.TextSymbol{Size: 12, Color: &gisxml.RgbColor{Blue: 90}, HorizontalAlignment: gisxml.THACenter, VerticalAlignment: gisxml.TVATop}},
		&gisxml.ParagraphTextElement{Text: operation.Ptr("Custom graphics:\nline, circle, marker, text"), TextGeometry: &gisxml.EnvelopeN{XMin: lx0, YMin: ly1 - 1e5, XMax: lx1, YMax: ly1 + 4e5},
			Symbol: &gisxml.TextSymbol{Size: 9, Color: &gisxml.RgbColor{}}},
	}
	layer := func(ld *gisxml.LayerDescription) gisxml.ArrayOfLayerDescription {
		ld.LayerID, ld.Visible = 1, true
		return gisxml.ArrayOfLayerDescription{ld}
	}
	for _, tc := range []struct {
		name string
		img  func() image.Image
	}{
		{"carto_default", func() image.Image { return europe(nil, nil, 0) }},
		{"carto_unique_values", func() image.Image {
			return europe(layer(&gisxml.LayerDescription{ShowLabels: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: uv}}), nil, 0)
		}},
		{"carto_class_breaks", func() image.Image {
			return europe(layer(&gisxml.LayerDescription{DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: cb}}), nil, 0)
		}},
		{"carto_simple_dashed_transparent", func() image.Image {
			return europe(layer(&gisxml.LayerDescription{DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: hatched, Transparency: operation.Ptr(int16(40))}}), nil, 0)
		}},
		{"carto_selection", func() image.Image {
			return europe(layer(&gisxml.LayerDescription{ShowLabels: true, SelectionFeatures: gisxml.ArrayOfInt{france, italy}}), nil, 0)
		}},
		{"carto_selection_symbol_buffer", func() image.Image {
			return europe(layer(&gisxml.LayerDescription{SelectionFeatures: gisxml.ArrayOfInt{italy}, SetSelectionSymbol: true,
				SelectionSymbol: fill(120, 0, 160), ShowSelectionBuffer: true, SelectionBufferDistance: 150000}), nil, 0)
		}},
		{"carto_graphics", func() image.Image { return europe(nil, graphics, 0) }},
		{"carto_hatch_picture", func() image.Image {
			hatch := func(st gisxml.SimpleFillStyle, r, g, b uint8) *gisxml.SimpleFillSymbol {
				f := fill(r, g, b)
				f.Style = st
				f.Outline = &gisxml.SimpleLineSymbol{Style: gisxml.SLSSolid, LineSymbolFields: gisxml.LineSymbolFields{Color: &gisxml.RgbColor{}, Width: 0.75}}
				return f
			}
			styled := &gisxml.UniqueValueRenderer{Field1: "NAME", DefaultSymbol: hatch(gisxml.SFSSolid, 240, 240, 232), UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{
				{Value: "France", Symbol: hatch(gisxml.SFSCross, 40, 80, 200)},
				{Value: "Germany", Symbol: hatch(gisxml.SFSForwardDiagonal, 200, 60, 40)},
				{Value: "Italy", Symbol: hatch(gisxml.SFSHorizontal, 0, 120, 0)},
				{Value: "Spain", Symbol: &gisxml.PictureFillSymbol{Picture: checker(t), Width: operation.Ptr(6.0)}},
			}}
			marker := &gisxml.SimpleRenderer{Symbol: &gisxml.PictureMarkerSymbol{Picture: checker(t),
				CartographicMarkerSymbolFields: gisxml.CartographicMarkerSymbolFields{MarkerSymbolFields: gisxml.MarkerSymbolFields{Size: 10}, XScale: 1, YScale: 1}}}
			return europe(gisxml.ArrayOfLayerDescription{
				{LayerID: 0, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: marker}},
				{LayerID: 1, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: styled}},
			}, nil, 0)
		}},
		{"carto_dpi192", func() image.Image {
			size, dpi = [2]int{640, 480}, 192
			defer func() { size, dpi = [2]int{320, 240}, 96 }()
			return europe(layer(&gisxml.LayerDescription{ShowLabels: true, SelectionFeatures: gisxml.ArrayOfInt{france}}), graphics, 0)
		}},
		{"carto_rotated30", func() image.Image {
			return europe(layer(&gisxml.LayerDescription{ShowLabels: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: uv}}), graphics, 30)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc.name, tc.img()) })
	}
}

// checker is a 8×8 PNG of orange and transparent quarters, for picture symbols.
func checker(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			if (x < 4) == (y < 4) {
				img.Set(x, y, color.NRGBA{230, 120, 0, 255})
			}
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
