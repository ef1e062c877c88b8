package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"
	"strings"
	"testing"
)

// exportResult is the part of an ExportMapImageResponse the tests read.
type exportResult struct {
	ImageData string  `xml:"Body>ExportMapImageResponse>Result>ImageData"`
	MapScale  float64 `xml:"Body>ExportMapImageResponse>Result>MapScale"`
	XMin      float64 `xml:"Body>ExportMapImageResponse>Result>Extent>XMin"`
	YMin      float64 `xml:"Body>ExportMapImageResponse>Result>Extent>YMin"`
	XMax      float64 `xml:"Body>ExportMapImageResponse>Result>Extent>XMax"`
	YMax      float64 `xml:"Body>ExportMapImageResponse>Result>Extent>YMax"`
	Visible   []int   `xml:"Body>ExportMapImageResponse>Result>VisibleLayerIDs>Int"`
	Fault     string  `xml:"Body>Fault>faultstring"`
}

// pixelOf converts a map point to a pixel of an unrotated image of the result's extent.
func (r exportResult) pixelOf(x, y float64, w, h int) (int, int) {
	return int((x - r.XMin) / (r.XMax - r.XMin) * float64(w)), int((r.YMax - y) / (r.YMax - r.YMin) * float64(h))
}

func exportMap(t *testing.T, endpoint, mapDescription, imageType string, w, h int, dpi float64) (exportResult, image.Image) {
	t.Helper()
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:gis="` + namespace + `"><soap:Body><gis:ExportMapImage>` +
		`<MapDescription><Name>Layers</Name>` + mapDescription + `</MapDescription>` +
		`<ImageDescription><ImageType>` + imageType + `</ImageType>` +
		fmt.Sprintf(`<ImageDisplay><ImageHeight>%d</ImageHeight><ImageWidth>%d</ImageWidth><ImageDPI>%g</ImageDPI></ImageDisplay>`, h, w, dpi) +
		`</ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`
	resp, err := http.Post(endpoint, "text/xml; charset=utf-8", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	raw.ReadFrom(resp.Body)
	var r exportResult
	if err := xml.Unmarshal(raw.Bytes(), &r); err != nil {
		t.Fatalf("response: %v\n%s", err, raw.String())
	}
	if r.Fault != "" {
		t.Fatalf("fault: %s", r.Fault)
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(r.ImageData))
	if err != nil {
		t.Fatalf("ImageData: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode image: %v", err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("image %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	return r, img
}

const (
	png32Mime = `<ImageFormat>gisImagePNG32</ImageFormat><ImageReturnType>gisImageReturnMimeData</ImageReturnType>`
	brazilFID = 211
)

var (
	ocean = color.NRGBA{198, 219, 239, 255}
	land  = color.NRGBA{232, 228, 216, 255}
	// Points in Web Mercator metres: inside Brazil (Tocantins) and inside Colombia.
	inBrazil   = [2]float64{-5.5e6, -1.2e6}
	inColombia = [2]float64{-8.0e6, 3e5}
)

func envelopeXML(xmin, ymin, xmax, ymax float64) string {
	return fmt.Sprintf(`<XMin>%g</XMin><YMin>%g</YMin><XMax>%g</XMax><YMax>%g</YMax>`, xmin, ymin, xmax, ymax)
}

func layers(countriesExpr string) string {
	return `<LayerDescriptions>` +
		`<LayerDescription><LayerID>0</LayerID><Visible>false</Visible><ShowLabels>false</ShowLabels><DefinitionExpression></DefinitionExpression></LayerDescription>` +
		`<LayerDescription><LayerID>1</LayerID><Visible>true</Visible><ShowLabels>false</ShowLabels><DefinitionExpression>` + countriesExpr + `</DefinitionExpression></LayerDescription>` +
		`</LayerDescriptions>`
}

func checkPixel(t *testing.T, img image.Image, name string, x, y int, want color.NRGBA) {
	t.Helper()
	if !nearest(img, x, y, want, 1) {
		t.Errorf("%s pixel (%d,%d) = %v, want about %v", name, x, y, color.NRGBAModel.Convert(img.At(x, y)), want)
	}
}

// TestExportMapImageAreas draws through the farm with every MapArea kind, a definition
// expression, rotation, DPI and a transparent colour, and checks the pixels and the reported
// extent and scale.
func TestExportMapImageAreas(t *testing.T) {
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/world/MapServer"
	brazilBox := envelopeXML(-8237702.5, -3994221.0, -3874691.25, 586056.875)
	const w, h = 200, 200

	t.Run("extent with definition expression", func(t *testing.T) {
		area := `<MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN">` + brazilBox + `</Extent></MapArea>`
		all, imgAll := exportMap(t, endpoint, area+layers(""), png32Mime, w, h, 96)
		only, imgOnly := exportMap(t, endpoint, area+layers("NAME = 'Brazil'"), png32Mime, w, h, 96)
		bx, by := all.pixelOf(inBrazil[0], inBrazil[1], w, h)
		cx, cy := all.pixelOf(inColombia[0], inColombia[1], w, h)
		checkPixel(t, imgAll, "Brazil, all countries", bx, by, land)
		checkPixel(t, imgAll, "Colombia, all countries", cx, cy, land)
		checkPixel(t, imgOnly, "Brazil, only Brazil", bx, by, land)
		checkPixel(t, imgOnly, "Colombia, only Brazil", cx, cy, ocean)
		if len(only.Visible) != 1 || only.Visible[0] != 1 {
			t.Errorf("VisibleLayerIDs %v, want [1]", only.Visible)
		}
		// The square image widens the taller-than-wide box about its centre.
		if only.YMin > -3994221 || only.YMax < 586056 || math.Abs((only.XMax-only.XMin)-(only.YMax-only.YMin)) > 1 {
			t.Errorf("extent %v %v %v %v is not the box fitted to a square", only.XMin, only.YMin, only.XMax, only.YMax)
		}
	})

	t.Run("center and scale", func(t *testing.T) {
		area := fmt.Sprintf(`<MapArea xsi:type="gis:CenterAndScale"><Center xsi:type="gis:PointN"><X>%g</X><Y>%g</Y></Center><Scale>10000000</Scale></MapArea>`, inBrazil[0], inBrazil[1])
		r, img := exportMap(t, endpoint, area+layers(""), png32Mime, w, h, 96)
		if math.Abs(r.MapScale-1e7) > 1e7*1e-6 {
			t.Errorf("MapScale %g, want 1e7", r.MapScale)
		}
		wantWidth := 1e7 * 0.0254 / 96 * w
		if got := r.XMax - r.XMin; math.Abs(got-wantWidth) > 1 {
			t.Errorf("extent width %g m, want %g", got, wantWidth)
		}
		checkPixel(t, img, "centre", w/2, h/2, land)
		// At 192 DPI the same scale covers half the ground.
		r2, _ := exportMap(t, endpoint, area+layers(""), png32Mime, w, h, 192)
		if got := r2.XMax - r2.XMin; math.Abs(got-wantWidth/2) > 1 {
			t.Errorf("extent width at 192 DPI %g m, want %g", got, wantWidth/2)
		}
	})

	t.Run("center and size", func(t *testing.T) {
		area := fmt.Sprintf(`<MapArea xsi:type="gis:CenterAndSize"><Center xsi:type="gis:PointN"><X>%g</X><Y>%g</Y></Center><Height>1500</Height><Width>1500</Width><Units>gisKilometers</Units></MapArea>`, inBrazil[0], inBrazil[1])
		r, img := exportMap(t, endpoint, area+layers(""), png32Mime, w, h, 96)
		if got := r.XMax - r.XMin; math.Abs(got-1.5e6) > 1 {
			t.Errorf("extent width %g m, want 1,500 km", got)
		}
		checkPixel(t, img, "centre", w/2, h/2, land)
	})

	t.Run("feature extent", func(t *testing.T) {
		area := fmt.Sprintf(`<MapArea xsi:type="gis:FeatureExtent"><DefaultScale>0</DefaultScale><ExpandRatio>1.1</ExpandRatio><FeatureIDs><Int>%d</Int></FeatureIDs><LayerID>1</LayerID><MapName>Layers</MapName></MapArea>`, brazilFID)
		r, img := exportMap(t, endpoint, area+layers(""), png32Mime, w, h, 96)
		if r.XMin > -8237702.5 || r.XMax < -3874691.25 || r.YMin > -3994221.0 || r.YMax < 586056.875 {
			t.Errorf("extent %v %v %v %v does not hold Brazil", r.XMin, r.YMin, r.XMax, r.YMax)
		}
		bx, by := r.pixelOf(inBrazil[0], inBrazil[1], w, h)
		checkPixel(t, img, "Brazil", bx, by, land)
	})

	t.Run("rotation", func(t *testing.T) {
		area := `<MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN">` + brazilBox + `</Extent></MapArea>`
		r, img := exportMap(t, endpoint, area+layers("NAME = 'Brazil'")+`<Rotation>180</Rotation>`, png32Mime, w, h, 96)
		bx, by := r.pixelOf(inBrazil[0], inBrazil[1], w, h)
		cx, cy := r.pixelOf(inColombia[0], inColombia[1], w, h)
		// Turned half way about the centre: each point lands on its mirror image.
		checkPixel(t, img, "Brazil, rotated", w-1-bx, h-1-by, land)
		checkPixel(t, img, "Colombia, rotated", w-1-cx, h-1-cy, ocean)
	})

	t.Run("transparent colour", func(t *testing.T) {
		area := `<MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN">` + brazilBox + `</Extent></MapArea>`
		md := area + layers("NAME = 'Brazil'") + `<TransparentColor xsi:type="gis:RgbColor"><Red>198</Red><Green>219</Green><Blue>239</Blue></TransparentColor>`
		r, img := exportMap(t, endpoint, md, png32Mime, w, h, 96)
		cx, cy := r.pixelOf(inColombia[0], inColombia[1], w, h)
		if _, _, _, a := img.At(cx, cy).RGBA(); a != 0 {
			t.Errorf("background pixel alpha %d, want 0", a>>8)
		}
		bx, by := r.pixelOf(inBrazil[0], inBrazil[1], w, h)
		checkPixel(t, img, "Brazil", bx, by, land)
	})

	t.Run("background symbol", func(t *testing.T) {
		area := `<MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN">` + brazilBox + `</Extent></MapArea>`
		md := area + layers("NAME = 'Brazil'") + `<BackgroundSymbol xsi:type="gis:SimpleFillSymbol"><Color xsi:type="gis:RgbColor"><Red>10</Red><Green>20</Green><Blue>30</Blue></Color><Style>gisSFSSolid</Style></BackgroundSymbol>`
		r, img := exportMap(t, endpoint, md, png32Mime, w, h, 96)
		cx, cy := r.pixelOf(inColombia[0], inColombia[1], w, h)
		checkPixel(t, img, "background", cx, cy, color.NRGBA{10, 20, 30, 255})
	})
}
