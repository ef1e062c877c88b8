package worker

import (
	"image"
	"image/color"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"github.com/mapfarm/mapfarm/internal/render"
)

func TestUniform(t *testing.T) {
	bg := color.NRGBA{198, 219, 239, 255}
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = bg.R, bg.G, bg.B, bg.A
	}
	sub := img.SubImage(image.Rect(4, 4, 8, 8)).(*image.RGBA)
	if !uniform(sub, bg) || !uniform(img, bg) {
		t.Fatal("a background-only image is not uniform")
	}
	img.Set(1, 1, color.Black)
	if uniform(img, bg) {
		t.Error("an image with a drawn pixel is uniform")
	}
	if !uniform(sub, bg) {
		t.Error("a pixel outside the sub-image counted")
	}
	if uniform(image.NewRGBA(image.Rect(0, 0, 2, 2)), bg) {
		t.Error("a transparent image matches an opaque background")
	}
	if !uniform(image.NewRGBA(image.Rect(0, 0, 2, 2)), color.NRGBA{}) {
		t.Error("a transparent image does not match a transparent background")
	}
}

func TestTileFormat(t *testing.T) {
	tests := map[string]render.Format{"PNG": render.PNG, "png8": render.PNG8, "PNG24": render.PNG, "PNG32": render.PNG32, "JPEG": render.JPG, "MIXED": render.JPGPNG}
	for in, want := range tests {
		if got, err := tileFormat(in); err != nil || got != want {
			t.Errorf("tileFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := tileFormat("LERC"); err == nil {
		t.Error("LERC accepted")
	}
}

// The anchor of a concave polygon lies inside it, and the largest part of a multipolygon is
// chosen.
func TestAnchorOf(t *testing.T) {
	// A "C" shape whose centroid (and bounding-box centre) lies outside it.
	c := orb.Polygon{orb.Ring{{0, 0}, {10, 0}, {10, 2}, {2, 2}, {2, 8}, {10, 8}, {10, 10}, {0, 10}, {0, 0}}}
	small := orb.Polygon{orb.Ring{{20, 20}, {21, 20}, {21, 21}, {20, 21}, {20, 20}}}
	for _, g := range []orb.Geometry{c, orb.MultiPolygon{small, c}} {
		a, ok := anchorOf(g)
		if !ok || !planar.PolygonContains(c, a.p) {
			t.Errorf("anchor of %T = %v (ok %v), not inside the C", g, a.p, ok)
		}
	}
	if _, ok := anchorOf(orb.LineString{{0, 0}, {1, 1}}); ok {
		t.Error("a line has an anchor")
	}
}
