package feature

import (
	"context"
	"errors"
	"fmt"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// Reprojected returns src seen in the spatial reference to: geometries and
// extents come back in to, and a Query's envelope and spatial filter are
// read in to. The source answers in its own SR; the envelope reaches it
// transformed, as a candidate filter, and the exact envelope and spatial
// tests are made again in to, so the answers are those of the data
// reprojected first. Attribute filters, ids, order and columns go to the
// source unchanged. When src is already in to, src itself is returned.
func Reprojected(src Source, to proj.SR) (Source, error) {
	info := src.Info()
	if info.GeometryType == None || info.SR.Same(to) {
		return src, nil
	}
	fwd, err := proj.Transform(info.SR, to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	inv, err := proj.Transform(to, info.SR)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	r := &reprojected{src: src, fwd: fwd, inv: inv, info: info}
	r.info.SR = to
	r.info.Extent = proj.Bound(info.Extent, fwd)
	return r, nil
}

type reprojected struct {
	src      Source
	fwd, inv func(orb.Point) orb.Point
	info     Info
}

func (r *reprojected) Info() Info                     { return r.info }
func (r *reprojected) Ping(ctx context.Context) error { return r.src.Ping(ctx) }

// spatial reports whether q has a part that must be tested in r's SR.
func spatial(q *Query) bool { return q.Bound != nil || q.Spatial != nil }

// inner returns the query for the source: the spatial parts as a candidate
// envelope in the source's SR, and the page left to the wrapper when it
// filters.
func (r *reprojected) inner(q *Query) *Query {
	in := *q
	in.Bound, in.Spatial = nil, nil
	if b, ok := candidatesOf(q); ok {
		sb := proj.Bound(b, r.inv)
		in.Bound = &sb
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
			out.Geom = proj.Geometry(orb.Clone(f.Geom), r.fwd)
			out.Bound = BoundOf(out.Geom)
		}
		if m != nil {
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
		return proj.Bound(b, r.fwd), err
	}
	b := EmptyBound()
	err := r.Scan(ctx, q, func(f *Feature) error {
		if f.Geom != nil {
			b = b.Union(f.Bound)
		}
		return nil
	})
	return b, err
}

// Stats aggregates in the source unless a spatial test must run here.
func (r *reprojected) Stats(ctx context.Context, q *Query, stats []Stat, groupBy []int) ([]StatRow, error) {
	if !spatial(q) {
		return r.src.Stats(ctx, q, stats, groupBy)
	}
	if err := checkColumns(r.info.Fields, groupBy, stats); err != nil {
		return nil, err
	}
	a := NewAggregator(stats, groupBy)
	err := r.Scan(ctx, q, func(f *Feature) error { a.Add(f.Values); return nil })
	if err != nil {
		return nil, err
	}
	return a.Rows(), nil
}

// Distinct collects in the source unless a spatial test must run here.
func (r *reprojected) Distinct(ctx context.Context, q *Query, cols []int) ([][]any, error) {
	if !spatial(q) {
		return r.src.Distinct(ctx, q, cols)
	}
	if err := checkColumns(r.info.Fields, cols, nil); err != nil {
		return nil, err
	}
	d := NewDistinctSet(cols)
	err := r.Scan(ctx, q, func(f *Feature) error { d.Add(f.Values); return nil })
	if err != nil {
		return nil, err
	}
	return d.Rows(), nil
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
