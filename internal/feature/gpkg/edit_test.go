package gpkg_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
)

// A file edited in place while it is open (a row moved and renamed with SQLite, as a user's
// editor does) is read as it is now by the open source: the refresh of a cache re-renders the
// changed rows' tiles through it (docs/freshness.md).
func TestSourceSeesEditsInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plots.gpkg")
	w, err := gpkg.Create(path, "plots", 3857, "POLYGON", []feature.Field{{Name: "fid", Type: feature.FieldOID}, {Name: "name", Type: feature.FieldString}})
	if err != nil {
		t.Fatal(err)
	}
	square := func(x float64) orb.Bound { return orb.Bound{Min: orb.Point{x, 0}, Max: orb.Point{x + 100, 100}} }
	for i := range 4 {
		if err := w.Add([]any{int64(i + 1), "p"}, square(float64(i)*1000).ToPolygon()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gpkg.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	src, err := f.Source(context.Background(), "plots")
	if err != nil {
		t.Fatal(err)
	}
	read := func() (name string, b orb.Bound) {
		t.Helper()
		err := src.Scan(context.Background(), &feature.Query{IDs: []int64{1}}, func(ft *feature.Feature) error {
			name, b = ft.Values[1].(string), ft.Geom.Bound()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return name, b
	}
	if name, b := read(); name != "p" || b != square(0) {
		t.Fatalf("before the edit: %q %v", name, b)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := geomblob.Encode(square(500_000).ToPolygon(), 3857)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE plots SET geom = ?, name = 'moved' WHERE fid = 1`, g); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if name, b := read(); name != "moved" || b != square(500_000) {
		t.Errorf("after the edit in place: %q %v, want \"moved\" %v", name, b, square(500_000))
	}
}
