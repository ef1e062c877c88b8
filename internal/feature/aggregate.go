package feature

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// This file computes Stats and Distinct in Go, from a stream of rows: the
// in-memory provider uses it for everything, the database providers for
// filters their SQL cannot express exactly.

// Aggregator accumulates the groups of a Source.Stats call. Add each
// selected row's Values, then read Rows.
type Aggregator struct {
	// MaxGroups, when positive, bounds the groups: the row that would
	// start group MaxGroups+1 makes Err return ErrTooManyGroups and is
	// not kept, nor is any row after it.
	MaxGroups int
	stats     []Stat
	groupBy   []int
	groups    map[string]*aggGroup
	order     []*aggGroup
	key       strings.Builder
	over      bool
}

type aggGroup struct {
	key  []any
	accs []statAcc
}

// NewAggregator returns an Aggregator for stats grouped by the columns
// groupBy (positions in the row).
func NewAggregator(stats []Stat, groupBy []int) *Aggregator {
	return &Aggregator{stats: stats, groupBy: groupBy, groups: map[string]*aggGroup{}}
}

// Add accumulates one row.
func (a *Aggregator) Add(row []any) {
	a.key.Reset()
	for _, c := range a.groupBy {
		v := row[c]
		fmt.Fprintf(&a.key, "%T:%v\x00", v, v)
	}
	g, ok := a.groups[a.key.String()]
	if !ok && a.MaxGroups > 0 && len(a.order) >= a.MaxGroups {
		a.over = true
	}
	if a.over {
		return
	}
	if !ok {
		g = &aggGroup{accs: make([]statAcc, len(a.stats))}
		for _, c := range a.groupBy {
			g.key = append(g.key, row[c])
		}
		a.groups[a.key.String()] = g
		a.order = append(a.order, g)
	}
	for i, s := range a.stats {
		g.accs[i].add(row[s.Column])
	}
}

// Err returns ErrTooManyGroups once a row has started more groups than
// MaxGroups; a scan feeding Add stops at it.
func (a *Aggregator) Err() error {
	if a.over {
		return ErrTooManyGroups
	}
	return nil
}

// Rows returns the groups in ascending order of their group values, as
// Source.Stats does: with no group-by column and no row, one row of empty
// results.
func (a *Aggregator) Rows() []StatRow {
	groups := a.order
	if len(a.groupBy) == 0 && len(groups) == 0 {
		groups = []*aggGroup{{accs: make([]statAcc, len(a.stats))}}
	}
	rows := make([]StatRow, 0, len(groups))
	for _, g := range groups {
		r := StatRow{Group: g.key, Values: make([]any, len(a.stats))}
		for i, s := range a.stats {
			r.Values[i] = g.accs[i].result(s.Kind)
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(x, y StatRow) int { return CompareRows(x.Group, y.Group) })
	return rows
}

// statAcc accumulates one statistic of one group (Welford's method for the
// variance).
type statAcc struct {
	n          int
	sum        float64
	mean, m2   float64
	minV, maxV any
}

func (a *statAcc) add(v any) {
	if v == nil {
		return
	}
	a.n++
	if a.minV == nil || CompareValues(v, a.minV) < 0 {
		a.minV = v
	}
	if a.maxV == nil || CompareValues(v, a.maxV) > 0 {
		a.maxV = v
	}
	var x float64
	switch t := v.(type) {
	case int64:
		x = float64(t)
	case float64:
		x = t
	default:
		return
	}
	a.sum += x
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
}

func (a *statAcc) result(k StatKind) any {
	switch k {
	case StatCount:
		return int64(a.n)
	case StatMin:
		return a.minV
	case StatMax:
		return a.maxV
	}
	if a.n == 0 {
		return nil
	}
	switch k {
	case StatSum:
		return a.sum
	case StatAvg:
		return a.sum / float64(a.n)
	}
	if a.n < 2 {
		return nil
	}
	v := a.m2 / float64(a.n-1)
	if k == StatStdDev {
		return math.Sqrt(v)
	}
	return v
}

// DistinctSet collects the distinct tuples of some columns, as
// Source.Distinct returns them.
type DistinctSet struct {
	cols []int
	seen map[string]bool
	rows [][]any
	key  strings.Builder
}

// NewDistinctSet returns an empty set over the columns cols (positions in
// the rows added).
func NewDistinctSet(cols []int) *DistinctSet {
	return &DistinctSet{cols: cols, seen: map[string]bool{}}
}

// Add adds one row's tuple.
func (d *DistinctSet) Add(row []any) {
	d.key.Reset()
	for _, c := range d.cols {
		v := row[c]
		fmt.Fprintf(&d.key, "%T:%v\x00", v, v)
	}
	if d.seen[d.key.String()] {
		return
	}
	d.seen[d.key.String()] = true
	t := make([]any, len(d.cols))
	for i, c := range d.cols {
		t[i] = row[c]
	}
	d.rows = append(d.rows, t)
}

// Rows returns the tuples sorted ascending (NULL first).
func (d *DistinctSet) Rows() [][]any {
	slices.SortFunc(d.rows, CompareRows)
	return d.rows
}

// CompareRows orders tuples column by column with CompareValues.
func CompareRows(a, b []any) int {
	for i := range min(len(a), len(b)) {
		if c := CompareValues(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// CompareValues orders attribute values: NULL first, then numbers,
// strings and dates by value.
func CompareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return cmp.Compare(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, float64(y))
		case float64:
			return cmp.Compare(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y)
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// SortFeatures sorts features by the Order terms, then by ID ascending.
func SortFeatures(fs []*Feature, order []Order) {
	slices.SortFunc(fs, func(a, b *Feature) int {
		for _, o := range order {
			c := CompareValues(a.Values[o.Column], b.Values[o.Column])
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// ErrPageDone is what a Paged function returns once it has handed on the page's last feature: a
// scan that gets it stops, and it is no failure.
var ErrPageDone = errors.New("page done")

// Paged wraps fn to skip offset features and hand on at most limit (0: all) of the rest, then
// return ErrPageDone: Page for a stream.
func Paged(offset, limit int, fn func(*Feature) error) func(*Feature) error {
	return func(f *Feature) error {
		if offset > 0 {
			offset--
			return nil
		}
		if err := fn(f); err != nil {
			return err
		}
		if limit--; limit == 0 {
			return ErrPageDone
		}
		return nil
	}
}

// Page returns the part of an ordered result that Offset and Limit select.
func Page[T any](all []T, offset, limit int) []T {
	if offset >= len(all) {
		return nil
	}
	all = all[max(offset, 0):]
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all
}
