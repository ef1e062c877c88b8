package feature

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/clip"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// Reprojected returns src seen in the spatial reference to, through sys: geometries and
// extents come back in to, and a Query's envelope and spatial filter are read in to. The
// source answers in its own SR; the envelope reaches it transformed (along its edges), as a
// candidate filter, and the exact envelope and spatial tests are made again in to, so the
// answers are those of the data reprojected first. A feature whose geometry cannot be
// expressed in to (it lies where to is undefined) comes back without geometry. Attribute
// filters, ids, order and columns go to the source unchanged. When src is already in to, src
// itself is returned.
func Reprojected(src Source, to proj.SR, sys *proj.Systems) (Source, error) {
	info := src.Info()
	if info.GeometryType == None || info.SR.Same(to) {
		return src, nil
	}
	t, err := sys.Transformer(info.SR, to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	return Projected(src, t), nil
}

// Projected is Reprojected with the transformer given: from src's SR to t.Target's (a drawing
// passes an approximate one, proj.Transformer.Approximate).
func Projected(src Source, t *proj.Transformer) Source {
	r := &reprojected{src: src, t: t, info: src.Info()}
	r.info.SR = t.Target.SR
	r.info.Extent = r.fwdBound(r.info.Extent)
	return r
}

// Stored returns the source a Reprojected source reads (in its own SR), or s itself: a drawing
// projects the stored data its own way (clipped, approximately) rather than through s.
func Stored(s Source) Source {
	if r, ok := s.(*reprojected); ok {
		return r.src
	}
	return s
}

type reprojected struct {
	src  Source
	t    *proj.Transformer
	info Info
}

func (r *reprojected) Info() Info                     { return r.info }
func (r *reprojected) Ping(ctx context.Context) error { return r.src.Ping(ctx) }

// fwdBound is a source bound in r's SR; empty when no part of it can be.
func (r *reprojected) fwdBound(b orb.Bound) orb.Bound {
	out, err := r.t.Bound(b)
	if err != nil {
		return EmptyBound()
	}
	return out
}

// spatial reports whether q has a part that must be tested in r's SR.
func spatial(q *Query) bool { return q.Bound != nil || q.Spatial != nil }

// inner returns the query for the source: the spatial parts as a candidate envelope in the
// source's SR (none when part of the envelope lies outside the source's domain, as the corners
// of a world map in Robinson do: every feature is then a candidate), and
// the page left to the wrapper when it filters.
func (r *reprojected) inner(q *Query) *Query {
	in := *q
	in.Bound, in.Spatial = nil, nil
	in.Resolution = 0 // a pixel of the target system is no length in the source's
	if spatial(q) {
		if b, ok := q.Candidates(); ok {
			if sb, ok := r.t.InverseCover(b); ok {
				in.Bound = &sb
			}
		}
		in.NoGeometry = false
		in.Offset, in.Limit = 0, 0
	}
	return &in
}

// Scan streams the selected features, reprojected.
func (r *reprojected) Scan(ctx context.Context, q *Query, fn func(*Feature) error) error {
	var m *Matcher
	if spatial(q) {
		rest := Query{Bound: q.Bound, Spatial: q.Spatial}
		var err error
		if m, err = rest.Matcher(r.info.Fields); err != nil {
			return fmt.Errorf("%w: %w", ErrQuery, err)
		}
	}
	emit := fn
	if m != nil { // the page is cut after the spatial test here, not by the inner source
		emit = Paged(q.Offset, q.Limit, fn)
	}
	err := r.src.Scan(ctx, r.inner(q), func(f *Feature) error {
		out := *f
		if f.Geom != nil {
			g, b, err := r.t.Copy(f.Geom)
			if err != nil || g == nil {
				g, b = nil, BoundOf(nil)
			}
			out.Geom, out.Bound = g, b
		}
		if m != nil {
			if out.Geom == nil {
				return nil
			}
			if ok, err := m.Match(&out); err != nil || !ok {
				return err
			}
		}
		return emit(&out)
	})
	if errors.Is(err, ErrPageDone) {
		return nil
	}
	return err
}

// Count counts in the source unless a spatial test must run here.
func (r *reprojected) Count(ctx context.Context, q *Query) (int, error) {
	if !spatial(q) {
		return r.src.Count(ctx, q)
	}
	n := 0
	err := r.Scan(ctx, q, func(*Feature) error { n++; return nil })
	return n, err
}

// Extent transforms the source's extent, or unions the filtered features'.
func (r *reprojected) Extent(ctx context.Context, q *Query) (orb.Bound, error) {
	if !spatial(q) {
		b, err := r.src.Extent(ctx, q)
		return r.fwdBound(b), err
	}
	return scannedExtent(ctx, r, q)
}

// Stats aggregates in the source unless a spatial test must run here.
func (r *reprojected) Stats(ctx context.Context, q *Query, stats []Stat, groupBy []int) ([]StatRow, error) {
	if !spatial(q) {
		return r.src.Stats(ctx, q, stats, groupBy)
	}
	return scannedStats(ctx, r, r.info.Fields, q, stats, groupBy)
}

// Distinct collects in the source unless a spatial test must run here.
func (r *reprojected) Distinct(ctx context.Context, q *Query, cols []int) ([][]any, error) {
	if !spatial(q) {
		return r.src.Distinct(ctx, q, cols)
	}
	return scannedDistinct(ctx, r, r.info.Fields, q, cols)
}

// Clipped returns src with every geometry Scan yields cut to the union of windows (in src's
// SR), and features wholly outside them left out: the data of a drawing in another system,
// before they are projected (proj.Systems.DrawWindows). Only Scan clips; the other methods
// answer for the whole source. No windows: src itself.
//
// The sides of the windows, and those of every bound in seams (where the data end by
// construction: proj.DataEdges), are seams: once projected they may lie inside the map, where a
// polygon's edge along them is no coastline or border but a cut (the ±180° meridian inside a
// polar map, the end of a window). A polygon with edges along a seam comes out as an Outlined
// geometry, for the drawing to fill the polygon and stroke only the rest of its outline.
func Clipped(src Source, windows, seams []orb.Bound) Source {
	if len(windows) == 0 {
		return src
	}
	return &clipped{Source: src, windows: windows, seams: append(slices.Clone(windows), seams...)}
}

type clipped struct {
	Source
	windows []orb.Bound
	seams   []orb.Bound
}

func (c *clipped) Scan(ctx context.Context, q *Query, fn func(*Feature) error) error {
	return c.Source.Scan(ctx, q, func(f *Feature) error {
		if f.Geom == nil {
			return fn(f)
		}
		b := f.Geom.Bound()
		g, whole := clipTo(c.windows, f.Geom, b)
		if g == nil {
			return nil
		}
		if o, ok := outlined(g, c.seams); ok {
			g, whole = o, false
		}
		if whole {
			return fn(f)
		}
		out := *f
		out.Geom, out.Bound = g, BoundOf(g)
		return fn(&out)
	})
}

// Outlined returns the parts of a geometry Clipped gave as a polygon to fill and the lines of
// its outline to stroke (the polygon's rings without their edges along a seam), for a drawing.
// ok is false for any other geometry, which is drawn as it is.
func Outlined(g orb.Geometry) (fill orb.Geometry, outline orb.MultiLineString, ok bool) {
	c, isColl := g.(orb.Collection)
	if !isColl || len(c) != 2 {
		return nil, nil, false
	}
	switch c[0].(type) {
	case orb.Polygon, orb.MultiPolygon:
	default:
		return nil, nil, false
	}
	outline, ok = c[1].(orb.MultiLineString)
	return c[0], outline, ok
}

// outlined returns g as an orb.Collection of g and its outline without the edges along a side
// of one of seams, when g is a polygon with such edges; ok is false otherwise.
func outlined(g orb.Geometry, seams []orb.Bound) (orb.Geometry, bool) {
	var polys []orb.Polygon
	switch v := g.(type) {
	case orb.Polygon:
		polys = []orb.Polygon{v}
	case orb.MultiPolygon:
		polys = v
	default:
		return nil, false
	}
	b := g.Bound()
	near := seams[:0:0]
	for _, s := range seams {
		if onSide(s, b.Min, b) || onSide(s, b.Max, b) {
			near = append(near, s)
		}
	}
	if len(near) == 0 {
		return nil, false
	}
	var lines orb.MultiLineString
	cut := false
	for _, p := range polys {
		for _, r := range p {
			ls, c := outlineOf(r, near)
			lines = append(lines, ls...)
			cut = cut || c
		}
	}
	if !cut {
		return nil, false
	}
	return orb.Collection{g, lines}, true
}

// onSide reports whether a corner of the bound b, p, lies on a side of s (b touches it).
func onSide(s orb.Bound, p orb.Point, b orb.Bound) bool {
	return (same(p[0], s.Min[0]) || same(p[0], s.Max[0])) && b.Max[1] >= s.Min[1] && b.Min[1] <= s.Max[1] ||
		(same(p[1], s.Min[1]) || same(p[1], s.Max[1])) && b.Max[0] >= s.Min[0] && b.Min[0] <= s.Max[0]
}

// same reports whether two coordinates are equal but for rounding.
func same(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// alongSeam reports whether the edge p–q lies along a side of one of seams.
func alongSeam(p, q orb.Point, seams []orb.Bound) bool {
	for _, s := range seams {
		for _, x := range [2]float64{s.Min[0], s.Max[0]} {
			if same(p[0], x) && same(q[0], x) {
				return true
			}
		}
		for _, y := range [2]float64{s.Min[1], s.Max[1]} {
			if same(p[1], y) && same(q[1], y) {
				return true
			}
		}
	}
	return false
}

// outlineOf returns the ring r as lines without its edges along a seam, and whether it had
// any.
func outlineOf(r orb.Ring, seams []orb.Bound) (orb.MultiLineString, bool) {
	n := len(r)
	if n < 2 {
		return nil, false
	}
	// Start the walk after an edge along a seam, so that a line is not split where the ring
	// closes.
	start := -1
	for i := range n - 1 {
		if alongSeam(r[i], r[i+1], seams) {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return orb.MultiLineString{orb.LineString(r)}, false
	}
	var out orb.MultiLineString
	var cur orb.LineString
	for k := range n - 1 {
		i := (start + k) % (n - 1)
		p, q := r[i], r[i+1]
		if alongSeam(p, q, seams) {
			if len(cur) > 1 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		if cur == nil {
			cur = orb.LineString{p}
		}
		cur = append(cur, q)
	}
	if len(cur) > 1 {
		out = append(out, cur)
	}
	return out, true
}

// clipTo cuts g (of bound b) to the windows; whole reports that g lies inside one of them
// and is unchanged.
func clipTo(windows []orb.Bound, g orb.Geometry, b orb.Bound) (orb.Geometry, bool) {
	var parts []orb.Geometry
	for _, w := range windows {
		if w.Contains(b.Min) && w.Contains(b.Max) {
			return g, true
		}
		if !w.Intersects(b) {
			continue
		}
		if p := clip.Geometry(w, orb.Clone(g)); p != nil {
			parts = append(parts, densify(p, math.Max(w.Max[0]-w.Min[0], w.Max[1]-w.Min[1])/densifySteps))
		}
	}
	switch len(parts) {
	case 0:
		return nil, false
	case 1:
		return parts[0], false
	}
	return joinParts(parts), false
}

// densifySteps: a clipped geometry gets a vertex at least every 1/densifySteps of its window's
// size, so that the straight edges the cut makes (and long edges of the data) follow the curve
// they are in the target system once projected.
const densifySteps = 256

// densify returns g with points added along segments longer than step.
func densify(g orb.Geometry, step float64) orb.Geometry {
	if !(step > 0) {
		return g
	}
	path := func(ps []orb.Point) []orb.Point {
		var out []orb.Point
		for i, p := range ps {
			if i > 0 {
				q := ps[i-1]
				if n := math.Ceil(math.Hypot(p[0]-q[0], p[1]-q[1]) / step); n > 1 && n < 1e6 {
					if out == nil {
						out = append(make([]orb.Point, 0, len(ps)+int(n)), ps[:i]...)
					}
					for k := 1.0; k < n; k++ {
						out = append(out, orb.Point{q[0] + (p[0]-q[0])*k/n, q[1] + (p[1]-q[1])*k/n})
					}
				}
			}
			if out != nil {
				out = append(out, p)
			}
		}
		if out == nil {
			return ps
		}
		return out
	}
	poly := func(p orb.Polygon) orb.Polygon {
		for i, r := range p {
			p[i] = path(r)
		}
		return p
	}
	switch g := g.(type) {
	case orb.LineString:
		return orb.LineString(path(g))
	case orb.Ring:
		return orb.Ring(path(g))
	case orb.MultiLineString:
		for i, ls := range g {
			g[i] = path(ls)
		}
	case orb.Polygon:
		return poly(g)
	case orb.MultiPolygon:
		for i, p := range g {
			g[i] = poly(p)
		}
	}
	return g
}

// joinParts makes one geometry of the pieces of one geometry clipped to several windows.
func joinParts(parts []orb.Geometry) orb.Geometry {
	var mp orb.MultiPolygon
	var ml orb.MultiLineString
	var pts orb.MultiPoint
	for _, p := range parts {
		switch v := p.(type) {
		case orb.Polygon:
			mp = append(mp, v)
		case orb.MultiPolygon:
			mp = append(mp, v...)
		case orb.LineString:
			ml = append(ml, v)
		case orb.MultiLineString:
			ml = append(ml, v...)
		case orb.Point:
			pts = append(pts, v)
		case orb.MultiPoint:
			pts = append(pts, v...)
		default:
			return orb.Collection(parts)
		}
	}
	switch {
	case mp != nil:
		return mp
	case ml != nil:
		return ml
	}
	return pts
}

// Attributes returns src as a standalone table: no geometry, no SR, no
// extent, and spatial filters refused. A service's table may read a
// feature table this way.
func Attributes(src Source) Source {
	info := src.Info()
	if info.GeometryType == None {
		return src
	}
	info.GeometryType, info.SR, info.Extent, info.AvgPoints = None, proj.SR{}, EmptyBound(), 0
	return &attributes{Source: src, info: info}
}

type attributes struct {
	Source
	info Info
}

func (a *attributes) Info() Info { return a.info }

func (a *attributes) table(q *Query) (*Query, error) {
	if spatial(q) {
		return nil, fmt.Errorf("%w: %s is a table without geometry", ErrQuery, a.info.Name)
	}
	t := *q
	t.NoGeometry = true
	return &t, nil
}

func (a *attributes) Scan(ctx context.Context, q *Query, fn func(*Feature) error) error {
	t, err := a.table(q)
	if err != nil {
		return err
	}
	return a.Source.Scan(ctx, t, func(f *Feature) error {
		out := *f
		out.Geom, out.Bound = nil, orb.Bound{}
		return fn(&out)
	})
}

func (a *attributes) Count(ctx context.Context, q *Query) (int, error) {
	t, err := a.table(q)
	if err != nil {
		return 0, err
	}
	return a.Source.Count(ctx, t)
}

func (a *attributes) Extent(context.Context, *Query) (orb.Bound, error) { return EmptyBound(), nil }

func (a *attributes) Stats(ctx context.Context, q *Query, stats []Stat, groupBy []int) ([]StatRow, error) {
	t, err := a.table(q)
	if err != nil {
		return nil, err
	}
	return a.Source.Stats(ctx, t, stats, groupBy)
}

func (a *attributes) Distinct(ctx context.Context, q *Query, cols []int) ([][]any, error) {
	t, err := a.table(q)
	if err != nil {
		return nil, err
	}
	return a.Source.Distinct(ctx, t, cols)
}
