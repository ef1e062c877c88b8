package tilecache

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// ErrEmptyAOI is wrapped by errors for an area of interest with no
// coordinates.
var ErrEmptyAOI = errors.New("tilecache: empty area of interest")

// Cover is the set of tiles of some levels of a scheme that an area of
// interest touches. It is computed row by row while iterating, so memory
// stays proportional to the size of the AOI's geometry (not to the number
// of tiles): a job of 10^8 tiles plans in a few kilobytes.
//
// A tile belongs to the cover when the AOI overlaps its area: polygon and
// envelope interiors, line and polygon edges, and points. Edges that run
// exactly along tile boundaries do not pull in the neighbouring tiles.
type Cover struct {
	scheme Scheme
	levels []int
	lods   map[int]LOD // the levels' LODs, looked up once
	aoi    orb.Geometry
}

// Cover returns the cover of aoi (in the scheme's coordinates) at the given
// levels; no levels means all the scheme's levels. aoi may be any
// orb.Geometry: orb.Bound, Polygon, MultiPolygon, Ring, LineString,
// MultiLineString, Point, MultiPoint or a Collection of them.
func (s Scheme) Cover(aoi orb.Geometry, levels ...int) (*Cover, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(levels) == 0 {
		levels = s.Levels()
	} else {
		levels = slices.Clone(levels)
		slices.Sort(levels)
		levels = slices.Compact(levels)
	}
	lods := make(map[int]LOD, len(levels))
	for _, level := range levels {
		l, err := s.lod(level)
		if err != nil {
			return nil, err
		}
		lods[level] = l
	}
	if aoi == nil || isEmptyGeometry(aoi) {
		return nil, ErrEmptyAOI
	}
	// Every check is made here, once, so that the cover's iterators cannot fail.
	if err := checkAOI(aoi); err != nil {
		return nil, err
	}
	b := aoi.Bound()
	for _, l := range lods {
		x0, y0 := s.toCells(l, b.Min)
		x1, y1 := s.toCells(l, b.Max)
		if !finite(x0) || !finite(y0) || !finite(x1) || !finite(y1) {
			return nil, fmt.Errorf("tilecache: area of interest %v is too large for level %d", b, l.LevelID)
		}
	}
	return &Cover{scheme: s, levels: levels, lods: lods, aoi: aoi}, nil
}

// coverer returns the cover's coverer for one of its levels.
func (c *Cover) coverer(level int) *coverer {
	return c.scheme.newCoverer(c.aoi, c.lods[level])
}

// Levels returns the cover's levels, ascending.
func (c *Cover) Levels() []int { return slices.Clone(c.levels) }

// Tiles yields every tile of the cover, level by level (ascending), then row
// by row, then column by column.
func (c *Cover) Tiles() iter.Seq[Tile] {
	return func(yield func(Tile) bool) {
		for _, level := range c.levels {
			cv := c.coverer(level)
			var spans []span
			for row := cv.r0; row <= cv.r1; row++ {
				spans = cv.row(row, spans[:0])
				for _, sp := range spans {
					for col := sp.lo; col <= sp.hi; col++ {
						if !yield(Tile{Level: level, Row: row, Col: col}) {
							return
						}
					}
				}
			}
		}
	}
}

// Count returns the number of tiles in the cover, per level and in total.
// It walks rows, not tiles, so it is cheap even for huge covers.
func (c *Cover) Count() (total int64, perLevel map[int]int64) {
	perLevel = make(map[int]int64, len(c.levels))
	for _, level := range c.levels {
		cv := c.coverer(level)
		var spans []span
		var n int64
		for row := cv.r0; row <= cv.r1; row++ {
			spans = cv.row(row, spans[:0])
			for _, sp := range spans {
				n += int64(sp.hi - sp.lo + 1)
			}
		}
		perLevel[level] = n
		total += n
	}
	return total, perLevel
}

// TilesIn yields the tiles of the cover that lie in bundle b, row by row,
// visiting only the bundle's rows: a delete job removes exactly these from
// the bundle (the metatiles of [Cover.Bundles] may hold tiles outside the
// AOI). A level that is not one of the cover's yields nothing.
func (c *Cover) TilesIn(b Bundle) iter.Seq[Tile] {
	return func(yield func(Tile) bool) {
		level := b.TopLeft.Level
		if !b.Valid() || !slices.Contains(c.levels, level) {
			return
		}
		cv := c.coverer(level)
		lo, hi := b.TopLeft.Col, b.TopLeft.Col+BundleSize-1
		var spans []span
		for row := max(cv.r0, b.TopLeft.Row); row <= min(cv.r1, b.TopLeft.Row+BundleSize-1); row++ {
			spans = cv.row(row, spans[:0])
			for _, sp := range spans {
				for col := max(sp.lo, lo); col <= min(sp.hi, hi); col++ {
					if !yield(Tile{Level: level, Row: row, Col: col}) {
						return
					}
				}
			}
		}
	}
}

// Bundles groups the cover into n×n metatiles (n a power of two up to
// BundleSize, see [MetatileOf]) and yields them bundle by bundle: each
// bundle once, with every metatile of the bundle that holds a tile of the
// cover, in row-major order. A metatile is clipped to the level's matrix
// but not to the cover, so it may hold tiles outside the AOI. Planning work
// units per bundle gives every bundle exactly one writer.
//
// Order: level ascending, then bundle rows top to bottom, then bundle
// columns left to right. The slice yielded is the caller's to keep.
func (c *Cover) Bundles(n int) (iter.Seq2[Bundle, []Metatile], error) {
	if err := checkMetaSize(n); err != nil {
		return nil, err
	}
	return func(yield func(Bundle, []Metatile) bool) {
		for _, level := range c.levels {
			if !c.bundlesOfLevel(level, n, yield) {
				return
			}
		}
	}, nil
}

// bundlesOfLevel yields the bundles of one level; false means stop.
func (c *Cover) bundlesOfLevel(level, n int, yield func(Bundle, []Metatile) bool) bool {
	cv := c.coverer(level)
	const bandsPerBundle = BundleSize // upper bound of metatile bands per bundle row
	bands := make([][]span, 0, bandsPerBundle)
	var rowSpans []span
	for strip := cv.r0 - cv.r0%BundleSize; strip <= cv.r1; strip += BundleSize {
		// Metatile-column spans of each metatile band of the strip.
		bands = bands[:0]
		minM, maxM := math.MaxInt, -1
		for band := strip; band < strip+BundleSize; band += n {
			var merged []span
			for row := max(band, cv.r0); row < band+n && row <= cv.r1; row++ {
				rowSpans = cv.row(row, rowSpans[:0])
				for _, sp := range rowSpans {
					merged = append(merged, span{sp.lo / n, sp.hi / n})
				}
			}
			merged = mergeSpans(merged)
			if len(merged) > 0 {
				minM = min(minM, merged[0].lo)
				maxM = max(maxM, merged[len(merged)-1].hi)
			}
			bands = append(bands, merged)
		}
		if maxM < 0 {
			continue
		}
		perBundle := BundleSize / n // metatile columns per bundle
		for bc := minM / perBundle; bc <= maxM/perBundle; bc++ {
			lo, hi := bc*perBundle, bc*perBundle+perBundle-1
			count := 0
			for _, spans := range bands {
				for _, sp := range spans {
					if sp.hi >= lo && sp.lo <= hi {
						count += min(sp.hi, hi) - max(sp.lo, lo) + 1
					}
				}
			}
			if count == 0 {
				continue
			}
			metas := make([]Metatile, 0, count)
			for bi, spans := range bands {
				for _, sp := range spans {
					if sp.hi < lo || sp.lo > hi {
						continue
					}
					for m := max(sp.lo, lo); m <= min(sp.hi, hi); m++ {
						top := Tile{Level: level, Row: strip + bi*n, Col: m * n}
						metas = append(metas, Metatile{
							TopLeft: top,
							Rows:    min(n, cv.rows-top.Row),
							Cols:    min(n, cv.cols-top.Col),
						})
					}
				}
			}
			if !yield(BundleOf(metas[0].TopLeft), metas) {
				return false
			}
		}
	}
	return true
}

// span is an inclusive range of cells (columns, or metatile columns).
type span struct{ lo, hi int }

// mergeSpans sorts spans and merges overlapping and adjacent ones, in place.
func mergeSpans(s []span) []span {
	if len(s) < 2 {
		return s
	}
	slices.SortFunc(s, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	out := s[:1]
	for _, sp := range s[1:] {
		last := &out[len(out)-1]
		if sp.lo <= last.hi+1 {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// segment is one edge of the AOI in tile units.
type segment struct{ x0, y0, x1, y1 float64 }

// coverer computes the cover of an AOI on one level, one row at a time.
type coverer struct {
	rows, cols int
	// r0…r1 are the rows the AOI's bounding box touches, clipped to the
	// matrix (r1 < r0 when none).
	r0, r1 int
	// box is set when the AOI is an orb.Bound: its column span.
	box     bool
	boxSpan span
	// edges are the segments of all lines and rings; polys are the rings of
	// each polygon (for the interior test); points are isolated points.
	edges  []segment
	polys  [][][]orb.Point
	points [][2]float64
	// xs is scratch space for scanline crossings.
	xs []float64
}

// newCoverer converts aoi, checked by [checkAOI] and small enough for the
// level's cells to be finite, to tile units of level l.
func (s Scheme) newCoverer(aoi orb.Geometry, l LOD) *coverer {
	rows, cols := s.matrixSize(l)
	cv := &coverer{rows: rows, cols: cols}
	if b, ok := aoi.(orb.Bound); ok {
		r := s.tilesCovering(l, b)
		cv.box = true
		cv.r0, cv.r1 = r.MinRow, r.MaxRow
		cv.boxSpan = span{r.MinCol, r.MaxCol}
		return cv
	}
	cv.add(aoi, func(p orb.Point) orb.Point {
		x, y := s.toCells(l, p)
		return orb.Point{x, y}
	})
	r := s.tilesCovering(l, aoi.Bound())
	cv.r0, cv.r1 = r.MinRow, r.MaxRow
	return cv
}

// checkAOI refuses an area of interest of a type the cover does not know
// or with a coordinate that is not finite.
func checkAOI(g orb.Geometry) error {
	return eachPath(g, func(pts []orb.Point) error {
		for _, p := range pts {
			if !finite(p[0]) || !finite(p[1]) {
				return fmt.Errorf("tilecache: area of interest has a non-finite coordinate %v", p)
			}
		}
		return nil
	})
}

// eachPath calls fn with every sequence of coordinates of an area of interest (a point as
// one of one, a bound as its two corners), stopping at the first error; a geometry of a
// type the cover does not know is an error.
func eachPath(g orb.Geometry, fn func([]orb.Point) error) error {
	switch g := g.(type) {
	case orb.Point:
		return fn([]orb.Point{g})
	case orb.MultiPoint:
		return fn(g)
	case orb.LineString:
		return fn(g)
	case orb.Ring:
		return fn(g)
	case orb.Bound:
		return fn([]orb.Point{g.Min, g.Max})
	case orb.MultiLineString:
		return eachPart(g, fn)
	case orb.Polygon:
		return eachPart(g, fn)
	case orb.MultiPolygon:
		for _, p := range g {
			if err := eachPart(p, fn); err != nil {
				return err
			}
		}
	case orb.Collection:
		for _, sub := range g {
			if err := eachPath(sub, fn); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("tilecache: unsupported area of interest %T", g)
	}
	return nil
}

// eachPart calls fn with every line of a multiline or ring of a polygon, stopping at the first
// error.
func eachPart[G ~[]P, P ~[]orb.Point](g G, fn func([]orb.Point) error) error {
	for _, p := range g {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// add collects the edges, rings and points of g (checked by [checkAOI]),
// converted by conv.
func (cv *coverer) add(g orb.Geometry, conv func(orb.Point) orb.Point) {
	addPath := func(pts []orb.Point, closed bool) {
		if len(pts) == 0 {
			return
		}
		if len(pts) == 1 {
			q := conv(pts[0])
			cv.points = append(cv.points, [2]float64{q[0], q[1]})
			return
		}
		prev := conv(pts[0])
		for _, p := range pts[1:] {
			q := conv(p)
			cv.edges = append(cv.edges, segment{prev[0], prev[1], q[0], q[1]})
			prev = q
		}
		if closed {
			first := conv(pts[0])
			if first != prev {
				cv.edges = append(cv.edges, segment{prev[0], prev[1], first[0], first[1]})
			}
		}
	}
	addPoly := func(p orb.Polygon) {
		rings := make([][]orb.Point, 0, len(p))
		for _, r := range p {
			addPath(r, true)
			if len(r) >= 3 {
				cr := make([]orb.Point, len(r))
				for i, pt := range r {
					cr[i] = conv(pt)
				}
				rings = append(rings, cr)
			}
		}
		if len(rings) > 0 {
			cv.polys = append(cv.polys, rings)
		}
	}
	switch g := g.(type) {
	case orb.Point:
		addPath([]orb.Point{g}, false)
	case orb.MultiPoint:
		for _, p := range g {
			addPath([]orb.Point{p}, false)
		}
	case orb.LineString:
		addPath(g, false)
	case orb.MultiLineString:
		for _, ls := range g {
			addPath(ls, false)
		}
	case orb.Ring:
		addPoly(orb.Polygon{g})
	case orb.Polygon:
		addPoly(g)
	case orb.MultiPolygon:
		for _, p := range g {
			addPoly(p)
		}
	case orb.Bound:
		addPoly(g.ToPolygon())
	case orb.Collection:
		for _, sub := range g {
			cv.add(sub, conv)
		}
	}
}

// isEmptyGeometry reports whether g has no coordinates.
func isEmptyGeometry(g orb.Geometry) bool {
	switch g := g.(type) {
	case orb.Bound:
		return g.IsEmpty() && g.Min == (orb.Point{}) && g.Max == (orb.Point{})
	case orb.Collection:
		for _, sub := range g {
			if sub != nil && !isEmptyGeometry(sub) {
				return false
			}
		}
		return true
	}
	empty := true
	err := eachPath(g, func(pts []orb.Point) error {
		empty = empty && len(pts) == 0
		return nil
	})
	return err == nil && empty
}

// row appends to dst the merged column spans of the AOI in row r, clipped to
// the matrix, and returns it.
func (cv *coverer) row(r int, dst []span) []span {
	if cv.box {
		if r >= cv.r0 && r <= cv.r1 {
			dst = append(dst, cv.boxSpan)
		}
		return dst
	}
	top, bot := float64(r), float64(r+1)
	// Edges crossing the row's interior.
	for _, e := range cv.edges {
		ya, yb := min(e.y0, e.y1), max(e.y0, e.y1)
		if yb <= top+cellEps || ya >= bot-cellEps {
			// Outside, or touching only the row's boundary. A horizontal
			// edge strictly inside the row has ya == yb inside (top, bot).
			if !(ya == yb && ya > top+cellEps && ya < bot-cellEps) {
				continue
			}
		}
		var xa, xb float64
		if e.y0 == e.y1 {
			xa, xb = e.x0, e.x1
		} else {
			xa = e.x0 + (e.x1-e.x0)*(max(ya, top)-e.y0)/(e.y1-e.y0)
			xb = e.x0 + (e.x1-e.x0)*(min(yb, bot)-e.y0)/(e.y1-e.y0)
		}
		if xa > xb {
			xa, xb = xb, xa
		}
		if xb-xa < cellEps && math.Abs(xa-math.Round(xa)) < cellEps {
			continue // runs along a column boundary
		}
		lo, hi := cellSpan(xa, xb)
		dst = appendClipped(dst, lo, hi, cv.cols)
	}
	// Points.
	for _, p := range cv.points {
		if int(math.Floor(p[1])) == r && p[1] >= 0 {
			c := clampInt(math.Floor(p[0]))
			dst = appendClipped(dst, c, c, cv.cols)
		}
	}
	// Interiors: cells whose centre is inside a polygon (even-odd per
	// polygon, so holes work).
	yc := float64(r) + 0.5
	xs := cv.xs
	for _, rings := range cv.polys {
		xs = xs[:0]
		for _, ring := range rings {
			n := len(ring)
			for i := range n {
				p, q := ring[i], ring[(i+1)%n]
				if (p[1] <= yc) != (q[1] <= yc) {
					xs = append(xs, p[0]+(q[0]-p[0])*(yc-p[1])/(q[1]-p[1]))
				}
			}
		}
		slices.Sort(xs)
		for i := 0; i+1 < len(xs); i += 2 {
			lo := clampInt(math.Ceil(xs[i] - 0.5))
			hi := clampInt(math.Floor(xs[i+1] - 0.5))
			if lo <= hi {
				dst = appendClipped(dst, lo, hi, cv.cols)
			}
		}
	}
	cv.xs = xs
	return mergeSpans(dst)
}

// appendClipped appends [lo, hi] clipped to [0, cols-1] when not empty.
func appendClipped(dst []span, lo, hi, cols int) []span {
	lo, hi = max(lo, 0), min(hi, cols-1)
	if lo <= hi {
		dst = append(dst, span{lo, hi})
	}
	return dst
}
