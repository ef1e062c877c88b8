package cartography_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// mercator returns the Web Mercator coordinates of lon/lat degrees.
func mercator(lon, lat float64) (float64, float64) {
	const r = 6378137.0
	return lon * math.Pi / 180 * r, r * math.Log(math.Tan(math.Pi/4+lat*math.Pi/360))
}

// worldPx returns the pixel of a lon/lat point in the 400×200 image of (-2e7,-1e7,2e7,1e7).
func worldPx(lon, lat float64) (int, int) {
	x, y := mercator(lon, lat)
	return int((x + 2e7) / 4e7 * 400), int((1e7 - y) / 2e7 * 200)
}

func exportWorld(t *testing.T, f *mapservertest.Fixture, lds gisxml.ArrayOfLayerDescription, graphics gisxml.ArrayOfGraphicElement, format gisxml.ImageFormat) []byte {
	t.Helper()
	md := mapservertest.MapDesc(-2e7, -1e7, 2e7, 1e7, 0)
	md.LayerDescriptions, md.CustomGraphics = lds, graphics
	r := mapservertest.Must[gisxml.ExportMapImageResponse](f, "world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: format, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 400, ImageHeight: 200, ImageDPI: 96}}})
	return r.Result.ImageData
}

func countries(dd gisxml.LayerDrawingDescription) *gisxml.LayerDescription {
	return &gisxml.LayerDescription{LayerID: 1, Visible: true, DrawingDescription: dd}
}

func TestExportMapImageDrawingDescription(t *testing.T) {
	f, _ := newCartoFixture(t)
	bx, by := worldPx(-53, -10) // Brazil, ISO 76
	ax, ay := worldPx(134, -25) // Australia, ISO 36
	rx, ry := worldPx(95, 62)   // Russia, ISO 643
	red, green := color.NRGBA{220, 0, 0, 255}, color.NRGBA{0, 160, 0, 255}
	// Feature ids: Russia 76, Brazil 211, Australia 226.
	cb := &gisxml.ClassBreaksRenderer{Field: "fid", MinimumValue: 0, ClassBreakInfos: gisxml.ArrayOfClassBreakInfo{
		{ClassMaximumValue: 100, Symbol: fill(0, 160, 0)},
		{ClassMaximumValue: 250, Symbol: fill(220, 0, 0)},
	}}
	img := decodePNG(t, exportWorld(t, f, gisxml.ArrayOfLayerDescription{countries(&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: cb})}, nil, gisxml.ImagePNG32))
	for _, c := range []struct {
		name string
		x, y int
		want color.NRGBA
	}{{"Brazil", bx, by, red}, {"Australia", ax, ay, red}, {"Russia", rx, ry, green}} {
		if got := pixel(img, c.x, c.y); !close3(got, c.want, 2) {
			t.Errorf("class breaks: %s at (%d, %d) is %v, want %v", c.name, c.x, c.y, got, c.want)
		}
	}

	// Transparency 50: half the fill over the background.
	simple := &gisxml.SimpleRenderer{Symbol: fill(0, 0, 0)}
	img = decodePNG(t, exportWorld(t, f, gisxml.ArrayOfLayerDescription{countries(&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: simple, Transparency: operation.Ptr(int16(50))})}, nil, gisxml.ImagePNG32))
	if got := pixel(img, bx, by); !close3(got, color.NRGBA{99, 110, 120, 255}, 3) {
		t.Errorf("50%% transparent black over the background: %v", got)
	}

	// Selection of Brazil with a symbol, and a buffer around Australia's selection.
	brazil, australia := featureID(t, f, "Brazil"), featureID(t, f, "Australia")
	ld := &gisxml.LayerDescription{LayerID: 1, Visible: true, SelectionFeatures: gisxml.ArrayOfInt{brazil},
		SetSelectionSymbol: true, SelectionSymbol: fill(255, 0, 255)}
	img = decodePNG(t, exportWorld(t, f, gisxml.ArrayOfLayerDescription{ld}, nil, gisxml.ImagePNG32))
	if got := pixel(img, bx, by); !close3(got, color.NRGBA{255, 0, 255, 255}, 2) {
		t.Errorf("selected Brazil with a magenta symbol: %v", got)
	}
	// A selected feature the definition expression leaves out is not drawn.
	ld = &gisxml.LayerDescription{LayerID: 1, Visible: true, SelectionFeatures: gisxml.ArrayOfInt{brazil},
		SetSelectionSymbol: true, SelectionSymbol: fill(255, 0, 255), DefinitionExpression: "NAME <> 'Brazil'"}
	img = decodePNG(t, exportWorld(t, f, gisxml.ArrayOfLayerDescription{ld}, nil, gisxml.ImagePNG32))
	if got := pixel(img, bx, by); !close3(got, color.NRGBA{198, 219, 239, 255}, 2) {
		t.Errorf("Brazil selected but outside the definition expression: %v, want the background", got)
	}
	ld = &gisxml.LayerDescription{LayerID: 1, Visible: true, SelectionFeatures: gisxml.ArrayOfInt{australia},
		SelectionColor: &gisxml.RgbColor{Red: 255}, ShowSelectionBuffer: true, SelectionBufferDistance: 1.5e6,
		SelectionBufferSymbol: fill(255, 255, 0)}
	img = decodePNG(t, exportWorld(t, f, gisxml.ArrayOfLayerDescription{ld}, nil, gisxml.ImagePNG32))
	// 1,000 km south of Australia's south coast (~ -39°): sea within the buffer, painted yellow.
	sx, sy := worldPx(134, -45)
	if got := pixel(img, sx, sy); !close3(got, color.NRGBA{255, 255, 0, 255}, 2) {
		t.Errorf("selection buffer south of Australia: %v", got)
	}
	fx, fy := worldPx(-140, 0)
	if got := pixel(img, fx, fy); !close3(got, color.NRGBA{198, 219, 239, 255}, 2) {
		t.Errorf("Pacific outside the buffer: %v", got)
	}

	// Custom graphics: a green marker, a blue rectangle and a text in the Pacific.
	mx, my := mercator(-150, 10)
	px, py := worldPx(-150, 10)
	r0x, r0y := mercator(-130, -30)
	r1x, r1y := mercator(-110, -10)
	qx, qy := worldPx(-120, -20)
	graphics := gisxml.ArrayOfGraphicElement{
		&gisxml.MarkerElement{Point: &gisxml.PointN{X: mx, Y: my}, Symbol: &gisxml.SimpleMarkerSymbol{Style: gisxml.SMSSquare,
			MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: &gisxml.RgbColor{Green: 200}, Size: 12}}},
		&gisxml.RectangleElement{Rectangle: &gisxml.EnvelopeN{XMin: r0x, YMin: r0y, XMax: r1x, YMax: r1y}, Symbol: fill(0, 0, 255)},
		&gisxml.TextElement{Text: operation.Ptr("Pacific"), TextGeometry: &gisxml.PointN{X: 0, Y: -8e6},
			Symbol: &gisxml.TextSymbol{Size: 14, Color: &gisxml.RgbColor{}, HorizontalAlignment: gisxml.THACenter, VerticalAlignment: gisxml.TVACenter}},
	}
	img = decodePNG(t, exportWorld(t, f, nil, graphics, gisxml.ImagePNG32))
	if got := pixel(img, px, py); !close3(got, color.NRGBA{0, 200, 0, 255}, 2) {
		t.Errorf("marker graphic: %v", got)
	}
	if got := pixel(img, qx, qy); !close3(got, color.NRGBA{0, 0, 255, 255}, 2) {
		t.Errorf("rectangle graphic: %v", got)
	}
	dark := 0
	for y := 170; y < 190; y++ {
		for x := 170; x < 230; x++ {
			if c := pixel(img, x, y); c.R < 60 && c.G < 60 && c.B < 60 {
				dark++
			}
		}
	}
	if dark < 20 {
		t.Errorf("text graphic: %d dark pixels around (200, 180)", dark)
	}

	// Two label classes with where clauses: Brazil in blue, Australia in red, nothing else.
	lds := gisxml.ArrayOfLayerDescription{{LayerID: 1, Visible: true, ShowLabels: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{
		LabelingDescription: &gisxml.LabelingDescription{LabelClassDescriptions: gisxml.ArrayOfLabelClassDescription{
			{LabelExpression: operation.Ptr("[NAME]"), WhereClause: operation.Ptr("NAME = 'Brazil'"), Symbol: &gisxml.SimpleTextSymbol{Color: &gisxml.RgbColor{Blue: 255}, Size: operation.Ptr(12.0)}},
			{LabelExpression: operation.Ptr("[NAME]"), WhereClause: operation.Ptr("NAME = 'Australia'"), Symbol: &gisxml.SimpleTextSymbol{Color: &gisxml.RgbColor{Red: 255}, Size: operation.Ptr(12.0)}},
		}}}}}
	img = decodePNG(t, exportWorld(t, f, lds, nil, gisxml.ImagePNG32))
	count := func(r image.Rectangle, c color.NRGBA) int { return countNear(img, r, c, 60) }
	blue, redText := color.NRGBA{0, 0, 255, 255}, color.NRGBA{255, 0, 0, 255}
	if n := count(image.Rect(bx-40, by-20, bx+40, by+20), blue); n < 15 {
		t.Errorf("label class 1: %d blue label pixels over Brazil", n)
	}
	if n := count(image.Rect(ax-40, ay-20, ax+40, ay+20), redText); n < 15 {
		t.Errorf("label class 2: %d red label pixels over Australia", n)
	}
	if n := count(img.Bounds(), blue) + count(img.Bounds(), redText); n > 400 {
		t.Errorf("%d label pixels in all: other countries are labelled too", n)
	}

	// Bad drawing descriptions are client faults.
	for _, tc := range []struct {
		dd   gisxml.LayerDrawingDescription
		want string
	}{
		{&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.ClassBreaksRenderer{Field: "NOPE"}}, `"NOPE" is not a field`},
		{&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.ClassBreaksRenderer{Field: "ISO_N3"}}, "not numeric"},
		{&gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.SimpleRenderer{Symbol: &gisxml.SimpleLineSymbol{}}}, "cannot draw"},
		{&gisxml.FeatureLayerDrawingDescription{Transparency: operation.Ptr(int16(120))}, "Transparency 120"},
		{&gisxml.FeatureLayerDrawingDescription{LabelingDescription: &gisxml.LabelingDescription{LabelClassDescriptions: gisxml.ArrayOfLabelClassDescription{
			{WhereClause: operation.Ptr("NOPE = 1")}}}}, "WhereClause"},
	} {
		md := mapservertest.MapDesc(-2e7, -1e7, 2e7, 1e7, 0)
		md.LayerDescriptions = gisxml.ArrayOfLayerDescription{countries(tc.dd)}
		msg := f.ClientFault("world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
			ImageDescription: &gisxml.ImageDescription{ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 40, ImageHeight: 20, ImageDPI: 96}}})
		if !strings.Contains(msg, tc.want) {
			t.Errorf("fault %q does not say %q", msg, tc.want)
		}
	}
}

// featureID is the id of a country in the countries layer (layer 1) of the world service.
func featureID(t *testing.T, f *mapservertest.Fixture, name string) int {
	t.Helper()
	return int(namedFeature(t, f, "world", 1, name).ID)
}

// namedFeature is the feature whose NAME is name in a layer of the map Layers of a service.
func namedFeature(t *testing.T, f *mapservertest.Fixture, service string, layer int, name string) *feature.Feature {
	t.Helper()
	svc, _ := f.Cat.Service(service)
	m, _ := svc.Map("Layers")
	l, _ := m.Layer(layer)
	idx := l.Data.Info().FieldIndex("NAME")
	var found []*feature.Feature
	_ = l.Data.Scan(context.Background(), &feature.Query{}, func(ft *feature.Feature) error { found = append(found, ft); return nil })
	for _, ft := range found {
		if ft.Values[idx] == name {
			return ft
		}
	}
	t.Fatalf("no feature named %s in layer %d of %s", name, layer, service)
	return nil
}

func TestExportMapImageFormats(t *testing.T) {
	f, _ := newCartoFixture(t)
	lds := gisxml.ArrayOfLayerDescription{{LayerID: 1, Visible: true, ShowLabels: true}}
	svg := exportWorld(t, f, lds, nil, gisxml.ImageSVG)
	if !bytes.HasPrefix(svg, []byte("<?xml")) || !bytes.Contains(svg, []byte(`width="400px" height="200px"`)) || !bytes.Contains(svg, []byte(">Brazil</text>")) {
		t.Errorf("SVG: %.200s", svg)
	}
	pdf := exportWorld(t, f, lds, nil, gisxml.ImagePDF)
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4")) || !bytes.Contains(pdf, []byte("/MediaBox [0 0 300 150]")) {
		t.Errorf("PDF: %.200s", pdf)
	}
	for _, ff := range []gisxml.ImageFormat{gisxml.ImageBMP, gisxml.ImageDIB, gisxml.ImageTIFF, gisxml.ImageGIF, gisxml.ImageJPG, gisxml.ImagePNG, gisxml.ImagePNG24, gisxml.ImageJPGPNG} {
		if b := exportWorld(t, f, lds, nil, ff); len(b) < 100 {
			t.Errorf("%s: %d bytes", ff, len(b))
		}
	}
	// JPGPNG: JPEG for an opaque map, PNG when the background is transparent.
	if b := exportWorld(t, f, lds, nil, gisxml.ImageJPGPNG); !bytes.HasPrefix(b, []byte("\xff\xd8")) {
		t.Errorf("opaque JPGPNG is not a JPEG: % x", b[:4])
	}
	md := mapservertest.MapDesc(-2e7, -1e7, 2e7, 1e7, 0)
	md.BackgroundSymbol = &gisxml.SimpleFillSymbol{Style: gisxml.SFSNull, FillSymbolFields: gisxml.FillSymbolFields{Color: &gisxml.RgbColor{}}}
	r := mapservertest.Must[gisxml.ExportMapImageResponse](f, "world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImageJPGPNG, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 400, ImageHeight: 200, ImageDPI: 96}}})
	px, py := worldPx(-140, 0)
	if img := decodePNG(t, r.Result.ImageData); pixel(img, px, py).A != 0 || *r.Result.ImageType != "image/png" {
		t.Errorf("transparent JPGPNG: %s, Pacific pixel %v", *r.Result.ImageType, pixel(img, px, py))
	}
	for _, ff := range []gisxml.ImageFormat{gisxml.ImageEMF, gisxml.ImagePS, gisxml.ImageAI} {
		md := mapservertest.MapDesc(-2e7, -1e7, 2e7, 1e7, 0)
		msg := f.ClientFault("world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
			ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: ff}, ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 40, ImageHeight: 20, ImageDPI: 96}}})
		if !strings.Contains(msg, "not supported") {
			t.Errorf("%s: %q", ff, msg)
		}
	}
}
