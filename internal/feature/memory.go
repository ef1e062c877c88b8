package feature

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/paulmach/orb"
)

// This file makes the in-memory Layer a Source: the provider for small
// GeoJSON files, and the oracle the database providers are tested against.

var _ Source = (*Layer)(nil)

// Info describes the layer. AvgPoints is exact.
func (l *Layer) Info() Info {
	in := Info{Name: "memory " + l.name, Table: l.name, SR: l.sr, GeometryType: l.geomType, Fields: l.fields, Extent: l.extent}
	if n := len(l.features); n > 0 {
		in.AvgPoints = int(math.Round(float64(l.vertices) / float64(n)))
	}
	return in
}

// Ping always succeeds: the data is in memory.
func (l *Layer) Ping(context.Context) error { return nil }

// Scan streams the features q selects. Candidates come from the ID list,
// else the R-tree (envelopes and spatial filters), else the whole table.
func (l *Layer) Scan(ctx context.Context, q *Query, fn func(*Feature) error) error {
	if q.AnyOrder && (q.Offset != 0 || q.Limit != 0) {
		return fmt.Errorf("%w: Offset and Limit need an ordered scan", ErrQuery)
	}
	inIDOrder := q.AnyOrder || len(q.Order) == 0
	if inIDOrder && !q.AnyOrder {
		// The R-tree yields candidates in its own order: sort them.
		if _, spatial := q.Candidates(); spatial && q.IDs == nil {
			inIDOrder = false
		}
	}
	if inIDOrder {
		return l.candidates(ctx, q, Paged(q.Offset, q.Limit, fn))
	}
	var all []*Feature
	if err := l.candidates(ctx, q, func(f *Feature) error { all = append(all, f); return nil }); err != nil {
		return err
	}
	SortFeatures(all, q.Order)
	for _, f := range Page(all, q.Offset, q.Limit) {
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// candidates calls fn for every feature that passes q's filters, in ID
// order unless the R-tree supplied them. ErrPageDone from fn ends it quietly.
func (l *Layer) candidates(ctx context.Context, q *Query, fn func(*Feature) error) error {
	m, err := q.Matcher(l.fields)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrQuery, err)
	}
	if m.MatchesNone() {
		return nil
	}
	var failed error
	visit := func(f *Feature) bool {
		// Every row: one geometry test against a large filter geometry can take seconds, and a
		// request that is over stops here (an atomic load beside that is free).
		if failed = ctx.Err(); failed != nil {
			return false
		}
		ok, err := m.Match(f)
		if err != nil {
			failed = err
			return false
		}
		if ok {
			if err := fn(f); err != nil {
				failed = err
				return false
			}
		}
		return true
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	switch b, spatial := q.Candidates(); {
	case m.IDs() != nil:
		for _, id := range m.IDs() {
			if f, ok := l.ByID(id); ok && !visit(f) {
				break
			}
		}
	case spatial:
		l.Search(b, visit)
	default:
		for i := range l.features {
			if !visit(&l.features[i]) {
				break
			}
		}
	}
	if failed == ErrPageDone {
		return nil
	}
	return failed
}

// Count returns how many features q selects.
func (l *Layer) Count(ctx context.Context, q *Query) (int, error) {
	if q.Offset == 0 && q.Limit == 0 {
		n := 0
		err := l.candidates(ctx, q, func(*Feature) error { n++; return nil })
		return n, err
	}
	n := 0
	err := l.Scan(ctx, q, func(*Feature) error { n++; return nil })
	return n, err
}

// Extent returns the union of the selected features' bounds.
func (l *Layer) Extent(ctx context.Context, q *Query) (orb.Bound, error) {
	return scannedExtent(ctx, l, q)
}

// Stats computes aggregates of the selected features in Go.
func (l *Layer) Stats(ctx context.Context, q *Query, stats []Stat, groupBy []int) ([]StatRow, error) {
	return scannedStats(ctx, l, l.fields, q, stats, groupBy)
}

// Distinct returns the distinct tuples of cols among the selected features.
func (l *Layer) Distinct(ctx context.Context, q *Query, cols []int) ([][]any, error) {
	return scannedDistinct(ctx, l, l.fields, q, cols)
}

// scanner is what the aggregates computed in Go need of a source: its rows.
type scanner interface {
	Scan(ctx context.Context, q *Query, fn func(*Feature) error) error
}

// scannedExtent, scannedStats and scannedDistinct answer Extent, Stats and Distinct by scanning the
// rows of s in Go: the in-memory layer's way, and a reprojected source's when a spatial test must
// run after reprojecting. fields are the source's, to check the columns asked for.
func scannedExtent(ctx context.Context, s scanner, q *Query) (orb.Bound, error) {
	b := EmptyBound()
	err := s.Scan(ctx, q, func(f *Feature) error {
		if f.Geom != nil {
			b = b.Union(f.Bound)
		}
		return nil
	})
	return b, err
}

func scannedStats(ctx context.Context, s scanner, fields []Field, q *Query, stats []Stat, groupBy []int) ([]StatRow, error) {
	if err := checkColumns(fields, groupBy, stats); err != nil {
		return nil, err
	}
	a := NewAggregator(stats, groupBy)
	a.MaxGroups = q.MaxGroups
	if err := s.Scan(ctx, q, func(f *Feature) error { a.Add(f.Values); return a.Err() }); err != nil {
		return nil, err
	}
	return a.Rows(), nil
}

func scannedDistinct(ctx context.Context, s scanner, fields []Field, q *Query, cols []int) ([][]any, error) {
	if err := checkColumns(fields, cols, nil); err != nil {
		return nil, err
	}
	d := NewDistinctSet(cols)
	if err := s.Scan(ctx, q, func(f *Feature) error { d.Add(f.Values); return nil }); err != nil {
		return nil, err
	}
	return d.Rows(), nil
}

// checkColumns reports column positions outside fields, and statistics a
// column's type cannot take.
func checkColumns(fields []Field, cols []int, stats []Stat) error {
	for _, c := range cols {
		if c < 0 || c >= len(fields) {
			return fmt.Errorf("%w: column %d does not exist", ErrQuery, c)
		}
	}
	for _, s := range stats {
		if s.Column < 0 || s.Column >= len(fields) {
			return fmt.Errorf("%w: column %d does not exist", ErrQuery, s.Column)
		}
		switch s.Kind {
		case StatSum, StatAvg, StatStdDev, StatVariance:
			if !fields[s.Column].Type.Numeric() {
				return fmt.Errorf("%w: field %s is not numeric", ErrQuery, fields[s.Column].Name)
			}
		}
	}
	return nil
}

// CheckQuery reports column positions of q outside fields; providers call
// it before building SQL from q.
func CheckQuery(fields []Field, q *Query) error {
	cols := slices.Clone(q.Columns)
	for _, o := range q.Order {
		cols = append(cols, o.Column)
	}
	if q.Offset < 0 || q.Limit < 0 {
		return fmt.Errorf("%w: negative offset or limit", ErrQuery)
	}
	return checkColumns(fields, cols, nil)
}
