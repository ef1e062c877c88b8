package changes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"

	"github.com/paulmach/orb"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
)

// FileState keeps what file-backed layers looked like when last acknowledged, in a SQLite file
// of its own: per layer the file's size and modification times (a file whose stamp did not move
// is not read), the SHA-256 of a GeoJSON file, and per GeoPackage row a digest of its geometry
// blob and attributes with the row's envelope. Comparing a GeoPackage's rows with these digests
// finds the rows changed in place without triggers in the user's file.
type FileState struct {
	db *sql.DB
}

const fileStateSchema = `
CREATE TABLE IF NOT EXISTS files (layer TEXT PRIMARY KEY, path TEXT NOT NULL, stamp BLOB NOT NULL, sha256 BLOB);
CREATE TABLE IF NOT EXISTS rows (layer TEXT NOT NULL, fid INTEGER NOT NULL, digest BLOB NOT NULL,
  minx REAL, miny REAL, maxx REAL, maxy REAL, PRIMARY KEY (layer, fid)) WITHOUT ROWID;`

// openSQLite opens the SQLite file at path (made absolute, escaped as a file URI) with query,
// its mode and pragmas.
func openSQLite(path, query string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?"+query)
}

// OpenFileState opens (creating it if need be) the state file at path.
func OpenFileState(path string) (*FileState, error) {
	db, err := openSQLite(path, "_pragma=journal_mode(wal)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("changes: open state file %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(fileStateSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("changes: state file %s: %w", path, err)
	}
	return &FileState{db: db}, nil
}

// Close closes the state file.
func (s *FileState) Close() error { return s.db.Close() }

// FileScan is what a scan of a file-backed layer found. Nothing is recorded until
// [FileState.Ack], so a scan whose dirty tiles were never handed on is found again.
type FileScan struct {
	Dirty Dirty
	// Baseline is true for the first scan of a layer: there was nothing to compare with, so
	// nothing is dirty; Ack records the baseline.
	Baseline bool
	// Changed counts the rows inserted, updated or deleted (GeoPackage).
	Changed int
	// Unchanged is true when the file's stamp did not move: the file was not read.
	Unchanged bool

	layer, path string
	stamp       []byte
	sha         []byte
	rows        []rowDigest // new or changed rows to record
	deleted     []int64
}

type rowDigest struct {
	fid    int64
	digest []byte
	env    orb.Bound
	hasEnv bool
}

// stamp is what tells a file may have changed: size and modification time of the file and, for
// SQLite, of its write-ahead log.
func stamp(path string, withWAL bool) ([]byte, error) {
	var b []byte
	paths := []string{path}
	if withWAL {
		paths = append(paths, path+"-wal")
	}
	for i, p := range paths {
		fi, err := os.Stat(p)
		if i > 0 && errors.Is(err, os.ErrNotExist) {
			b = binary.BigEndian.AppendUint64(b, math.MaxUint64)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		b = binary.BigEndian.AppendUint64(b, uint64(fi.Size()))
		b = binary.BigEndian.AppendUint64(b, uint64(fi.ModTime().UnixNano()))
	}
	return b, nil
}

// known returns the layer's recorded path, stamp and hash; ok is false for a new layer or one
// whose file moved to another path.
func (s *FileState) known(ctx context.Context, layer, path string) (st, sha []byte, ok bool, err error) {
	var p string
	err = s.db.QueryRowContext(ctx, `SELECT path, stamp, sha256 FROM files WHERE layer = ?`, layer).Scan(&p, &st, &sha)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("changes: state of layer %s: %w", layer, err)
	}
	return st, sha, p == path, nil
}

// begin starts the scan of a layer's file: it stamps path (with its -wal file when withWAL)
// and reads what was last acknowledged for the layer. The scan is Unchanged when that was this
// path with this stamp; ok tells whether it was this path at all.
func (s *FileState) begin(ctx context.Context, layer, path string, withWAL bool) (scan *FileScan, oldStamp, oldSHA []byte, ok bool, err error) {
	st, err := stamp(path, withWAL)
	if err != nil {
		return nil, nil, nil, false, err
	}
	oldStamp, oldSHA, ok, err = s.known(ctx, layer, path)
	if err != nil {
		return nil, nil, nil, false, err
	}
	scan = &FileScan{Dirty: Dirty{Layer: layer}, layer: layer, path: path, stamp: st}
	scan.Unchanged = ok && bytes.Equal(oldStamp, st)
	return scan, oldStamp, oldSHA, ok, nil
}

// GeoJSON scans a GeoJSON layer's file: when its bytes differ from those last acknowledged,
// the whole layer is dirty (a GeoJSON file is replaced whole; it has no row identity to follow).
func (s *FileState) GeoJSON(ctx context.Context, layer, path string) (*FileScan, error) {
	scan, oldStamp, oldSHA, ok, err := s.begin(ctx, layer, path, false)
	if err != nil {
		return nil, err
	}
	if scan.Unchanged {
		scan.sha = oldSHA
		return scan, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("changes: read %s: %w", path, err)
	}
	scan.sha = h.Sum(nil)
	switch {
	case oldStamp == nil:
		scan.Baseline = true
	case !bytes.Equal(oldSHA, scan.sha) || !ok:
		scan.Dirty.Whole = true
	}
	return scan, nil
}

// GeoPackage scans one feature table of a GeoPackage: when the file's stamp moved, it reads
// every row in fid order beside the recorded digests (a merge, so memory is one row, plus the
// changed rows kept for Ack) and reports the envelope, before and after, of each row inserted,
// changed or deleted.
func (s *FileState) GeoPackage(ctx context.Context, layer, path, table string) (*FileScan, error) {
	scan, oldStamp, _, _, err := s.begin(ctx, layer, path, true)
	if err != nil || scan.Unchanged {
		return scan, err
	}
	scan.Baseline = oldStamp == nil
	// Read-only, but not immutable: an editor's write-ahead log is part of the data.
	db, err := openSQLite(path, "mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("changes: open %s: %w", path, err)
	}
	defer db.Close()
	geom, fid, err := gpkgColumns(ctx, db, table)
	if err != nil {
		return nil, fmt.Errorf("changes: %s: %w", path, err)
	}
	// The envelopes' SRID: the table's spatial reference system's EPSG code (0 when another
	// organization defines it, or none).
	var srid sql.NullInt64
	err = db.QueryRowContext(ctx, `SELECT s.organization_coordsys_id FROM gpkg_geometry_columns g
		JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id WHERE g.table_name = ? AND upper(s.organization) = 'EPSG'`, table).Scan(&srid)
	if err == nil && srid.Valid {
		scan.Dirty.SRID = int(srid.Int64)
	}
	rows, err := db.QueryContext(ctx, `SELECT * FROM `+quoteIdent(table)+` ORDER BY `+quoteIdent(fid))
	if err != nil {
		return nil, fmt.Errorf("changes: read %s %s: %w", path, table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("changes: read %s %s: %w", path, table, err)
	}
	geomIdx, fidIdx := -1, -1
	for i, c := range cols {
		switch c {
		case geom:
			geomIdx = i
		case fid:
			fidIdx = i
		}
	}
	if geomIdx < 0 || fidIdx < 0 {
		return nil, fmt.Errorf("changes: %s %s: no column %s or %s", path, table, geom, fid)
	}
	old, err := s.db.QueryContext(ctx, `SELECT fid, digest, minx, miny, maxx, maxy FROM rows WHERE layer = ? ORDER BY fid`, layer)
	if err != nil {
		return nil, fmt.Errorf("changes: digests of layer %s: %w", layer, err)
	}
	defer old.Close()
	nextOld := func() (*rowDigest, error) {
		if !old.Next() {
			return nil, old.Err()
		}
		var d rowDigest
		var e [4]*float64
		if err := old.Scan(&d.fid, &d.digest, &e[0], &e[1], &e[2], &e[3]); err != nil {
			return nil, err
		}
		d.env, d.hasEnv = bound(e)
		return &d, nil
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	o, err := nextOld()
	if err != nil {
		return nil, fmt.Errorf("changes: digests of layer %s: %w", layer, err)
	}
	gone := func(d *rowDigest) {
		scan.deleted = append(scan.deleted, d.fid)
		scan.addEnv(d)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("changes: read %s %s: %w", path, table, err)
		}
		n, err := digestRow(vals, fidIdx, geomIdx)
		if err != nil {
			return nil, fmt.Errorf("changes: %s %s: %w", path, table, err)
		}
		for o != nil && o.fid < n.fid {
			gone(o)
			if o, err = nextOld(); err != nil {
				return nil, fmt.Errorf("changes: digests of layer %s: %w", layer, err)
			}
		}
		switch {
		case o != nil && o.fid == n.fid:
			if !bytes.Equal(o.digest, n.digest) {
				scan.addEnv(o)
				if !o.hasEnv || !n.hasEnv || o.env != n.env {
					scan.addEnv(&n)
				}
				scan.rows = append(scan.rows, n)
			}
			if o, err = nextOld(); err != nil {
				return nil, fmt.Errorf("changes: digests of layer %s: %w", layer, err)
			}
		default:
			scan.addEnv(&n)
			scan.rows = append(scan.rows, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes: read %s %s: %w", path, table, err)
	}
	for o != nil {
		gone(o)
		if o, err = nextOld(); err != nil {
			return nil, fmt.Errorf("changes: digests of layer %s: %w", layer, err)
		}
	}
	scan.Changed = len(scan.rows) + len(scan.deleted)
	if scan.Baseline {
		scan.Dirty.Envelopes = nil
		scan.Changed = 0
	}
	return scan, nil
}

func (scan *FileScan) addEnv(d *rowDigest) {
	if d.hasEnv {
		scan.Dirty.Envelopes = append(scan.Dirty.Envelopes, d.env)
	}
}

// gpkgColumns returns a feature table's geometry column and integer primary key.
func gpkgColumns(ctx context.Context, db *sql.DB, table string) (geom, fid string, err error) {
	if err := db.QueryRowContext(ctx, `SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?`, table).Scan(&geom); err != nil {
		return "", "", fmt.Errorf("geometry column of %s: %w", table, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) WHERE pk = 1 AND upper(type) = 'INTEGER'`, table)
	if err != nil {
		return "", "", fmt.Errorf("primary key of %s: %w", table, err)
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&fid); err != nil {
			return "", "", fmt.Errorf("primary key of %s: %w", table, err)
		}
	}
	if fid == "" {
		return "", "", fmt.Errorf("table %s has no integer primary key", table)
	}
	return geom, fid, rows.Err()
}

// digestRow hashes a row's values, each with its type, in column order (SHA-256, first 16
// bytes), and reads the envelope of its geometry blob.
func digestRow(vals []any, fidIdx, geomIdx int) (rowDigest, error) {
	var d rowDigest
	fid, ok := vals[fidIdx].(int64)
	if !ok {
		return d, fmt.Errorf("fid %v is not an integer", vals[fidIdx])
	}
	d.fid = fid
	h := sha256.New()
	var buf []byte
	for _, v := range vals {
		buf = buf[:0]
		switch v := v.(type) {
		case nil:
			buf = append(buf, 'n')
		case int64:
			buf = binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(v))
		case float64:
			buf = binary.BigEndian.AppendUint64(append(buf, 'f'), math.Float64bits(v))
		case string:
			buf = binary.BigEndian.AppendUint64(append(buf, 's'), uint64(len(v)))
			buf = append(buf, v...)
		case []byte:
			buf = binary.BigEndian.AppendUint64(append(buf, 'b'), uint64(len(v)))
			buf = append(buf, v...)
		default:
			s := fmt.Sprint(v)
			buf = binary.BigEndian.AppendUint64(append(buf, 'o'), uint64(len(s)))
			buf = append(buf, s...)
		}
		h.Write(buf)
	}
	d.digest = h.Sum(nil)[:16]
	if blob, ok := vals[geomIdx].([]byte); ok && len(blob) > 0 {
		if env, ok := geomblob.Envelope(blob); ok {
			d.env, d.hasEnv = env, true
		} else if g, err := geomblob.Decode(blob); err == nil && g != nil {
			d.env, d.hasEnv = g.Bound(), true
		}
	}
	return d, nil
}

// Ack records what a scan found, so the next scan compares with it.
func (s *FileState) Ack(ctx context.Context, scan *FileScan) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("changes: record layer %s: %w", scan.layer, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO files (layer, path, stamp, sha256) VALUES (?, ?, ?, ?)
		ON CONFLICT (layer) DO UPDATE SET path = excluded.path, stamp = excluded.stamp, sha256 = excluded.sha256`,
		scan.layer, scan.path, scan.stamp, scan.sha); err != nil {
		return fmt.Errorf("changes: record layer %s: %w", scan.layer, err)
	}
	for _, fid := range scan.deleted {
		if _, err := tx.ExecContext(ctx, `DELETE FROM rows WHERE layer = ? AND fid = ?`, scan.layer, fid); err != nil {
			return fmt.Errorf("changes: record layer %s: %w", scan.layer, err)
		}
	}
	for _, r := range scan.rows {
		var e [4]any
		if r.hasEnv {
			e = [4]any{r.env.Min[0], r.env.Min[1], r.env.Max[0], r.env.Max[1]}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO rows (layer, fid, digest, minx, miny, maxx, maxy) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (layer, fid) DO UPDATE SET digest = excluded.digest, minx = excluded.minx, miny = excluded.miny,
			maxx = excluded.maxx, maxy = excluded.maxy`, scan.layer, r.fid, r.digest, e[0], e[1], e[2], e[3]); err != nil {
			return fmt.Errorf("changes: record layer %s: %w", scan.layer, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("changes: record layer %s: %w", scan.layer, err)
	}
	return nil
}
