package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"

	xdraw "golang.org/x/image/draw"
)

// maxTile bounds the side of a fill pattern tile, in pixels.
const maxTile = 512

// hatchTile returns a seamless square tile of lines of colour c, spacing pixels apart and about
// width pixels wide, on transparent.
func hatchTile(h HatchStyle, c color.NRGBA, spacing, width float64) *image.NRGBA {
	n := int(math.Round(min(max(spacing, 3), maxTile)))
	w := max(1, int(math.Round(width)))
	tile := image.NewNRGBA(image.Rect(0, 0, n, n))
	set := func(x, y int) {
		x, y = ((x%n)+n)%n, ((y%n)+n)%n
		tile.SetNRGBA(x, y, c)
	}
	for i := 0; i < n; i++ {
		for k := 0; k < w; k++ {
			if h == HatchHorizontal || h == HatchCross {
				set(i, k)
			}
			if h == HatchVertical || h == HatchCross {
				set(k, i)
			}
			if h == HatchForwardDiagonal || h == HatchDiagonalCross {
				set(i, n-1-i+k)
			}
			if h == HatchBackwardDiagonal || h == HatchDiagonalCross {
				set(i, i+k)
			}
		}
	}
	return tile
}

// patternTile returns img scaled to width pixels (its own width at 96 DPI when width is 0), the
// aspect ratio kept; nil for an empty image.
func patternTile(img image.Image, width float64) image.Image {
	b := img.Bounds()
	if b.Empty() {
		return nil
	}
	if width <= 0 {
		width = float64(b.Dx())
	}
	w := int(math.Round(min(max(width, 1), maxTile)))
	h := max(1, min(maxTile, int(math.Round(float64(w)*float64(b.Dy())/float64(b.Dx())))))
	if w == b.Dx() && h == b.Dy() {
		return img
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	xdraw.BiLinear.Scale(out, out.Bounds(), img, b, draw.Src, nil)
	return out
}
