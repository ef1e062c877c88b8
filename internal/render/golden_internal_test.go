package render

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/golden"
)

// Golden comparison tolerance: anti-aliasing may change slightly between versions of the rasterizer,
// so a pixel matches when every channel is within pixelTol, and an image matches when at most
// badFraction of its pixels do not.
const (
	pixelTol    = 24
	badFraction = 0.002
)

// checkGolden compares img with testdata/name.png, or rewrites it with MAPFARM_UPDATE_GOLDEN=1.
func checkGolden(t *testing.T, name string, img image.Image) {
	t.Helper()
	path := filepath.Join("testdata", name+".png")
	if golden.Update() {
		var buf bytes.Buffer
		if err := Encode(&buf, img, PNG32, EncodeOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run MAPFARM_UPDATE_GOLDEN=1 go test ./internal/render to create it)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if want.Bounds().Size() != img.Bounds().Size() {
		t.Fatalf("%s: size %v, golden %v", name, img.Bounds().Size(), want.Bounds().Size())
	}
	bad := 0
	wb, gb := want.Bounds(), img.Bounds()
	for y := 0; y < gb.Dy(); y++ {
		for x := 0; x < gb.Dx(); x++ {
			a := color.NRGBAModel.Convert(img.At(gb.Min.X+x, gb.Min.Y+y)).(color.NRGBA)
			b := color.NRGBAModel.Convert(want.At(wb.Min.X+x, wb.Min.Y+y)).(color.NRGBA)
			if absDiff(a.R, b.R) > pixelTol || absDiff(a.G, b.G) > pixelTol || absDiff(a.B, b.B) > pixelTol || absDiff(a.A, b.A) > pixelTol {
				bad++
			}
		}
	}
	if limit := int(badFraction * float64(gb.Dx()*gb.Dy())); bad > limit {
		out := filepath.Join(os.TempDir(), "render-golden-"+name+".png")
		var buf bytes.Buffer
		_ = Encode(&buf, img, PNG32, EncodeOptions{})
		_ = os.WriteFile(out, buf.Bytes(), 0o644)
		t.Errorf("%s: %d pixels differ from the golden image (limit %d); got image saved as %s", name, bad, limit, out)
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func nrgbaAt(img *image.RGBA, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

func near(a, b color.NRGBA, tol int) bool {
	return absDiff(a.R, b.R) <= tol && absDiff(a.G, b.G) <= tol && absDiff(a.B, b.B) <= tol && absDiff(a.A, b.A) <= tol
}

// worldPixel returns the pixel of v showing the Web Mercator point of lon/lat degrees.
func worldPixel(v View, lon, lat float64) (int, int) {
	x, y := lonLatToMercator(lon, lat)
	px, py := v.Matrix().Apply(x, y)
	return int(px), int(py)
}

func TestWorldGolden(t *testing.T) {
	fs := loadCountries(t)
	if len(fs) != 241 {
		t.Fatalf("loaded %d countries, want 241", len(fs))
	}
	for _, tc := range []struct {
		name string
		v    View
	}{
		{"world_1024x768", worldView()},
		{"tile_z4_8_5", tileView(tileZ4)},
		{"tile_z8_129_88", tileView(tileZ8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Draw(context.Background(), worldMap(fs), tc.v)
			if err != nil {
				t.Fatal(err)
			}
			defer Release(img)
			checkGolden(t, tc.name, img)
		})
	}
}

func TestWorldPixels(t *testing.T) {
	fs := loadCountries(t)
	v := worldView()
	img, err := Draw(context.Background(), worldMap(fs), v)
	if err != nil {
		t.Fatal(err)
	}
	defer Release(img)
	// Ocean in the middle of the Pacific, land fill in central Africa and in Brazil: most pixels of a
	// 9×9 square there (a label may cross it).
	for _, c := range []struct {
		name     string
		lon, lat float64
		want     color.NRGBA
	}{
		{"mid-Pacific", -140, 0, ocean},
		{"central Africa (DR Congo)", 24, -5, land},
		{"Brazil", -62, -8, land},
		{"Sahara (Algeria)", 5, 22, land},
	} {
		x, y := worldPixel(v, c.lon, c.lat)
		n := 0
		for dy := -4; dy <= 4; dy++ {
			for dx := -4; dx <= 4; dx++ {
				if near(nrgbaAt(img, x+dx, y+dy), c.want, 2) {
					n++
				}
			}
		}
		if n < 41 {
			t.Errorf("%s around pixel (%d, %d): %d of 81 pixels are %v (centre %v)", c.name, x, y, n, c.want, nrgbaAt(img, x, y))
		}
	}
	// A label near the interior of big countries: dark text pixels close to their middle.
	for _, c := range []struct {
		name     string
		lon, lat float64
	}{{"Russia", 95, 62}, {"Brazil", -53, -10}, {"Australia", 134, -25}, {"Canada", -100, 60}} {
		x, y := worldPixel(v, c.lon, c.lat)
		if n := countDark(img, image.Rect(x-60, y-30, x+60, y+30), 80); n < 10 {
			t.Errorf("no label near the middle of %s (pixel %d, %d): %d dark pixels", c.name, x, y, n)
		}
	}
	// No label touches the image edge: no label ink (darker than the outline) or halo white there.
	b := img.Bounds()
	for x := 0; x < b.Dx(); x++ {
		checkEdgePixel(t, img, x, 0)
		checkEdgePixel(t, img, x, b.Dy()-1)
	}
	for y := 0; y < b.Dy(); y++ {
		checkEdgePixel(t, img, 0, y)
		checkEdgePixel(t, img, b.Dx()-1, y)
	}
}

func checkEdgePixel(t *testing.T, img *image.RGBA, x, y int) {
	t.Helper()
	c := nrgbaAt(img, x, y)
	if c.R < 80 && c.G < 80 && c.B < 80 {
		t.Errorf("label ink at the image edge, pixel (%d, %d): %v", x, y, c)
	}
	if c.R > 245 && c.G > 245 && c.B > 245 {
		t.Errorf("label halo at the image edge, pixel (%d, %d): %v", x, y, c)
	}
}

// countDark counts pixels in r darker than max in every channel.
func countDark(img *image.RGBA, r image.Rectangle, max uint8) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := nrgbaAt(img, x, y); c.R < max && c.G < max && c.B < max {
				n++
			}
		}
	}
	return n
}

// TestSideBySide writes ours next to MapServer's render of the same map into the directory named by
// $MAPFARM_SIDE_BY_SIDE, for looking at (skipped unless set and map2img is installed).
func TestSideBySide(t *testing.T) {
	dir := os.Getenv("MAPFARM_SIDE_BY_SIDE")
	if dir == "" {
		t.Skip("set MAPFARM_SIDE_BY_SIDE=dir to write side-by-side images")
	}
	if _, err := exec.LookPath("map2img"); err != nil {
		t.Skip("map2img not installed")
	}
	fs := loadCountries(t)
	for _, tc := range []struct {
		name string
		v    View
	}{{"world", worldView()}, {"z4", tileView(tileZ4)}, {"z8", tileView(tileZ8)}} {
		ours, err := Draw(context.Background(), worldMap(fs), tc.v)
		if err != nil {
			t.Fatal(err)
		}
		e := tc.v.Extent
		msPath := filepath.Join(dir, "mapserver-"+tc.name+".png")
		cmd := exec.Command("map2img", "-conf", "mapserver.conf", "-m", "world.map", "-o", msPath,
			"-s", fmt.Sprint(tc.v.Width), fmt.Sprint(tc.v.Height),
			"-e", fmt.Sprint(e.Min[0]), fmt.Sprint(e.Min[1]), fmt.Sprint(e.Max[0]), fmt.Sprint(e.Max[1]))
		cmd.Dir = "../../bench/mapserver"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("map2img: %v\n%s", err, out)
		}
		f, err := os.Open(msPath)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		w, h := ours.Bounds().Dx(), ours.Bounds().Dy()
		sbs := image.NewRGBA(image.Rect(0, 0, 2*w+8, h))
		draw.Draw(sbs, sbs.Bounds(), image.Black, image.Point{}, draw.Src)
		draw.Draw(sbs, image.Rect(0, 0, w, h), ours, image.Point{}, draw.Src)
		draw.Draw(sbs, image.Rect(w+8, 0, 2*w+8, h), theirs, theirs.Bounds().Min, draw.Src)
		out, err := os.Create(filepath.Join(dir, "side-by-side-"+tc.name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		if err := Encode(out, sbs, PNG, EncodeOptions{}); err != nil {
			t.Fatal(err)
		}
		out.Close()
		Release(ours)
	}
}

var _ = orb.Point{}
