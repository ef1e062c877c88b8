package mvt

import (
	"cmp"
	"math"
	"slices"
)

// This file makes every polygon ring written to a tile simple, as MVT 2.1
// §4.3.4.4 wants, after clipping, simplification and rounding have done
// their work (docs/vector-tiles.md, "Simple rings"). A ring is checked
// after quantisation; only a ring that is not simple is repaired: its
// edges are noded (a vertex lying on another edge is inserted into it, a
// crossing is inserted rounded into both edges), the noded ring is cut
// into loops at every repeated vertex, and each loop is cleaned again.
// Loops that still touch themselves go round again, at most maxFixRounds
// times; what is left after that is dropped.

// maxFixRounds bounds the rounds of noding and cutting of one ring.
const maxFixRounds = 4

// smallRing is the number of vertices up to which a ring is checked pair
// by pair rather than by a sweep over x.
const smallRing = 16

// sweepEdge is one edge of a ring: its ends, the index of its first
// vertex, its bound.
type sweepEdge struct {
	a, b       ipt
	i          int32
	minX, maxX int32
	minY, maxY int32
}

// orient is the sign of the turn a→b→c.
func orient(a, b, c ipt) int {
	return cmp.Compare(cross(a, b, c), 0)
}

// onSegment reports whether c, collinear with ab, lies on the closed
// segment ab.
func onSegment(a, b, c ipt) bool {
	return min(a.x, b.x) <= c.x && c.x <= max(a.x, b.x) && min(a.y, b.y) <= c.y && c.y <= max(a.y, b.y)
}

// touch reports whether the closed segments ab and cd share a point.
func touch(a, b, c, d ipt) bool {
	o1, o2, o3, o4 := orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
	if o1 != o2 && o3 != o4 && o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 {
		return true
	}
	return (o1 == 0 && onSegment(a, b, c)) || (o2 == 0 && onSegment(a, b, d)) ||
		(o3 == 0 && onSegment(c, d, a)) || (o4 == 0 && onSegment(c, d, b))
}

// touchingPairs calls fn with every pair of non-adjacent edges of the
// ring pts (open, cleaned: no repeated or collinear consecutive points)
// that share a point, until fn returns false.
func (g *geomBuilder) touchingPairs(pts []ipt, fn func(i, j int) bool) {
	n := len(pts)
	edges := g.edges[:0]
	for i, a := range pts {
		b := pts[0]
		if i+1 < n {
			b = pts[i+1]
		}
		edges = append(edges, sweepEdge{a: a, b: b, i: int32(i),
			minX: min(a.x, b.x), maxX: max(a.x, b.x), minY: min(a.y, b.y), maxY: max(a.y, b.y)})
	}
	g.edges = edges
	// meet reports whether e and o touch and are not adjacent.
	meet := func(e, o *sweepEdge) bool {
		if o.maxY < e.minY || e.maxY < o.minY || o.maxX < e.minX || e.maxX < o.minX {
			return false
		}
		d := int(e.i - o.i)
		if d == 1 || d == -1 || d == n-1 || d == 1-n {
			return false
		}
		return touch(e.a, e.b, o.a, o.b)
	}
	if n <= smallRing {
		for i := range edges {
			for j := i + 2; j < n; j++ {
				if meet(&edges[i], &edges[j]) && !fn(i, j) {
					return
				}
			}
		}
		return
	}
	// Edges by minX: keys of minX (order-preserving as unsigned) and index,
	// sorted as plain integers, which is much faster than sorting edges.
	keys := g.keys[:0]
	for i := range edges {
		keys = append(keys, uint64(uint32(edges[i].minX)^1<<31)<<32|uint64(i))
	}
	slices.Sort(keys)
	active := g.active[:0]
	defer func() { g.keys, g.active = keys, active }()
	for _, key := range keys {
		e := &edges[uint32(key)]
		w := 0
		for _, o := range active {
			if o.maxX < e.minX {
				continue
			}
			active[w] = o
			w++
			if meet(e, &o) && !fn(int(e.i), int(o.i)) {
				return
			}
		}
		active = append(active[:w], *e)
	}
}

// simple reports whether a cleaned ring is simple: no two non-adjacent
// edges share a point. A triangle of non-zero area always is, and so is a
// convex ring (most parcels and buildings), without the pairs checked.
func (g *geomBuilder) simple(pts []ipt) bool {
	if len(pts) <= 3 || convex(pts) {
		return true
	}
	ok := true
	g.touchingPairs(pts, func(int, int) bool { ok = false; return false })
	return ok
}

// convex reports whether a ring turns the same way at every vertex and
// goes round once (the sign of its edges' dy changes twice): such a ring
// is simple. A pentagram turns one way too, but goes round twice.
func convex(pts []ipt) bool {
	n := len(pts)
	turn, first, last, changes := 0, 0, 0, 0
	for i := range n {
		a, b, c := pts[i], pts[(i+1)%n], pts[(i+2)%n]
		o := orient(a, b, c)
		if o == 0 || (turn != 0 && o != turn) {
			return false
		}
		turn = o
		if s := cmp.Compare(b.y, a.y); s != 0 {
			if first == 0 {
				first = s
			} else if s != last {
				changes++
			}
			last = s
		}
	}
	if last != first {
		changes++
	}
	return changes == 2
}

// cleanRing drops, in place, repeated points, collinear points and
// zero-width spikes of an open ring, across its seam too; nil when fewer
// than three points are left.
func cleanRing(in []ipt) []ipt {
	pts := in[:0]
	for _, q := range in {
		pts = append(pts, q)
		for {
			n := len(pts)
			if n >= 2 && pts[n-1] == pts[n-2] {
				pts = pts[:n-1]
			} else if n >= 3 && cross(pts[n-3], pts[n-2], pts[n-1]) == 0 {
				pts[n-2] = pts[n-1]
				pts = pts[:n-1]
			} else {
				break
			}
		}
	}
	start := 0
	for len(pts)-start >= 3 {
		n := len(pts)
		switch {
		case pts[n-1] == pts[start]:
			pts = pts[:n-1]
		case cross(pts[n-2], pts[n-1], pts[start]) == 0:
			pts = pts[:n-1]
		case cross(pts[n-1], pts[start], pts[start+1]) == 0:
			start++
		default:
			return pts[start:]
		}
	}
	return nil
}

// insertion is a point to be inserted into edge e of a ring.
type insertion struct {
	e int
	p ipt
	d int64 // squared distance from the edge's first vertex
}

// node returns a copy of the ring with every touch between non-adjacent
// edges made a vertex of both: a vertex lying on another edge is inserted
// into it, and the crossing point of two edges that cross, rounded, into
// both.
func (g *geomBuilder) node(r []ipt) []ipt {
	n := len(r)
	var adds []insertion
	add := func(e int, p ipt) {
		a, b := r[e], r[(e+1)%n]
		if p != a && p != b {
			dx, dy := int64(p.x-a.x), int64(p.y-a.y)
			adds = append(adds, insertion{e: e, p: p, d: dx*dx + dy*dy})
		}
	}
	g.touchingPairs(r, func(i, j int) bool {
		a, b, c, d := r[i], r[(i+1)%n], r[j], r[(j+1)%n]
		o1, o2, o3, o4 := orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
		if o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 {
			p := crossing(a, b, c, d)
			add(i, p)
			add(j, p)
			return true
		}
		if o1 == 0 && onSegment(a, b, c) {
			add(i, c)
		}
		if o2 == 0 && onSegment(a, b, d) {
			add(i, d)
		}
		if o3 == 0 && onSegment(c, d, a) {
			add(j, a)
		}
		if o4 == 0 && onSegment(c, d, b) {
			add(j, b)
		}
		return true
	})
	slices.SortFunc(adds, func(x, y insertion) int {
		return cmp.Or(cmp.Compare(x.e, y.e), cmp.Compare(x.d, y.d))
	})
	out := make([]ipt, 0, n+len(adds))
	k := 0
	for e, p := range r {
		out = append(out, p)
		for ; k < len(adds) && adds[k].e == e; k++ {
			if out[len(out)-1] != adds[k].p {
				out = append(out, adds[k].p)
			}
		}
	}
	return out
}

// crossing is the point where segments ab and cd cross, rounded.
func crossing(a, b, c, d ipt) ipt {
	rx, ry := float64(b.x-a.x), float64(b.y-a.y)
	sx, sy := float64(d.x-c.x), float64(d.y-c.y)
	t := (float64(c.x-a.x)*sy - float64(c.y-a.y)*sx) / (rx*sy - ry*sx)
	return ipt{int32(math.Round(float64(a.x) + t*rx)), int32(math.Round(float64(a.y) + t*ry))}
}

// cutLoops cuts an open ring into loops at every repeated vertex: each
// loop visits each of its vertices once.
func cutLoops(r []ipt) [][]ipt {
	var loops [][]ipt
	stack := make([]ipt, 0, len(r))
	seen := make(map[ipt]int, len(r))
	for _, p := range r {
		if k, ok := seen[p]; ok {
			loops = append(loops, slices.Clone(stack[k:]))
			for _, q := range stack[k+1:] {
				delete(seen, q)
			}
			stack = stack[:k+1]
			continue
		}
		seen[p] = len(stack)
		stack = append(stack, p)
	}
	return append(loops, stack)
}

// fixRing appends to out the simple loops of a cleaned ring that is not
// simple (fresh slices, of either orientation); a ring that collapses
// adds none.
func (g *geomBuilder) fixRing(pts []ipt, out [][]ipt) [][]ipt {
	work := [][]ipt{slices.Clone(pts)}
	for round := 0; round < maxFixRounds && len(work) > 0; round++ {
		var next [][]ipt
		for _, r := range work {
			for _, loop := range cutLoops(g.node(r)) {
				loop = cleanRing(loop)
				switch {
				case len(loop) < 3 || area2(loop) == 0:
				case g.simple(loop):
					out = append(out, loop)
				default:
					next = append(next, loop)
				}
			}
		}
		work = next
	}
	return out
}

// pointIn reports whether p is inside (1), on the boundary of (0) or
// outside (-1) the ring r.
func pointIn(r []ipt, p ipt) int {
	in := false
	n := len(r)
	for i := range n {
		a, b := r[i], r[(i+1)%n]
		if orient(a, b, p) == 0 && onSegment(a, b, p) {
			return 0
		}
		if (a.y > p.y) != (b.y > p.y) {
			c := int64(b.x-a.x)*int64(p.y-a.y) - int64(p.x-a.x)*int64(b.y-a.y)
			if (c > 0) == (b.y > a.y) {
				in = !in
			}
		}
	}
	if in {
		return 1
	}
	return -1
}

// within reports whether the simple ring inner lies inside the simple
// ring outer, judged by its first vertex not on outer's boundary.
func within(outer, inner []ipt) bool {
	for _, p := range inner {
		if c := pointIn(outer, p); c != 0 {
			return c > 0
		}
	}
	return true
}

// sign is the sign of a ring's area2.
func sign(pts []ipt) int { return cmp.Compare(area2(pts), 0) }
