package mapdraw

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// TestBufferLayerDistance: a selection buffer distance that is not finite, negative or longer
// than the extent's diagonal is a bad request, whoever calls bufferLayer.
func TestBufferLayerDistance(t *testing.T) {
	v := render.View{Extent: orb.Bound{Max: orb.Point{3000, 4000}}, Width: 300, Height: 400, DPI: 96}
	fs := []render.Feature{{Geom: orb.LineString{{0, 0}, {1000, 1000}}}}
	for _, tc := range []struct {
		d  float64
		ok bool
	}{
		{math.NaN(), false}, {math.Inf(1), false}, {-1, false}, {5000.001, false}, {1e308, false},
		{0, true}, {100, true}, {5000, true},
	} {
		_, err := bufferLayer(fs, LayerState{Drawing: symbology.Drawing{ShowBuffer: true, BufferDistance: tc.d}}, color.NRGBA{0, 255, 255, 255}, v)
		var bad *ErrBadRequest
		if tc.ok && err != nil || !tc.ok && !errors.As(err, &bad) {
			t.Errorf("distance %g: err = %v, want ok %v", tc.d, err, tc.ok)
		}
	}
}

// TestBufferLayerBounded: the widest allowed buffer around thousands of detailed lines is drawn
// from a bounded number of pieces and covers what it must. How long it takes is
// BenchmarkBufferLayerWidest's business (about 5 s on 2 cores; a timed test flaked under -race on a
// loaded machine).
func TestBufferLayerBounded(t *testing.T) {
	const size = 2048
	v := render.View{Extent: orb.Bound{Max: orb.Point{size, size}}, Width: size, Height: size, DPI: 96}
	var fs []render.Feature
	vertices := 0
	for i := range 2000 {
		ls := orb.LineString{}
		for j := range 50 {
			ls = append(ls, orb.Point{float64(i%40)*50 + float64(j), float64(i/40)*40 + float64(j%2)})
		}
		vertices += len(ls)
		fs = append(fs, render.Feature{Geom: ls})
	}
	d := MaxBufferDistance(v.Extent)
	start := time.Now()
	l, err := bufferLayer(fs, LayerState{Drawing: symbology.Drawing{ShowBuffer: true, BufferDistance: d}}, color.NRGBA{255, 0, 0, 255}, v)
	if err != nil {
		t.Fatal(err)
	}
	pieces := 0
	err = l.Features.Search(context.Background(), v.Extent, func(f render.Feature) bool {
		pieces += len(f.Geom.(orb.MultiPolygon))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if pieces > 10000 {
		t.Errorf("%d pieces for %d vertices", pieces, vertices)
	}
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	img, err := r.Draw(context.Background(), render.Map{Layers: []render.Layer{l}}, v)
	if err != nil {
		t.Fatal(err)
	}
	// The buffer (the selection colour at half opacity, over nothing) reaches every corner.
	for _, p := range []image.Point{{0, 0}, {size - 1, 0}, {0, size - 1}, {size - 1, size - 1}} {
		if c := img.RGBAAt(p.X, p.Y); c.A < 120 || c.R != c.A || c.G != 0 || c.B != 0 {
			t.Errorf("pixel %v is %v, want the buffer's half-opaque red", p, c)
		}
	}
	t.Logf("%d vertices, %d pieces, %v", vertices, pieces, time.Since(start))
}

// BenchmarkBufferLayerWidest times TestBufferLayerBounded's case: the widest allowed buffer
// around 2,000 lines of 50 vertices, built and drawn at 2048×2048.
//
//	go test ./internal/mapdraw -run '^$' -bench BufferLayerWidest -benchtime 1x
func BenchmarkBufferLayerWidest(b *testing.B) {
	const size = 2048
	v := render.View{Extent: orb.Bound{Max: orb.Point{size, size}}, Width: size, Height: size, DPI: 96}
	var fs []render.Feature
	for i := range 2000 {
		ls := orb.LineString{}
		for j := range 50 {
			ls = append(ls, orb.Point{float64(i%40)*50 + float64(j), float64(i/40)*40 + float64(j%2)})
		}
		fs = append(fs, render.Feature{Geom: ls})
	}
	r, err := render.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	state := LayerState{Drawing: symbology.Drawing{ShowBuffer: true, BufferDistance: MaxBufferDistance(v.Extent)}}
	for b.Loop() {
		l, err := bufferLayer(fs, state, color.NRGBA{255, 0, 0, 255}, v)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Draw(context.Background(), render.Map{Layers: []render.Layer{l}}, v); err != nil {
			b.Fatal(err)
		}
	}
}
