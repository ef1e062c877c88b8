package feature

import (
	"cmp"
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// nodeSize is the fan-out of the packed R-tree.
const nodeSize = 16

// rtree is a static, packed R-tree built once with Sort-Tile-Recursive
// (STR) bulk loading. Entries of every level live in one flat slice, level
// 0 (the leaves, one per indexed feature) first. For a leaf entry ref is
// the feature's index in Layer.features; for a node it is the position of
// its first child in the level below, and the node owns up to nodeSize
// consecutive entries from there (fewer for the last node of a level).
type rtree struct {
	entries []entry
	// levels[k] is the end offset of level k in entries; level k starts at
	// levels[k-1] (0 for k = 0). The last level is the root level.
	levels []int
}

type entry struct {
	minX, minY, maxX, maxY float64
	ref                    int32
}

func (e *entry) intersects(b *orb.Bound) bool {
	return e.minX <= b.Max[0] && e.maxX >= b.Min[0] && e.minY <= b.Max[1] && e.maxY >= b.Min[1]
}

// searchStats counts the work of one search, for tests.
type searchStats struct {
	nodes    int // node entries whose children were examined
	visited  int // leaf entries examined (bound compared)
	reported int // features handed to the callback
}

// buildRTree indexes the features with a non-empty bound.
func buildRTree(features []Feature) rtree {
	var leaves []entry
	for i := range features {
		b := features[i].Bound
		if features[i].Geom == nil || b.IsEmpty() {
			continue
		}
		leaves = append(leaves, entry{b.Min[0], b.Min[1], b.Max[0], b.Max[1], int32(i)})
	}
	return packRTree(leaves)
}

// buildPointTree indexes points; a leaf's ref is the point's index in pts.
func buildPointTree(pts []orb.Point) rtree {
	leaves := make([]entry, len(pts))
	for i, p := range pts {
		leaves[i] = entry{p[0], p[1], p[0], p[1], int32(i)}
	}
	return packRTree(leaves)
}

// packRTree builds the tree over its leaves, which it reorders.
func packRTree(leaves []entry) rtree {
	var t rtree
	if len(leaves) == 0 {
		return t
	}
	level := strSort(leaves)
	t.entries = append(t.entries, level...)
	t.levels = append(t.levels, len(t.entries))
	start := 0 // offset of level in t.entries
	// the top level is scanned linearly, so stop once it fits in one node
	for len(level) > nodeSize {
		parents := make([]entry, 0, (len(level)+nodeSize-1)/nodeSize)
		for i := 0; i < len(level); i += nodeSize {
			end := min(i+nodeSize, len(level))
			p := entry{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1), int32(start + i)}
			for _, c := range level[i:end] {
				p.minX, p.minY = math.Min(p.minX, c.minX), math.Min(p.minY, c.minY)
				p.maxX, p.maxY = math.Max(p.maxX, c.maxX), math.Max(p.maxY, c.maxY)
			}
			parents = append(parents, p)
		}
		start = len(t.entries)
		level = strSort(parents)
		t.entries = append(t.entries, level...)
		t.levels = append(t.levels, len(t.entries))
	}
	return t
}

// strSort orders entries for STR packing: sorted by centre x, cut into
// √(n/nodeSize) vertical slices of whole nodes, each slice sorted by
// centre y. Consecutive runs of nodeSize entries then form compact nodes.
func strSort(es []entry) []entry {
	cx := func(e entry) float64 { return e.minX + e.maxX }
	cy := func(e entry) float64 { return e.minY + e.maxY }
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(cx(a), cx(b)) })
	nodes := (len(es) + nodeSize - 1) / nodeSize
	perSlice := int(math.Ceil(math.Sqrt(float64(nodes)))) * nodeSize
	for i := 0; i < len(es); i += perSlice {
		s := es[i:min(i+perSlice, len(es))]
		slices.SortFunc(s, func(a, b entry) int { return cmp.Compare(cy(a), cy(b)) })
	}
	return es
}

// search calls fn with every feature whose bound intersects b, until fn
// returns false. st may be nil.
func (t *rtree) search(b *orb.Bound, fs []Feature, fn func(*Feature) bool, st *searchStats) {
	t.visit(b, func(ref int32) bool { return fn(&fs[ref]) }, st)
}

// visit calls fn with the ref of every leaf whose bound intersects b, until
// fn returns false. st may be nil.
func (t *rtree) visit(b *orb.Bound, fn func(ref int32) bool, st *searchStats) {
	if len(t.levels) == 0 {
		return
	}
	top := len(t.levels) - 1
	lo := 0
	if top > 0 {
		lo = t.levels[top-1]
	}
	t.searchRange(top, lo, t.levels[top], b, fn, st)
}

// searchRange visits entries [lo, hi) of level k; it returns false when
// the callback asked to stop.
func (t *rtree) searchRange(k, lo, hi int, b *orb.Bound, fn func(ref int32) bool, st *searchStats) bool {
	for i := lo; i < hi; i++ {
		e := &t.entries[i]
		if k == 0 {
			if st != nil {
				st.visited++
			}
			if !e.intersects(b) {
				continue
			}
			if st != nil {
				st.reported++
			}
			if !fn(e.ref) {
				return false
			}
			continue
		}
		if !e.intersects(b) {
			continue
		}
		if st != nil {
			st.nodes++
		}
		child := int(e.ref)
		end := min(child+nodeSize, t.levels[k-1])
		if !t.searchRange(k-1, child, end, b, fn, st) {
			return false
		}
	}
	return true
}
