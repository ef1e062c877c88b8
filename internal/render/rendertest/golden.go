// Package rendertest compares the images tests draw with golden images kept in the test
// package's testdata folder, within the tolerance anti-aliasing and font rasterising need, and
// with each other, pixel for pixel.
package rendertest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// CheckGolden compares img with testdata/name.png, or writes img there when update is set
// (golden.Update: MAPFARM_UPDATE_GOLDEN=1). A pixel matches when every channel is within 24, the image when
// at most 0.2% of its pixels do not; an image that does not is saved in the temporary folder as
// <pkg>-golden-<name>.png. regen is the command that rewrites the golden images.
func CheckGolden(t testing.TB, pkg, name string, img image.Image, update bool, regen string) {
	t.Helper()
	path := filepath.Join("testdata", name+".png")
	if update {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to create it)", err, regen)
	}
	want, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if want.Bounds() != img.Bounds() {
		t.Fatalf("%s: size %v, golden %v", name, img.Bounds(), want.Bounds())
	}
	bad := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if !near(img.At(x, y), want.At(x, y), 24) {
				bad++
			}
		}
	}
	if limit := img.Bounds().Dx() * img.Bounds().Dy() / 500; bad > limit {
		out := filepath.Join(os.TempDir(), pkg+"-golden-"+name+".png")
		var buf bytes.Buffer
		_ = png.Encode(&buf, img)
		_ = os.WriteFile(out, buf.Bytes(), 0o644)
		t.Errorf("%s: %d pixels differ from the golden image (limit %d); got image saved as %s", name, bad, limit, out)
	}
}

// near reports whether every channel of a and b, as non-premultiplied 8-bit colours, is within
// tol.
func near(a, b color.Color, tol int) bool {
	na, nb := color.NRGBAModel.Convert(a).(color.NRGBA), color.NRGBAModel.Convert(b).(color.NRGBA)
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(na.R, nb.R) && d(na.G, nb.G) && d(na.B, nb.B) && d(na.A, nb.A)
}

// Differing counts the pixels that differ at all between a and b, two images of the same size;
// images of different sizes fail t.
func Differing(t testing.TB, a, b image.Image) int {
	t.Helper()
	if a.Bounds() != b.Bounds() {
		t.Fatalf("sizes differ: %v and %v", a.Bounds(), b.Bounds())
	}
	n := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				n++
			}
		}
	}
	return n
}

// CheckNear fails t unless got (drawn by gotBy) and want (drawn by wantBy) are of one size, want
// shows 3 colours or more (against a blank picture the comparison would prove nothing), and at
// most 0.5% of the pixels differ by more than 8 levels (of 255) in a channel, alpha aside. It
// returns the number of pixels beyond that tolerance.
func CheckNear(t testing.TB, got, want image.Image, gotBy, wantBy string) int {
	t.Helper()
	if got.Bounds() != want.Bounds() {
		t.Fatalf("%s drew %v, %s %v", gotBy, got.Bounds(), wantBy, want.Bounds())
	}
	far := func(a, b uint32) bool { return a>>8 > b>>8+8 || b>>8 > a>>8+8 }
	off, colours := 0, map[[3]uint32]bool{}
	for y := want.Bounds().Min.Y; y < want.Bounds().Max.Y; y++ {
		for x := want.Bounds().Min.X; x < want.Bounds().Max.X; x++ {
			r1, g1, b1, _ := got.At(x, y).RGBA()
			r2, g2, b2, _ := want.At(x, y).RGBA()
			colours[[3]uint32{r2 >> 8, g2 >> 8, b2 >> 8}] = true
			if far(r1, r2) || far(g1, g2) || far(b1, b2) {
				off++
			}
		}
	}
	if len(colours) < 3 {
		t.Fatalf("%s drew only %d colours; the comparison would prove nothing", wantBy, len(colours))
	}
	if n := want.Bounds().Dx() * want.Bounds().Dy(); off > n/200 {
		t.Errorf("%d of %d pixels differ between %s's image and %s's", off, n, gotBy, wantBy)
	}
	return off
}
