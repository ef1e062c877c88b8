package render

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/adler32"
	"image"
	"image/color"
	"image/png"
	"io"
	"sync"
	"testing"
)

// bandTestImage returns a w×h image of pseudo-random blocks (so rows repeat, as in maps); when
// transparent, a third of its pixels are transparent and a third half transparent.
func bandTestImage(w, h int, transparent bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(7)
	for y := range h {
		for x := range w {
			if x%5 == 0 {
				seed = seed*1664525 + 1013904223
			}
			c := color.NRGBA{uint8(seed >> 8), uint8(seed >> 16), uint8(seed >> 24), 255}
			if transparent {
				c.A = [3]uint8{255, 0, 128}[(x/3+y)%3]
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// TestEncodeBands checks that a PNG encoded in 1 to 4 bands, by one or two goroutines, decodes to
// the image's pixels (opaque and transparent images of odd sizes) and that its zlib stream's
// Adler-32 is right.
func TestEncodeBands(t *testing.T) {
	var pool sync.Pool
	for _, size := range []image.Point{{7, 5}, {301, 97}} {
		for _, transparent := range []bool{false, true} {
			img := bandTestImage(size.X, size.Y, transparent)
			var want image.Image
			for bands := 1; bands <= 4; bands++ {
				for _, workers := range []int{1, 2} {
					var buf bytes.Buffer
					if err := encodeRGBAPNGBands(&buf, img, transparent, 1, &pool, bands, workers); err != nil {
						t.Fatal(err)
					}
					checkZlibStream(t, buf.Bytes())
					got, err := png.Decode(bytes.NewReader(buf.Bytes()))
					if err != nil {
						t.Fatalf("%v transparent %v, %d bands: %v", size, transparent, bands, err)
					}
					if want == nil {
						want = got
					}
					for y := range size.Y {
						for x := range size.X {
							g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
							w := color.NRGBAModel.Convert(want.At(x, y)).(color.NRGBA)
							r, gg, b, a := img.At(x, y).RGBA()
							r2, g2, b2, a2 := got.At(x, y).RGBA()
							if g != w || a != a2 || diff(r, r2) > 0x101 || diff(gg, g2) > 0x101 || diff(b, b2) > 0x101 {
								t.Fatalf("%v transparent %v, %d bands, %d workers: pixel (%d,%d) is %v, want %v (image %v)",
									size, transparent, bands, workers, x, y, g, w, img.At(x, y))
							}
						}
					}
				}
			}
		}
	}
}

func diff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// checkZlibStream inflates the IDAT chunks of a PNG to their end, which checks their Adler-32.
func checkZlibStream(t *testing.T, file []byte) {
	t.Helper()
	var idat []byte
	for p := file[8:]; len(p) >= 12; {
		n := binary.BigEndian.Uint32(p)
		if string(p[4:8]) == "IDAT" {
			idat = append(idat, p[8:8+n]...)
		}
		p = p[12+n:]
	}
	zr, err := zlib.NewReader(bytes.NewReader(idat))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatalf("zlib stream: %v", err)
	}
}

// TestAdler32Combine checks adler32Combine against the checksum of the whole.
func TestAdler32Combine(t *testing.T) {
	data := bytes.Repeat([]byte("mapfarm\xff\x00\x80"), 30000)
	for _, cut := range []int{0, 1, 65521, 100000, len(data)} {
		a, b := data[:cut], data[cut:]
		if got, want := adler32Combine(adler32.Checksum(a), adler32.Checksum(b), len(b)), adler32.Checksum(data); got != want {
			t.Errorf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}
