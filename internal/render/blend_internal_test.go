package render

import (
	"image/color"
	"math/rand/v2"
	"testing"
)

// TestBlendPixLanes checks the four-lane blend against the per-channel formula for every alpha and
// coverage, with colours at the edges of the premultiplied range and destinations at the edges of
// a byte (where a lane would overflow into the next).
func TestBlendPixLanes(t *testing.T) {
	ref := func(p [4]byte, c [4]uint32, cov uint32) [4]byte {
		a := div255(c[3] * cov)
		ia := 255 - a
		var out [4]byte
		for i := range 4 {
			out[i] = byte(div255(c[i]*cov + uint32(p[i])*ia))
		}
		return out
	}
	rng := rand.New(rand.NewPCG(27, 2))
	dsts := [][4]byte{{0, 0, 0, 0}, {255, 255, 255, 255}, {1, 254, 128, 127}, {255, 0, 255, 0}}
	for range 4 {
		dsts = append(dsts, [4]byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())})
	}
	bad := 0
	for a := range 256 {
		cols := []color.NRGBA{{255, 255, 255, uint8(a)}, {0, 0, 0, uint8(a)}, {255, 0, 128, uint8(a)},
			{uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(a)}}
		for _, col := range cols {
			c := premul(col)
			for cov := range uint32(256) {
				for _, d := range dsts {
					p := d
					blendPix(p[:], c, cov)
					if want := ref(d, c, cov); p != want && bad < 10 {
						bad++
						t.Errorf("blend %v at %d over %v = %v, want %v", col, cov, d, p, want)
					}
				}
			}
		}
	}
}
