package gpkg

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// Writer writes a new GeoPackage holding one feature table with its R-tree
// spatial index: what the benchmark data generator (bench/parcelgen) and
// tests need to make large files, not a general GeoPackage editor. Rows go
// in through batched transactions, each with its R-tree entry; Close
// records the extent. The result opens in GDAL (ogrinfo) and in this package.
type Writer struct {
	db      *sql.DB
	tx      *sql.Tx
	insert  *sql.Stmt
	index   *sql.Stmt
	table   string
	srsID   int
	fields  []feature.Field
	extent  orb.Bound
	pending int
}

// Create makes path (which must not exist) with an empty feature table of
// the given WKID (4326 or 3857), GeoPackage geometry type name (e.g.
// "MULTIPOLYGON") and attribute fields. A field of type FieldOID is the
// integer primary key; without one, "fid" is added.
func Create(path, table string, wkid int, geomType string, fields []feature.Field) (*Writer, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err == nil {
		return nil, fmt.Errorf("gpkg: %s exists", path)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?_pragma=journal_mode(off)&_pragma=synchronous(off)")
	if err != nil {
		return nil, fmt.Errorf("gpkg: create %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	w := &Writer{db: db, table: table, srsID: wkid, fields: fields, extent: feature.EmptyBound()}
	hasOID := false
	cols := []string{}
	for _, f := range fields {
		switch f.Type {
		case feature.FieldOID:
			hasOID = true
			cols = append(cols, quote(f.Name)+" INTEGER PRIMARY KEY AUTOINCREMENT")
		default:
			cols = append(cols, quote(f.Name)+" "+declType(f))
		}
	}
	if !hasOID {
		cols = append([]string{`"fid" INTEGER PRIMARY KEY AUTOINCREMENT`}, cols...)
		w.fields = append([]feature.Field{{Name: "fid", Type: feature.FieldOID}}, fields...)
	}
	cols = append(cols, `"geom" `+geomType)
	sr := proj.SR{WKID: wkid}
	stmts := []string{
		"PRAGMA application_id = 1196444487", // 'GPKG'
		"PRAGMA user_version = 10300",
		`CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY, organization TEXT NOT NULL,
			organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT)`,
		`INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', NULL),
			('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', NULL)`,
		`CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE,
			description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
			min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER)`,
		`CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL,
			srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL, PRIMARY KEY (table_name, column_name))`,
		`CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL, definition TEXT NOT NULL,
			scope TEXT NOT NULL)`,
		"CREATE TABLE " + quote(table) + " (" + strings.Join(cols, ", ") + ")",
		"CREATE VIRTUAL TABLE " + quote("rtree_"+table+"_geom") + " USING rtree(id, minx, maxx, miny, maxy)",
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			db.Close()
			return nil, fmt.Errorf("gpkg: create %s: %w", path, err)
		}
	}
	inserts := []struct {
		q    string
		args []any
	}{
		{"INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, 'EPSG', ?, ?, NULL)", []any{sr.String(), wkid, wkid, sr.WKT()}},
		{"INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) VALUES (?, 'features', ?, ?)", []any{table, table, wkid}},
		{"INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', ?, ?, 0, 0)", []any{table, geomType, wkid}},
		{"INSERT INTO gpkg_extensions VALUES (?, 'geom', 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only')", []any{table}},
	}
	for _, s := range inserts {
		if _, err := db.Exec(s.q, s.args...); err != nil {
			db.Close()
			return nil, fmt.Errorf("gpkg: create %s: %w", path, err)
		}
	}
	if err := w.begin(); err != nil {
		db.Close()
		return nil, err
	}
	return w, nil
}

func declType(f feature.Field) string {
	switch f.Type {
	case feature.FieldInteger:
		return "INTEGER"
	case feature.FieldSmallInteger:
		return "SMALLINT"
	case feature.FieldDouble:
		return "DOUBLE"
	case feature.FieldSingle:
		return "FLOAT"
	case feature.FieldDate:
		return "DATE"
	case feature.FieldBlob:
		return "BLOB"
	}
	if f.Length > 0 {
		return fmt.Sprintf("TEXT(%d)", f.Length)
	}
	return "TEXT"
}

func (w *Writer) begin() error {
	tx, err := w.db.Begin()
	if err != nil {
		return fmt.Errorf("gpkg: write %s: %w", w.table, err)
	}
	names := []string{}
	marks := []string{}
	for _, f := range w.fields {
		names = append(names, quote(f.Name))
		marks = append(marks, "?")
	}
	names = append(names, `"geom"`)
	marks = append(marks, "?")
	st, err := tx.Prepare("INSERT INTO " + quote(w.table) + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")")
	if err != nil {
		tx.Rollback()
		return fmt.Errorf("gpkg: write %s: %w", w.table, err)
	}
	ix, err := tx.Prepare("INSERT INTO " + quote("rtree_"+w.table+"_geom") + " VALUES (last_insert_rowid(), ?, ?, ?, ?)")
	if err != nil {
		tx.Rollback()
		return fmt.Errorf("gpkg: write %s: %w", w.table, err)
	}
	w.tx, w.insert, w.index = tx, st, ix
	return nil
}

// Add writes one row: values align with the fields given to Create (the
// OID value may be nil to number rows automatically; dates as
// "2006-01-02" strings or time.Time).
func (w *Writer) Add(values []any, g orb.Geometry) error {
	blob, err := geomblob.Encode(g, w.srsID)
	if err != nil {
		return err
	}
	if g != nil {
		w.extent = w.extent.Union(g.Bound())
	}
	args := append(append(make([]any, 0, len(values)+2), values...), blob)
	if len(args) < len(w.fields)+1 {
		args = append([]any{nil}, args...) // the added fid
	}
	if _, err := w.insert.Exec(args...); err != nil {
		return fmt.Errorf("gpkg: write %s: %w", w.table, err)
	}
	if g != nil {
		b := g.Bound()
		if _, err := w.index.Exec(b.Min[0], b.Max[0], b.Min[1], b.Max[1]); err != nil {
			return fmt.Errorf("gpkg: index %s: %w", w.table, err)
		}
	}
	if w.pending++; w.pending == 50_000 {
		w.pending = 0
		w.insert.Close()
		w.index.Close()
		if err := w.tx.Commit(); err != nil {
			return fmt.Errorf("gpkg: write %s: %w", w.table, err)
		}
		return w.begin()
	}
	return nil
}

// Close commits and records the extent.
func (w *Writer) Close() error {
	defer w.db.Close()
	w.insert.Close()
	w.index.Close()
	if err := w.tx.Commit(); err != nil {
		return fmt.Errorf("gpkg: write %s: %w", w.table, err)
	}
	if !w.extent.IsEmpty() {
		e := w.extent
		if _, err := w.db.Exec("UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE table_name = ?",
			e.Min[0], e.Min[1], e.Max[0], e.Max[1], w.table); err != nil {
			return fmt.Errorf("gpkg: write %s: %w", w.table, err)
		}
	}
	return nil
}

// EncodeGeometry writes (bytes 9–40: minx, maxx, miny, maxy), without
// SpatiaLite.
const envelopeSQL = `mapfarm_double(substr(geom, 9, 8)) AS mapfarm_minx, mapfarm_double(substr(geom, 17, 8)) AS mapfarm_maxx,
	mapfarm_double(substr(geom, 25, 8)) AS mapfarm_miny, mapfarm_double(substr(geom, 33, 8)) AS mapfarm_maxy`

// WriteGrid writes a table of side×side unit squares (EPSG:3857 units)
// with a name and a value, for tests and benchmarks.
func WriteGrid(path, table string, side int) error {
	w, err := Create(path, table, proj.WebMercator, "POLYGON", []feature.Field{
		{Name: "fid", Type: feature.FieldOID}, {Name: "name", Type: feature.FieldString}, {Name: "value", Type: feature.FieldDouble}})
	if err != nil {
		return err
	}
	for y := range side {
		for x := range side {
			x0, y0 := float64(x), float64(y)
			cell := orb.Polygon{{{x0, y0}, {x0 + 1, y0}, {x0 + 1, y0 + 1}, {x0, y0 + 1}, {x0, y0}}}
			if err := w.Add([]any{nil, fmt.Sprintf("cell %d-%d", x, y), float64(x*y%97) / 4}, cell); err != nil {
				w.Close()
				return err
			}
		}
	}
	return w.Close()
}
