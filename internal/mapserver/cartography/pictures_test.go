package cartography_test

import (
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// pictureMap exports the countries around Spain filled with a picture fill named by uri, and
// returns the image (or the client fault).
func pictureMap(f *mapservertest.Fixture, uri string) (image.Image, string) {
	f.T.Helper()
	x0, y0 := mercator(-10, 35)
	x1, y1 := mercator(5, 45)
	md := mapservertest.MapDesc(x0, y0, x1, y1, 0)
	pf := &gisxml.PictureFillSymbol{PictureUri: &uri, Width: operation.Ptr(6.0)}
	md.LayerDescriptions = gisxml.ArrayOfLayerDescription{{LayerID: 1, Visible: true,
		DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: &gisxml.SimpleRenderer{Symbol: pf}}}}
	req := &gisxml.ExportMapImage{MapDescription: md, ImageDescription: &gisxml.ImageDescription{
		ImageType:    &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData},
		ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 100, ImageHeight: 80, ImageDPI: 96}}}
	resp, err := f.Do("world", "ExportMapImage", req)
	if err != nil {
		if !errors.Is(err, mapserver.ErrInvalidArgument) {
			f.T.Fatalf("%s: %v is not a client fault", uri, err)
		}
		return nil, err.Error()
	}
	return decodePNG(f.T.(*testing.T), resp.(*gisxml.ExportMapImageResponse).Result.ImageData), ""
}

// redShare is the share of an image's pixels that are the picture's red.
func redShare(img image.Image) float64 {
	b := img.Bounds()
	return float64(countNear(img, b, color.NRGBA{220, 0, 0, 255}, 10)) / float64(b.Dx()*b.Dy())
}

// TestPictureUri: pictures named by PictureUri are fetched from data: URIs, from this server's
// outputs and from allowed http hosts (on loopback here), and drawn; anything else, too large,
// too many pixels, too slow, a redirect to another host or a failed fetch is a client fault naming
// the symbol.
func TestPictureUri(t *testing.T) {
	redPNG := pngOf(t, solid(8, 8, color.NRGBA{220, 0, 0, 255}))
	hugePNG := pngOf(t, image.NewGray(image.Rect(0, 0, 2000, 4)))
	bigFile := append(append([]byte{}, redPNG...), make([]byte, 1<<20)...)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(redPNG) }))
	defer other.Close()
	stop := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/red.png", func(w http.ResponseWriter, r *http.Request) { w.Write(redPNG) })
	mux.HandleFunc("/huge.png", func(w http.ResponseWriter, r *http.Request) { w.Write(hugePNG) })
	mux.HandleFunc("/big.png", func(w http.ResponseWriter, r *http.Request) { w.Write(bigFile) })
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-stop:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/away.png", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/red.png", http.StatusFound)
	})
	mux.HandleFunc("/here.png", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/red.png", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(stop)
	host := strings.TrimPrefix(srv.URL, "http://")

	outputs, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := outputs.Put(context.Background(), "outputs/swatch.png", redPNG, "image/png"); err != nil {
		t.Fatal(err)
	}
	f, _ := newSymbolFixture(t, nil, func(p *mapserver.Params) {
		p.Outputs = outputs
		p.Pictures = mapserver.PictureOptions{AllowedHosts: []string{"example.org", strings.ToUpper(host)}, Timeout: 300 * time.Millisecond}
	})
	for _, uri := range []string{
		"data:image/png;base64," + base64.StdEncoding.EncodeToString(redPNG),
		"data:image/png," + url.PathEscape(string(redPNG)),
		"http://127.0.0.1/outputs/swatch.png", // this server's output (OutputURL), whatever the allowed hosts
		srv.URL + "/red.png",
		srv.URL + "/here.png", // redirected within the allowed host
	} {
		img, fault := pictureMap(f, uri)
		if fault != "" {
			t.Errorf("%.60s: %s", uri, fault)
			continue
		}
		// Spain and Portugal fill a good part of the image, in the picture's red.
		if share := redShare(img); share < 0.2 {
			t.Errorf("%.60s: %.0f%% of the image is the picture's red", uri, share*100)
		}
	}
	start := time.Now()
	for _, c := range []struct{ uri, want string }{
		{other.URL + "/red.png", "is not an allowed picture host"},
		{srv.URL + "/away.png", "not an allowed picture host"},
		{srv.URL + "/missing.png", "404"},
		{srv.URL + "/big.png", "larger than 1048576 bytes"},
		{srv.URL + "/huge.png", "at most 1024×1024"},
		{srv.URL + "/slow.png", "Timeout"},
		{"http://127.0.0.1/outputs/gone.png", "no such output"},
		{"ftp://example.org/a.png", "not a data: URI"},
		{"data:image/png;base64,!!!", "data: URI"},
		{"data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not an image at all")), "not a PNG, JPEG or GIF"},
	} {
		_, fault := pictureMap(f, c.uri)
		t.Logf("%.40s: %s", c.uri, fault)
		if !strings.Contains(fault, c.want) || !strings.Contains(fault, "LayerDescriptions[0]/DrawingDescription/FeatureRenderer/Symbol") {
			t.Errorf("%.60s: fault %q, want one naming the symbol and saying %q", c.uri, fault, c.want)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the faults took %v (timeout 300 ms)", d)
	}

	// A server without allowed hosts fetches no http URL, even on loopback.
	closed, _ := newSymbolFixture(t, nil, nil)
	if _, fault := pictureMap(closed, srv.URL+"/red.png"); !strings.Contains(fault, "not an allowed picture host") {
		t.Errorf("no allowed hosts: fault %q", fault)
	}
	// Neither Picture nor PictureUri.
	if _, fault := pictureMap(closed, ""); !strings.Contains(fault, "needs its Picture bytes or a PictureUri") {
		t.Errorf("no picture: fault %q", fault)
	}
}

// TestPictureSymbolsGolden draws picture fills and markers with their details through
// ExportMapImage: Spain with a 1-bit picture recoloured (FgColor, BgColor) in tiles 2 pt apart
// turned 30°; France with a colour picture whose magenta is transparent (BitmapTransColor),
// stretched twice across (XScale) and moved (XOffset, YOffset), dash-outlined; Italy with a 1-bit
// picture from a data: PictureUri, colours swapped (Swap1BitColor, Color as the foreground); the
// points as picture markers 12 × 6 pt (Width, Size).
func TestPictureSymbolsGolden(t *testing.T) {
	f, _ := newCartoFixture(t)
	// A 1-bit picture: a black plus on white.
	plus := image.NewPaletted(image.Rect(0, 0, 8, 8), color.Palette{color.Black, color.White})
	for y := 0; y < 8; y++ {
		for x := 0; x < 8; x++ {
			if x != 3 && x != 4 && y != 3 && y != 4 {
				plus.SetColorIndex(x, y, 1)
			}
		}
	}
	onebit := pngOf(t, plus)
	// A colour picture: orange and blue quarters on magenta.
	col := solid(8, 8, color.NRGBA{255, 0, 255, 255})
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			col.SetNRGBA(x, y, color.NRGBA{230, 120, 0, 255})
			col.SetNRGBA(x+4, y+4, color.NRGBA{0, 90, 200, 255})
		}
	}
	colour := pngOf(t, col)
	rgb := func(r, g, b uint8) *gisxml.RgbColor { return &gisxml.RgbColor{Red: r, Green: g, Blue: b} }
	fg, bg := rgb(150, 0, 40), rgb(255, 240, 180)
	italyURI := "data:image/png;base64," + base64.StdEncoding.EncodeToString(onebit)
	styled := &gisxml.UniqueValueRenderer{Field1: "NAME", DefaultSymbol: fill(240, 240, 232), UniqueValueInfos: gisxml.ArrayOfUniqueValueInfo{
		{Value: "Spain", Symbol: &gisxml.PictureFillSymbol{Picture: onebit, Width: operation.Ptr(6.0), FgColor: fg, BgColor: bg,
			XSeparation: operation.Ptr(2.0), YSeparation: operation.Ptr(2.0), Angle: operation.Ptr(30.0)}},
		{Value: "France", Symbol: &gisxml.PictureFillSymbol{Picture: colour, Width: operation.Ptr(6.0), XScale: operation.Ptr(2.0), YScale: operation.Ptr(1.0),
			XOffset: operation.Ptr(3.0), YOffset: operation.Ptr(3.0), BitmapTransColor: rgb(255, 0, 255),
			FillSymbolFields: gisxml.FillSymbolFields{Outline: &gisxml.SimpleLineSymbol{Style: gisxml.SLSDash,
				LineSymbolFields: gisxml.LineSymbolFields{Color: rgb(0, 0, 120), Width: 1.5}}}}},
		{Value: "Italy", Symbol: &gisxml.PictureFillSymbol{PictureUri: &italyURI, Width: operation.Ptr(6.0), Swap1BitColor: operation.Ptr(true),
			BgColor: rgb(0, 130, 60), FillSymbolFields: gisxml.FillSymbolFields{Color: rgb(255, 255, 255)}}},
	}}
	marker := &gisxml.SimpleRenderer{Symbol: &gisxml.PictureMarkerSymbol{Picture: colour, Width: operation.Ptr(12.0), BitmapTransColor: rgb(255, 0, 255),
		CartographicMarkerSymbolFields: gisxml.CartographicMarkerSymbolFields{MarkerSymbolFields: gisxml.MarkerSymbolFields{Size: 6}, XScale: 1, YScale: 1}}}
	x0, y0 := mercator(-12, 34)
	x1, y1 := mercator(32, 60)
	md := mapservertest.MapDesc(x0, y0, x1, y1, 0)
	md.LayerDescriptions = gisxml.ArrayOfLayerDescription{
		{LayerID: 0, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: marker}},
		{LayerID: 1, Visible: true, DrawingDescription: &gisxml.FeatureLayerDrawingDescription{FeatureRenderer: styled}},
	}
	img := decodePNG(t, exportImage(f, "world", md, 320, 240, 96, gisxml.ImagePNG32).ImageData)
	checkGolden(t, "carto_picture_symbols", img)

	// What the eye checks: no magenta anywhere (transparent), no black of the 1-bit pictures, and
	// Spain's tiles in their two colours.
	count := func(c color.NRGBA, r image.Rectangle) int { return countNear(img, r, c, 12) }
	all := img.Bounds()
	if n := count(color.NRGBA{255, 0, 255, 255}, all); n > 0 {
		t.Errorf("%d magenta pixels: the transparent colour is drawn", n)
	}
	px := func(lon, lat float64) image.Point {
		x, y := mercator(lon, lat)
		// The extent is grown to 4:3 about its centre; its height sets the scale.
		res := (y1 - y0) / 240
		return image.Pt(int(160+(x-(x0+x1)/2)/res), int(120-(y-(y0+y1)/2)/res))
	}
	spain := image.Rectangle{Min: px(-6, 42), Max: px(-2, 38)}.Canon()
	if nf, nb := count(color.NRGBA{150, 0, 40, 255}, spain), count(color.NRGBA{255, 240, 180, 255}, spain); nf < 10 || nb < 10 {
		t.Errorf("Spain (%v): %d foreground and %d background pixels", spain, nf, nb)
	}
	italy := image.Rectangle{Min: px(11.5, 44), Max: px(13.5, 42)}.Canon()
	if ng, nw := count(color.NRGBA{0, 130, 60, 255}, italy), count(color.NRGBA{255, 255, 255, 255}, italy); ng < 5 || nw < 5 {
		t.Errorf("Italy (%v): %d green (the plus, swapped) and %d white pixels", italy, ng, nw)
	}
	if n := count(color.NRGBA{0, 0, 0, 255}, spain.Union(italy)); n > 0 {
		t.Errorf("%d black pixels of the 1-bit pictures", n)
	}
}
