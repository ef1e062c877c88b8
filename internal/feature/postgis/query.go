package postgis

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/where"
)

// filter is a Query's WHERE as SQL: conditions and their arguments, plus
// what SQL could not say exactly, to be finished in Go.
type filter struct {
	conds []string
	args  []any
	// residual, when not nil, must be applied to every row (the where
	// clause did not translate exactly); residualCols are the columns it
	// reads.
	residual     *feature.Matcher
	residualCols []int
	none         bool // nothing can match
}

func (f *filter) param(v any, cast string) string {
	f.args = append(f.args, v)
	return "$" + strconv.Itoa(len(f.args)) + "::" + cast
}

func (f *filter) where() string {
	if len(f.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(f.conds, " AND ")
}

// filter translates q's filters.
func (s *Source) filter(q *feature.Query) (*filter, error) {
	if err := feature.CheckQuery(s.info.Fields, q); err != nil {
		return nil, fmt.Errorf("%s: %w", s.info.Name, err)
	}
	f := &filter{}
	if q.IDs != nil {
		if len(q.IDs) == 0 {
			f.none = true
			return f, nil
		}
		f.conds = append(f.conds, s.id+" = ANY("+f.param(q.IDs, "int8[]")+")")
	}
	if (q.Bound != nil || q.Spatial != nil) && s.geom == "" {
		return nil, fmt.Errorf("%s: %w: a spatial filter on a table without geometry", s.info.Name, feature.ErrQuery)
	}
	if q.Bound != nil {
		f.conds = append(f.conds, s.boxIntersects(f, *q.Bound))
	}
	if q.Spatial != nil {
		c, err := s.spatial(f, q.Spatial)
		if err != nil {
			return nil, err
		}
		f.conds = append(f.conds, c)
	}
	if q.Where != nil && !q.Where.IsEmpty() {
		schema := feature.WhereSchema(s.info.Fields)
		text, exact, err := q.Where.SQL(where.SQLTarget{
			Dialect: where.PostgreSQL,
			Schema:  schema,
			Column:  func(i int) string { return s.cols[i].expr },
			Param: func(v any) string {
				f.args = append(f.args, v)
				return "$" + strconv.Itoa(len(f.args))
			},
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w: %w", s.info.Name, feature.ErrQuery, err)
		}
		if text != "" {
			f.conds = append(f.conds, text)
		}
		if !exact {
			rest := feature.Query{Where: q.Where}
			if f.residual, err = rest.Matcher(s.info.Fields); err != nil {
				return nil, fmt.Errorf("%s: %w: %w", s.info.Name, feature.ErrQuery, err)
			}
			f.residualCols = feature.WhereColumns(q.Where, s.info.Fields)
		}
	}
	return f, nil
}

// boxIntersects is the exact test that a geometry's bounding box
// intersects b (edges touching count): && finds candidates on the GiST
// index with float4-rounded boxes, the box3d comparisons decide in double
// precision.
func (s *Source) boxIntersects(f *filter, b orb.Bound) string {
	x0, y0 := f.param(b.Min[0], "float8"), f.param(b.Min[1], "float8")
	x1, y1 := f.param(b.Max[0], "float8"), f.param(b.Max[1], "float8")
	box := s.geom + "::box3d"
	return fmt.Sprintf("(%s && ST_MakeEnvelope(%s, %s, %s, %s, %d) AND ST_XMin(%s) <= %s AND ST_XMax(%s) >= %s AND ST_YMin(%s) <= %s AND ST_YMax(%s) >= %s)",
		s.geom, x0, y0, x1, y1, s.srid, box, x1, box, x0, box, y1, box, y0)
}

// boxCandidates is the index's test alone: the rows whose float4-rounded box meets b, a few
// more than intersect it, for a scan that tests each row's bound itself.
func (s *Source) boxCandidates(f *filter, b orb.Bound) string {
	return fmt.Sprintf("%s && ST_MakeEnvelope(%s, %s, %s, %s, %d)", s.geom,
		f.param(b.Min[0], "float8"), f.param(b.Min[1], "float8"), f.param(b.Max[0], "float8"), f.param(b.Max[1], "float8"), s.srid)
}

// spatial writes an exact relation with the filter geometry first.
func (s *Source) spatial(f *filter, sp *feature.Spatial) (string, error) {
	if sp.Geom == nil {
		return "", fmt.Errorf("%s: %w: spatial filter without a geometry", s.info.Name, feature.ErrQuery)
	}
	if sp.Rel == feature.EnvelopeIntersects {
		return s.boxIntersects(f, sp.Geom.Bound()), nil
	}
	g := sp.Geom
	if b, ok := g.(orb.Bound); ok {
		g = boundGeometry(b)
	}
	data, err := wkb.Marshal(g)
	if err != nil {
		return "", fmt.Errorf("%s: %w: spatial filter geometry: %w", s.info.Name, feature.ErrQuery, err)
	}
	fg := "ST_GeomFromWKB(" + f.param(data, "bytea") + ", " + strconv.Itoa(s.srid) + ")"
	var fn string
	switch sp.Rel {
	case feature.Intersects:
		fn = "ST_Intersects"
	case feature.Touches:
		fn = "ST_Touches"
	case feature.Overlaps:
		fn = "ST_Overlaps"
	case feature.Crosses:
		fn = "ST_Crosses"
	case feature.Within:
		fn = "ST_Within"
	case feature.Contains:
		fn = "ST_Contains"
	case feature.Relate:
		if len(sp.Pattern) != 9 || strings.Trim(strings.ToUpper(sp.Pattern), "TF*012") != "" {
			return "", fmt.Errorf("%s: %w: DE-9IM pattern %q is not 9 characters of T, F, *, 0, 1, 2", s.info.Name, feature.ErrQuery, sp.Pattern)
		}
		return "ST_Relate(" + fg + ", " + s.geom + ", " + f.param(strings.ToUpper(sp.Pattern), "text") + ")", nil
	default:
		return "", fmt.Errorf("%s: %w: unknown spatial relation %d", s.info.Name, feature.ErrQuery, sp.Rel)
	}
	// The bounding-box test first lets the planner use the GiST index.
	return "(" + s.geom + " && " + fg + " AND " + fn + "(" + fg + ", " + s.geom + "))", nil
}

// boundGeometry is an envelope as a geometry, as feature.Exact makes it:
// a polygon, or a point or line when it is degenerate.
func boundGeometry(b orb.Bound) orb.Geometry {
	switch {
	case b.Min == b.Max:
		return b.Min
	case b.Min[0] == b.Max[0] || b.Min[1] == b.Max[1]:
		return orb.LineString{b.Min, b.Max}
	}
	return b.ToPolygon()
}

// orderBy writes the ORDER BY of q: its terms with Go's order (strings in
// byte order, NULL lowest), then the id.
func (s *Source) orderBy(q *feature.Query) string {
	if q.AnyOrder {
		return ""
	}
	var terms []string
	for _, o := range q.Order {
		e := s.sortExpr(o.Column)
		if o.Desc {
			terms = append(terms, e+" DESC NULLS LAST")
		} else {
			terms = append(terms, e+" ASC NULLS FIRST")
		}
	}
	terms = append(terms, s.id)
	return " ORDER BY " + strings.Join(terms, ", ")
}

// sortExpr reads a column for sorting and grouping: strings compare in
// byte order as feature.CompareValues does.
func (s *Source) sortExpr(i int) string {
	if s.info.Fields[i].Type == feature.FieldString {
		return "(" + s.cols[i].expr + `) COLLATE "C"`
	}
	return s.cols[i].expr
}

// readColumns are the columns a scan reads: q.Columns (nil: every column
// but BLOBs), the id, and what a residual filter needs.
func (s *Source) readColumns(q *feature.Query, f *filter) []int {
	cols := append(q.ReadColumns(s.info.Fields), s.idIdx)
	cols = append(cols, f.residualCols...)
	slices.Sort(cols)
	return slices.Compact(cols)
}

// Scan streams the features q selects.
func (s *Source) Scan(ctx context.Context, q *feature.Query, fn func(*feature.Feature) error) error {
	if q.AnyOrder && (q.Offset != 0 || q.Limit != 0) {
		return fmt.Errorf("%s: %w: Offset and Limit need an ordered scan", s.info.Name, feature.ErrQuery)
	}
	// A box is tested exactly in Go on each row's bound rather than in SQL when the rows come
	// with their geometry and no page needs the count right in SQL: the exact test's four box3d
	// functions per row cost the server more than the geometry itself (a z14 vector tile of the
	// dense parcels: 2.5 ms of the backend's CPU with them, 1.45 ms without). The GiST index's &&
	// still finds the candidates, except for a box around the whole table (a region view), which
	// goes without: the selectivity of its conditions, misjudged, turned a million-row draw into
	// a parallel scan with a sort on disk instead of a walk of the id index.
	var goBox *orb.Bound
	candidates := false
	if q.Bound != nil && q.Spatial == nil && !q.NoGeometry && s.geom != "" && q.Offset == 0 && q.Limit == 0 {
		goBox = q.Bound
		candidates = s.info.Extent.IsEmpty() || !q.Bound.Contains(s.info.Extent.Min) || !q.Bound.Contains(s.info.Extent.Max)
		qq := *q
		qq.Bound = nil
		q = &qq
	}
	f, err := s.filter(q)
	if err != nil {
		return err
	}
	if candidates && !f.none {
		f.conds = append(f.conds, s.boxCandidates(f, *goBox))
	}
	if f.none {
		return nil
	}
	cols := s.readColumns(q, f)
	withGeom := !q.NoGeometry && s.geom != ""
	sel := make([]string, 0, len(cols)+1)
	_, decimals, twkb := feature.GridFor(q.Resolution)
	switch {
	case withGeom && twkb:
		// A draw: the geometry snapped to a thousandth of a pixel or finer, without repeated points,
		// as TWKB (integers, deltas, varints): a fraction of the bytes to send and decode.
		sel = append(sel, "ST_AsTWKB("+s.geom+", "+strconv.Itoa(decimals)+")")
	case withGeom:
		sel = append(sel, "CASE WHEN ST_IsEmpty("+s.geom+") THEN NULL ELSE ST_AsBinary(ST_Force2D("+s.geom+")) END")
	}
	for _, c := range cols {
		sel = append(sel, s.cols[c].expr)
	}
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + s.from + f.where() + s.orderBy(q)
	skip, left := 0, 0
	if f.residual == nil {
		if q.Limit > 0 {
			sql += " LIMIT " + strconv.Itoa(q.Limit)
		}
		if q.Offset > 0 {
			sql += " OFFSET " + strconv.Itoa(q.Offset)
		}
	} else {
		skip, left = q.Offset, q.Limit
	}
	rows, err := s.pool.query(ctx, sql, f.args...)
	if err != nil {
		return s.fail(ctx, err)
	}
	defer rows.Close()
	dec := newRowDecoder(rows)
	first := 0
	if withGeom {
		first = 1
	}
	var slab featureSlab
	var tw twkbReader
	// A scan for no attribute columns (a draw's, a count's) gives every feature one shared slice
	// of nil Values (callers do not modify them), and reads the id into Feature.ID alone.
	lean := q.Columns != nil && len(q.Columns) == 0 && f.residual == nil
	if lean {
		slab.shared = make([]any, len(s.info.Fields))
	}
	for rows.Next() {
		raw := rows.RawValues()
		ft := slab.next(len(s.info.Fields))
		if withGeom && raw[0] != nil {
			// The WKB or TWKB straight from the wire: the decoders copy what they keep.
			var g orb.Geometry
			var err error
			if twkb {
				g, err = tw.decode(raw[0])
			} else {
				g, err = wkb.Unmarshal(raw[0])
			}
			if err != nil {
				return fmt.Errorf("%s: geometry of a row: %w", s.info.Name, err)
			}
			if g != nil {
				ft.Geom, ft.Bound = g, feature.BoundOf(g)
			}
		}
		if goBox != nil && (ft.Geom == nil || !ft.Bound.Intersects(*goBox)) {
			continue
		}
		for i, c := range cols {
			if lean && c == s.idIdx {
				if id, ok := binaryInt(dec.fields[first+i], raw[first+i]); ok {
					ft.ID = id
					continue
				}
			}
			v, err := dec.value(first+i, raw[first+i])
			if err != nil {
				return s.fail(ctx, err)
			}
			if lean {
				ft.ID, _ = goValue(v).(int64)
				continue
			}
			ft.Values[c] = goValue(v)
		}
		if id, ok := ft.Values[s.idIdx].(int64); ok && !lean {
			ft.ID = id
		}
		if f.residual != nil {
			if ok, err := f.residual.Match(ft); err != nil {
				return err
			} else if !ok {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
		}
		if err := fn(ft); err != nil {
			return err
		}
		if f.residual != nil && left > 0 {
			if left--; left == 0 {
				break
			}
		}
	}
	rows.Close()
	return s.fail(ctx, rows.Err())
}

// featureSlab hands out the features of a scan from blocks of slabSize, with their Values, so
// that a scan of a million rows makes thousands of allocations rather than millions. A feature
// kept by a caller keeps its block alive, which is bounded: a block is a few kilobytes.
type featureSlab struct {
	feats []feature.Feature
	vals  []any
	// shared, when not nil, is every feature's Values.
	shared []any
}

const slabSize = 256

func (sl *featureSlab) next(fields int) *feature.Feature {
	if len(sl.feats) == 0 {
		sl.feats = make([]feature.Feature, slabSize)
	}
	f := &sl.feats[0]
	sl.feats = sl.feats[1:]
	if sl.shared != nil {
		f.Values = sl.shared
		return f
	}
	if len(sl.vals) < fields {
		sl.vals = make([]any, slabSize*fields)
	}
	f.Values = sl.vals[:fields:fields]
	sl.vals = sl.vals[fields:]
	return f
}

// binaryInt reads an int2, int4 or int8 column's value in the binary format without boxing it.
func binaryInt(fd pgconn.FieldDescription, raw []byte) (int64, bool) {
	if fd.Format != pgtype.BinaryFormatCode {
		return 0, false
	}
	switch {
	case fd.DataTypeOID == pgtype.Int8OID && len(raw) == 8:
		return int64(binary.BigEndian.Uint64(raw)), true
	case fd.DataTypeOID == pgtype.Int4OID && len(raw) == 4:
		return int64(int32(binary.BigEndian.Uint32(raw))), true
	case fd.DataTypeOID == pgtype.Int2OID && len(raw) == 2:
		return int64(int16(binary.BigEndian.Uint16(raw))), true
	}
	return 0, false
}

// goValue converts a pgx value to the Go type of its field type.
func goValue(v any) any {
	switch x := v.(type) {
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case time.Time:
		return x.UTC()
	case float64:
		if math.IsNaN(x) {
			return nil
		}
	}
	return v
}

// exact reports whether f and q let SQL aggregate the whole selection.
func exactAggregate(q *feature.Query, f *filter) bool {
	return f.residual == nil && q.Offset == 0 && q.Limit == 0
}

// Count returns how many features q selects.
func (s *Source) Count(ctx context.Context, q *feature.Query) (int, error) {
	f, err := s.filter(q)
	if err != nil || f.none {
		return 0, err
	}
	if f.residual != nil {
		n := 0
		qq := *q
		qq.NoGeometry, qq.Columns = true, []int{}
		err := s.Scan(ctx, &qq, func(*feature.Feature) error { n++; return nil })
		return n, err
	}
	var n int64
	if err := s.row(ctx, "SELECT count(*) FROM "+s.from+f.where(), f.args, &n); err != nil {
		return 0, err
	}
	total := int(n) - q.Offset
	if total < 0 {
		total = 0
	}
	if q.Limit > 0 && total > q.Limit {
		total = q.Limit
	}
	return total, nil
}

// Extent returns the union of the selected features' bounds.
func (s *Source) Extent(ctx context.Context, q *feature.Query) (orb.Bound, error) {
	if s.geom == "" {
		return feature.EmptyBound(), nil
	}
	f, err := s.filter(q)
	if err != nil || f.none {
		return feature.EmptyBound(), err
	}
	if !exactAggregate(q, f) {
		b := feature.EmptyBound()
		qq := *q
		qq.Columns, qq.Resolution = []int{}, 0
		err := s.Scan(ctx, &qq, func(ft *feature.Feature) error {
			if ft.Geom != nil {
				b = b.Union(ft.Bound)
			}
			return nil
		})
		return b, err
	}
	return s.extentSQL(ctx, f.where(), f.args)
}

// extentSQL computes the exact extent in SQL (double-precision boxes, not
// ST_Extent's float4 ones).
func (s *Source) extentSQL(ctx context.Context, where string, args []any) (orb.Bound, error) {
	box := s.geom + "::box3d"
	var xmin, ymin, xmax, ymax *float64
	cond := " WHERE NOT ST_IsEmpty(" + s.geom + ")"
	if where != "" {
		cond = where + " AND NOT ST_IsEmpty(" + s.geom + ")"
	}
	err := s.row(ctx, "SELECT min(ST_XMin("+box+")), min(ST_YMin("+box+")), max(ST_XMax("+box+")), max(ST_YMax("+box+")) FROM "+
		s.from+cond, args, &xmin, &ymin, &xmax, &ymax)
	if err != nil {
		return feature.EmptyBound(), err
	}
	if xmin == nil || ymin == nil || xmax == nil || ymax == nil {
		return feature.EmptyBound(), nil
	}
	return orb.Bound{Min: orb.Point{*xmin, *ymin}, Max: orb.Point{*xmax, *ymax}}, nil
}

// checkCols reports positions outside the fields and statistics a
// column's type cannot take.
func (s *Source) checkCols(cols []int, stats []feature.Stat) error {
	for _, c := range cols {
		if c < 0 || c >= len(s.info.Fields) {
			return fmt.Errorf("%s: %w: column %d does not exist", s.info.Name, feature.ErrQuery, c)
		}
	}
	for _, st := range stats {
		if st.Column < 0 || st.Column >= len(s.info.Fields) {
			return fmt.Errorf("%s: %w: column %d does not exist", s.info.Name, feature.ErrQuery, st.Column)
		}
		switch st.Kind {
		case feature.StatSum, feature.StatAvg, feature.StatStdDev, feature.StatVariance:
			if !s.info.Fields[st.Column].Type.Numeric() {
				return fmt.Errorf("%s: %w: field %s is not numeric", s.info.Name, feature.ErrQuery, s.info.Fields[st.Column].Name)
			}
		case feature.StatCount, feature.StatMin, feature.StatMax:
		default:
			return fmt.Errorf("%s: %w: unknown statistic %d", s.info.Name, feature.ErrQuery, st.Kind)
		}
	}
	return nil
}

// Stats computes statistics, in SQL when the selection is exact there.
func (s *Source) Stats(ctx context.Context, q *feature.Query, stats []feature.Stat, groupBy []int) ([]feature.StatRow, error) {
	cols := slices.Clone(groupBy)
	for _, st := range stats {
		cols = append(cols, st.Column)
	}
	if err := s.checkCols(cols, stats); err != nil {
		return nil, err
	}
	f, err := s.filter(q)
	if err != nil {
		return nil, err
	}
	if s.aggregateInGo(q, f, cols) {
		a := feature.NewAggregator(stats, groupBy)
		a.MaxGroups = q.MaxGroups
		if err := s.scanColumns(ctx, q, f, cols, func(v []any) error { a.Add(v); return a.Err() }); err != nil {
			return nil, err
		}
		return a.Rows(), nil
	}
	var sel, group []string
	for _, c := range groupBy {
		sel = append(sel, s.sortExpr(c))
		group = append(group, s.sortExpr(c)+" ASC NULLS FIRST")
	}
	for _, st := range stats {
		e := s.cols[st.Column].expr
		switch st.Kind {
		case feature.StatCount:
			sel = append(sel, "count("+e+")")
		case feature.StatSum:
			sel = append(sel, "sum("+e+")::float8")
		case feature.StatMin:
			sel = append(sel, "min("+s.sortExpr(st.Column)+")")
		case feature.StatMax:
			sel = append(sel, "max("+s.sortExpr(st.Column)+")")
		case feature.StatAvg:
			sel = append(sel, "avg("+e+")::float8")
		case feature.StatStdDev:
			sel = append(sel, "stddev_samp("+e+")::float8")
		case feature.StatVariance:
			sel = append(sel, "var_samp("+e+")::float8")
		}
	}
	sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + s.from + f.where()
	if len(groupBy) > 0 {
		idx := make([]string, len(groupBy))
		for i := range groupBy {
			idx[i] = strconv.Itoa(i + 1)
		}
		sql += " GROUP BY " + strings.Join(idx, ", ") + " ORDER BY " + strings.Join(group, ", ")
		if q.MaxGroups > 0 {
			// One group past the bound tells that there are too many, and the database stops there.
			sql += " LIMIT " + strconv.Itoa(q.MaxGroups+1)
		}
	}
	rows, err := s.pool.query(ctx, sql, f.args...)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	defer rows.Close()
	var out []feature.StatRow
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		r := feature.StatRow{Values: make([]any, len(stats))}
		if len(groupBy) > 0 {
			r.Group = make([]any, len(groupBy))
		}
		for i := range groupBy {
			r.Group[i] = goValue(vals[i])
		}
		for i := range stats {
			r.Values[i] = goValue(vals[len(groupBy)+i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	if q.MaxGroups > 0 && len(groupBy) > 0 && len(out) > q.MaxGroups {
		return nil, feature.ErrTooManyGroups
	}
	return out, nil
}

// aggregateInGo reports whether an aggregate of cols over the selection of q (filter f) is
// computed in Go: when the selection is empty or not exact in SQL, or a column is a BLOB (SQL
// has no min/max of bytea).
func (s *Source) aggregateInGo(q *feature.Query, f *filter, cols []int) bool {
	blob := slices.ContainsFunc(cols, func(c int) bool { return s.info.Fields[c].Type == feature.FieldBlob })
	return f.none || blob || !exactAggregate(q, f)
}

// scanColumns passes add the values of cols of every feature of q's selection (filter f).
func (s *Source) scanColumns(ctx context.Context, q *feature.Query, f *filter, cols []int, add func([]any) error) error {
	if f.none {
		return nil
	}
	qq := *q
	qq.NoGeometry, qq.Columns = true, cols
	return s.Scan(ctx, &qq, func(ft *feature.Feature) error { return add(ft.Values) })
}

// Distinct returns the distinct tuples of cols, in SQL when the selection
// is exact there.
func (s *Source) Distinct(ctx context.Context, q *feature.Query, cols []int) ([][]any, error) {
	if err := s.checkCols(cols, nil); err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%s: %w: Distinct needs at least one column", s.info.Name, feature.ErrQuery)
	}
	f, err := s.filter(q)
	if err != nil {
		return nil, err
	}
	if s.aggregateInGo(q, f, cols) {
		d := feature.NewDistinctSet(cols)
		if err := s.scanColumns(ctx, q, f, cols, func(v []any) error { d.Add(v); return nil }); err != nil {
			return nil, err
		}
		return d.Rows(), nil
	}
	sel := make([]string, len(cols))
	order := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = s.sortExpr(c)
		order[i] = strconv.Itoa(i+1) + " ASC NULLS FIRST"
	}
	sql := "SELECT DISTINCT " + strings.Join(sel, ", ") + " FROM " + s.from + f.where() + " ORDER BY " + strings.Join(order, ", ")
	rows, err := s.pool.query(ctx, sql, f.args...)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	defer rows.Close()
	out := [][]any{}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		t := make([]any, len(vals))
		for i, v := range vals {
			t[i] = goValue(v)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	return out, nil
}

// rowDecoder decodes a result's raw column values with codecs looked up once per query, not
// once per value as rows.Values does; a scan of a million rows spends its time on the rows.
type rowDecoder struct {
	m      *pgtype.Map
	fields []pgconn.FieldDescription
	types  []*pgtype.Type
}

func newRowDecoder(rows pgx.Rows) *rowDecoder {
	d := &rowDecoder{m: rows.Conn().TypeMap(), fields: rows.FieldDescriptions()}
	d.types = make([]*pgtype.Type, len(d.fields))
	for i, fd := range d.fields {
		d.types[i], _ = d.m.TypeForOID(fd.DataTypeOID)
	}
	return d
}

// value decodes column i's raw value as rows.Values would.
func (d *rowDecoder) value(i int, raw []byte) (any, error) {
	if raw == nil {
		return nil, nil
	}
	fd := d.fields[i]
	if t := d.types[i]; t != nil {
		v, err := t.Codec.DecodeValue(d.m, fd.DataTypeOID, fd.Format, raw)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", fd.Name, err)
		}
		return v, nil
	}
	// An unknown type: its text, as rows.Values gives it.
	if fd.Format == pgtype.TextFormatCode {
		return string(raw), nil
	}
	return slices.Clone(raw), nil
}
