//go:build proj

package mapdraw

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/golden"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/render/rendertest"
)

// The world sample's colours: the map's background (sea) and the countries' fill.
var (
	seaColor  = color.NRGBA{198, 219, 239, 255}
	landColor = color.NRGBA{232, 228, 216, 255}
)

// Tests of what a drawing in another system shows: the whole of a polar map without seams,
// and a conic map beyond its system's area of use.

// TestPolarGolden draws the world sample's countries in polar stereographic systems, projected
// on the fly: the Arctic in EPSG:3413 (NSIDC north, central meridian 45°W) from the Web
// Mercator countries, and Antarctica in EPSG:3031 (central meridian 0°) from the WGS 84 ones.
// The antimeridian of a polar system is a ray from the pole inside the map, and the data end
// at ±180° (and Antarctica's ring runs along 180° to the pole and back): no seam may be drawn
// along either (the pixels along 135°E and 180° in Siberia, along 180° and at the pole in
// Antarctica are the countries' fill, not the outline's grey), and no polygon may turn inside
// out or wrap across the map (a ring of sea all round each pole is sea). Then the image is
// compared with a golden one (MAPFARM_UPDATE_GOLDEN=1 rewrites it).
func TestPolarGolden(t *testing.T) {
	c := catalogtest.Samples(t)
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	const size = 320
	for _, tc := range []struct {
		name, service string
		wkid          int
		half          float64 // half the extent's side, metres
		land, sea     []orb.Point
	}{
		{"arctic_3413", "world", 3413, 4500000,
			[]orb.Point{{135, 62}, {135, 66}, {135, 70}, {180, 66.5}, {180, 67.5}, {179.9, 68}, {-179.9, 68}},
			append(ring(85, 20), orb.Point{-150, 75}, orb.Point{-40, 55}, orb.Point{175, 57})},
		{"antarctica_3031", "world_geographic", 3031, 4000000,
			[]orb.Point{{0, -90}, {180, -89}, {180, -87.5}, {180, -86}, {-179.9, -87}, {179.9, -87}, {90, -80}, {-90, -80}},
			ring(-57, 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, _ := c.Service(tc.service)
			m, _ := svc.Map("Layers")
			ext := orb.Bound{Min: orb.Point{-tc.half, -tc.half}, Max: orb.Point{tc.half, tc.half}}
			b, err := Draw(context.Background(), r, Request{Map: m, SR: proj.SR{WKID: tc.wkid},
				View:   render.View{Extent: ext, Width: size, Height: size, DPI: 96},
				Layers: []LayerState{{ID: 1, Visible: true}}, Format: render.PNG})
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			to, err := c.Systems().Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: tc.wkid})
			if err != nil {
				t.Fatal(err)
			}
			res := 2 * tc.half / size
			at := func(ll orb.Point) (int, int, color.NRGBA) {
				p, err := to.Point(ll)
				if err != nil {
					t.Fatalf("%v in %d: %v", ll, tc.wkid, err)
				}
				x, y := int((p[0]-ext.Min[0])/res), int((ext.Max[1]-p[1])/res)
				if x < 0 || y < 0 || x >= size || y >= size {
					t.Fatalf("%v is outside the image (pixel %d, %d)", ll, x, y)
				}
				return x, y, color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			}
			for _, ll := range tc.land {
				if x, y, got := at(ll); !near(got, landColor, 24) {
					t.Errorf("%v (pixel %d, %d) is %v, want the countries' fill %v (a seam or a hole)", ll, x, y, got, landColor)
				}
			}
			for _, ll := range tc.sea {
				if x, y, got := at(ll); !near(got, seaColor, 24) {
					t.Errorf("%v (pixel %d, %d) is %v, want the sea %v (a polygon filled across the map)", ll, x, y, got, seaColor)
				}
			}
			checkGolden(t, tc.name, img)
		})
	}
}

// TestAlaskaIn5070: US National Albers (EPSG:5070) has the conterminous states as its area of
// use (west to 124.8°W), but its projection holds everywhere but the south pole, and ArcGIS
// draws Alaska in it, distorted. So does mapfarm: a view of Alaska in 5070 (states stored in
// Web Mercator) shows Alaska's interior, and its Aleutians on both sides of 180°, in the
// states' fill, not the white background.
func TestAlaskaIn5070(t *testing.T) {
	c := catalogtest.Samples(t)
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	svc, _ := c.Service("usa")
	m, _ := svc.Map("Layers")
	to, err := c.Systems().Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: 5070})
	if err != nil {
		t.Fatal(err)
	}
	ext := orb.Bound{Min: orb.Point{-6000000, 2000000}, Max: orb.Point{-1000000, 7000000}}
	const size = 250
	var ls []LayerState
	for _, l := range m.Layers {
		ls = append(ls, LayerState{ID: l.ID, Visible: true})
	}
	b, err := Draw(context.Background(), r, Request{Map: m, View: render.View{Extent: ext, Width: size, Height: size, DPI: 96},
		SR: proj.SR{WKID: 5070}, Layers: ls, Format: render.PNG})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	white := color.NRGBA{255, 255, 255, 255}
	res := (ext.Max[0] - ext.Min[0]) / size
	for _, ll := range []orb.Point{{-150, 64}, {-155, 66}, {-145, 62}} {
		p, err := to.Point(ll)
		if err != nil {
			t.Fatal(err)
		}
		x, y := int((p[0]-ext.Min[0])/res), int((ext.Max[1]-p[1])/res)
		// The states' fill, or county lines: anything but the background within 2 pixels.
		drawn := 0
		for dy := -2; dy <= 2; dy++ {
			for dx := -2; dx <= 2; dx++ {
				if !near(color.NRGBAModel.Convert(img.At(x+dx, y+dy)).(color.NRGBA), white, 8) {
					drawn++
				}
			}
		}
		if drawn < 20 {
			t.Errorf("Alaska at %v (pixel %d, %d): %d of 25 pixels drawn, want Alaska drawn (clipped to 5070's area of use?)", ll, x, y, drawn)
		}
	}
}

// ring returns points every step degrees of longitude along the parallel lat.
func ring(lat, step float64) []orb.Point {
	var ps []orb.Point
	for lon := -180.0; lon < 180; lon += step {
		ps = append(ps, orb.Point{lon, lat})
	}
	return ps
}

// near reports whether every channel of a and b is within tol.
func near(a, b color.NRGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// checkGolden compares img with testdata/name.png (or rewrites it with MAPFARM_UPDATE_GOLDEN=1).
func checkGolden(t *testing.T, name string, img image.Image) {
	t.Helper()
	rendertest.CheckGolden(t, "mapdraw", name, img, golden.Update(), "MAPFARM_UPDATE_GOLDEN=1 go test -tags proj ./internal/mapdraw -run Golden")
}
