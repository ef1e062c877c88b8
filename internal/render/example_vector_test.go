package render_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/render"
)

// Draw the same map as SVG and as PDF: DrawEncoded makes the renderer's drawing calls on a vector
// surface instead of the raster one.
func ExampleRenderer_DrawEncoded() {
	r, err := render.NewRenderer()
	if err != nil {
		panic(err)
	}
	m := render.Map{
		Background: color.NRGBA{198, 219, 239, 255},
		Layers: []render.Layer{{
			Features: render.Features{{Geom: orb.Polygon{{{0, 0}, {60, 0}, {60, 40}, {0, 40}, {0, 0}}}, Label: "Westland"}},
			Symbol:   render.Symbol{Fill: color.NRGBA{232, 228, 216, 255}, Stroke: color.NRGBA{96, 96, 96, 255}, StrokeWidth: 0.75},
			Label:    &render.LabelStyle{Size: 8, Color: color.NRGBA{32, 32, 32, 255}},
		}},
	}
	v := render.View{Extent: orb.Bound{Min: orb.Point{-10, -10}, Max: orb.Point{110, 70}}, Width: 300, Height: 200, DPI: 96}
	for _, f := range []render.Format{render.SVG, render.PDF} {
		var buf bytes.Buffer
		if err := r.DrawEncoded(context.Background(), &buf, m, v, f, render.EncodeOptions{}); err != nil {
			panic(err)
		}
		// SVG text is plain; the PDF's is in its Flate-compressed content stream.
		fmt.Println(f.ContentType(), bytes.Contains(buf.Bytes(), []byte("Westland")))
	}
	// Output:
	// image/svg+xml true
	// application/pdf false
}
