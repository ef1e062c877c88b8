package mvtcheck

import (
	"cmp"
	"slices"
)

// maxSimpleCoord bounds the coordinates simpleRing checks: orientation
// products of differences then stay inside int64.
const maxSimpleCoord = 1 << 30

// edge is one edge of a ring, by the index of its first vertex.
type edge struct {
	i          int
	minX, maxX int64
}

// simpleRing reports whether the closed ring xy (x0, y0, x1, y1 …, not
// repeating its first point) is simple: no two non-adjacent edges touch,
// no two adjacent edges fold back on each other. It returns a vertex near
// the fault when not. Rings with coordinates beyond ±2^30 are not checked
// (reported simple). edges is scratch space.
func simpleRing(xy []int64, edges []edge) (ok bool, x, y int64, scratch []edge) {
	n := len(xy) / 2
	for _, v := range xy {
		if v >= maxSimpleCoord || v <= -maxSimpleCoord {
			return true, 0, 0, edges
		}
	}
	pt := func(i int) (int64, int64) { i %= n; return xy[2*i], xy[2*i+1] }
	edges = edges[:0]
	for i := range n {
		ax, _ := pt(i)
		bx, _ := pt(i + 1)
		edges = append(edges, edge{i: i, minX: min(ax, bx), maxX: max(ax, bx)})
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.minX, b.minX) })
	active := make([]edge, 0, 16)
	for _, e := range edges {
		keep := active[:0]
		for _, a := range active {
			if a.maxX >= e.minX {
				keep = append(keep, a)
			}
		}
		active = keep
		ax, ay := pt(e.i)
		bx, by := pt(e.i + 1)
		for _, o := range active {
			cx, cy := pt(o.i)
			dx, dy := pt(o.i + 1)
			switch {
			case (o.i+1)%n == e.i: // o ends where e starts
				if folds(cx, cy, ax, ay, bx, by) {
					return false, ax, ay, edges
				}
			case (e.i+1)%n == o.i: // e ends where o starts
				if folds(ax, ay, cx, cy, dx, dy) {
					return false, cx, cy, edges
				}
			case touch(ax, ay, bx, by, cx, cy, dx, dy):
				return false, ax, ay, edges
			}
		}
		active = append(active, e)
	}
	return true, 0, 0, edges
}

func orient(ax, ay, bx, by, cx, cy int64) int {
	return cmp.Compare((bx-ax)*(cy-ay)-(by-ay)*(cx-ax), 0)
}

// folds reports whether the path a→b→c turns straight back on itself.
func folds(ax, ay, bx, by, cx, cy int64) bool {
	return orient(ax, ay, bx, by, cx, cy) == 0 && (bx-ax)*(cx-bx)+(by-ay)*(cy-by) < 0
}

// onSegment reports whether c, collinear with ab, lies on the closed
// segment ab.
func onSegment(ax, ay, bx, by, cx, cy int64) bool {
	return min(ax, bx) <= cx && cx <= max(ax, bx) && min(ay, by) <= cy && cy <= max(ay, by)
}

// touch reports whether the closed segments ab and cd share a point.
func touch(ax, ay, bx, by, cx, cy, dx, dy int64) bool {
	o1, o2 := orient(ax, ay, bx, by, cx, cy), orient(ax, ay, bx, by, dx, dy)
	o3, o4 := orient(cx, cy, dx, dy, ax, ay), orient(cx, cy, dx, dy, bx, by)
	if o1 != o2 && o3 != o4 && o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 {
		return true
	}
	return (o1 == 0 && onSegment(ax, ay, bx, by, cx, cy)) ||
		(o2 == 0 && onSegment(ax, ay, bx, by, dx, dy)) ||
		(o3 == 0 && onSegment(cx, cy, dx, dy, ax, ay)) ||
		(o4 == 0 && onSegment(cx, cy, dx, dy, bx, by))
}
