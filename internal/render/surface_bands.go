package render

import (
	"fmt"
	"image"
	"image/color"
	"sync"
)

// Banded drawing: a GGSurface drawing a large image for Renderer.Draw, with a core to spare, does
// not composite its fills and thin strokes (the bulk of a dense map) as they come: it records them
// in a display list, each a set of polygons (a fill, or the outlines built for a stroke, built
// once) with its colour and pixel rectangle. Before anything else touches the image (text, images,
// wide or dashed strokes, patterns, groups, footprint composites, the end of the draw) the list is
// replayed in horizontal bands of the image, one goroutine a band. Each band goes through every
// operation in order and changes only its own rows, with the same tiles as a sequential draw (a
// tile across a band's edge is rasterized by both bands, each compositing its own rows), so every
// pixel gets the same composites in the same order: the image is byte-identical to drawing
// straight away, whatever the number of bands.
const (
	// drawBands is the most bands a draw is replayed in (the draw's goroutine and helpers).
	drawBands = 2
	// minBandPixels is the least total area, in pixels, of a list's operations replayed in more
	// than one band: below it, starting a goroutine costs more than it saves.
	minBandPixels = 64 << 10
	// maxListPoints bounds the points a list holds (2 MiB): a list reaching it is replayed.
	maxListPoints = 1 << 17
)

// displayList is the raster operations a GGSurface records for a banded replay.
type displayList struct {
	on    bool // recording
	bands int  // bands to replay in (at least 2 when on)

	pts    []pathPoint
	subs   []subpath     // polygons, their points in pts
	boxes  [][4]float64  // bounding box of each of subs
	ops    []rasterOp    // in drawing order
	area   int           // total area of the ops' rectangles
	rows   []int         // scratch: area by row, for the band edges
	cuts   []int         // scratch: the bands' first rows and the last band's end
	panics []any         // scratch: what each band panicked with
	aux    []*tileRaster // scratch of the helper goroutines

	banded int // replays in more than one band (tests read it)
}

// rasterOp is one recorded fill: the polygons subs[sub0:sub1] filled with c within r.
type rasterOp struct {
	sub0, sub1 int
	r          image.Rectangle
	c          color.NRGBA
}

// add records the fill of polygons subs of pts with c within r, and reports whether the list is
// full (to be replayed now).
func (l *displayList) add(pts []pathPoint, subs []subpath, r image.Rectangle, c color.NRGBA) bool {
	base := len(l.pts)
	l.pts = append(l.pts, pts...)
	sub0 := len(l.subs)
	for _, sp := range subs {
		sp.start += base
		sp.end += base
		l.subs = append(l.subs, sp)
	}
	l.boxes = appendBoxes(l.boxes, pts, subs)
	l.ops = append(l.ops, rasterOp{sub0: sub0, sub1: len(l.subs), r: r, c: c})
	l.area += r.Dx() * r.Dy()
	return len(l.pts) >= maxListPoints
}

// clear forgets the recorded operations.
func (l *displayList) clear() {
	l.pts, l.subs, l.boxes, l.ops = l.pts[:0], l.subs[:0], l.boxes[:0], l.ops[:0]
	l.area = 0
}

// edges returns n+1 rows cutting rows y0 to y1 into n bands of about the same area of operations.
func (l *displayList) edges(y0, y1, n int) []int {
	h := y1 - y0
	l.rows = resizeInts(l.rows, h+1)
	clear(l.rows)
	for _, op := range l.ops {
		a, b := max(op.r.Min.Y, y0)-y0, min(op.r.Max.Y, y1)-y0
		if a < b {
			l.rows[a] += op.r.Dx()
			l.rows[b] -= op.r.Dx()
		}
	}
	total, run := 0, 0
	for y := range h {
		run += l.rows[y]
		total += run
	}
	edges := append(l.cuts[:0], y0)
	acc, run := 0, 0
	for y := range h {
		if len(edges) == n {
			break
		}
		run += l.rows[y]
		acc += run
		if acc*n >= total*len(edges) {
			edges = append(edges, y0+y+1)
		}
	}
	for len(edges) < n {
		edges = append(edges, y1)
	}
	l.cuts = append(edges, y1)
	return l.cuts
}

// resizeInts returns b with length n, reallocated when it is too small (contents undefined).
func resizeInts(b []int, n int) []int {
	if cap(b) < n {
		return make([]int, n)
	}
	return b[:n]
}

// record starts recording the surface's fills and thin strokes for a replay in bands (at least
// 2), or, with fewer, stops recording.
func (s *GGSurface) record(bands int) {
	s.list.clear()
	s.list.on, s.list.bands = bands >= 2, bands
}

// flushList replays the recorded operations into the image, in bands when they are worth it, and
// empties the list.
func (s *GGSurface) flushList() {
	l := &s.list
	if len(l.ops) == 0 {
		return
	}
	defer l.clear()
	b := s.img.Bounds()
	n := l.bands
	if l.area < minBandPixels {
		n = 1
	}
	n = min(n, max(1, b.Dy()/minBandRows))
	if n <= 1 {
		replayBand(&s.raster, s.img, l, b.Min.Y, b.Max.Y)
		return
	}
	edges := l.edges(b.Min.Y, b.Max.Y, n)
	for len(l.aux) < n-1 {
		l.aux = append(l.aux, new(tileRaster))
	}
	l.banded++
	l.panics = append(l.panics[:0], make([]any, n)...)
	panics := l.panics
	band := func(i int, t *tileRaster) {
		defer func() { panics[i] = recover() }()
		replayBand(t, s.img, l, edges[i], edges[i+1])
	}
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Go(func() { band(i, l.aux[i-1]) })
	}
	band(0, &s.raster)
	wg.Wait()
	for i, p := range panics {
		panics[i] = nil
		if p != nil {
			panic(fmt.Sprintf("render: band %d of %d of a banded draw: %v", i, n, p))
		}
	}
}

// replayBand draws the operations of l into the rows y0 to y1 of dst.
func replayBand(t *tileRaster, dst *image.RGBA, l *displayList, y0, y1 int) {
	if y0 >= y1 {
		return
	}
	for _, op := range l.ops {
		if op.r.Max.Y <= y0 || op.r.Min.Y >= y1 {
			continue
		}
		t.fill(dst, l.pts, l.subs[op.sub0:op.sub1], l.boxes[op.sub0:op.sub1], op.r, op.c, y0, y1)
	}
}
