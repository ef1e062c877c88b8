package render

import (
	"image/color"
	"math"

	"github.com/paulmach/orb"
)

// The reference map of the benchmark (bench/mapserver/world.map): MapServer's sizes are pixels at
// 72 DPI, so the view uses DPI 72 and the sizes below are points = pixels.
var (
	worldExtent = orb.Bound{Min: orb.Point{-26716677.7903, -20037508.3428}, Max: orb.Point{26716677.7903, 20037508.3428}}
	ocean       = color.NRGBA{198, 219, 239, 255}
	land        = color.NRGBA{232, 228, 216, 255}
	outline     = color.NRGBA{96, 96, 96, 255}
	labelInk    = color.NRGBA{32, 32, 32, 255}
	white       = color.NRGBA{255, 255, 255, 255}

	// z4 tile 8/5 (over Europe and Africa) and a z8 tile over Paris.
	tileZ4 = orb.Bound{Min: orb.Point{0, 5009377.085697}, Max: orb.Point{2504688.542849, 7514065.628546}}
	tileZ8 = orb.Bound{Min: orb.Point{156543.033928, 6105178.323196}, Max: orb.Point{313086.067856, 6261721.357124}}
)

func worldMap(fs Features) Map {
	ix := NewIndex(fs)
	return Map{
		Background: ocean,
		Layers: []Layer{{
			Name:     "countries",
			Features: ix,
			Symbol:   Symbol{Fill: land, Stroke: outline, StrokeWidth: 0.75},
			Label:    &LabelStyle{Size: 8, Color: labelInk, Halo: white, HaloWidth: 0.75},
		}},
	}
}

func worldView() View { return View{Extent: worldExtent, Width: 1024, Height: 768, DPI: 96} }

func tileView(b orb.Bound) View { return View{Extent: b, Width: 256, Height: 256, DPI: 96} }

// lonLatToMercator projects degrees to EPSG:3857 metres.
func lonLatToMercator(lon, lat float64) (float64, float64) {
	const r = 6378137.0
	x := lon * math.Pi / 180 * r
	y := math.Log(math.Tan(math.Pi/4+lat*math.Pi/360)) * r
	return x, y
}
