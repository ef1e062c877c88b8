package e2e

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// cartoSummary is what testdata/zeep_cartography.py prints.
type cartoSummary struct {
	ScalebarMime struct {
		Width, Height int
		Type          string
	} `json:"scalebarMime"`
	ScalebarURL struct {
		URL   string `json:"url"`
		Width int    `json:"width"`
		Type  string `json:"type"`
	} `json:"scalebarURL"`
	Legend []struct {
		Layer   int    `json:"layer"`
		Name    string `json:"name"`
		Classes []struct {
			Label string `json:"label"`
			File  string `json:"file"`
			Width int    `json:"width"`
		} `json:"classes"`
	} `json:"legend"`
	Legend2             []string `json:"legend2"`
	DrawingDescriptions []struct {
		Type, Renderer, Symbol string
		Color                  []int
		Labels                 []string
	} `json:"drawingDescriptions"`
	Exports map[string]struct {
		Type  string `json:"type"`
		Width int    `json:"width"`
	} `json:"exports"`
	Faults           map[string][2]string `json:"faults"`
	PictureSwatchURL string               `json:"pictureSwatchURL"`
}

// TestZeepCartography drives ExportScaleBar, GetLegendInfo(2), GetDefaultLayerDrawingDescriptions
// and ExportMapImage with a drawing description through zeep clients from the served and the
// reference WSDL, on the real farm, and checks the images by their pixels (SVG through
// rsvg-convert, PDF through pdftoppm: Debian librsvg2-bin and poppler-utils).
func TestZeepCartography(t *testing.T) {
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/world/MapServer"
	eachClientWSDL(t, endpoint, func(t *testing.T, wsdl string) {
		dir := t.TempDir()
		s := runScript[cartoSummary](t, "testdata/zeep_cartography.py", wsdl, endpoint, namespace, dir)
		checkCartography(t, s, dir)
	})
}

func nrgba(img image.Image, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

func closeTo(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

func checkCartography(t *testing.T, s cartoSummary, dir string) {
	// Scale bar: two 20 km divisions at 10 px per km; the first (subdivided in four) alternates
	// black and white every 50 px, the second is white (the fifth segment after four
	// subdivisions is black, so: black, white, black, white, black).
	if s.ScalebarMime.Width != 600 || s.ScalebarMime.Height != 60 || s.ScalebarMime.Type != "image/png" {
		t.Errorf("scale bar result %+v", s.ScalebarMime)
	}
	bar := testenv.ReadPNG(t, filepath.Join(dir, "scalebar_alternating.png"))
	row, runs := barRuns(bar)
	if row < 0 {
		t.Fatal("scale bar: no bar row found")
	}
	// After the bar: its right outline, then the white background.
	if len(runs) < 5 || runs[0] < 48 || runs[0] > 52 || runs[3] < 48 || runs[3] > 52 || runs[4] < 198 || runs[4] > 202 {
		t.Errorf("scale bar segments along row %d: %v px, want 50 50 50 50 200", row, runs)
	}
	if !strings.Contains(s.ScalebarURL.URL, "/output/") || s.ScalebarURL.Width != 600 {
		t.Errorf("scale bar by URL: %+v", s.ScalebarURL)
	} else {
		resp, err := http.Get(s.ScalebarURL.URL)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET scale bar URL: %s", resp.Status)
		} else if img, err := png.Decode(&body); err != nil || img.Bounds().Dx() != 600 {
			t.Errorf("scale bar by URL: %v %v", err, img)
		}
	}

	// Legend: one class per layer, swatches in the layer's colours.
	if len(s.Legend) != 2 {
		t.Fatalf("legend for %d layers", len(s.Legend))
	}
	for i, want := range []color.NRGBA{{178, 34, 34, 255}, {232, 228, 216, 255}} {
		l := s.Legend[i]
		if len(l.Classes) != 1 || l.Classes[0].Width != 20 {
			t.Fatalf("legend of layer %d: %+v", l.Layer, l)
		}
		img := testenv.ReadPNG(t, filepath.Join(dir, l.Classes[0].File))
		if got := nrgba(img, 10, 7); !closeTo(got, want, 2) || img.Bounds().Dx() != 20 || img.Bounds().Dy() != 14 {
			t.Errorf("legend swatch of layer %d: %v at the centre of %v, want %v", l.Layer, got, img.Bounds(), want)
		}
	}
	if strings.Join(s.Legend2, "|") != "Brazil|Australia|Other countries" {
		t.Errorf("GetLegendInfo2 classes %q", s.Legend2)
	}
	if got := nrgba(testenv.ReadPNG(t, filepath.Join(dir, "legend2_australia.png")), 10, 7); !closeTo(got, color.NRGBA{200, 0, 0, 255}, 2) {
		t.Errorf("GetLegendInfo2 Australia swatch %v", got)
	}

	// Default drawing descriptions.
	if len(s.DrawingDescriptions) != 2 {
		t.Fatalf("%d drawing descriptions", len(s.DrawingDescriptions))
	}
	if d := s.DrawingDescriptions[1]; d.Renderer != "SimpleRenderer" || d.Symbol != "SimpleFillSymbol" || !slices.Equal(d.Color, []int{232, 228, 216}) || strings.Join(d.Labels, "") != "[NAME]" {
		t.Errorf("countries drawing description %+v", d)
	}
	if d := s.DrawingDescriptions[0]; d.Symbol != "SimpleMarkerSymbol" || !slices.Equal(d.Color, []int{178, 34, 34}) {
		t.Errorf("points drawing description %+v", d)
	}

	// ExportMapImage: Brazil green, Australia red, Russia selected (magenta outline), blue marker.
	img := testenv.ReadPNG(t, filepath.Join(dir, "export.png"))
	for _, c := range []struct {
		name     string
		lon, lat float64
		want     color.NRGBA
	}{
		{"Brazil", -53, -10, color.NRGBA{0, 150, 0, 255}},
		{"Australia", 134, -25, color.NRGBA{200, 0, 0, 255}},
		{"Argentina", -65, -35, color.NRGBA{235, 235, 225, 255}},
		{"Pacific marker", -134.75, 0, color.NRGBA{0, 0, 255, 255}},
	} {
		x, y := toPixel([]float64{-2e7, -1e7, 2e7, 1e7}, 400, 200, c.lon, c.lat)
		if got := nrgba(img, x, y); !closeTo(got, c.want, 3) {
			t.Errorf("export: %s at (%d, %d) is %v, want %v", c.name, x, y, got, c.want)
		}
	}
	if n, _ := countPixels(img, func(c color.NRGBA) bool { return closeTo(c, color.NRGBA{255, 0, 255, 255}, 8) }); n < 50 {
		t.Errorf("export: %d magenta selection pixels around Russia", n)
	}
	// Picture fills named by PictureUri: India blue from a data: URI; Canada tiled with the
	// Australia legend swatch read from this farm's outputs (red, with a transparent rim).
	if !strings.Contains(s.PictureSwatchURL, "/output/") {
		t.Errorf("legend swatch by URL: %q", s.PictureSwatchURL)
	}
	x, y := toPixel([]float64{-2e7, -1e7, 2e7, 1e7}, 400, 200, 78, 22)
	if got := nrgba(img, x, y); !closeTo(got, color.NRGBA{0, 0, 200, 255}, 3) {
		t.Errorf("export: India (data: PictureUri) at (%d, %d) is %v, want blue", x, y, got)
	}
	x, y = toPixel([]float64{-2e7, -1e7, 2e7, 1e7}, 400, 200, -100, 56)
	if sh := share(img, image.Rect(x-4, y-4, x+5, y+5), color.NRGBA{200, 0, 0, 255}); sh < 0.5 {
		t.Errorf("export: Canada (PictureUri of an output) is %.0f%% red around (%d, %d)", sh*100, x, y)
	}
	for ext, want := range map[string]string{"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"} {
		if e := s.Exports[ext]; e.Type != want || e.Width != 400 {
			t.Errorf("export %s: %+v", ext, e)
		}
	}
	// The vector documents read back with Debian's tools to the requested size, and show the same
	// map.
	for _, ext := range []string{"svg", "pdf"} {
		vimg := rasterize(t, filepath.Join(dir, "export."+ext))
		if b := vimg.Bounds(); b.Dx() != 400 || b.Dy() != 200 {
			t.Errorf("%s rasterizes to %v", ext, b)
			continue
		}
		x, y := toPixel([]float64{-2e7, -1e7, 2e7, 1e7}, 400, 200, -53, -10)
		if got := nrgba(vimg, x, y); !closeTo(got, color.NRGBA{0, 150, 0, 255}, 4) {
			t.Errorf("%s: Brazil is %v", ext, got)
		}
	}
	if f := s.Faults["emf"]; !strings.Contains(f[1], "not supported") {
		t.Errorf("EMF fault %q", f)
	}
	// A PointLabelPlacementDescription moves the point labels: in the lower part of the map
	// (Bolivia to Argentina, away from the crowded Caribbean where other labels win), the dark
	// text pixels sit lower with BelowCenter than with AboveCenter; the markers do not move.
	lower := image.Rect(0, 110, 300, 400)
	above, nAbove := darkMeanY(testenv.ReadPNG(t, filepath.Join(dir, "labels_AboveCenter.png")), lower)
	below, nBelow := darkMeanY(testenv.ReadPNG(t, filepath.Join(dir, "labels_BelowCenter.png")), lower)
	if nAbove < 100 || nBelow < 100 || below-above < 10 {
		t.Errorf("label placement: text pixels at mean y %.1f (%d px) above, %.1f (%d px) below", above, nAbove, below, nBelow)
	}
}

// darkMeanY returns the mean row of the near-black pixels of an image's area r, and how many
// there are.
func darkMeanY(img image.Image, r image.Rectangle) (float64, int) {
	b := img.Bounds().Intersect(r)
	sum, n := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if c := nrgba(img, x, y); c.A > 200 && c.R < 80 && c.G < 80 && c.B < 80 {
				sum += y
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return float64(sum) / float64(n), n
}

// barRuns finds the scale bar's middle row (three rows below its top outline, the first row with
// the most black pixels) and returns the lengths of the runs of alternating black and white
// pixels along it, from the first black one.
func barRuns(img image.Image) (int, []int) {
	b := img.Bounds()
	best, row := 0, -1
	for y := b.Min.Y; y < b.Max.Y; y++ {
		n := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if c := nrgba(img, x, y); c.R < 60 {
				n++
			}
		}
		if n > best {
			best, row = n, y
		}
	}
	if row < 0 {
		return -1, nil
	}
	row += 3
	var runs []int
	started, black, n := false, false, 0
	for x := b.Min.X; x < b.Max.X; x++ {
		c := nrgba(img, x, row)
		isBlack, isWhite := c.R < 60, c.R > 200
		switch {
		case !started && isBlack:
			started, black, n = true, true, 1
		case started && ((black && isBlack) || (!black && isWhite)):
			n++
		case started && (isBlack || isWhite):
			runs = append(runs, n)
			black, n = isBlack, 1
		}
	}
	if started {
		runs = append(runs, n)
	}
	return row, runs
}

// rasterize reads an SVG with rsvg-convert or a PDF with pdftoppm (at 96 DPI).
func rasterize(t *testing.T, path string) image.Image {
	t.Helper()
	out := filepath.Join(t.TempDir(), "raster")
	var cmd *exec.Cmd
	if strings.HasSuffix(path, ".svg") {
		cmd = exec.Command("rsvg-convert", "-o", out+".png", path)
	} else {
		cmd = exec.Command("pdftoppm", "-png", "-r", "96", "-singlefile", path, out)
	}
	if _, err := exec.LookPath(cmd.Args[0]); err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatalf("%s not installed (apt-get install librsvg2-bin poppler-utils)", cmd.Args[0])
		}
		t.Skipf("%s not installed", cmd.Args[0])
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Args[0], err, b)
	}
	return testenv.ReadPNG(t, out+".png")
}
