package proj

import (
	"math"

	"github.com/paulmach/orb"
)

// Approximate transformation, as GDAL's approximate transformer and MapServer do for drawing:
// a grid over the region of the source a drawing shows is transformed exactly, and each point
// is then interpolated (bilinearly) in its grid cell. A cell is used only where the
// interpolation agrees with the exact transformation at the cell's centre and the middles of
// its sides, to maxErr; a cell that does not gets a finer grid of its own, and points where
// that fails too, or outside the grid, are transformed exactly.
// Projecting the world sample's 99,000 vertices through PROJ costs about 13 ms; the grid about
// 2 ms once per view (kept by Systems.DrawTransformer), then about 10 ns a vertex.

// approxCells is the number of grid cells along each side of the region.
const approxCells = 64

type approxGrid struct {
	region orb.Bound
	n      int         // cells along each side
	cw     float64     // cell width
	icw    float64     // 1/cw
	ys     []float64   // n+1 row edges, rising: equal steps, or equal steps of latitude in Web Mercator
	rowOf  []int16     // rowBuckets equal slices of the region's height → the row their bottom is in
	ibh    float64     // 1 / the height of such a slice
	nodes  []orb.Point // (n+1)² transformed nodes, row by row (y), x fastest
	ok     []bool      // n², whether a cell interpolates to maxErr
	coef   []cellCoef  // n², the interpolation of each usable cell
	iyh    []float64   // n, 1 / the height of each row
	sub    []*approxGrid
}

// cellCoef is a cell's bilinear interpolation: x = ax + bx·fx + (cx + dx·fx)·fy, and y alike,
// for fx, fy the fractions of the cell's width and height.
type cellCoef struct{ ax, bx, cx, dx, ay, by, cy, dy float64 }

// approxOp is an operation that interpolates in a grid where it can, and is exact elsewhere.
type approxOp struct {
	exact operation
	grid  *approxGrid
}

// subCells is the number of cells along each side of the finer grid a cell that does not
// interpolate to maxErr gets (once): 16 times smaller an error, where a projection curves most.
const subCells = 4

// Approximate returns a transformer that moves points from Source to Target within maxErr
// (target units) inside region (source coordinates), and exactly elsewhere, cheaper than t
// when many points are transformed (a drawing). Inverse, Bound and the rest stay exact. When
// no cell of the grid can be used, t itself. From Web Mercator the grid's rows are equal steps
// of latitude, not of y, whose curvature near the poles would defeat the interpolation.
func (t *Transformer) Approximate(region orb.Bound, maxErr float64) *Transformer {
	if t.Identity() || region.IsEmpty() || !(maxErr > 0) {
		return t
	}
	if _, ok := t.op.(approxOp); ok {
		return t
	}
	g := newGrid(t.op, region, approxCells, t.Source.SR.IsWebMercator(), maxErr, true)
	if g == nil {
		return t
	}
	return &Transformer{Source: t.Source, Target: t.Target, op: approxOp{exact: t.op, grid: g}}
}

// newGrid builds the grid of n×n cells over region; nil when no cell interpolates to maxErr.
// refine gives the cells that do not a finer grid of their own.
func newGrid(op operation, region orb.Bound, n int, mercator bool, maxErr float64, refine bool) *approxGrid {
	g := &approxGrid{region: region, n: n, cw: (region.Max[0] - region.Min[0]) / float64(n), ys: make([]float64, n+1)}
	if !(g.cw > 0) || !(region.Max[1] > region.Min[1]) {
		return nil
	}
	g.icw = 1 / g.cw
	lat0, lat1 := FromMercator(region.Min)[1], FromMercator(region.Max)[1]
	for j := range g.ys {
		f := float64(j) / float64(n)
		if mercator {
			g.ys[j] = ToMercator(orb.Point{0, lat0 + f*(lat1-lat0)})[1]
		} else {
			g.ys[j] = region.Min[1] + f*(region.Max[1]-region.Min[1])
		}
	}
	g.ys[0], g.ys[n] = region.Min[1], region.Max[1]
	bh := (region.Max[1] - region.Min[1]) / rowBuckets
	g.ibh = 1 / bh
	g.rowOf = make([]int16, rowBuckets)
	for k, j := 0, 0; k < rowBuckets; k++ {
		y := region.Min[1] + float64(k)*bh
		for j+1 < n && g.ys[j+1] <= y {
			j++
		}
		g.rowOf[k] = int16(j)
	}
	// The nodes, then each cell's centre and the middles of its sides (shared with the next
	// cells): where bilinear interpolation strays furthest.
	pts := make([]orb.Point, 0, (n+1)*(n+1)+n*n+2*n*(n+1))
	for j := 0; j <= n; j++ {
		for i := 0; i <= n; i++ {
			pts = append(pts, g.at(float64(i), j, 0))
		}
	}
	for j := range n {
		for i := range n {
			pts = append(pts, g.at(float64(i)+0.5, j, 0.5))
		}
	}
	for j := 0; j <= n; j++ { // middles of the horizontal sides: n per row of nodes
		for i := range n {
			pts = append(pts, g.at(float64(i)+0.5, j, 0))
		}
	}
	for j := range n { // middles of the vertical sides: n+1 per row of cells
		for i := 0; i <= n; i++ {
			pts = append(pts, g.at(float64(i), j, 0.5))
		}
	}
	_ = op.forward(pts) // points outside the target's domain come back non-finite: their cells are not used
	g.nodes = pts[:(n+1)*(n+1)]
	centres := pts[(n+1)*(n+1) : (n+1)*(n+1)+n*n]
	horiz := pts[(n+1)*(n+1)+n*n : (n+1)*(n+1)+n*n+n*(n+1)]
	vert := pts[(n+1)*(n+1)+n*n+n*(n+1):]
	g.ok = make([]bool, n*n)
	used := 0
	for j := range n {
		for i := range n {
			nodesOK := true // a cell whose nodes are not all finite interpolates nothing
			for _, k := range [...]int{j*(n+1) + i, j*(n+1) + i + 1, (j+1)*(n+1) + i, (j+1)*(n+1) + i + 1} {
				nodesOK = nodesOK && finite(g.nodes[k])
			}
			ok := nodesOK
			for _, c := range [...]struct {
				p      orb.Point
				fx, fy float64
			}{
				{centres[j*n+i], 0.5, 0.5}, {horiz[j*n+i], 0.5, 0}, {horiz[(j+1)*n+i], 0.5, 1},
				{vert[j*(n+1)+i], 0, 0.5}, {vert[j*(n+1)+i+1], 1, 0.5},
			} {
				if !ok {
					break
				}
				q := g.interpolate(i, j, c.fx, c.fy)
				ok = finite(c.p) && math.Hypot(q[0]-c.p[0], q[1]-c.p[1]) <= maxErr
			}
			if !ok && nodesOK && refine {
				cell := orb.Bound{Min: orb.Point{region.Min[0] + float64(i)*g.cw, g.ys[j]}, Max: orb.Point{region.Min[0] + float64(i+1)*g.cw, g.ys[j+1]}}
				if sub := newGrid(op, cell, subCells, mercator, maxErr, false); sub != nil {
					if g.sub == nil {
						g.sub = make([]*approxGrid, n*n)
					}
					g.sub[j*n+i] = sub
					used++
				}
			}
			g.ok[j*n+i] = ok
			if ok {
				used++
			}
		}
	}
	if used == 0 {
		return nil
	}
	g.coef = make([]cellCoef, n*n)
	g.iyh = make([]float64, n)
	for j := range n {
		if h := g.ys[j+1] - g.ys[j]; h > 0 {
			g.iyh[j] = 1 / h
		}
		for i := range n {
			a, b := g.nodes[j*(n+1)+i], g.nodes[j*(n+1)+i+1]
			c, d := g.nodes[(j+1)*(n+1)+i], g.nodes[(j+1)*(n+1)+i+1]
			g.coef[j*n+i] = cellCoef{
				ax: a[0], bx: b[0] - a[0], cx: c[0] - a[0], dx: d[0] - c[0] - b[0] + a[0],
				ay: a[1], by: b[1] - a[1], cy: c[1] - a[1], dy: d[1] - c[1] - b[1] + a[1],
			}
		}
	}
	return g
}

// at is the point at column fi (fractional) of row j, fy of the way to the next row (the
// last row has none: fy must be 0 there).
func (g *approxGrid) at(fi float64, j int, fy float64) orb.Point {
	y := g.ys[min(j, g.n)]
	if fy > 0 && j < g.n {
		y += fy * (g.ys[j+1] - g.ys[j])
	}
	return orb.Point{g.region.Min[0] + fi*g.cw, y}
}

// interpolate is the bilinear interpolation in cell (i, j) at fractions fx, fy of its size.
func (g *approxGrid) interpolate(i, j int, fx, fy float64) orb.Point {
	w := g.n + 1
	a, b := g.nodes[j*w+i], g.nodes[j*w+i+1]
	c, d := g.nodes[(j+1)*w+i], g.nodes[(j+1)*w+i+1]
	return orb.Point{
		(1-fy)*((1-fx)*a[0]+fx*b[0]) + fy*((1-fx)*c[0]+fx*d[0]),
		(1-fy)*((1-fx)*a[1]+fx*b[1]) + fy*((1-fx)*c[1]+fx*d[1]),
	}
}

// rowBuckets is the size of the table that finds a point's row without a search.
const rowBuckets = 1024

// lookup interpolates p, when its cell (or its cell's finer grid) allows.
func (g *approxGrid) lookup(p orb.Point) (orb.Point, bool) {
	x := (p[0] - g.region.Min[0]) * g.icw
	f := (p[1] - g.region.Min[1]) * g.ibh
	if !(x >= 0 && x < float64(g.n) && f >= 0 && f < rowBuckets) {
		return p, false
	}
	j := int(g.rowOf[int(f)])
	for j+1 < g.n && p[1] >= g.ys[j+1] {
		j++
	}
	if p[1] < g.ys[j] || p[1] >= g.ys[j+1] {
		return p, false
	}
	i := int(x)
	k := j*g.n + i
	if g.ok[k] {
		fx, fy := x-float64(i), (p[1]-g.ys[j])*g.iyh[j]
		c := &g.coef[k]
		return orb.Point{c.ax + c.bx*fx + (c.cx+c.dx*fx)*fy, c.ay + c.by*fx + (c.cy+c.dy*fx)*fy}, true
	}
	if g.sub != nil && g.sub[k] != nil {
		return g.sub[k].lookup(p)
	}
	return p, false
}

func (o approxOp) forward(ps []orb.Point) error {
	var rest []orb.Point // points to transform exactly
	var at []int
	for k, p := range ps {
		if q, ok := o.grid.lookup(p); ok {
			ps[k] = q
			continue
		}
		rest = append(rest, p)
		at = append(at, k)
	}
	if len(rest) == 0 {
		return nil
	}
	err := o.exact.forward(rest)
	for n, k := range at {
		ps[k] = rest[n]
	}
	if err == nil {
		err = finish(nil, rest) // interpolated points are finite: their cells' nodes are
	}
	return err
}

func (o approxOp) inverse(ps []orb.Point) error { return o.exact.inverse(ps) }

// checked: forward reports non-finite results itself.
func (approxOp) checked() {}

// DrawTransformer returns an approximate transformer from one system to another for a drawing
// of view (a bound in to: the image's extent, or the bound of its rotated extent), to maxErr
// (to's units): Transformer(from, to).Approximate over the part of from the view shows, within
// DrawWindows. It is kept for the next drawing of the same view: a grid costs PROJ some 17,000
// points, about 2 ms.
func (s *Systems) DrawTransformer(from, to SR, view orb.Bound, maxErr float64) (*Transformer, error) {
	k := drawKey{key(from), key(to), view, maxErr}
	if t, ok := s.draws.Get(k); ok {
		return t, nil
	}
	t, err := s.Transformer(from, to)
	if err != nil {
		return nil, err
	}
	if region, ok := s.drawRegion(t, view); ok {
		t = t.Approximate(region, maxErr)
	}
	s.draws.Add(k, t)
	return t, nil
}

// drawRegion is the part of t's source a view (in t's target) shows, within the drawing
// windows.
func (s *Systems) drawRegion(t *Transformer, view orb.Bound) (orb.Bound, bool) {
	b, err := t.InverseBound(view)
	if err != nil {
		return orb.Bound{}, false
	}
	windows, err := s.DrawWindows(t.Source.SR, t.Target.SR)
	if err != nil || windows == nil {
		return b, err == nil
	}
	w := windows[0]
	for _, o := range windows[1:] {
		w = w.Union(o)
	}
	if !w.Intersects(b) {
		return orb.Bound{}, false
	}
	return orb.Bound{Min: orb.Point{math.Max(b.Min[0], w.Min[0]), math.Max(b.Min[1], w.Min[1])},
		Max: orb.Point{math.Min(b.Max[0], w.Max[0]), math.Min(b.Max[1], w.Max[1])}}, true
}
