package cartography_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func pixel(img image.Image, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

func close3(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) <= tol && d(a.G, b.G) <= tol && d(a.B, b.B) <= tol && d(a.A, b.A) <= tol
}

// countNear counts the pixels of img inside r whose colour is within tol of c.
func countNear(img image.Image, r image.Rectangle, c color.NRGBA, tol int) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if close3(pixel(img, x, y), c, tol) {
				n++
			}
		}
	}
	return n
}

var mimePNG32 = &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData}

func TestGetLegendInfo(t *testing.T) {
	f, _ := newCartoFixture(t)
	r := mapservertest.Must[gisxml.GetLegendInfoResponse](f, "world", "GetLegendInfo", &gisxml.GetLegendInfo{MapName: "Layers", ImageType: mimePNG32,
		LegendPatch: &gisxml.MapServerLegendPatch{Width: 24, Height: 16, ImageDPI: 96}})
	if len(r.Result) != 2 {
		t.Fatalf("%d legend infos for 2 layers", len(r.Result))
	}
	for _, tc := range []struct {
		layer int
		label string
		want  color.NRGBA
	}{{0, "Country", color.NRGBA{178, 34, 34, 255}}, {1, "Country", color.NRGBA{232, 228, 216, 255}}} {
		info := r.Result[tc.layer]
		if info.LayerID != tc.layer || len(info.LegendGroups) != 1 || len(info.LegendGroups[0].LegendClasses) != 1 {
			t.Fatalf("layer %d: %+v", tc.layer, info)
		}
		cl := info.LegendGroups[0].LegendClasses[0]
		if cl.Label != tc.label {
			t.Errorf("layer %d label %q", tc.layer, cl.Label)
		}
		img := decodePNG(t, cl.SymbolImage.ImageData)
		if img.Bounds().Dx() != 24 || img.Bounds().Dy() != 16 || cl.SymbolImage.ImageWidth != 24 {
			t.Errorf("layer %d swatch %v", tc.layer, img.Bounds())
		}
		if got := pixel(img, 12, 8); !close3(got, tc.want, 2) {
			t.Errorf("layer %d swatch centre %v, want %v", tc.layer, got, tc.want)
		}
		if got := pixel(img, 0, 0); got.A != 0 {
			t.Errorf("layer %d swatch corner %v, want transparent", tc.layer, got)
		}
	}

	// GetLegendInfo2: the request's unique value renderer gives the classes, in order, drawn in
	// the request's colours; URL answers.
	uv := &gisxml.UniqueValueRenderer{Field1: "NAME", DefaultSymbol: fill(0, 0, 255), DefaultLabel: operation.Ptr("Others"),
		UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{
			{Value: "France", Label: operation.Ptr("France"), Symbol: fill(0, 0, 200)},
			{Value: "Spain", Symbol: fill(200, 0, 0)},
		}}
	md := mapservertest.MapDesc(-2e7, -1e7, 2e7, 1e7, 0)
	md.LayerDescriptions = gisxml.ArrayOfLayerDescription{{LayerID: 1, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: uv}}}
	r2 := mapservertest.Must[gisxml.GetLegendInfo2Response](f, "world", "GetLegendInfo2", &gisxml.GetLegendInfo2{MapDescription: md, LayerIDs: gisxml.ArrayOfInt{1}, ImageType: mimePNG32})
	if len(r2.Result) != 1 {
		t.Fatalf("%d infos", len(r2.Result))
	}
	g := r2.Result[0].LegendGroups[0]
	var labels []string
	for _, c := range g.LegendClasses {
		labels = append(labels, c.Label)
	}
	if g.Heading != "NAME" || strings.Join(labels, "|") != "France|Spain|Others" {
		t.Errorf("heading %q, labels %q", g.Heading, labels)
	}
	if got := pixel(decodePNG(t, g.LegendClasses[1].SymbolImage.ImageData), 10, 10); !close3(got, color.NRGBA{200, 0, 0, 255}, 2) {
		t.Errorf("Spain swatch %v", got)
	}
	// An area patch shape: a triangle, fitted into the swatch; the top corners stay empty.
	tri := &gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{&gisxml.Ring{Path: gisxml.Path{PointArray: gisxml.ArrayOfPoint{
		&gisxml.PointN{X: 0, Y: 0}, &gisxml.PointN{X: 10, Y: 0}, &gisxml.PointN{X: 5, Y: 10}, &gisxml.PointN{X: 0, Y: 0}}}}}}
	shaped := mapservertest.Must[gisxml.GetLegendInfoResponse](f, "world", "GetLegendInfo", &gisxml.GetLegendInfo{MapName: "Layers", LayerIDs: gisxml.ArrayOfInt{1}, ImageType: mimePNG32,
		LegendPatch: &gisxml.MapServerLegendPatch{Width: 30, Height: 30, ImageDPI: 96, AreaPatch: &gisxml.AreaPatch{Patch: gisxml.Patch{Geometry: tri}}}})
	timg := decodePNG(t, shaped.Result[0].LegendGroups[0].LegendClasses[0].SymbolImage.ImageData)
	if top, bottom := pixel(timg, 4, 4), pixel(timg, 15, 24); top.A != 0 || !close3(bottom, color.NRGBA{232, 228, 216, 255}, 2) {
		t.Errorf("triangle patch: top left %v, bottom middle %v", top, bottom)
	}
	url := mapservertest.Must[gisxml.GetLegendInfoResponse](f, "world", "GetLegendInfo", &gisxml.GetLegendInfo{MapName: "Layers", LayerIDs: gisxml.ArrayOfInt{0}})
	if img := url.Result[0].LegendGroups[0].LegendClasses[0].SymbolImage; !strings.HasPrefix(img.ImageURL, "http://127.0.0.1/outputs/") || img.ImageWidth != 20 {
		t.Errorf("URL swatch %+v", img)
	}
	if msg := f.ClientFault("world", "GetLegendInfo", &gisxml.GetLegendInfo{MapName: "Layers", LayerIDs: gisxml.ArrayOfInt{7}}); !strings.Contains(msg, "no layer 7") {
		t.Errorf("fault %q", msg)
	}
}

func fill(r, g, b uint8) *gisxml.SimpleFillSymbol {
	return &gisxml.SimpleFillSymbol{Style: gisxml.SFSSolid, FillSymbolFields: gisxml.FillSymbolFields{Color: &gisxml.RgbColor{Red: r, Green: g, Blue: b}}}
}

func TestGetDefaultLayerDrawingDescriptions(t *testing.T) {
	f, _ := newCartoFixture(t)
	r := mapservertest.Must[gisxml.GetDefaultLayerDrawingDescriptionsResponse](f, "world", "GetDefaultLayerDrawingDescriptions", &gisxml.GetDefaultLayerDrawingDescriptions{MapName: "Layers"})
	if len(r.Result) != 2 {
		t.Fatalf("%d descriptions", len(r.Result))
	}
	countries, ok := r.Result[1].(*gisxml.FeatureLayerDrawingDescription)
	if !ok {
		t.Fatalf("%T", r.Result[1])
	}
	sr, ok := countries.FeatureRenderer.(*gisxml.SimpleRenderer)
	if !ok {
		t.Fatalf("renderer %T", countries.FeatureRenderer)
	}
	fs, ok := sr.Symbol.(*gisxml.SimpleFillSymbol)
	if !ok {
		t.Fatalf("symbol %T", sr.Symbol)
	}
	if c := fs.Color.(*gisxml.RgbColor); c.Red != 232 || c.Green != 228 || c.Blue != 216 || fs.Style != gisxml.SFSSolid {
		t.Errorf("fill %+v", fs)
	}
	if o := fs.Outline.(*gisxml.SimpleLineSymbol); o.Width != 0.75 {
		t.Errorf("outline %+v", o)
	}
	lc := countries.LabelingDescription.LabelClassDescriptions[0]
	if *lc.LabelExpression != "[NAME]" || *lc.LabelExpressionType != gisxml.LabelExpressionSimple || *lc.Symbol.Size != 8 {
		t.Errorf("label class %+v", lc)
	}
	if _, ok := r.Result[0].(*gisxml.FeatureLayerDrawingDescription).FeatureRenderer.(*gisxml.SimpleRenderer).Symbol.(*gisxml.SimpleMarkerSymbol); !ok {
		t.Error("points are not drawn with a SimpleMarkerSymbol")
	}
	vb := mapservertest.Must[gisxml.GetDefaultLayerDrawingDescriptionsResponse](f, "world", "GetDefaultLayerDrawingDescriptions", &gisxml.GetDefaultLayerDrawingDescriptions{
		MapName: "Layers", LayerIDs: gisxml.ArrayOfInt{1}, SymbolOutputOptions: &gisxml.ServerSymbolOutputOptions{ConvertLabelExpressions: operation.Ptr(false)}})
	if lc := vb.Result[0].(*gisxml.FeatureLayerDrawingDescription).LabelingDescription.LabelClassDescriptions[0]; *lc.LabelExpressionType != gisxml.LabelExpressionVBScript {
		t.Errorf("ConvertLabelExpressions false: %v", *lc.LabelExpressionType)
	}
}
