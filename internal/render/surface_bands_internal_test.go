package render

import (
	"context"
	"image"
	"image/color"
	"runtime"
	"testing"
)

// drawBanded draws m for v as Renderer.Draw does, its fills and thin strokes replayed in the given
// number of bands (1: drawn straight away), and returns the image and the number of replays made
// in more than one band.
func drawBanded(t *testing.T, r *Renderer, m Map, v View, bands int) (*image.RGBA, int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	s := NewGGSurface(img, r.Fonts())
	s.record(bands)
	if err := r.drawTo(context.Background(), s, &drawState{surface: s}, m, v); err != nil {
		t.Fatal(err)
	}
	s.flushList()
	return img, s.list.banded
}

// TestBandedDrawIdentical draws the dense street view (fills and hairlines), the same with
// translucent parcels and 1-pixel outlines, and the world sample (fills, borders, labels) in 2
// and 7 bands: each image must be byte-identical to the one drawn straight away.
func TestBandedDrawIdentical(t *testing.T) {
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	street, sv := diffScenes()[0].mapfarm()
	translucent, _ := diffScenes()[0].mapfarm()
	translucent.Layers[0].Symbol.Fill = color.NRGBA{200, 120, 40, 140}
	translucent.Layers[0].Symbol.StrokeWidth = 0.75
	translucent.Layers[0].Symbol.Stroke = color.NRGBA{20, 20, 160, 200}
	scenes := []struct {
		name string
		m    Map
		v    View
	}{
		{"street", street, sv},
		{"street translucent", translucent, sv},
		{"world", worldMap(loadCountries(t)), worldView()},
	}
	for _, sc := range scenes {
		want, n := drawBanded(t, r, sc.m, sc.v, 1)
		if n != 0 {
			t.Fatalf("%s: drawn straight away, %d banded replays", sc.name, n)
		}
		for _, bands := range []int{2, 7} {
			got, n := drawBanded(t, r, sc.m, sc.v, bands)
			if n == 0 {
				t.Errorf("%s in %d bands: nothing was replayed in bands", sc.name, bands)
			}
			diff, first := 0, image.Point{-1, -1}
			for i := 0; i < len(want.Pix); i += 4 {
				if [4]byte(want.Pix[i:i+4]) != [4]byte(got.Pix[i:i+4]) {
					if diff == 0 {
						first = image.Pt(i/4%sc.v.Width, i/4/sc.v.Width)
					}
					diff++
				}
			}
			if diff > 0 {
				t.Errorf("%s in %d bands: %d pixels differ from the sequential draw, the first at %v: %v, want %v",
					sc.name, bands, diff, first, got.RGBAAt(first.X, first.Y), want.RGBAAt(first.X, first.Y))
			}
		}
	}
}

// TestDrawBandsLeaveBusyCores checks that a draw is banded only when a core is free: alone, it
// uses up to two bands; among as many draws in progress as there are cores, one (drawn straight
// away, as before).
func TestDrawBandsLeaveBusyCores(t *testing.T) {
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	r.drawing.Store(1)
	if got, want := r.drawBands(), min(2, procs); got != want {
		t.Errorf("a draw alone on %d cores: %d bands, want %d", procs, got, want)
	}
	r.drawing.Store(int32(procs))
	if got := r.drawBands(); got >= 2 {
		t.Errorf("one of %d draws in progress on %d cores: %d bands, want one", procs, procs, got)
	}
}
