// Package gpkg reads OGC GeoPackage files: the table catalogue
// (gpkg_contents, gpkg_geometry_columns, gpkg_spatial_ref_sys), column
// schemas, geometry blobs and the R-tree spatial index GeoPackage keeps per
// geometry column.
//
// Files are opened read-only (not immutable: an edit made in place is read)
// through the pure-Go SQLite driver modernc.org/sqlite, so no cgo is needed
// and several processes can share a file safely. ReadLayer loads a whole
// table into memory (feature.Layer, with its own R-tree); Source reads a
// table on demand, one SQL statement per query.
package gpkg

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"

	"github.com/paulmach/orb"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// ErrNoTable is wrapped by errors about a table the GeoPackage does not list
// in gpkg_contents.
var ErrNoTable = errors.New("gpkg: no such table")

// File is an open GeoPackage. It is safe for concurrent use.
type File struct {
	path   string
	db     *sql.DB
	tables []*Table
}

// Table describes one table listed in gpkg_contents.
type Table struct {
	// Name is the table name.
	Name string
	// DataType is gpkg_contents.data_type: "features" or "attributes".
	DataType string
	// GeometryColumn is the geometry column name ("" for attribute tables).
	GeometryColumn string
	// GeometryType is the ArcGIS geometry type derived from
	// gpkg_geometry_columns.geometry_type_name (None for attribute tables
	// and for the generic GEOMETRY type).
	GeometryType feature.GeometryType
	// GeometryTypeName is the GeoPackage geometry type name, e.g.
	// "MULTIPOLYGON".
	GeometryTypeName string
	// SR is the spatial reference: the organization_coordsys_id of the
	// table's srs_id when the organization is EPSG (or ESRI), else srs_id.
	SR proj.SR
	// Extent is the extent recorded in gpkg_contents (may be empty).
	Extent orb.Bound
	// Fields lists the non-geometry columns in table order; the integer
	// primary key is FieldOID.
	Fields []feature.Field
	// OIDField is the integer primary key column ("" if none).
	OIDField string
	// RTree is the R-tree virtual table name ("rtree_<table>_<column>"), or
	// "" when the file has no spatial index for the table.
	RTree string
}

// Field returns the named field (case-insensitive) and whether it exists.
func (t *Table) Field(name string) (feature.Field, bool) {
	for _, f := range t.Fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return feature.Field{}, false
}

// Open opens a GeoPackage read-only and reads its table catalogue.
func Open(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("gpkg: %w", err)
	}
	// sqlite would happily create an empty database; make a missing file an error.
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("gpkg: %w", err)
	}
	// Read-only but not immutable: SQLite then sees a file edited in place (each query reads
	// what was last committed, an editor's write-ahead log included), so the tiles the
	// coordinator re-renders for the changed rows (docs/freshness.md) draw them as they are
	// now. Immutable, it kept serving the pages it had cached. A file that cannot be opened so
	// (on read-only media, a write-ahead log without its shared-memory file) is opened
	// immutable: read as it was when opened.
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?mode=ro"
	f, err := openDSN(path, dsn)
	if err != nil {
		if f, err2 := openDSN(path, dsn+"&immutable=1"); err2 == nil {
			return f, nil
		}
		return nil, err
	}
	return f, nil
}

// openDSN opens the file at path through the SQLite DSN dsn and reads its table catalogue.
func openDSN(path, dsn string) (*File, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("gpkg: open %s: %w", path, err)
	}
	f := &File{path: path, db: db}
	if err := f.readCatalogue(); err != nil {
		db.Close()
		return nil, fmt.Errorf("gpkg: %s: %w", path, err)
	}
	return f, nil
}

// Close releases the file.
func (f *File) Close() error { return f.db.Close() }

// Path returns the path the file was opened with.
func (f *File) Path() string { return f.path }

// Tables returns the tables listed in gpkg_contents (features and
// attributes), in name order.
func (f *File) Tables() []*Table { return f.tables }

// Table returns the named table (case-insensitive).
func (f *File) Table(name string) (*Table, bool) {
	for _, t := range f.tables {
		if strings.EqualFold(t.Name, name) {
			return t, true
		}
	}
	return nil, false
}

func (f *File) readCatalogue() error {
	rows, err := f.db.Query(`SELECT c.table_name, c.data_type, c.min_x, c.min_y, c.max_x, c.max_y,
		COALESCE(g.column_name, ''), COALESCE(g.geometry_type_name, ''),
		COALESCE(g.srs_id, c.srs_id, 0), COALESCE(s.organization, ''), COALESCE(s.organization_coordsys_id, 0)
		FROM gpkg_contents c
		LEFT JOIN gpkg_geometry_columns g ON g.table_name = c.table_name
		LEFT JOIN gpkg_spatial_ref_sys s ON s.srs_id = COALESCE(g.srs_id, c.srs_id)
		WHERE c.data_type IN ('features', 'attributes')
		ORDER BY c.table_name`)
	if err != nil {
		return fmt.Errorf("read gpkg_contents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			t                      Table
			minX, minY, maxX, maxY sql.NullFloat64
			srsID, orgID           int64
			org                    string
		)
		if err := rows.Scan(&t.Name, &t.DataType, &minX, &minY, &maxX, &maxY,
			&t.GeometryColumn, &t.GeometryTypeName, &srsID, &org, &orgID); err != nil {
			return fmt.Errorf("read gpkg_contents: %w", err)
		}
		t.Extent = emptyBound()
		if minX.Valid && minY.Valid && maxX.Valid && maxY.Valid {
			t.Extent = orb.Bound{Min: orb.Point{minX.Float64, minY.Float64}, Max: orb.Point{maxX.Float64, maxY.Float64}}
		}
		t.GeometryType = geometryType(t.GeometryTypeName)
		t.SR = proj.SR{WKID: int(srsID)}
		if (strings.EqualFold(org, "EPSG") || strings.EqualFold(org, "ESRI")) && orgID > 0 {
			t.SR = proj.SR{WKID: int(orgID)}
		}
		f.tables = append(f.tables, &t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read gpkg_contents: %w", err)
	}
	for _, t := range f.tables {
		if err := f.readColumns(t); err != nil {
			return err
		}
		if t.GeometryColumn != "" {
			name := "rtree_" + t.Name + "_" + t.GeometryColumn
			var n int
			if err := f.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n); err == nil && n > 0 {
				t.RTree = name
			}
		}
	}
	return nil
}

// geometryType maps a GeoPackage geometry type name to an ArcGIS type.
func geometryType(name string) feature.GeometryType {
	switch strings.ToUpper(name) {
	case "POINT":
		return feature.Point
	case "MULTIPOINT":
		return feature.Multipoint
	case "LINESTRING", "MULTILINESTRING", "CURVE", "MULTICURVE":
		return feature.Polyline
	case "POLYGON", "MULTIPOLYGON", "SURFACE", "MULTISURFACE", "CURVEPOLYGON":
		return feature.Polygon
	}
	return feature.None
}

var textLength = regexp.MustCompile(`^(?:TEXT|VARCHAR|CHAR)\s*\(\s*(\d+)\s*\)$`)

// fieldType maps a declared SQLite/GeoPackage column type to a field type
// and byte length (string length for TEXT(n); 0 = undeclared).
func fieldType(decl string) (feature.FieldType, int) {
	d := strings.ToUpper(strings.TrimSpace(decl))
	if m := textLength.FindStringSubmatch(d); m != nil {
		n, _ := strconv.Atoi(m[1])
		return feature.FieldString, n
	}
	switch d {
	case "INTEGER", "INT", "MEDIUMINT", "BIGINT":
		return feature.FieldInteger, 8
	case "SMALLINT", "TINYINT", "BOOLEAN":
		return feature.FieldSmallInteger, 2
	case "DOUBLE", "REAL":
		return feature.FieldDouble, 8
	case "FLOAT":
		return feature.FieldSingle, 4
	case "DATE", "DATETIME":
		return feature.FieldDate, 8
	case "BLOB":
		return feature.FieldBlob, 0
	}
	return feature.FieldString, 0
}

func (f *File) readColumns(t *Table) error {
	rows, err := f.db.Query(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, t.Name)
	if err != nil {
		return fmt.Errorf("read columns of %s: %w", t.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name, decl string
			notNull    bool
			pk         int
		)
		if err := rows.Scan(&name, &decl, &notNull, &pk); err != nil {
			return fmt.Errorf("read columns of %s: %w", t.Name, err)
		}
		if strings.EqualFold(name, t.GeometryColumn) {
			continue
		}
		typ, length := fieldType(decl)
		if pk == 1 && typ == feature.FieldInteger && t.OIDField == "" {
			typ, notNull = feature.FieldOID, true
			t.OIDField = name
		}
		t.Fields = append(t.Fields, feature.Field{Name: name, Alias: name, Type: typ, Length: length, Nullable: !notNull})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read columns of %s: %w", t.Name, err)
	}
	if len(t.Fields) == 0 {
		return fmt.Errorf("table %s: %w (listed in gpkg_contents but has no columns)", t.Name, ErrNoTable)
	}
	return nil
}

// Row is one record handed to a scan callback. Geom is nil for a NULL or
// empty geometry (and for attribute tables); Values align with
// Table.Fields. The Row and its Values are reused between calls: copy what
// you keep.
type Row struct {
	ID     int64
	Geom   orb.Geometry
	Values []any
}

// Scan calls fn for every row of the table in primary-key order. When
// bound is non-nil and the table has an R-tree, only rows whose envelope
// intersects *bound are read (through rtree_<table>_<geom>); rows with a
// NULL geometry are then skipped, as the index does not hold them.
func (f *File) Scan(table string, bound *orb.Bound, fn func(*Row) error) error {
	t, ok := f.Table(table)
	if !ok {
		return fmt.Errorf("%w: %q in %s", ErrNoTable, table, f.path)
	}
	return f.scan(t, bound, t.GeometryColumn != "", fn)
}

func (f *File) scan(t *Table, bound *orb.Bound, withGeom bool, fn func(*Row) error) error {
	cols := make([]string, 0, len(t.Fields)+2)
	idExpr := "rowid"
	if t.OIDField != "" {
		idExpr = quote(t.OIDField)
	}
	cols = append(cols, "t."+idExpr)
	if withGeom {
		cols = append(cols, "t."+quote(t.GeometryColumn))
	} else {
		cols = append(cols, "NULL")
	}
	for _, fl := range t.Fields {
		cols = append(cols, "t."+quote(fl.Name))
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM " + quote(t.Name) + " t"
	var args []any
	if bound != nil && !withGeom {
		return fmt.Errorf("gpkg: table %s: an extent query needs a geometry column", t.Name)
	}
	if bound != nil && t.RTree != "" {
		q += " JOIN " + quote(t.RTree) + " r ON r.id = t." + idExpr +
			" WHERE r.minx <= ? AND r.maxx >= ? AND r.miny <= ? AND r.maxy >= ?"
		args = append(args, bound.Max[0], bound.Min[0], bound.Max[1], bound.Min[1])
	}
	q += " ORDER BY t." + idExpr
	rows, err := f.db.Query(q, args...)
	if err != nil {
		return fmt.Errorf("gpkg: query %s: %w", t.Name, err)
	}
	defer rows.Close()

	raw := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	row := &Row{Values: make([]any, len(t.Fields))}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("gpkg: read %s: %w", t.Name, err)
		}
		id, ok := raw[0].(int64)
		if !ok {
			return fmt.Errorf("gpkg: read %s: non-integer id %v", t.Name, raw[0])
		}
		row.ID = id
		row.Geom = nil
		if blob, ok := raw[1].([]byte); ok {
			g, err := geomblob.Decode(blob)
			if err != nil {
				return fmt.Errorf("gpkg: %s id %d: %w", t.Name, id, err)
			}
			row.Geom = g
		}
		if bound != nil && t.RTree == "" && (row.Geom == nil || !row.Geom.Bound().Intersects(*bound)) {
			continue
		}
		for i, fl := range t.Fields {
			v, err := convert(raw[i+2], fl.Type)
			if err != nil {
				return fmt.Errorf("gpkg: %s id %d field %s: %w", t.Name, id, fl.Name, err)
			}
			row.Values[i] = v
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("gpkg: read %s: %w", t.Name, err)
	}
	return nil
}

// Search returns the ids of the rows whose index envelope intersects b,
// straight from the file's R-tree. It fails if the table has no R-tree.
func (f *File) Search(table string, b orb.Bound) ([]int64, error) {
	t, ok := f.Table(table)
	if !ok {
		return nil, fmt.Errorf("%w: %q in %s", ErrNoTable, table, f.path)
	}
	if t.RTree == "" {
		return nil, fmt.Errorf("gpkg: table %s has no spatial index", t.Name)
	}
	rows, err := f.db.Query("SELECT id FROM "+quote(t.RTree)+
		" WHERE minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ? ORDER BY id",
		b.Max[0], b.Min[0], b.Max[1], b.Min[1])
	if err != nil {
		return nil, fmt.Errorf("gpkg: search %s: %w", t.Name, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("gpkg: search %s: %w", t.Name, err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// convert normalises a SQLite value to the Go type of the field type.
func convert(v any, t feature.FieldType) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t {
	case feature.FieldOID, feature.FieldInteger, feature.FieldSmallInteger:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			return strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		}
	case feature.FieldDouble, feature.FieldSingle:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case string:
			return strconv.ParseFloat(strings.TrimSpace(x), 64)
		}
	case feature.FieldString:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		case time.Time:
			return x.Format(time.RFC3339Nano), nil
		}
	case feature.FieldDate:
		switch x := v.(type) {
		case time.Time:
			return x.UTC(), nil
		case string:
			return parseTime(x)
		}
	case feature.FieldBlob:
		if x, ok := v.([]byte); ok {
			return append([]byte(nil), x...), nil
		}
	}
	return nil, fmt.Errorf("unexpected value %v (%T) for %v", v, v, t)
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999Z", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad date %q", s)
}

func quote(ident string) string { return `"` + strings.ReplaceAll(ident, `"`, `""`) + `"` }

func emptyBound() orb.Bound {
	return orb.Bound{Min: orb.Point{1, 1}, Max: orb.Point{-1, -1}}
}
