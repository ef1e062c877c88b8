package render_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"

	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/paulmach/orb"
)

// Draw a small map with one polygon layer and its labels, then encode it as PNG.
func Example() {
	countries := render.NewIndex([]render.Feature{
		{Geom: orb.Polygon{{{0, 0}, {60, 0}, {60, 40}, {0, 40}, {0, 0}}}, Label: "Westland"},
		{Geom: orb.Polygon{{{60, 0}, {100, 0}, {100, 60}, {60, 40}, {60, 0}}}, Label: "Eastland"},
	})
	m := render.Map{
		Background: color.NRGBA{198, 219, 239, 255},
		Layers: []render.Layer{{
			Name:     "countries",
			Features: countries,
			Symbol:   render.Symbol{Fill: color.NRGBA{232, 228, 216, 255}, Stroke: color.NRGBA{96, 96, 96, 255}, StrokeWidth: 0.75},
			Label:    &render.LabelStyle{Size: 8, Color: color.NRGBA{32, 32, 32, 255}, Halo: color.NRGBA{255, 255, 255, 255}, HaloWidth: 0.75},
		}},
	}
	v := render.View{Extent: orb.Bound{Min: orb.Point{-10, -10}, Max: orb.Point{110, 70}}, Width: 300, Height: 200, DPI: 96}

	img, err := render.Draw(context.Background(), m, v)
	if err != nil {
		panic(err)
	}
	defer render.Release(img)
	var buf bytes.Buffer
	if err := render.Encode(&buf, img, render.PNG, render.EncodeOptions{}); err != nil {
		panic(err)
	}
	fmt.Println(img.Bounds().Dx(), img.Bounds().Dy(), render.PNG.ContentType())
	// Output: 300 200 image/png
}
