package cartography_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// newSymbolFixture is newCartoFixture on the sample services changed by edit (nil: as they are),
// with the server's parameters changed by params (nil: none).
func newSymbolFixture(t *testing.T, edit func(*servicedef.Config), params func(*mapserver.Params)) (*mapservertest.Fixture, *localFarm) {
	t.Helper()
	cfg, err := servicedef.Load(filepath.Join("..", "..", "..", "services", "services.yaml"), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	lf := &localFarm{LocalFarm: mapservertest.NewLocalFarm(t, c)}
	n := 0
	p := mapserver.Params{Catalog: c, Exporter: lf,
		Limits:    mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096},
		NewID:     func() string { n++; return "req" + strconv.Itoa(n) },
		OutputURL: func(key string) string { return "http://127.0.0.1/" + key },
	}
	if params != nil {
		params(&p)
	}
	return &mapservertest.Fixture{T: t, Cat: c, Srv: mapserver.New(p)}, lf
}

// withReferenceScale sets the reference scale of the first map of the world and world_geographic
// services.
func withReferenceScale(ref float64) func(*servicedef.Config) {
	return func(cfg *servicedef.Config) {
		for _, s := range cfg.Services {
			if s.Name == "world" || s.Name == "world_geographic" {
				s.Maps[0].ReferenceScale = ref
			}
		}
	}
}

// exportImage runs ExportMapImage of md at w×h pixels and dpi in format, and returns the bytes.
func exportImage(f *mapservertest.Fixture, service string, md *gisxml.MapDescription, w, h int, dpi float64, format gisxml.ImageFormat) *gisxml.MapImage {
	f.T.Helper()
	r := mapservertest.Must[gisxml.ExportMapImageResponse](f, service, "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: format, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: w, ImageHeight: h, ImageDPI: dpi}}})
	return r.Result
}

// inkBox returns the bounding box of the pixels of img near colour c.
func inkBox(img image.Image, c color.NRGBA, tol int) image.Rectangle {
	var box image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if close3(pixel(img, x, y), c, tol) {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// rasterizeDoc turns an SVG or PDF document into an image with rsvg-convert or pdftoppm (at dpi);
// the test is skipped when the tool is missing, unless MAPFARM_REQUIRE_SERVICES is set.
func rasterizeDoc(t *testing.T, ext string, doc []byte, dpi float64) image.Image {
	t.Helper()
	tool := map[string]string{"svg": "rsvg-convert", "pdf": "pdftoppm"}[ext]
	if _, err := exec.LookPath(tool); err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatalf("%s not installed (apt-get install librsvg2-bin poppler-utils)", tool)
		}
		t.Skipf("%s not installed (apt-get install librsvg2-bin poppler-utils)", tool)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "doc."+ext), filepath.Join(dir, "out.png")
	if err := os.WriteFile(in, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, "-o", out, in)
	if ext == "pdf" {
		cmd = exec.Command(tool, "-png", "-r", strconv.FormatFloat(dpi, 'f', -1, 64), "-singlefile", in, filepath.Join(dir, "out"))
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return decodePNG(t, b)
}

// countryPoint returns the point of a country in the points layer (layer 0) of a service.
func countryPoint(t *testing.T, f *mapservertest.Fixture, service, name string) orb.Point {
	t.Helper()
	return namedFeature(t, f, service, 0, name).Geom.(orb.Point)
}

// blueSquares draws the points layer alone as 12 pt blue squares.
func blueSquares(scaleSymbols bool, dd *bool) gisxml.ArrayOfLayerDescription {
	sq := &gisxml.SimpleRenderer{Symbol: &gisxml.SimpleMarkerSymbol{Style: gisxml.SMSSquare,
		MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: &gisxml.RgbColor{Blue: 255}, Size: 12}}}
	return gisxml.ArrayOfLayerDescription{
		{LayerID: 0, Visible: true, ScaleSymbols: scaleSymbols, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: sq, ScaleSymbols: dd}},
		{LayerID: 1, Visible: false},
	}
}

// TestReferenceScale: with a reference scale, symbols are their size at that scale and scale with
// it: a 12 pt square is 16 px wide at 96 DPI at the reference scale, 32 px at half the scale
// denominator, 8 px at twice it; ScaleSymbols false (in the LayerDescription or the drawing
// description) keeps 16 px; the geographic map's scale counts degrees as metres. GetServerInfo and
// GetDefaultLayerDrawingDescriptions report CanScaleSymbols and ScaleSymbols.
func TestReferenceScale(t *testing.T) {
	const ref = 2e6
	f, _ := newSymbolFixture(t, withReferenceScale(ref), nil)
	blue := color.NRGBA{0, 0, 255, 255}
	for _, service := range []string{"world", "world_geographic"} {
		p := countryPoint(t, f, service, "Iceland")
		// 200 px at 96 DPI are 200/96 inch; at 1:ref they cover ref × 200/96 × 0.0254 metres.
		half := ref * 200 / 96 * 0.0254 / 2
		if service == "world_geographic" {
			half /= 111319.49079327357
		}
		off := false
		for _, c := range []struct {
			name    string
			zoom    float64 // extent divided by
			lds     gisxml.ArrayOfLayerDescription
			widthPx float64
		}{
			{"at the reference scale", 1, blueSquares(true, nil), 16},
			{"zoomed in twice", 2, blueSquares(true, nil), 32},
			{"zoomed out twice", 0.5, blueSquares(true, nil), 8},
			{"zoomed in, ScaleSymbols false", 2, blueSquares(false, nil), 16},
			{"zoomed in, drawing description ScaleSymbols false", 2, blueSquares(true, &off), 16},
		} {
			h := half / c.zoom
			md := mapservertest.MapDesc(p[0]-h, p[1]-h, p[0]+h, p[1]+h, 0)
			md.LayerDescriptions = c.lds
			res := exportImage(f, service, md, 200, 200, 96, gisxml.ImagePNG32)
			if c.zoom == 1 && math.Abs(res.MapScale-ref) > 1 {
				t.Errorf("%s: map scale %v, want the reference scale %v", service, res.MapScale, ref)
			}
			box := inkBox(decodePNG(t, res.ImageData), blue, 30)
			if w := float64(box.Dx()); math.Abs(w-c.widthPx) > 1.5 {
				t.Errorf("%s %s: square %v px wide (%v), want %v", service, c.name, w, box, c.widthPx)
			}
		}
	}

	info := mapservertest.Must[gisxml.GetServerInfoResponse](f, "world", "GetServerInfo", &gisxml.GetServerInfo{MapName: "Layers"}).Result
	for _, li := range info.MapLayerInfos {
		if !li.CanScaleSymbols {
			t.Errorf("layer %d: CanScaleSymbols false with a reference scale", li.LayerID)
		}
	}
	for _, ld := range info.DefaultMapDescription.LayerDescriptions {
		if !ld.ScaleSymbols {
			t.Errorf("default description of layer %d: ScaleSymbols false", ld.LayerID)
		}
	}
	dds := mapservertest.Must[gisxml.GetDefaultLayerDrawingDescriptionsResponse](f, "world", "GetDefaultLayerDrawingDescriptions", &gisxml.GetDefaultLayerDrawingDescriptions{MapName: "Layers"})
	if d := dds.Result[0].(*gisxml.FeatureLayerDrawingDescription); d.ScaleSymbols == nil || !*d.ScaleSymbols {
		t.Errorf("default drawing description ScaleSymbols %v", d.ScaleSymbols)
	}

	// Without a reference scale nothing scales and the descriptions say so.
	plain, _ := newSymbolFixture(t, nil, nil)
	info = mapservertest.Must[gisxml.GetServerInfoResponse](plain, "world", "GetServerInfo", &gisxml.GetServerInfo{MapName: "Layers"}).Result
	if info.MapLayerInfos[0].CanScaleSymbols || info.DefaultMapDescription.LayerDescriptions[0].ScaleSymbols {
		t.Errorf("no reference scale: CanScaleSymbols %v, ScaleSymbols %v", info.MapLayerInfos[0].CanScaleSymbols, info.DefaultMapDescription.LayerDescriptions[0].ScaleSymbols)
	}
	p := countryPoint(t, plain, "world", "Iceland")
	h := ref * 200 / 96 * 0.0254 / 4
	md := mapservertest.MapDesc(p[0]-h, p[1]-h, p[0]+h, p[1]+h, 0)
	md.LayerDescriptions = blueSquares(true, nil)
	if w := inkBox(decodePNG(t, exportImage(plain, "world", md, 200, 200, 96, gisxml.ImagePNG32).ImageData), blue, 30).Dx(); w < 15 || w > 17 {
		t.Errorf("no reference scale, ScaleSymbols true: square %d px wide, want 16", w)
	}
}

// TestReferenceScaleGolden draws Western Europe with labels, outlines, hatches and markers at
// its reference scale and zoomed in twice, where every symbol and label is twice as large.
func TestReferenceScaleGolden(t *testing.T) {
	x0, y0 := mercator(-12, 34)
	x1, y1 := mercator(32, 60)
	// The scale of that extent in 320 × 240 px at 96 DPI, grown to the image's aspect ratio.
	ref := max(x1-x0, (y1-y0)*320/240) / 320 * 96 / 0.0254
	f, _ := newSymbolFixture(t, withReferenceScale(ref), nil)
	styled := &gisxml.UniqueValueRenderer{Field1: "NAME", DefaultSymbol: fill(240, 240, 232), UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{
		{Value: "France", Symbol: &gisxml.SimpleFillSymbol{Style: gisxml.SFSForwardDiagonal, FillSymbolFields: gisxml.FillSymbolFields{Color: &gisxml.RgbColor{Red: 40, Green: 80, Blue: 200},
			Outline: &gisxml.SimpleLineSymbol{Style: gisxml.SLSDash, LineSymbolFields: gisxml.LineSymbolFields{Color: &gisxml.RgbColor{Blue: 120}, Width: 1}}}}},
	}}
	points := &gisxml.SimpleRenderer{Symbol: &gisxml.SimpleMarkerSymbol{Style: gisxml.SMSCircle, Outline: true, OutlineSize: 1, OutlineColor: &gisxml.RgbColor{},
		MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: &gisxml.RgbColor{Red: 220, Green: 40}, Size: 5}}}
	lds := gisxml.ArrayOfLayerDescription{
		{LayerID: 0, Visible: true, ScaleSymbols: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: points}},
		{LayerID: 1, Visible: true, ShowLabels: true, ScaleSymbols: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: styled}},
	}
	cx, cy := (x0+x1)/2, (y0+y1)/2
	for _, c := range []struct {
		name string
		zoom float64
	}{{"carto_refscale_1x", 1}, {"carto_refscale_2x", 2}} {
		hw, hh := (x1-x0)/2/c.zoom, (y1-y0)/2/c.zoom
		md := mapservertest.MapDesc(cx-hw, cy-hh, cx+hw, cy+hh, 0)
		md.LayerDescriptions = lds
		res := exportImage(f, "world", md, 320, 240, 96, gisxml.ImagePNG32)
		if want := ref / c.zoom; math.Abs(res.MapScale-want) > 1 {
			t.Errorf("%s: scale %v, want %v", c.name, res.MapScale, want)
		}
		checkGolden(t, c.name, decodePNG(t, res.ImageData))
	}
}

// TestDPISymbolSizes: the same map at 96 and 192 DPI (twice the pixels) is the same map at twice
// the size: a 15 pt square marker graphic is 20 and 40 px wide, a picture marker graphic 15 pt on
// its side likewise, in PNG, and in SVG and PDF read back by rsvg-convert and pdftoppm.
func TestDPISymbolSizes(t *testing.T) {
	f, _ := newCartoFixture(t)
	x, y := mercator(0, 0)
	green := pngOf(t, solid(6, 6, color.NRGBA{0, 200, 0, 255}))
	graphics := gisxml.ArrayOfGraphicElement{
		&gisxml.MarkerElement{Point: &gisxml.PointN{X: x - 2e6, Y: y}, Symbol: &gisxml.SimpleMarkerSymbol{Style: gisxml.SMSSquare,
			MarkerSymbolFields: gisxml.MarkerSymbolFields{Color: &gisxml.RgbColor{Blue: 255}, Size: 15}}},
		&gisxml.MarkerElement{Point: &gisxml.PointN{X: x + 2e6, Y: y}, Symbol: &gisxml.PictureMarkerSymbol{Picture: green,
			CartographicMarkerSymbolFields: gisxml.CartographicMarkerSymbolFields{MarkerSymbolFields: gisxml.MarkerSymbolFields{Size: 15}, XScale: 1, YScale: 1}}},
	}
	for _, dpi := range []float64{96, 192} {
		size := int(dpi / 96 * 200)
		md := mapservertest.MapDesc(x-5e6, y-5e6, x+5e6, y+5e6, 0)
		md.LayerDescriptions = gisxml.ArrayOfLayerDescription{{LayerID: 0, Visible: false}, {LayerID: 1, Visible: false}}
		md.CustomGraphics = graphics
		want := dpi * 15 / 72
		for _, format := range []gisxml.ImageFormat{gisxml.ImagePNG32, gisxml.ImageSVG, gisxml.ImagePDF} {
			res := exportImage(f, "world", md, size, size, dpi, format)
			var img image.Image
			switch format {
			case gisxml.ImageSVG:
				img = rasterizeDoc(t, "svg", res.ImageData, dpi)
			case gisxml.ImagePDF:
				img = rasterizeDoc(t, "pdf", res.ImageData, dpi)
			default:
				img = decodePNG(t, res.ImageData)
			}
			if b := img.Bounds(); b.Dx() != size {
				t.Errorf("%s at %v DPI: %v, want %d px wide", format, dpi, b, size)
			}
			for _, m := range []struct {
				name string
				c    color.NRGBA
			}{{"square", color.NRGBA{0, 0, 255, 255}}, {"picture", color.NRGBA{0, 200, 0, 255}}} {
				box := inkBox(img, m.c, 40)
				if math.Abs(float64(box.Dx())-want) > 1.5 || math.Abs(float64(box.Dy())-want) > 1.5 {
					t.Errorf("%s at %v DPI: %s marker %v, want %.0f px a side", format, dpi, m.name, box.Size(), want)
				}
			}
		}
	}
}

func solid(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func pngOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
