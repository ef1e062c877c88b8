package gpkg

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/where"
)

// Source reads one table of an open GeoPackage on demand: it is the
// GeoPackage provider behind feature.Source. Opening it reads metadata only
// (the catalogue, the columns and a sample of 200 geometries for the
// average vertex count); every query then reads just the rows it selects:
//
//   - envelopes through the table's R-tree (rtree_<table>_<geom>); the
//     index stores 32-bit bounds rounded outwards, so each candidate's own
//     envelope (from the geometry header, without decoding the WKB) is
//     tested again in Go. Without an R-tree the whole table is read;
//   - where clauses as parameterised SQLite SQL where where.SQL says the
//     translation is exact, otherwise as a looser SQL filter finished in Go
//     (functions, arithmetic, dates, and LIKE, which ignores ASCII case in
//     SQLite);
//   - object IDs as one JSON-array parameter (json_each), whatever their
//     number;
//   - ORDER BY in SQL, then Go filtering while streaming, so Offset and
//     Limit stop the read early; LIMIT and OFFSET go to SQL when nothing is
//     left for Go;
//   - only the columns asked for; BLOBs only when listed; the geometry only
//     when needed.
//
// Count with nothing left for Go is a SQL count. Exact spatial relations,
// statistics, distinct values and extents are computed in Go from the rows
// the pushed-down filter selects (SQLite has no geometry functions and no
// standard deviation), with the helpers of package feature.
type Source struct {
	file   *File
	table  *Table
	info   feature.Info
	idExpr string // the id column, quoted
}

var _ feature.Source = (*Source)(nil)

// Source returns the provider of a table of the file. The file must stay
// open while the source is used.
func (f *File) Source(ctx context.Context, table string) (*Source, error) {
	t, ok := f.Table(table)
	if !ok {
		return nil, fmt.Errorf("%w: %q in %s", ErrNoTable, table, f.path)
	}
	s := &Source{file: f, table: t, idExpr: "rowid"}
	if t.OIDField != "" {
		s.idExpr = quote(t.OIDField)
	}
	fields := append([]feature.Field(nil), t.Fields...)
	for i := range fields {
		if fields[i].Type == feature.FieldString && fields[i].Length == 0 {
			fields[i].Length = 255 // undeclared TEXT: what ArcGIS reports for an unbounded string
		}
	}
	s.info = feature.Info{
		Name:  "geopackage " + filepath.Base(f.path) + " table " + t.Name,
		Table: t.Name, SR: t.SR, GeometryType: t.GeometryType, Fields: fields, Extent: feature.EmptyBound(),
	}
	if t.GeometryColumn == "" {
		s.info.GeometryType = feature.None
		return s, nil
	}
	if err := s.readExtent(ctx); err != nil {
		return nil, err
	}
	if err := s.sampleVertices(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// readExtent takes the extent from gpkg_contents, else from the R-tree.
func (s *Source) readExtent(ctx context.Context) error {
	if e := s.table.Extent; !e.IsEmpty() && e != (orb.Bound{}) {
		s.info.Extent = e
		return nil
	}
	if s.table.RTree == "" {
		return nil
	}
	var minX, minY, maxX, maxY sql.NullFloat64
	err := s.file.db.QueryRowContext(ctx, "SELECT min(minx), min(miny), max(maxx), max(maxy) FROM "+quote(s.table.RTree)).
		Scan(&minX, &minY, &maxX, &maxY)
	if err != nil {
		return s.fail(err)
	}
	if minX.Valid {
		s.info.Extent = orb.Bound{Min: orb.Point{minX.Float64, minY.Float64}, Max: orb.Point{maxX.Float64, maxY.Float64}}
	}
	return nil
}

// sampleVertices sets AvgPoints from the first 200 geometries.
func (s *Source) sampleVertices(ctx context.Context) error {
	rows, err := s.file.db.QueryContext(ctx, "SELECT "+quote(s.table.GeometryColumn)+" FROM "+quote(s.table.Name)+
		" WHERE "+quote(s.table.GeometryColumn)+" IS NOT NULL LIMIT 200")
	if err != nil {
		return s.fail(err)
	}
	defer rows.Close()
	n, total := 0, 0
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			return s.fail(err)
		}
		if g, err := geomblob.Decode(blob); err == nil && g != nil {
			n++
			total += feature.VertexCount(g)
		}
	}
	if n > 0 {
		s.info.AvgPoints = int(math.Round(float64(total) / float64(n)))
	}
	return s.fail(rows.Err())
}

// Info describes the table.
func (s *Source) Info() feature.Info { return s.info }

// Ping checks that the file still answers.
func (s *Source) Ping(ctx context.Context) error {
	var one int
	return s.fail(s.file.db.QueryRowContext(ctx, "SELECT 1").Scan(&one))
}

// fail wraps a database error with the source's name; a context error
// keeps its identity.
func (s *Source) fail(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", s.info.Name, err)
}

// plan is a Query split into SQL and what Go must finish.
type plan struct {
	sql       string
	args      []any
	cols      []int // the field columns selected, in select order after id and geometry
	geom      bool  // the geometry column is selected
	snap      bool  // geometries are snapped to the grid of decimals (a draw's Resolution)
	decimals  int
	rest      *feature.Matcher
	restNone  bool // nothing is left for Go
	restWhere bool // the where clause is left for Go
	none      bool // nothing can match
}

// rtreePart selects which R-tree candidates a plan reads: all, only those
// whose index box lies inside the envelope (they certainly meet it: the
// index box holds the feature's), or the others, which Go must check.
type rtreePart int

const (
	rtreeAll rtreePart = iota
	rtreeInside
	rtreeEdge
)

// plan translates q. An ordered plan sorts in SQL, and pages there too
// when nothing is left for Go.
func (s *Source) plan(q *feature.Query, ordered bool) (*plan, error) {
	return s.planPart(q, ordered, rtreeAll)
}

func (s *Source) planPart(q *feature.Query, ordered bool, part rtreePart) (*plan, error) {
	if err := feature.CheckQuery(s.info.Fields, q); err != nil {
		return nil, err
	}
	if (q.Bound != nil || q.Spatial != nil) && s.table.GeometryColumn == "" {
		return nil, fmt.Errorf("%w: %s has no geometry to filter on", feature.ErrQuery, s.info.Name)
	}
	p := &plan{}
	rest := *q
	rest.IDs = nil
	var conds []string
	var args []any
	// The envelope: R-tree candidates; each one's own envelope is tested again in Go.
	if b, ok := q.Candidates(); ok {
		if b.IsEmpty() {
			p.none = true
		}
		// A box that holds the whole table (a region view) reads the table in id order without
		// the R-tree: its candidates would be every id, which SQLite first collects into a
		// temporary index (a second of a million-row draw); the envelope test in Go decides as
		// it does for the index's candidates.
		whole := part == rtreeAll && !s.info.Extent.IsEmpty() && b.Contains(s.info.Extent.Min) && b.Contains(s.info.Extent.Max)
		if s.table.RTree != "" && !whole {
			box := " WHERE minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?"
			args = append(args, b.Max[0], b.Min[0], b.Max[1], b.Min[1])
			inside := "minx >= ? AND maxx <= ? AND miny >= ? AND maxy <= ?"
			switch part {
			case rtreeInside:
				box += " AND " + inside
				args = append(args, b.Min[0], b.Max[0], b.Min[1], b.Max[1])
			case rtreeEdge:
				box += " AND NOT (" + inside + ")"
				args = append(args, b.Min[0], b.Max[0], b.Min[1], b.Max[1])
			}
			conds = append(conds, s.idExpr+" IN (SELECT id FROM "+quote(s.table.RTree)+box+")")
		}
		if q.Bound == nil && q.Spatial != nil && q.Spatial.Rel == feature.EnvelopeIntersects {
			// An envelope relation is a bound test.
			gb := q.Spatial.Geom.Bound()
			rest.Bound, rest.Spatial = &gb, nil
		}
	}
	if q.IDs != nil {
		if len(q.IDs) == 0 {
			p.none = true
		}
		ids, _ := json.Marshal(q.IDs)
		conds = append(conds, s.idExpr+" IN (SELECT value FROM json_each(?))")
		args = append(args, string(ids))
	}
	if q.Where != nil && !q.Where.IsEmpty() {
		text, exact, err := q.Where.SQL(where.SQLTarget{
			Dialect: where.SQLite, Schema: feature.WhereSchema(s.info.Fields),
			Column: func(i int) string { return quote(s.info.Fields[i].Name) },
			Param:  func(v any) string { args = append(args, v); return "?" },
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", feature.ErrQuery, err)
		}
		if text != "" {
			conds = append(conds, "("+text+")")
		}
		if exact {
			rest.Where = nil
		}
	}
	m, err := rest.Matcher(s.info.Fields)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", feature.ErrQuery, err)
	}
	p.none = p.none || m.MatchesNone()
	p.restNone = rest.Where == nil && rest.Bound == nil && rest.Spatial == nil
	p.restWhere = rest.Where != nil
	if !p.restNone {
		p.rest = m
	}

	// The columns: those asked for (every non-BLOB one by default), and those Go's where needs.
	cols := q.ReadColumns(s.info.Fields)
	cols = append(cols, feature.WhereColumns(rest.Where, s.info.Fields)...)
	p.cols = uniqueInts(cols)
	p.geom = s.table.GeometryColumn != "" && (!q.NoGeometry || rest.Bound != nil || rest.Spatial != nil)
	if p.geom && rest.Spatial == nil {
		// A draw: the same snapped geometries PostGIS's TWKB gives, so both draw one picture.
		_, p.decimals, p.snap = feature.GridFor(q.Resolution)
	}

	list := []string{s.idExpr}
	if p.geom {
		list = append(list, quote(s.table.GeometryColumn))
	}
	for _, c := range p.cols {
		list = append(list, quote(s.info.Fields[c].Name))
	}
	text := "SELECT " + strings.Join(list, ", ") + " FROM " + quote(s.table.Name)
	if len(conds) > 0 {
		text += " WHERE " + strings.Join(conds, " AND ")
	}
	if ordered && !q.AnyOrder {
		var order []string
		for _, o := range q.Order {
			term := quote(s.info.Fields[o.Column].Name)
			if o.Desc {
				term += " DESC"
			}
			order = append(order, term)
		}
		order = append(order, s.idExpr)
		text += " ORDER BY " + strings.Join(order, ", ")
		if p.restNone && (q.Limit > 0 || q.Offset > 0) {
			text += " LIMIT ? OFFSET ?"
			limit := int64(q.Limit)
			if limit == 0 {
				limit = -1
			}
			args = append(args, limit, int64(q.Offset))
		}
	}
	p.sql, p.args = text, args
	return p, nil
}

func uniqueInts(xs []int) []int {
	out := make([]int, 0, len(xs))
	seen := map[int]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Scan streams the features q selects.
func (s *Source) Scan(ctx context.Context, q *feature.Query, fn func(*feature.Feature) error) error {
	if q.AnyOrder && (q.Offset != 0 || q.Limit != 0) {
		return fmt.Errorf("%w: Offset and Limit need an ordered scan", feature.ErrQuery)
	}
	p, err := s.plan(q, true)
	if err != nil || p.none {
		return err
	}
	skip, left := q.Offset, q.Limit
	if p.restNone {
		skip, left = 0, 0 // done by SQL
	}
	err = s.rows(ctx, p, feature.Paged(skip, left, fn))
	if errors.Is(err, feature.ErrPageDone) {
		return nil
	}
	return err
}

// rows runs a plan's query and calls fn for each row that passes what Go
// finishes.
func (s *Source) rows(ctx context.Context, p *plan, fn func(*feature.Feature) error) error {
	rows, err := s.file.db.QueryContext(ctx, p.sql, p.args...)
	if err != nil {
		return s.fail(err)
	}
	defer rows.Close()
	n := 1 + len(p.cols)
	if p.geom {
		n++
	}
	raw := make([]any, n)
	ptrs := make([]any, n)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	// Features come from blocks of 256; a scan that reads no attribute column (a draw's) gives
	// them one shared slice of nil Values (callers do not modify them).
	var block []feature.Feature
	var shared []any
	if len(p.cols) == 0 {
		shared = make([]any, len(s.info.Fields))
	}
	for rows.Next() {
		// Every row: a row's geometry test in Go can take seconds against a large filter.
		if err := ctx.Err(); err != nil {
			return s.fail(err)
		}
		if err := rows.Scan(ptrs...); err != nil {
			return s.fail(err)
		}
		if len(block) == 0 {
			block = make([]feature.Feature, 256)
		}
		f := &block[0]
		block = block[1:]
		if f.Values = shared; shared == nil {
			f.Values = make([]any, len(s.info.Fields))
		}
		id, ok := raw[0].(int64)
		if !ok {
			return s.fail(fmt.Errorf("non-integer id %v", raw[0]))
		}
		f.ID = id
		at := 1
		if p.geom {
			blob, _ := raw[1].([]byte)
			at = 2
			if blob != nil {
				if !s.keepEnvelope(p, blob) {
					continue
				}
				g, err := geomblob.Decode(blob)
				if err != nil {
					return s.fail(fmt.Errorf("id %d: %w", id, err))
				}
				if g = feature.NonEmpty(g); g != nil {
					f.Geom, f.Bound = g, feature.BoundOf(g)
				}
			}
		}
		for i, c := range p.cols {
			v, err := convert(raw[at+i], s.info.Fields[c].Type)
			if err != nil {
				return s.fail(fmt.Errorf("id %d field %s: %w", id, s.info.Fields[c].Name, err))
			}
			f.Values[c] = v
		}
		if p.rest != nil {
			ok, err := p.rest.Match(f)
			if err != nil {
				return s.fail(err)
			}
			if !ok {
				continue
			}
		}
		if p.snap && f.Geom != nil {
			// After the envelope test, which PostGIS makes on the stored geometry too.
			f.Geom = feature.SnapToGrid(f.Geom, p.decimals)
			f.Bound = feature.BoundOf(f.Geom)
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	return s.fail(rows.Err())
}

// keepEnvelope rejects early a geometry whose header envelope misses the
// plan's bound, before its WKB is decoded.
func (s *Source) keepEnvelope(p *plan, blob []byte) bool {
	if p.rest == nil {
		return true
	}
	b, ok := p.rest.Candidates()
	if !ok {
		return true
	}
	env, ok := geomblob.Envelope(blob)
	return !ok || env.Intersects(b)
}

// Count returns how many features q selects: a SQL count when nothing is
// left for Go.
func (s *Source) Count(ctx context.Context, q *feature.Query) (int, error) {
	cq := *q
	cq.Order, cq.Columns, cq.NoGeometry = nil, []int{}, true
	p, err := s.plan(&cq, true)
	if err != nil || p.none {
		return 0, err
	}
	if p.restNone {
		return s.sqlCount(ctx, p)
	}
	byBox := cq.Spatial == nil && cq.Bound != nil ||
		cq.Bound == nil && cq.Spatial != nil && (cq.Spatial.Rel == feature.EnvelopeIntersects ||
			cq.Spatial.Rel == feature.Intersects && isRectangle(cq.Spatial.Geom))
	if byBox && p.rest != nil && s.table.RTree != "" && (cq.Where == nil || whereExact(p)) && cq.Offset == 0 && cq.Limit == 0 {
		// An envelope, or a rectangle to intersect, is all that is left for Go: a feature whose
		// index box lies inside it is in (the R-tree rounds its boxes outwards), so count those
		// in SQL, and test only the features on its edge in Go.
		var n int
		if cq.Where == nil && cq.IDs == nil {
			// Nothing but the box: count the index alone, without reading the table.
			b, _ := cq.Candidates()
			err = s.file.db.QueryRowContext(ctx, "SELECT count(*) FROM "+quote(s.table.RTree)+
				" WHERE minx >= ? AND maxx <= ? AND miny >= ? AND maxy <= ?", b.Min[0], b.Max[0], b.Min[1], b.Max[1]).Scan(&n)
			if err != nil {
				return 0, s.fail(err)
			}
		} else {
			in, err := s.planPart(&cq, false, rtreeInside)
			if err != nil {
				return 0, err
			}
			if n, err = s.sqlCount(ctx, in); err != nil {
				return 0, err
			}
		}
		edge, err := s.planPart(&cq, false, rtreeEdge)
		if err != nil {
			return 0, err
		}
		err = s.rows(ctx, edge, func(*feature.Feature) error { n++; return nil })
		return n, err
	}
	n := 0
	err = s.Scan(ctx, &cq, func(*feature.Feature) error { n++; return nil })
	return n, err
}

func (s *Source) sqlCount(ctx context.Context, p *plan) (int, error) {
	var n int
	err := s.file.db.QueryRowContext(ctx, "SELECT count(*) FROM ("+p.sql+")", p.args...).Scan(&n)
	return n, s.fail(err)
}

// isRectangle reports whether g is an axis-aligned rectangle (an envelope, or a polygon of one
// ring through its bound's four corners and nothing else): whatever intersects it has its
// envelope intersect it, and whatever has its envelope inside it intersects it.
func isRectangle(g orb.Geometry) bool {
	switch g := g.(type) {
	case orb.Bound:
		return true
	case orb.Polygon:
		if len(g) != 1 || len(g[0]) < 4 || len(g[0]) > 5 {
			return false
		}
		b := g.Bound()
		corners := map[orb.Point]bool{}
		for _, p := range g[0] {
			if (p[0] != b.Min[0] && p[0] != b.Max[0]) || (p[1] != b.Min[1] && p[1] != b.Max[1]) {
				return false
			}
			corners[p] = true
		}
		// Four corners, each edge along an axis: consecutive points share an x or a y.
		for i := 1; i < len(g[0]); i++ {
			if g[0][i][0] != g[0][i-1][0] && g[0][i][1] != g[0][i-1][1] {
				return false
			}
		}
		return len(corners) == 4
	}
	return false
}

// whereExact reports that a plan left no where clause for Go.
func whereExact(p *plan) bool { return !p.restWhere }

// Extent returns the union of the selected features' envelopes.
func (s *Source) Extent(ctx context.Context, q *feature.Query) (orb.Bound, error) {
	eq := *q
	eq.Columns, eq.NoGeometry, eq.Resolution = []int{}, false, 0
	b := feature.EmptyBound()
	err := s.Scan(ctx, &eq, func(f *feature.Feature) error {
		if f.Geom != nil {
			b = b.Union(f.Bound)
		}
		return nil
	})
	return b, err
}

// Stats aggregates the selected rows in Go.
func (s *Source) Stats(ctx context.Context, q *feature.Query, stats []feature.Stat, groupBy []int) ([]feature.StatRow, error) {
	cols := append([]int(nil), groupBy...)
	for _, st := range stats {
		cols = append(cols, st.Column)
	}
	sq := *q
	sq.Columns, sq.NoGeometry, sq.AnyOrder = cols, true, q.Offset == 0 && q.Limit == 0
	if err := checkStats(s.info.Fields, stats, groupBy); err != nil {
		return nil, err
	}
	a := feature.NewAggregator(stats, groupBy)
	a.MaxGroups = q.MaxGroups
	if err := s.Scan(ctx, &sq, func(f *feature.Feature) error { a.Add(f.Values); return a.Err() }); err != nil {
		return nil, err
	}
	return a.Rows(), nil
}

// Distinct collects the distinct tuples of the selected rows in Go.
func (s *Source) Distinct(ctx context.Context, q *feature.Query, cols []int) ([][]any, error) {
	if err := checkStats(s.info.Fields, nil, cols); err != nil {
		return nil, err
	}
	dq := *q
	dq.Columns, dq.NoGeometry, dq.AnyOrder = cols, true, q.Offset == 0 && q.Limit == 0
	d := feature.NewDistinctSet(cols)
	if err := s.Scan(ctx, &dq, func(f *feature.Feature) error { d.Add(f.Values); return nil }); err != nil {
		return nil, err
	}
	return d.Rows(), nil
}

// checkStats reports columns outside the fields and statistics their types
// cannot take.
func checkStats(fields []feature.Field, stats []feature.Stat, cols []int) error {
	q := &feature.Query{Columns: cols}
	for _, st := range stats {
		q.Columns = append(q.Columns, st.Column)
	}
	if err := feature.CheckQuery(fields, q); err != nil {
		return err
	}
	for _, st := range stats {
		switch st.Kind {
		case feature.StatSum, feature.StatAvg, feature.StatStdDev, feature.StatVariance:
			if !fields[st.Column].Type.Numeric() {
				return fmt.Errorf("%w: field %s is not numeric", feature.ErrQuery, fields[st.Column].Name)
			}
		}
	}
	return nil
}

var _ feature.Versioned = (*Source)(nil)

// Version is the size and modification time of the file and of its write-ahead log (where a
// writer in WAL mode commits): a change shows as soon as the file system's clock has moved
// (its granularity is a few milliseconds).
func (s *Source) Version(ctx context.Context) (string, error) {
	var b []byte
	for i, p := range []string{s.file.path, s.file.path + "-wal"} {
		fi, err := os.Stat(p)
		if i == 1 && errors.Is(err, fs.ErrNotExist) {
			b = append(b, '-')
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", s.info.Name, err)
		}
		b = fmt.Appendf(b, "%d:%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return string(b), ctx.Err()
}
