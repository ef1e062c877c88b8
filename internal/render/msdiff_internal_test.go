package render

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/paulmach/orb"
)

// The differential suite draws scenes of its own with the renderer and with UMN MapServer 8 (its
// AGG renderer, Debian's mapserver-bin: map2img) from the same geometry, and compares the two
// pictures with three measures (see diffMetrics); each scene has its limits, documented with the
// figures in docs/rendering-diff.md. The renderer's own output is also a golden image
// (testdata/msdiff_*.png), so a change to it shows even where map2img is not installed.

// diffScene is one scene: layers drawn over a background, in an image of width×height pixels
// showing extent (its edges, in map units).
type diffScene struct {
	name          string
	width, height int
	extent        orb.Bound
	background    color.NRGBA
	layers        []diffLayer
	limits        diffLimits
}

// diffLayer is one layer of a scene, drawn with one symbol. Sizes are in pixels (the renderer's
// symbols get them in points at 96 DPI, MapServer's styles in pixels).
type diffLayer struct {
	geoms  []orb.Geometry // all points, all lines or all polygons
	fill   color.NRGBA    // polygons' fill, markers' colour
	stroke color.NRGBA    // outline (polygons, markers) or line colour
	width  float64        // stroke width
	dash   []float64      // on and off lengths
	size   float64        // marker diameter
}

// diffLimits are a scene's thresholds: the largest mean colour difference and line deviation and
// the smallest SSIM that pass.
type diffLimits struct {
	meanDiff, lineDev, ssim float64
}

// diffMetrics compares two images of the same size.
//
//   - meanDiff: the largest difference, over R, G and B, between the two images' mean colours
//     (0–255). It is what the eye sees of a dense field: a texture's overall tone.
//   - lineDev: the largest difference between the mean luminance (Rec. 601, 0–255) of one column
//     (or row) in the two images, over every column and row. A seam, a streak or a line drawn at
//     the wrong place moves its column's or row's mean, even when the image's mean hardly moves.
//   - ssim: the structural similarity of the two luminance images (Wang et al. 2004, constants
//     K1 = 0.01, K2 = 0.03), averaged over 8×8 windows every 4 pixels: 1 for equal images, lower
//     when edges, textures or contrast differ.
type diffMetrics struct {
	meanDiff, lineDev, ssim float64
	lineAt                  string     // where lineDev was found, "column 127" or "row 3"
	ours, theirs            [3]float64 // mean colours
}

func (m diffMetrics) String() string {
	return fmt.Sprintf("mean colour diff %.1f (ours %.0f,%.0f,%.0f, MapServer's %.0f,%.0f,%.0f), line deviation %.1f (%s), SSIM %.3f",
		m.meanDiff, m.ours[0], m.ours[1], m.ours[2], m.theirs[0], m.theirs[1], m.theirs[2], m.lineDev, m.lineAt, m.ssim)
}

// luminance returns img's luminance, row by row, and its mean R, G and B.
func luminance(img *image.RGBA) ([]float64, [3]float64) {
	b := img.Bounds()
	lum := make([]float64, 0, b.Dx()*b.Dy())
	var sum [3]float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):][:4*b.Dx()]
		for x := 0; x < len(row); x += 4 {
			r, g, bl, a := float64(row[x]), float64(row[x+1]), float64(row[x+2]), float64(row[x+3])
			if a > 0 && a < 255 {
				r, g, bl = r*255/a, g*255/a, bl*255/a
			}
			sum[0] += r
			sum[1] += g
			sum[2] += bl
			lum = append(lum, 0.299*r+0.587*g+0.114*bl)
		}
	}
	n := float64(b.Dx() * b.Dy())
	return lum, [3]float64{sum[0] / n, sum[1] / n, sum[2] / n}
}

func compareImages(a, b *image.RGBA) diffMetrics {
	w, h := a.Bounds().Dx(), a.Bounds().Dy()
	la, ma := luminance(a)
	lb, mb := luminance(b)
	m := diffMetrics{ours: ma, theirs: mb}
	for i := range 3 {
		m.meanDiff = max(m.meanDiff, math.Abs(ma[i]-mb[i]))
	}
	for x := range w {
		var d float64
		for y := range h {
			d += la[y*w+x] - lb[y*w+x]
		}
		if d = math.Abs(d / float64(h)); d > m.lineDev {
			m.lineDev, m.lineAt = d, fmt.Sprintf("column %d", x)
		}
	}
	for y := range h {
		var d float64
		for x := range w {
			d += la[y*w+x] - lb[y*w+x]
		}
		if d = math.Abs(d / float64(w)); d > m.lineDev {
			m.lineDev, m.lineAt = d, fmt.Sprintf("row %d", y)
		}
	}
	const win, step = 8, 4
	const c1, c2 = (0.01 * 255) * (0.01 * 255), (0.03 * 255) * (0.03 * 255)
	var sum float64
	n := 0
	for y0 := 0; y0+win <= h; y0 += step {
		for x0 := 0; x0+win <= w; x0 += step {
			var sa, sb, saa, sbb, sab float64
			for y := y0; y < y0+win; y++ {
				for x := x0; x < x0+win; x++ {
					p, q := la[y*w+x], lb[y*w+x]
					sa, sb = sa+p, sb+q
					saa, sbb, sab = saa+p*p, sbb+q*q, sab+p*q
				}
			}
			const k = win * win
			mua, mub := sa/k, sb/k
			va, vb, cov := saa/k-mua*mua, sbb/k-mub*mub, sab/k-mua*mub
			sum += (2*mua*mub + c1) * (2*cov + c2) / ((mua*mua + mub*mub + c1) * (va + vb + c2))
			n++
		}
	}
	m.ssim = sum / float64(n)
	return m
}

// mapfarm returns the scene as the renderer's map and view.
func (sc *diffScene) mapfarm() (Map, View) {
	const pt = 0.75 // points per pixel at 96 DPI
	m := Map{Background: sc.background}
	for _, l := range sc.layers {
		sym := Symbol{Fill: l.fill, Stroke: l.stroke, StrokeWidth: l.width * pt, MarkerSize: l.size * pt}
		for _, d := range l.dash {
			sym.Dash = append(sym.Dash, d*pt)
		}
		fs := make(Features, len(l.geoms))
		for i, g := range l.geoms {
			fs[i] = Feature{Geom: g}
		}
		m.Layers = append(m.Layers, Layer{Features: fs, Symbol: sym})
	}
	return m, View{Extent: sc.extent, Width: sc.width, Height: sc.height, DPI: 96}
}

// writeMapfile writes the scene's shapefiles and mapfile into dir and returns the mapfile's path.
//
// MapServer places map coordinate x at pixel coordinate (x − minx) / cellsize, with cellsize =
// (maxx − minx) / (width − 1): its extent runs from the left edge of the first pixel to the left
// edge of the last one, and it draws only the shapes that reach into it. So MapServer draws an
// image one pixel wider and higher than the scene's, of the scene's extent, whose last column and
// row are cut off (mapserver): every shape lands where the renderer draws it.
func (sc *diffScene) writeMapfile(dir string) (string, error) {
	e := sc.extent
	var b strings.Builder
	rgb := func(c color.NRGBA) string { return fmt.Sprintf("%d %d %d", c.R, c.G, c.B) }
	opacity := func(c color.NRGBA) string {
		if c.A == 255 {
			return ""
		}
		return fmt.Sprintf("      OPACITY %d\n", int(math.Round(float64(c.A)*100/255)))
	}
	fmt.Fprintf(&b, "MAP\n  NAME %q\n  SIZE %d %d\n  EXTENT %.10f %.10f %.10f %.10f\n  UNITS METERS\n  IMAGECOLOR %s\n  IMAGETYPE png24\n",
		sc.name, sc.width+1, sc.height+1, e.Min[0], e.Min[1], e.Max[0], e.Max[1], rgb(sc.background))
	b.WriteString("  OUTPUTFORMAT\n    NAME \"png24\"\n    DRIVER \"AGG/PNG\"\n    MIMETYPE \"image/png\"\n    IMAGEMODE RGB\n    EXTENSION \"png\"\n  END\n")
	b.WriteString("  SYMBOL\n    NAME \"circle\"\n    TYPE ELLIPSE\n    FILLED TRUE\n    POINTS 1 1 END\n  END\n")
	for i, l := range sc.layers {
		base := filepath.Join(dir, fmt.Sprintf("%s_%d", sc.name, i))
		if err := writeShapefile(base, l.geoms); err != nil {
			return "", err
		}
		kind := "POLYGON"
		switch l.geoms[0].(type) {
		case orb.Point:
			kind = "POINT"
		case orb.LineString, orb.MultiLineString:
			kind = "LINE"
		}
		fmt.Fprintf(&b, "  LAYER\n    NAME \"l%d\"\n    TYPE %s\n    STATUS ON\n    DATA %q\n    CLASS\n", i, kind, base)
		pattern := ""
		if len(l.dash) > 0 {
			pattern = "      PATTERN"
			for _, d := range l.dash {
				pattern += fmt.Sprintf(" %g", d)
			}
			pattern += " END\n"
		}
		switch kind {
		case "POINT":
			fmt.Fprintf(&b, "    STYLE\n      SYMBOL \"circle\"\n      SIZE %g\n      COLOR %s\n%s", l.size, rgb(l.fill), opacity(l.fill))
			if l.stroke.A > 0 && l.width > 0 {
				fmt.Fprintf(&b, "      OUTLINECOLOR %s\n      WIDTH %g\n", rgb(l.stroke), l.width)
			}
			b.WriteString("    END\n")
		case "LINE":
			fmt.Fprintf(&b, "    STYLE\n      COLOR %s\n%s      WIDTH %g\n      LINECAP ROUND\n      LINEJOIN ROUND\n%s    END\n", rgb(l.stroke), opacity(l.stroke), l.width, pattern)
		default:
			if l.fill.A > 0 {
				fmt.Fprintf(&b, "    STYLE\n      COLOR %s\n%s    END\n", rgb(l.fill), opacity(l.fill))
			}
			if l.stroke.A > 0 && l.width > 0 {
				fmt.Fprintf(&b, "    STYLE\n      OUTLINECOLOR %s\n%s      WIDTH %g\n      LINECAP ROUND\n      LINEJOIN ROUND\n%s    END\n", rgb(l.stroke), opacity(l.stroke), l.width, pattern)
			}
		}
		b.WriteString("    END\n  END\n")
	}
	b.WriteString("END\n")
	path := filepath.Join(dir, sc.name+".map")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// mapserverConf is the MapServer 8 configuration file map2img is given: it only allows mapfiles.
const mapserverConf = "CONFIG\n  ENV\n    MS_MAP_PATTERN \"\\.map$\"\n  END\nEND\n"

// runMapServer draws the scenes with map2img, at most two at a time, and returns their images
// (nil where map2img failed, with the error).
func runMapServer(dir string, scenes []*diffScene) ([]*image.RGBA, []error) {
	imgs := make([]*image.RGBA, len(scenes))
	errs := make([]error, len(scenes))
	conf := filepath.Join(dir, "mapserver.conf")
	if err := os.WriteFile(conf, []byte(mapserverConf), 0o644); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return imgs, errs
	}
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, sc := range scenes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			imgs[i], errs[i] = sc.mapserver(dir, conf)
		}()
	}
	wg.Wait()
	return imgs, errs
}

func (sc *diffScene) mapserver(dir, conf string) (*image.RGBA, error) {
	mapfile, err := sc.writeMapfile(dir)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, sc.name+"_mapserver.png")
	if b, err := exec.Command("map2img", "-conf", conf, "-m", mapfile, "-o", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("map2img %s: %w\n%s", sc.name, err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, err
	}
	crop := image.NewRGBA(image.Rect(0, 0, sc.width, sc.height))
	draw.Draw(crop, crop.Bounds(), img, img.Bounds().Min, draw.Src)
	return crop, nil
}

// sideBySide returns ours, theirs and their difference (amplified 4×, on grey) next to each other.
func sideBySide(ours, theirs image.Image) *image.RGBA {
	b := ours.Bounds()
	w, h := b.Dx(), b.Dy()
	out := image.NewRGBA(image.Rect(0, 0, 3*w+16, h))
	draw.Draw(out, out.Bounds(), image.Black, image.Point{}, draw.Src)
	draw.Draw(out, image.Rect(0, 0, w, h), ours, b.Min, draw.Src)
	draw.Draw(out, image.Rect(w+8, 0, 2*w+8, h), theirs, theirs.Bounds().Min, draw.Src)
	for y := range h {
		for x := range w {
			p := color.NRGBAModel.Convert(ours.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
			q := color.NRGBAModel.Convert(theirs.At(theirs.Bounds().Min.X+x, theirs.Bounds().Min.Y+y)).(color.NRGBA)
			d := func(a, b uint8) uint8 { return uint8(max(0, min(255, 128+4*(int(a)-int(b))))) }
			out.SetRGBA(2*w+16+x, y, color.RGBA{d(p.R, q.R), d(p.G, q.G), d(p.B, q.B), 255})
		}
	}
	return out
}

func writePNG(path string, img image.Image) error {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// TestMapServerDifferential draws every scene with the renderer (checked against its golden image)
// and with map2img, and checks the measures of their difference against the scene's limits. With
// $MAPFARM_SIDE_BY_SIDE set to a directory, it also writes ours | MapServer's | difference there.
func TestMapServerDifferential(t *testing.T) {
	scenes := diffScenes()
	_, lookErr := exec.LookPath("map2img")
	var theirs []*image.RGBA
	var errs []error
	done := make(chan struct{})
	if lookErr == nil {
		go func() {
			defer close(done)
			theirs, errs = runMapServer(t.TempDir(), scenes)
		}()
	} else {
		close(done)
	}
	ours := make([]*image.RGBA, len(scenes))
	for i, sc := range scenes {
		m, v := sc.mapfarm()
		img, err := Draw(context.Background(), m, v)
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		ours[i] = img
		t.Run(sc.name+"/golden", func(t *testing.T) { checkGolden(t, "msdiff_"+sc.name, img) })
	}
	<-done
	if lookErr != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatal("map2img not installed (apt-get install mapserver-bin)")
		}
		t.Skip("map2img not installed (apt-get install mapserver-bin): goldens checked, no comparison")
	}
	side := os.Getenv("MAPFARM_SIDE_BY_SIDE")
	for i, sc := range scenes {
		t.Run(sc.name, func(t *testing.T) {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			m := compareImages(ours[i], theirs[i])
			t.Logf("%s: %v", sc.name, m)
			if side != "" {
				if err := writePNG(filepath.Join(side, "msdiff-"+sc.name+".png"), sideBySide(ours[i], theirs[i])); err != nil {
					t.Error(err)
				}
			}
			lim := sc.limits
			if m.meanDiff > lim.meanDiff || m.lineDev > lim.lineDev || m.ssim < lim.ssim {
				out := filepath.Join(os.TempDir(), "msdiff-"+sc.name+".png")
				_ = writePNG(out, sideBySide(ours[i], theirs[i]))
				t.Errorf("%s: %v; limits: mean colour diff ≤ %.1f, line deviation ≤ %.1f, SSIM ≥ %.3f (ours | MapServer | difference in %s)",
					sc.name, m, lim.meanDiff, lim.lineDev, lim.ssim, out)
			}
		})
	}
	for _, img := range ours {
		Release(img)
	}
}

// Colours of the parcel scenes: the style of issue 27's comparison.
var (
	parcelFill    = color.NRGBA{200, 200, 150, 255}
	parcelOutline = color.NRGBA{80, 80, 80, 255}
	diffPaper     = color.NRGBA{255, 255, 255, 255}
)

// parcels returns nx×ny squares of side size on a grid of pitch cell from (x0, y0).
func parcels(x0, y0 float64, nx, ny int, cell, size float64) []orb.Geometry {
	gs := make([]orb.Geometry, 0, nx*ny)
	for j := range ny {
		for i := range nx {
			x, y := x0+float64(i)*cell, y0+float64(j)*cell
			gs = append(gs, orb.Polygon{{{x, y}, {x + size, y}, {x + size, y + size}, {x, y + size}, {x, y}}})
		}
	}
	return gs
}

// parcelScene is a grid of 48 m parcels 50 m apart (2 m gaps) covering extent, drawn with a 0.5 px
// outline.
func parcelScene(name string, w, h int, extent orb.Bound, lim diffLimits) *diffScene {
	x0 := math.Floor(extent.Min[0]/50)*50 - 50
	y0 := math.Floor(extent.Min[1]/50)*50 - 50
	nx := int((extent.Max[0]-x0)/50) + 2
	ny := int((extent.Max[1]-y0)/50) + 2
	return &diffScene{
		name: name, width: w, height: h, extent: extent, background: diffPaper, limits: lim,
		layers: []diffLayer{{geoms: parcels(x0, y0, nx, ny, 50, 48), fill: parcelFill, stroke: parcelOutline, width: 0.5}},
	}
}

func diffScenes() []*diffScene {
	var scenes []*diffScene
	// Street: 2 km × 1.5 km at 1024×768 (1.953 m a pixel), placed so that a 2 m gap falls on
	// pixel column 127 (and every 128th after it) with both of its edges just off a pixel centre.
	const off = -100.02
	scenes = append(scenes,
		parcelScene("parcels_street", 1024, 768, orb.Bound{Min: orb.Point{off, off}, Max: orb.Point{off + 2000, off + 1500}}, diffLimits{meanDiff: 3, lineDev: 20, ssim: 0.98}),
		// Neighbourhood: 15.6 m a pixel, parcels 3 px wide with gaps of an eighth of a pixel.
		parcelScene("parcels_neighbourhood", 256, 192, orb.Bound{Min: orb.Point{10, 10}, Max: orb.Point{10 + 4000, 10 + 3000}}, diffLimits{meanDiff: 10, lineDev: 28, ssim: 0.95}),
		// Region: 65 m a pixel, every parcel smaller than a pixel.
		parcelScene("parcels_region", 192, 144, orb.Bound{Min: orb.Point{10, 10}, Max: orb.Point{10 + 192*65, 10 + 144*65}}, diffLimits{meanDiff: 12, lineDev: 20, ssim: 0.6}),
	)
	scenes = append(scenes,
		lineScene("hairlines", 0.5, diffLimits{meanDiff: 2, lineDev: 10, ssim: 0.97}),
		// One-pixel lines are snapped to pixel centres (crisp), MapServer's are not.
		lineScene("lines_1px", 1, diffLimits{meanDiff: 2, lineDev: 70, ssim: 0.8}),
		pointScene(), strokeScene(), holeScene())
	return scenes
}

// lineScene has vertical, horizontal and diagonal lines width px wide at every sixteenth of a
// pixel of sub-pixel phase (map units are pixels).
func lineScene(name string, width float64, lim diffLimits) *diffScene {
	const w, h = 192, 96
	var lines []orb.Geometry
	for k := range 16 {
		phase := float64(k) / 16
		x := 6 + 5.5*float64(k) + phase
		lines = append(lines, orb.LineString{{x, 50}, {x, 92}})
		y := 4 + 2.75*float64(k) + phase
		lines = append(lines, orb.LineString{{6, y}, {92, y}})
	}
	for k := range 8 {
		d := 10*float64(k) + float64(k)/8
		lines = append(lines, orb.LineString{{100 + d, 4}, {124 + d, 92}})        // steep
		lines = append(lines, orb.LineString{{100, 50 + d/2}, {186, 60 + d/1.6}}) // shallow
	}
	return &diffScene{
		name: name, width: w, height: h, extent: orb.Bound{Max: orb.Point{w, h}}, background: diffPaper, limits: lim,
		layers: []diffLayer{{geoms: lines, stroke: color.NRGBA{40, 40, 40, 255}, width: width}},
	}
}

// pointScene has markers smaller than a pixel, and a few larger ones, at random sub-pixel
// positions.
func pointScene() *diffScene {
	const w, h = 128, 96
	rng := rand.New(rand.NewPCG(27, 1))
	layer := func(n int, size float64, c color.NRGBA) diffLayer {
		var gs []orb.Geometry
		for range n {
			gs = append(gs, orb.Point{2 + rng.Float64()*(w-4), 2 + rng.Float64()*(h-4)})
		}
		return diffLayer{geoms: gs, fill: c, size: size}
	}
	outlined := func(l diffLayer) diffLayer {
		l.stroke, l.width = color.NRGBA{60, 40, 0, 255}, 0.5
		return l
	}
	return &diffScene{
		name: "points_subpixel", width: w, height: h, extent: orb.Bound{Max: orb.Point{w, h}}, background: diffPaper,
		limits: diffLimits{meanDiff: 2, lineDev: 4, ssim: 0.98},
		layers: []diffLayer{
			layer(600, 0.5, color.NRGBA{30, 30, 120, 255}),
			layer(300, 1, color.NRGBA{150, 30, 30, 255}),
			outlined(layer(300, 1.5, color.NRGBA{230, 200, 60, 255})),
			layer(30, 5, color.NRGBA{20, 110, 20, 255}),
		},
	}
}

// strokeScene has wide, dashed and translucent lines crossing each other.
func strokeScene() *diffScene {
	const w, h = 192, 128
	var zig orb.LineString
	for i := range 9 {
		zig = append(zig, orb.Point{12 + 21*float64(i), 30 + 18*float64(i%2)})
	}
	return &diffScene{
		name: "strokes", width: w, height: h, extent: orb.Bound{Max: orb.Point{w, h}}, background: color.NRGBA{240, 240, 230, 255},
		limits: diffLimits{meanDiff: 2, lineDev: 5, ssim: 0.98},
		layers: []diffLayer{
			{geoms: []orb.Geometry{zig}, stroke: color.NRGBA{70, 110, 170, 255}, width: 8},
			{geoms: []orb.Geometry{orb.LineString{{10, 80}, {90, 118}, {180, 84}}}, stroke: color.NRGBA{170, 60, 40, 255}, width: 2, dash: []float64{8, 5}},
			{geoms: []orb.Geometry{orb.LineString{{20, 110}, {100, 8}, {170, 115}}}, stroke: color.NRGBA{20, 140, 60, 128}, width: 6},
			{geoms: []orb.Geometry{orb.LineString{{5, 60.3}, {187, 66.7}}}, stroke: color.NRGBA{30, 30, 30, 255}, width: 3},
		},
	}
}

// holeScene has polygons with holes, opaque and translucent, outlined.
func holeScene() *diffScene {
	const w, h = 160, 120
	square := func(x, y, s float64) orb.Ring {
		return orb.Ring{{x, y}, {x + s, y}, {x + s, y + s}, {x, y + s}, {x, y}}
	}
	circle := func(cx, cy, r float64, n int) orb.Ring {
		var ring orb.Ring
		for i := range n {
			a := 2 * math.Pi * float64(i) / float64(n)
			ring = append(ring, orb.Point{cx + r*math.Cos(a), cy + r*math.Sin(a)})
		}
		return append(ring, ring[0])
	}
	return &diffScene{
		name: "polygons_holes", width: w, height: h, extent: orb.Bound{Max: orb.Point{w, h}}, background: diffPaper,
		limits: diffLimits{meanDiff: 2, lineDev: 30, ssim: 0.95},
		layers: []diffLayer{
			{geoms: []orb.Geometry{
				orb.Polygon{square(10.3, 10.6, 60), square(25.2, 25.7, 12), square(45.5, 40.1, 18)},
				orb.Polygon{circle(110.4, 45.2, 32, 48), circle(110.4, 45.2, 14, 24)},
			}, fill: color.NRGBA{120, 170, 210, 255}, stroke: color.NRGBA{30, 50, 90, 255}, width: 1},
			{geoms: []orb.Geometry{
				orb.Polygon{square(40.5, 50.5, 60), circle(70.5, 80.5, 16, 32)},
			}, fill: color.NRGBA{220, 120, 40, 140}, stroke: color.NRGBA{120, 50, 10, 255}, width: 2},
		},
	}
}
