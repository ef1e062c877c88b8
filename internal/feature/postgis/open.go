package postgis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// Table names what a Source reads: a table (or view) of the database, or
// a SQL query, with its geometry and id columns.
type Table struct {
	// Name names the source in messages and faults; default
	// "postgis <connection> <table>".
	Name string
	// Table is the table or view, "name" or "schema.name" (without
	// schema: the first match on the search_path). Exactly one of Table
	// and SQL is set.
	Table string
	// SQL is a SELECT statement whose rows are the features, read as
	// `(SQL) AS v`; it comes from the service definition, never from a
	// request.
	SQL string
	// GeometryColumn is the geometry column; "" picks the only one (a
	// table without one is a standalone table).
	GeometryColumn string
	// IDColumn is the integer column of the object ids; "" picks a table's
	// single-column integer primary key.
	IDColumn string
	// SR is the declared spatial reference; zero takes the data's SRID.
	// A declared SR the data's SRID does not match is an error.
	SR proj.SR
}

// column is one attribute column as the Source reads it.
type column struct {
	name    string // as stored
	typname string
	expr    string // SQL that reads it with the Go type its FieldType wants
}

// Source is a feature.Source over a PostGIS table or SQL view. It is
// safe for concurrent use.
type Source struct {
	pool  *Pool
	info  feature.Info
	from  string // quoted relation, or (SQL) AS v
	geom  string // quoted geometry column; "" for a table
	id    string // quoted id column
	srid  int
	idIdx int // position of the id column in info.Fields
	cols  []column
	// relation is the catalog name for ST_EstimatedExtent ("" for SQL).
	schema, relname string
}

var _ feature.Source = (*Source)(nil)

// Open reads the schema of t through p and returns its Source. Errors
// name the source; a database that cannot be reached gives an error
// wrapping feature.ErrUnavailable.
func Open(ctx context.Context, p *Pool, t Table) (*Source, error) {
	name := t.Name
	if name == "" {
		what := t.Table
		if what == "" {
			what = "(sql)"
		}
		name = "postgis " + p.name + " " + what
	}
	s := &Source{pool: p, info: feature.Info{Name: name, Extent: feature.EmptyBound()}}
	if err := s.open(ctx, t); err != nil {
		if errors.Is(err, feature.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

func (s *Source) fail(ctx context.Context, err error) error {
	return ctxErr(ctx, s.info.Name, err, s.pool.timeout)
}

func (s *Source) open(ctx context.Context, t Table) error {
	if (t.Table == "") == (t.SQL == "") {
		return errors.New("set exactly one of table and sql")
	}
	var cols []column
	var notNull map[string]bool
	var err error
	if t.Table != "" {
		if cols, notNull, err = s.tableColumns(ctx, t.Table); err != nil {
			return err
		}
	} else {
		if strings.Contains(t.SQL, ";") {
			return errors.New("sql: give one SELECT statement without ';'")
		}
		s.from = "(" + t.SQL + ") AS v"
		if cols, err = s.queryColumns(ctx); err != nil {
			return err
		}
	}

	// The geometry column.
	var geoms []string
	for _, c := range cols {
		if c.typname == "geometry" {
			geoms = append(geoms, c.name)
		}
	}
	geomName := ""
	switch {
	case t.GeometryColumn != "":
		c, ok := findColumn(cols, t.GeometryColumn)
		if !ok || c.typname != "geometry" {
			return fmt.Errorf("geometryColumn %q is not a geometry column (geometry columns: %s)", t.GeometryColumn, strings.Join(geoms, ", "))
		}
		geomName = c.name
	case len(geoms) == 1:
		geomName = geoms[0]
	case len(geoms) > 1:
		return fmt.Errorf("several geometry columns (%s): set geometryColumn", strings.Join(geoms, ", "))
	}
	if geomName != "" {
		s.geom = pgx.Identifier{geomName}.Sanitize()
	}

	// The id column.
	idName := t.IDColumn
	if idName == "" {
		if s.relname == "" {
			return errors.New("idColumn is required for a sql source")
		}
		if idName, err = s.primaryKey(ctx); err != nil {
			return err
		}
	}
	idc, ok := findColumn(cols, idName)
	if !ok {
		return fmt.Errorf("idColumn %q is not a column (columns: %s)", idName, columnNames(cols))
	}
	switch idc.typname {
	case "int2", "int4", "int8":
	default:
		return fmt.Errorf("idColumn %q is %s, not an integer", idc.name, idc.typname)
	}
	s.id = pgx.Identifier{idc.name}.Sanitize()

	// The attribute fields, in table order, the id column among them.
	for _, c := range cols {
		if c.typname == "geometry" {
			continue
		}
		f, expr := fieldOf(c)
		if c.name == idc.name {
			f.Type, f.Length = feature.FieldOID, 8
			s.idIdx = len(s.info.Fields)
		}
		f.Nullable = !notNull[c.name] && c.name != idc.name
		c.expr = expr
		s.cols = append(s.cols, c)
		s.info.Fields = append(s.info.Fields, f)
	}
	s.info.Table = t.Table
	if s.info.Table == "" {
		s.info.Table = "sql"
	}
	if s.geom == "" {
		s.info.GeometryType = feature.None
		if t.SR.WKID != 0 {
			s.info.SR = t.SR
		}
		return nil
	}
	if err := s.readGeometryMeta(ctx, t.SR, geomName); err != nil {
		return err
	}
	return nil
}

// tableColumns finds the relation and reads its columns from the catalog.
func (s *Source) tableColumns(ctx context.Context, table string) ([]column, map[string]bool, error) {
	schema, rel := "", table
	if i := strings.IndexByte(table, '.'); i >= 0 {
		schema, rel = table[:i], table[i+1:]
	}
	var oid uint32
	err := s.row(ctx, `
		SELECT c.oid, n.nspname, c.relname
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
		  AND lower(c.relname) = lower($2)
		  AND (($1 = '' AND n.nspname = ANY (current_schemas(false))) OR lower(n.nspname) = lower($1))
		ORDER BY (c.relname = $2) DESC, (n.nspname = $1) DESC, array_position(current_schemas(false), n.nspname::text)
		LIMIT 1`, []any{schema, rel}, &oid, &s.schema, &s.relname)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("table %q not found", table)
	}
	if err != nil {
		return nil, nil, err
	}
	s.from = pgx.Identifier{s.schema, s.relname}.Sanitize()
	rows, err := s.pool.query(ctx, `
		SELECT a.attname, t.typname, a.atttypmod, a.attnotnull
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, nil, s.fail(ctx, err)
	}
	var cols []column
	notNull := map[string]bool{}
	for rows.Next() {
		var c column
		var mod int32
		var nn bool
		if err := rows.Scan(&c.name, &c.typname, &mod, &nn); err != nil {
			rows.Close()
			return nil, nil, s.fail(ctx, err)
		}
		c.typname = withLength(c.typname, mod)
		notNull[c.name] = nn
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.fail(ctx, err)
	}
	return cols, notNull, nil
}

// queryColumns reads the columns of a SQL source from a LIMIT 0 run.
func (s *Source) queryColumns(ctx context.Context) ([]column, error) {
	rows, err := s.pool.query(ctx, "SELECT * FROM "+s.from+" LIMIT 0")
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	fds := rows.FieldDescriptions()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	// fds belong to the connection's buffers: copy them before the next
	// query.
	cols := make([]column, len(fds))
	oids := make([]uint32, len(fds))
	mods := make([]int32, len(fds))
	for i, fd := range fds {
		cols[i].name = fd.Name
		oids[i], mods[i] = fd.DataTypeOID, fd.TypeModifier
	}
	names := map[uint32]string{}
	trows, err := s.pool.query(ctx, "SELECT oid, typname FROM pg_type WHERE oid = ANY($1::oid[])", oids)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	for trows.Next() {
		var oid uint32
		var n string
		if err := trows.Scan(&oid, &n); err != nil {
			trows.Close()
			return nil, s.fail(ctx, err)
		}
		names[oid] = n
	}
	if err := trows.Err(); err != nil {
		return nil, s.fail(ctx, err)
	}
	seen := map[string]bool{}
	for i := range cols {
		if seen[cols[i].name] {
			return nil, fmt.Errorf("sql: column name %q appears twice", cols[i].name)
		}
		seen[cols[i].name] = true
		cols[i].typname = withLength(names[oids[i]], mods[i])
	}
	return cols, nil
}

// withLength appends a character column's declared length: "varchar:40".
func withLength(typname string, mod int32) string {
	if (typname == "varchar" || typname == "bpchar") && mod > 4 {
		return fmt.Sprintf("%s:%d", typname, mod-4)
	}
	return typname
}

func (s *Source) primaryKey(ctx context.Context) (string, error) {
	var cols []string
	rows, err := s.pool.query(ctx, `
		SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = $1::regclass AND i.indisprimary`, s.from)
	if err != nil {
		return "", s.fail(ctx, err)
	}
	cols, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", s.fail(ctx, err)
	}
	if len(cols) != 1 {
		return "", errors.New("no single-column primary key: set idColumn")
	}
	return cols[0], nil
}

// fieldOf types a column and gives the SQL that reads it as the Go type
// of its field type (int64, float64, string, time.Time, []byte).
func fieldOf(c column) (feature.Field, string) {
	q := pgx.Identifier{c.name}.Sanitize()
	f := feature.Field{Name: c.name, Alias: c.name}
	typ, length, _ := strings.Cut(c.typname, ":")
	switch typ {
	case "int2":
		f.Type, f.Length = feature.FieldSmallInteger, 2
	case "int4":
		f.Type, f.Length = feature.FieldInteger, 4
	case "int8":
		f.Type, f.Length = feature.FieldInteger, 8
	case "bool":
		f.Type, f.Length = feature.FieldSmallInteger, 2
		return f, q + "::int2"
	case "float4":
		f.Type, f.Length = feature.FieldSingle, 4
	case "float8":
		f.Type, f.Length = feature.FieldDouble, 8
	case "numeric":
		f.Type, f.Length = feature.FieldDouble, 8
		return f, q + "::float8"
	case "date", "timestamp", "timestamptz":
		f.Type, f.Length = feature.FieldDate, 8
	case "bytea":
		f.Type = feature.FieldBlob
	case "text", "varchar", "bpchar":
		f.Type, f.Length = feature.FieldString, 255
		if n, err := fmt.Sscan(length, &f.Length); n != 1 || err != nil {
			f.Length = 255
		}
		if typ == "bpchar" {
			return f, q + "::text"
		}
	default:
		f.Type, f.Length = feature.FieldString, 255
		return f, q + "::text"
	}
	return f, q
}

func findColumn(cols []column, name string) (column, bool) {
	for _, c := range cols {
		if c.name == name {
			return c, true
		}
	}
	for _, c := range cols {
		if strings.EqualFold(c.name, name) {
			return c, true
		}
	}
	return column{}, false
}

func columnNames(cols []column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// readGeometryMeta reads the SRID and geometry type (geometry_columns, or
// a sample of rows), the extent and the average vertex count.
func (s *Source) readGeometryMeta(ctx context.Context, declared proj.SR, geomName string) error {
	srid, gtype := 0, ""
	if s.relname != "" {
		err := s.row(ctx, `SELECT srid, type FROM geometry_columns
			WHERE f_table_schema = $1 AND f_table_name = $2 AND f_geometry_column = $3`,
			[]any{s.schema, s.relname, geomName}, &srid, &gtype)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
	}
	sample := "(SELECT " + s.geom + " AS g FROM " + s.from + " WHERE " + s.geom + " IS NOT NULL LIMIT 1000) AS sample"
	if srid == 0 {
		var srids []int32
		rows, err := s.pool.query(ctx, "SELECT DISTINCT ST_SRID(g) FROM "+sample)
		if err != nil {
			return s.fail(ctx, err)
		}
		if srids, err = pgx.CollectRows(rows, pgx.RowTo[int32]); err != nil {
			return s.fail(ctx, err)
		}
		switch {
		case len(srids) > 1:
			return fmt.Errorf("geometries have several SRIDs %v", srids)
		case len(srids) == 1:
			srid = int(srids[0])
		}
	}
	switch {
	case srid == 0 && declared.WKID == 0:
		return errors.New("the geometry column has no SRID: set spatialReference")
	case srid == 0:
		srid = declared.WKID
	case declared.WKID != 0 && declared.WKID != srid && !(declared.IsWebMercator() && (proj.SR{WKID: srid}).IsWebMercator()):
		return fmt.Errorf("the declared spatial reference %d does not match the data's SRID %d", declared.WKID, srid)
	}
	s.srid = srid
	s.info.SR = proj.SR{WKID: srid}
	if declared.WKID != 0 {
		s.info.SR = declared
	}

	gtype = strings.ToUpper(strings.TrimSuffix(strings.ToUpper(gtype), "M"))
	if gtype == "" || gtype == "GEOMETRY" {
		rows, err := s.pool.query(ctx, "SELECT DISTINCT upper(GeometryType(g)) FROM "+sample)
		if err != nil {
			return s.fail(ctx, err)
		}
		types, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return s.fail(ctx, err)
		}
		gtype = ""
		for _, t := range types {
			t = familyOf(t)
			switch {
			case gtype == "":
				gtype = t
			case gtype != t && (gtype+t == "POINTMULTIPOINT" || gtype+t == "MULTIPOINTPOINT"):
				gtype = "MULTIPOINT"
			case gtype != t:
				gtype = "GEOMETRY"
			}
		}
	}
	switch familyOf(gtype) {
	case "POINT":
		s.info.GeometryType = feature.Point
	case "MULTIPOINT":
		s.info.GeometryType = feature.Multipoint
	case "LINESTRING":
		s.info.GeometryType = feature.Polyline
	case "POLYGON":
		s.info.GeometryType = feature.Polygon
	}

	// Extent: the planner's estimate when the table was analysed, else
	// exact.
	var xmin, ymin, xmax, ymax *float64
	if s.relname != "" {
		err := s.row(ctx, `SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)
			FROM (SELECT ST_EstimatedExtent($1, $2, $3) AS e) AS x`, []any{s.schema, s.relname, geomName},
			&xmin, &ymin, &xmax, &ymax)
		if err != nil {
			xmin = nil // not analysed, or a view: fall back to the exact extent
		}
	}
	if xmin == nil {
		b, err := s.extentSQL(ctx, "", nil)
		if err != nil {
			return err
		}
		s.info.Extent = b
	} else if ymin != nil && xmax != nil && ymax != nil {
		s.info.Extent = orb.Bound{Min: orb.Point{*xmin, *ymin}, Max: orb.Point{*xmax, *ymax}}
	}
	var avg *float64
	if err := s.row(ctx, "SELECT avg(ST_NPoints(g))::float8 FROM "+sample, nil, &avg); err != nil {
		return err
	}
	if avg != nil {
		s.info.AvgPoints = int(math.Round(*avg))
	}
	return nil
}

// familyOf maps a PostGIS geometry type to POINT, MULTIPOINT, LINESTRING
// or POLYGON (multi-lines and multi-polygons share their parts' family).
func familyOf(t string) string {
	switch strings.TrimSuffix(t, "M") {
	case "POINT":
		return "POINT"
	case "MULTIPOINT":
		return "MULTIPOINT"
	case "LINESTRING", "MULTILINESTRING":
		return "LINESTRING"
	case "POLYGON", "MULTIPOLYGON":
		return "POLYGON"
	}
	return t
}

// row runs a one-row query.
func (s *Source) row(ctx context.Context, sql string, args []any, dest ...any) error {
	err := s.pool.pool.QueryRow(ctx, sql, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	return s.fail(ctx, err)
}

// Info describes the source as read at Open.
func (s *Source) Info() feature.Info { return s.info }

// Ping checks that the database answers.
func (s *Source) Ping(ctx context.Context) error {
	return ctxErr(ctx, s.info.Name, s.pool.pool.Ping(ctx), s.pool.timeout)
}

var _ feature.Versioned = (*Source)(nil)

// Version is what PostgreSQL's statistics say of the table: its file node (which TRUNCATE, a
// rewrite or REFRESH MATERIALIZED VIEW change) and its counts of rows inserted, updated and
// deleted. The counts are those of committed statistics, which a backend reports about a second
// after a transaction, at worst ten seconds after it when it is idle (PostgreSQL 15): an edit
// shows in a Version that late. A view, a query source or a partitioned table has no such
// statistics: feature.ErrNoVersion.
func (s *Source) Version(ctx context.Context) (string, error) {
	if s.relname == "" {
		return "", feature.ErrNoVersion
	}
	var kind string
	var node, ins, upd, del int64
	err := s.row(ctx, `
		SELECT c.relkind::text, c.relfilenode::int8,
		       coalesce(st.n_tup_ins, -1), coalesce(st.n_tup_upd, -1), coalesce(st.n_tup_del, -1)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_stat_all_tables st ON st.relid = c.oid
		WHERE n.nspname = $1 AND c.relname = $2`, []any{s.schema, s.relname}, &kind, &node, &ins, &upd, &del)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && (kind != "r" && kind != "m" || ins < 0) {
		return "", feature.ErrNoVersion
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d:%d:%d", node, ins, upd, del), nil
}
