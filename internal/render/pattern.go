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

// defaultHatchSpacing is the distance between hatch lines when Symbol.HatchSpacing is 0, in
// points.
const defaultHatchSpacing = 6

// PictureSize returns a picture symbol's size in points: w and h as given; one of them 0: from
// the other and the image's aspect ratio; both 0: the image's own size in pixels at 96 DPI.
func PictureSize(img image.Image, w, h float64) (float64, float64) {
	b := img.Bounds()
	if b.Empty() {
		return w, h
	}
	aspect := float64(b.Dy()) / float64(b.Dx())
	switch {
	case w > 0 && h > 0:
	case w > 0:
		h = w * aspect
	case h > 0:
		w = h / aspect
	default:
		w, h = float64(b.Dx())*72/96, float64(b.Dy())*72/96
	}
	return w, h
}

// pathBounds returns the pixels a path's points lie in.
func pathBounds(p *pixelPath) image.Rectangle {
	if len(p.pts) == 0 {
		return image.Rectangle{}
	}
	x0, y0, x1, y1 := p.pts[0].x, p.pts[0].y, p.pts[0].x, p.pts[0].y
	for _, q := range p.pts[1:] {
		x0, y0, x1, y1 = min(x0, q.x), min(y0, q.y), max(x1, q.x), max(y1, q.y)
	}
	clampInt := func(f float64) int { return int(min(max(f, -1<<30), 1<<30)) }
	return image.Rect(clampInt(math.Floor(x0)), clampInt(math.Floor(y0)), clampInt(math.Ceil(x1))+1, clampInt(math.Ceil(y1))+1)
}

// pictureFillTile returns the tile that FillPattern repeats to paint sym's picture pattern
// (sym.Pattern not nil) in a view v, over a path within bounds (pixels); nil when nothing shows.
//
// An unturned pattern is periodic along the surface's axes: the tile is one cell, the picture
// scaled to its size with the gaps right of and below it, rolled by the offset. A turned one (by
// PatternAngle or the view's rotation) is not, in general: the tile is then as large as the
// surface up to the path's far corner, the pattern computed for each pixel of the path's bounds
// (nearest pixel of the scaled picture), transparent elsewhere.
func (sym *Symbol) pictureFillTile(v View, bounds image.Rectangle) image.Image {
	wPt, hPt := PictureSize(sym.Pattern, sym.PatternWidth, sym.PatternHeight)
	side := func(pt float64) int { return int(math.Round(min(max(v.PointsToPixels(pt), 1), maxTile))) }
	w, h := side(wPt), side(hPt)
	gap := func(pt float64) int { return int(math.Round(min(max(v.PointsToPixels(pt), 0), maxTile))) }
	cw, ch := w+gap(sym.PatternGap[0]), h+gap(sym.PatternGap[1])
	ox, oy := v.PointsToPixels(sym.PatternOffset[0]), -v.PointsToPixels(sym.PatternOffset[1])
	if math.IsNaN(ox) || math.IsNaN(oy) || math.IsInf(ox, 0) || math.IsInf(oy, 0) {
		ox, oy = 0, 0
	}
	pic := scalePicture(sym.Pattern, w, h)
	if pic == nil {
		return nil
	}
	angle := math.Mod(sym.PatternAngle+v.Rotation, 360)
	if angle < 0 {
		angle += 360
	}
	if math.IsNaN(angle) || angle == 0 {
		tile := image.NewNRGBA(image.Rect(0, 0, cw, ch))
		dx, dy := posMod(int(math.Round(ox)), cw), posMod(int(math.Round(oy)), ch)
		for _, p := range []image.Point{{dx, dy}, {dx - cw, dy}, {dx, dy - ch}, {dx - cw, dy - ch}} {
			draw.Draw(tile, image.Rectangle{Min: p, Max: p.Add(image.Pt(w, h))}, pic, image.Point{}, draw.Src)
		}
		return tile
	}
	r := bounds.Intersect(image.Rect(0, 0, v.Width, v.Height))
	if r.Empty() {
		return nil
	}
	tile := image.NewNRGBA(image.Rect(0, 0, r.Max.X, r.Max.Y))
	sin, cos := math.Sincos(angle * math.Pi / 180)
	fw, fh := float64(cw), float64(ch)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := tile.Pix[y*tile.Stride:]
		// Undo the anticlockwise turn (y down) to find each pixel's place (u, t) in the pattern;
		// along a row both change by constant steps.
		px, py := float64(r.Min.X)+0.5-ox, float64(y)+0.5-oy
		u, t := px*cos-py*sin, px*sin+py*cos
		for x := r.Min.X; x < r.Max.X; x, u, t = x+1, u+cos, t+sin {
			iu, it := int(u-fw*math.Floor(u/fw)), int(t-fh*math.Floor(t/fh))
			if iu >= w || it >= h || iu < 0 || it < 0 {
				continue
			}
			i := it*pic.Stride + iu*4
			copy(row[x*4:x*4+4], pic.Pix[i:i+4])
		}
	}
	return tile
}

// scalePicture returns img resampled to w×h pixels as NRGBA; nil for an empty image.
func scalePicture(img image.Image, w, h int) *image.NRGBA {
	b := img.Bounds()
	if b.Empty() || w <= 0 || h <= 0 {
		return nil
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	if w == b.Dx() && h == b.Dy() {
		draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
		return out
	}
	xdraw.BiLinear.Scale(out, out.Bounds(), img, b, draw.Src, nil)
	return out
}

// posMod is a mod n in [0, n).
func posMod(a, n int) int {
	if a %= n; a < 0 {
		a += n
	}
	return a
}
