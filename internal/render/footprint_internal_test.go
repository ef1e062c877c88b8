package render

import (
	"context"
	"image"
	"testing"
)

// plainSurface hides GGSurface's footprint methods: every polygon is filled and stroked.
type plainSurface struct{ Surface }

// supersampled draws m for v at k times the size (symbols k times larger) and box-filters it down.
func supersampled(t *testing.T, m Map, v View, k int) *image.RGBA {
	big := v
	big.Width, big.Height, big.DPI = v.Width*k, v.Height*k, 96*float64(k)
	img, err := Draw(context.Background(), m, big)
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
	for y := range v.Height {
		for x := range v.Width {
			var s [4]int
			for j := range k {
				for i := range k {
					o := img.PixOffset(x*k+i, y*k+j)
					for c := range 4 {
						s[c] += int(img.Pix[o+c])
					}
				}
			}
			o := out.PixOffset(x, y)
			for c := range 4 {
				out.Pix[o+c] = uint8((s[c] + k*k/2) / (k * k))
			}
		}
	}
	return out
}

func TestFootprintsProbe(t *testing.T) {
	for _, sc := range diffScenes()[1:3] {
		m, v := sc.mapfarm()
		a, err := Draw(context.Background(), m, v)
		if err != nil {
			t.Fatal(err)
		}
		b := image.NewRGBA(image.Rect(0, 0, v.Width, v.Height))
		if err := defaultRenderer().DrawTo(context.Background(), plainSurface{NewGGSurface(b, nil)}, m, v); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: footprints vs outlines %v", sc.name, compareImages(a, b))
		ss := supersampled(t, m, v, 8)
		t.Logf("%s: ours vs 8x supersampled %v", sc.name, compareImages(a, ss))
	}
}
