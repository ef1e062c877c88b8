package tilearchive

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// The MBTiles 1.3 layout (github.com/mapbox/mbtiles-spec), as this writer makes it: a SQLite
// file with
//
//	metadata (name text, value text)    name, format, bounds, center, minzoom, maxzoom, type,
//	                                    version, description, attribution, and for format pbf
//	                                    json = {"vector_layers": [...]}
//	tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)
//	                                    unique index on (zoom_level, tile_column, tile_row)
//
// tile_row counts from the south (TMS): tile_row = 2^zoom − 1 − Y.

// sqliteDSN is the data source name of a SQLite file, with extra query parameters.
func sqliteDSN(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + query, nil
}

type mbWriter struct {
	path  string
	tmp   string
	db    *sql.DB
	tx    *sql.Tx
	put   *sql.Stmt
	zooms zoomRange
}

func createMBTiles(path string) (*mbWriter, error) {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("tilearchive: %w", err)
	}
	f.Close()
	w := &mbWriter{path: path, tmp: f.Name()}
	dsn, err := sqliteDSN(w.tmp, "_pragma=journal_mode(off)&_pragma=synchronous(off)")
	if err == nil {
		w.db, err = sql.Open("sqlite", dsn)
	}
	if err != nil {
		os.Remove(w.tmp)
		return nil, fmt.Errorf("tilearchive: create %s: %w", path, err)
	}
	w.db.SetMaxOpenConns(1)
	if err := w.start(); err != nil {
		w.Abort()
		return nil, fmt.Errorf("tilearchive: create %s: %w", path, err)
	}
	return w, nil
}

func (w *mbWriter) start() error {
	for _, stmt := range []string{
		`CREATE TABLE metadata (name text, value text)`,
		`CREATE TABLE tiles (zoom_level integer, tile_column integer, tile_row integer, tile_data blob)`,
		`CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row)`,
	} {
		if _, err := w.db.Exec(stmt); err != nil {
			return err
		}
	}
	var err error
	if w.tx, err = w.db.Begin(); err != nil {
		return err
	}
	w.put, err = w.tx.Prepare(`INSERT INTO tiles (zoom_level, tile_column, tile_row, tile_data) VALUES (?, ?, ?, ?)`)
	return err
}

func (w *mbWriter) Put(t ZXY, data []byte) error {
	if !t.valid() {
		return fmt.Errorf("tilearchive: tile %v is not in the Web Mercator grid", t)
	}
	if _, err := w.put.Exec(t.Z, t.X, (1<<t.Z)-1-t.Y, data); err != nil {
		return fmt.Errorf("tilearchive: tile %v: %w", t, err)
	}
	w.zooms.add(t.Z)
	return nil
}

func (w *mbWriter) Abort() {
	if w.tx != nil {
		w.tx.Rollback()
	}
	w.db.Close()
	os.Remove(w.tmp)
}

func (w *mbWriter) Close(md Metadata) error {
	defer w.Abort()
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	rows := [][2]string{
		{"name", md.Name},
		{"format", md.Format},
		{"bounds", ff(md.Bounds[0]) + "," + ff(md.Bounds[1]) + "," + ff(md.Bounds[2]) + "," + ff(md.Bounds[3])},
		{"center", ff(md.Center[0]) + "," + ff(md.Center[1]) + "," + strconv.Itoa(min(max(int(md.Center[2]), w.zooms.min), w.zooms.max))},
		{"minzoom", strconv.Itoa(w.zooms.min)},
		{"maxzoom", strconv.Itoa(w.zooms.max)},
		{"type", "baselayer"},
		{"version", "1.3"},
	}
	if md.Description != "" {
		rows = append(rows, [2]string{"description", md.Description})
	}
	if md.Attribution != "" {
		rows = append(rows, [2]string{"attribution", md.Attribution})
	}
	if md.Format == "pbf" {
		j, err := json.Marshal(struct {
			VectorLayers []VectorLayer `json:"vector_layers"`
		}{md.VectorLayers})
		if err != nil {
			return err
		}
		rows = append(rows, [2]string{"json", string(j)})
	}
	for _, r := range rows {
		if _, err := w.tx.Exec(`INSERT INTO metadata (name, value) VALUES (?, ?)`, r[0], r[1]); err != nil {
			return fmt.Errorf("tilearchive: metadata: %w", err)
		}
	}
	err := w.tx.Commit()
	w.tx = nil
	if err == nil {
		err = w.db.Close()
	}
	if err != nil {
		return fmt.Errorf("tilearchive: %s: %w", w.path, err)
	}
	if err := publish(w.tmp, w.path); err != nil {
		return fmt.Errorf("tilearchive: %w", err)
	}
	return nil
}

type mbReader struct {
	db  *sql.DB
	md  Metadata
	err error
}

func openMBTiles(path string) (*mbReader, error) {
	// sqlite would create an empty database; a missing file is an error.
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("tilearchive: %w", err)
	}
	dsn, err := sqliteDSN(path, "mode=ro")
	if err != nil {
		return nil, fmt.Errorf("tilearchive: %w", err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("tilearchive: open %s: %w", path, err)
	}
	r := &mbReader{db: db}
	if err := r.readMetadata(); err != nil {
		db.Close()
		return nil, fmt.Errorf("tilearchive: %s: %w", path, err)
	}
	return r, nil
}

func (r *mbReader) readMetadata() error {
	rows, err := r.db.Query(`SELECT name, value FROM metadata`)
	if err != nil {
		return fmt.Errorf("%w: MBTiles metadata: %w", ErrFormat, err)
	}
	defer rows.Close()
	md := &r.md
	floats := func(s string, out []float64) {
		for i, p := range strings.SplitN(s, ",", len(out)) {
			out[i], _ = strconv.ParseFloat(strings.TrimSpace(p), 64)
		}
	}
	for rows.Next() {
		var name, value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return fmt.Errorf("%w: MBTiles metadata: %w", ErrFormat, err)
		}
		v := value.String
		switch name.String {
		case "name":
			md.Name = v
		case "format":
			md.Format = v
		case "description":
			md.Description = v
		case "attribution":
			md.Attribution = v
		case "bounds":
			floats(v, md.Bounds[:])
		case "center":
			floats(v, md.Center[:])
		case "minzoom":
			md.MinZoom, _ = strconv.Atoi(v)
		case "maxzoom":
			md.MaxZoom, _ = strconv.Atoi(v)
		case "json":
			var j jsonMetadata
			if err := json.Unmarshal([]byte(v), &j); err != nil {
				return fmt.Errorf("%w: MBTiles metadata json: %w", ErrFormat, err)
			}
			md.VectorLayers = j.VectorLayers
		}
	}
	return rows.Err()
}

func (r *mbReader) Metadata() Metadata { return r.md }
func (r *mbReader) Err() error         { return r.err }
func (r *mbReader) Close() error       { return r.db.Close() }

func (r *mbReader) Tiles() iter.Seq2[ZXY, []byte] {
	return func(yield func(ZXY, []byte) bool) {
		r.err = nil
		fail := func(err error) {
			r.err = fmt.Errorf("%w: MBTiles tiles: %w", ErrFormat, err)
			yield(ZXY{}, nil)
		}
		rows, err := r.db.Query(`SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY zoom_level, tile_row DESC, tile_column`)
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var z, x, row int
			var data []byte
			if err := rows.Scan(&z, &x, &row, &data); err != nil {
				fail(err)
				return
			}
			t := ZXY{Z: z, X: x, Y: (1 << max(0, min(z, 30))) - 1 - row}
			if !t.valid() {
				fail(fmt.Errorf("tile zoom %d column %d row %d is outside the grid", z, x, row))
				return
			}
			if !yield(t, data) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	}
}
