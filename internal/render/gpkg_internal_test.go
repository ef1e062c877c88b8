package render

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
	_ "modernc.org/sqlite"
)

// The test data: Natural Earth 50m countries in Web Mercator.
const countriesGPKG = "../../data/sample/world_countries_50m_3857.gpkg"

// loadGPKG reads every feature of table with its label column from a GeoPackage, for tests only (the
// real reader is internal/feature).
func loadGPKG(path, table, labelCol string) (Features, error) {
	db, err := openGPKG(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(fmt.Sprintf(`SELECT geom, %q FROM %q`, labelCol, table))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fs Features
	for rows.Next() {
		var blob []byte
		var label sql.NullString
		if err := rows.Scan(&blob, &label); err != nil {
			return nil, err
		}
		wkbBytes, err := gpkgWKB(blob)
		if err != nil {
			return nil, err
		}
		g, err := wkb.Unmarshal(wkbBytes)
		if err != nil {
			return nil, err
		}
		fs = append(fs, Feature{Geom: g, Label: label.String})
	}
	return fs, rows.Err()
}

// gpkgWKB strips the GeoPackage binary header: magic "GP", version, flags, srs id, envelope.
func gpkgWKB(b []byte) ([]byte, error) {
	if len(b) < 8 || b[0] != 'G' || b[1] != 'P' {
		return nil, fmt.Errorf("not a GeoPackage geometry blob")
	}
	env := [...]int{0, 32, 48, 48, 64}
	e := int(b[3]>>1) & 7
	if e >= len(env) {
		return nil, fmt.Errorf("bad envelope code %d", e)
	}
	n := 8 + env[e]
	if len(b) < n {
		return nil, fmt.Errorf("short blob")
	}
	return b[n:], nil
}

var countries = sync.OnceValues(func() (Features, error) {
	return loadGPKG(countriesGPKG, "countries", "NAME")
})

func loadCountries(tb testing.TB) Features {
	tb.Helper()
	fs, err := countries()
	if err != nil {
		tb.Fatalf("loading %s: %v", countriesGPKG, err)
	}
	return fs
}

// gpkgSource reads features from a GeoPackage table on every Search, through its R-tree index, as a
// server's data source does (the database stays open between searches). Test and benchmark use only.
type gpkgSource struct {
	db       *sql.DB
	query    string
	labelCol string
}

// openGPKG opens the GeoPackage at path read-only.
func openGPKG(path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	return sql.Open("sqlite", "file:"+abs+"?mode=ro&immutable=1")
}

func openGPKGSource(path, table, labelCol string) (*gpkgSource, error) {
	db, err := openGPKG(path)
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf(`SELECT t.geom, t.%q FROM %q t JOIN %q r ON t.fid = r.id
		WHERE r.maxx >= ? AND r.minx <= ? AND r.maxy >= ? AND r.miny <= ?`, labelCol, table, "rtree_"+table+"_geom")
	return &gpkgSource{db: db, query: q, labelCol: labelCol}, nil
}

func (s *gpkgSource) Search(ctx context.Context, b orb.Bound, yield func(Feature) bool) error {
	rows, err := s.db.QueryContext(ctx, s.query, b.Min[0], b.Max[0], b.Min[1], b.Max[1])
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var blob []byte
		var label sql.NullString
		if err := rows.Scan(&blob, &label); err != nil {
			return err
		}
		w, err := gpkgWKB(blob)
		if err != nil {
			return err
		}
		g, err := wkb.Unmarshal(w)
		if err != nil {
			return err
		}
		if !yield(Feature{Geom: g, Label: label.String}) {
			return nil
		}
	}
	return rows.Err()
}
