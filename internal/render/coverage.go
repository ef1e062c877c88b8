package render

import (
	"image/color"
	"math"

	"github.com/paulmach/orb"
)

// FootprintMaxPixels is the largest width and height, in pixels, of a polygon that the raster
// renderer draws from its footprint (accumulated coverage) instead of filling and stroking its
// outline: a polygon of at most one pixel either way.
const FootprintMaxPixels = 1.0

// Footprint is what a polygon smaller than a pixel contributes to a picture: its bounding box, its
// area (holes subtracted) and the length of all its rings, in map units. A Source that knows a
// drawing's resolution may yield such polygons as a Feature with a Footprint and no Geom, which
// costs less to read than their vertices (feature.PolygonMeasures gives a geometry's area and ring
// length; an Overview keeps them). The raster renderer draws a polygon of at most
// FootprintMaxPixels either way from its footprint anyway (see GGSurface), so both draw the same
// picture.
type Footprint struct {
	Bound     orb.Bound
	Area      float64
	Perimeter float64
}

// IsZero reports whether f is the zero Footprint (a Feature without one).
func (f Footprint) IsZero() bool { return f == Footprint{} }

// pixelFootprint is a footprint in pixels: the box x0..x1 × y0..y1, area and perimeter.
type pixelFootprint struct {
	x0, y0, x1, y1 float64
	area, perim    float64
}

// small reports whether the footprint is at most FootprintMaxPixels wide and high.
func (f *pixelFootprint) small() bool {
	return f.x1-f.x0 <= FootprintMaxPixels && f.y1-f.y0 <= FootprintMaxPixels
}

// polygonFootprint returns the footprint in pixels of a polygon or multipolygon transformed by m,
// and false for other geometries or one wider or higher than FootprintMaxPixels (found from its
// bounding box before any vertex is transformed).
func polygonFootprint(g orb.Geometry, m Matrix) (pixelFootprint, bool) {
	var fp pixelFootprint
	b := g.Bound()
	fp.x0, fp.y0, fp.x1, fp.y1 = boxOf(b, m)
	if !fp.small() {
		return fp, false
	}
	ring := func(r orb.Ring, hole bool) {
		n := len(r)
		if n == 0 {
			return
		}
		var a, l float64
		px, py := m.Apply(r[n-1][0], r[n-1][1])
		for _, q := range r {
			x, y := m.Apply(q[0], q[1])
			a += px*y - x*py
			l += math.Hypot(x-px, y-py)
			px, py = x, y
		}
		if hole {
			fp.area -= math.Abs(a) / 2
		} else {
			fp.area += math.Abs(a) / 2
		}
		fp.perim += l
	}
	switch g := g.(type) {
	case orb.Polygon:
		for i, r := range g {
			ring(r, i > 0)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			for i, r := range p {
				ring(r, i > 0)
			}
		}
	default:
		return fp, false
	}
	fp.area = max(fp.area, 0)
	return fp, true
}

// footprintPixels returns f in pixels through m (a similarity: scale, rotation and translation).
func footprintPixels(f Footprint, m Matrix) pixelFootprint {
	var fp pixelFootprint
	fp.x0, fp.y0, fp.x1, fp.y1 = boxOf(f.Bound, m)
	det := math.Abs(m.XX*m.YY - m.XY*m.YX)
	fp.area = f.Area * det
	fp.perim = f.Perimeter * math.Sqrt(det)
	return fp
}

// boxOf returns the pixel bounding box of b transformed by m.
func boxOf(b orb.Bound, m Matrix) (x0, y0, x1, y1 float64) {
	if m.XY == 0 && m.YX == 0 {
		x0, y0 = m.Apply(b.Min[0], b.Min[1])
		x1, y1 = m.Apply(b.Max[0], b.Max[1])
		return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)
	}
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, p := range [4]orb.Point{b.Min, {b.Max[0], b.Min[1]}, b.Max, {b.Min[0], b.Max[1]}} {
		x, y := m.Apply(p[0], p[1])
		x0, y0 = min(x0, x), min(y0, y)
		x1, y1 = max(x1, x), max(y1, y)
	}
	return
}

// coverage accumulates the footprints of one batch of polygons (one symbol) as per-pixel coverage,
// composited by the batch's fill and stroke (GGSurface.compositeFill and compositeStroke).
//
// A footprint's fill is its area spread evenly over its bounding box, and the fills of a batch add
// up (clamped at a full pixel), as abutting polygons do when rasterized together. Its outline's ink
// is the area of the polygon grown by half the stroke width less that of the polygon shrunk by it
// (Steiner's formula for the grown one, with round joins; the shrunk one as if the polygon were
// tangential, exact for squares and circles), spread evenly over the grown bounding box. Outlines
// are composited as an antialiased renderer composites shapes one over the other: a pixel keeps
// the product of what each outline leaves uncovered, accumulated as a sum of −ln(1 − c) (an
// optical depth), so that the order of the batch does not matter.
type coverage struct {
	w, h         int
	fill         []uint16 // fill coverage, 65535 = a full pixel (saturating)
	depth        []uint16 // outline optical depth, depthUnit a step (saturating)
	rowMin       []int32  // the touched columns of each row, rowMin > rowMax when none
	rowMax       []int32
	y0, y1       int // touched rows, y0 > y1 when none
	hasFill, ink bool
	depthOf      []uint16 // −ln(1 − c) in depthUnit steps for c = i / depthSteps
}

// depthSteps is the resolution of coverage.depthOf: outline coverage is rounded to 1/4096 of a
// pixel before it becomes optical depth.
const depthSteps = 4096

// depthUnit is the optical depth of one step of coverage.depth: up to 8, where what is left
// uncovered (e⁻⁸) is below what 8-bit colour shows.
const depthUnit = 8.0 / 65535

// reset sizes c for a w×h image with nothing accumulated.
func (c *coverage) reset(w, h int) {
	n := w * h
	if cap(c.fill) < n {
		c.fill, c.depth = make([]uint16, n), make([]uint16, n)
	}
	c.fill, c.depth = c.fill[:n], c.depth[:n]
	if cap(c.rowMin) < h {
		c.rowMin, c.rowMax = make([]int32, h), make([]int32, h)
	}
	c.rowMin, c.rowMax = c.rowMin[:h], c.rowMax[:h]
	c.w, c.h = w, h
	c.clearRows()
	if c.depthOf == nil {
		c.depthOf = make([]uint16, depthSteps+1)
		for i := range c.depthOf {
			cov := min(float64(i)/depthSteps, 0.9997)
			c.depthOf[i] = uint16(min(math.MaxUint16, -math.Log1p(-cov)/depthUnit+0.5))
		}
	}
}

func (c *coverage) clearRows() {
	for y := range c.rowMin {
		c.rowMin[y], c.rowMax[y] = math.MaxInt32, -1
	}
	c.y0, c.y1 = c.h, -1
	c.hasFill, c.ink = false, false
}

// bytes is the memory c holds.
func (c *coverage) bytes() int { return 2*(cap(c.fill)+cap(c.depth)) + 4*(cap(c.rowMin)+cap(c.rowMax)) }

// add accumulates fp: its fill when fill is set, its outline when width (pixels) is positive, dashed
// outlines (duty, the fraction of the line drawn) proportionally.
func (c *coverage) add(fp *pixelFootprint, fill bool, width, duty float64) {
	if fill && fp.area > 0 {
		bw, bh := fp.x1-fp.x0, fp.y1-fp.y0
		if bw*bh > 0 {
			d := min(1, fp.area/(bw*bh))
			c.spread(fp.x0, fp.y0, fp.x1, fp.y1, d, false)
		} else {
			c.spread(fp.x0, fp.y0, fp.x1, fp.y1, 0, false)
		}
	}
	if width > 0 && duty > 0 {
		r := width / 2
		grown := fp.area + fp.perim*r + math.Pi*r*r
		var shrunk float64
		if fp.perim > 0 {
			if rho := 2 * fp.area / fp.perim; rho > r {
				shrunk = fp.area * (1 - r/rho) * (1 - r/rho)
			}
		}
		x0, y0, x1, y1 := fp.x0-r, fp.y0-r, fp.x1+r, fp.y1+r
		d := min(1, (grown-shrunk)*duty/((x1-x0)*(y1-y0)))
		c.spread(x0, y0, x1, y1, d, true)
	}
}

// spread adds density d over the box x0..x1 × y0..y1 to the pixels it overlaps: to the fill
// coverage, or as optical depth to the outline's. A box of no area (a polygon collapsed to a line
// or point) adds nothing.
func (c *coverage) spread(x0, y0, x1, y1, d float64, outline bool) {
	if d <= 0 || !(x1 > x0) || !(y1 > y0) {
		return
	}
	ix0, iy0 := max(0, int(math.Floor(x0))), max(0, int(math.Floor(y0)))
	ix1, iy1 := min(c.w-1, int(math.Ceil(x1))-1), min(c.h-1, int(math.Ceil(y1))-1)
	if ix0 > ix1 || iy0 > iy1 {
		return
	}
	for y := iy0; y <= iy1; y++ {
		oy := min(y1, float64(y+1)) - max(y0, float64(y))
		if oy <= 0 {
			continue
		}
		row := y * c.w
		touched := false
		for x := ix0; x <= ix1; x++ {
			ox := min(x1, float64(x+1)) - max(x0, float64(x))
			if ox <= 0 {
				continue
			}
			cov := d * ox * oy
			i := row + x
			if outline {
				v := uint32(c.depth[i]) + uint32(c.depthOf[int(min(cov, 1)*depthSteps+0.5)])
				c.depth[i] = uint16(min(v, math.MaxUint16))
			} else {
				v := uint32(c.fill[i]) + uint32(cov*math.MaxUint16+0.5)
				c.fill[i] = uint16(min(v, math.MaxUint16))
			}
			touched = true
		}
		if touched {
			c.rowMin[y] = min(c.rowMin[y], int32(ix0))
			c.rowMax[y] = max(c.rowMax[y], int32(ix1))
			c.y0, c.y1 = min(c.y0, y), max(c.y1, y)
		}
	}
	if outline {
		c.ink = true
	} else {
		c.hasFill = true
	}
}

// composite blends col over pix (an RGBA image of c's size, stride 4w) where the fill (or, with
// outline, the outline) coverage is not zero, clears that coverage, and forgets the touched rows
// once both are composited.
func (c *coverage) composite(pix []byte, stride int, col color.NRGBA, outline bool) {
	if outline && !c.ink || !outline && !c.hasFill {
		return
	}
	pc := premul(col)
	for y := c.y0; y <= c.y1; y++ {
		lo, hi := int(c.rowMin[y]), int(c.rowMax[y])
		row := y * c.w
		for x := lo; x <= hi; x++ {
			i := row + x
			var a float64
			if outline {
				if c.depth[i] == 0 {
					continue
				}
				a = 1 - math.Exp(-float64(c.depth[i])*depthUnit)
				c.depth[i] = 0
			} else {
				if c.fill[i] == 0 {
					continue
				}
				a = float64(c.fill[i]) / math.MaxUint16
				c.fill[i] = 0
			}
			if cov := uint32(a*255 + 0.5); cov > 0 {
				o := y*stride + 4*x
				blendPix(pix[o:o+4:o+4], pc, cov)
			}
		}
	}
	if outline {
		c.ink = false
	} else {
		c.hasFill = false
	}
	if !c.ink && !c.hasFill {
		c.clearRows()
	}
}
