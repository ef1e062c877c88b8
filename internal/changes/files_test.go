package changes_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
)

func openState(t *testing.T) *changes.FileState {
	t.Helper()
	s, err := changes.OpenFileState(filepath.Join(t.TempDir(), "state.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// makeGeoPackage writes n square parcels, fid i at (10i, 0), 5 wide.
func makeGeoPackage(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "parcels.gpkg")
	w, err := gpkg.Create(path, "parcels", 3857, "POLYGON", []feature.Field{{Name: "fid", Type: feature.FieldOID}, {Name: "name", Type: feature.FieldString}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := w.Add([]any{int64(i), fmt.Sprint("p", i)}, box(float64(10*i), 0, 5).ToPolygon()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func scanGeoPackage(t *testing.T, s *changes.FileState, path string) *changes.FileScan {
	t.Helper()
	scan, err := s.GeoPackage(context.Background(), "parcels", path, "parcels")
	if err != nil {
		t.Fatal(err)
	}
	return scan
}

// Rows changed in place are found by their digests: exactly their envelopes are dirty, never the
// whole layer.
func TestGeoPackageRowDigests(t *testing.T) {
	s := openState(t)
	path := makeGeoPackage(t, 50)
	scan := scanGeoPackage(t, s, path)
	if !scan.Baseline || scan.Dirty.Whole || len(scan.Dirty.Envelopes) != 0 {
		t.Fatalf("first scan: %+v, want a baseline with nothing dirty", scan.Dirty)
	}
	if err := s.Ack(context.Background(), scan); err != nil {
		t.Fatal(err)
	}
	if scan := scanGeoPackage(t, s, path); !scan.Unchanged || len(scan.Dirty.Envelopes) != 0 {
		t.Fatalf("untouched file: %+v, want unchanged", scan)
	}

	moved, err := geomblob.Encode(box(1000, 1000, 5).ToPolygon(), 3857)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	inserted, _ := geomblob.Encode(box(2000, 0, 5).ToPolygon(), 3857)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE parcels SET name = 'renamed' WHERE fid = 2`, nil},
		{`UPDATE parcels SET geom = ? WHERE fid = 3`, []any{moved}},
		{`DELETE FROM parcels WHERE fid = 4`, nil},
		{`INSERT INTO parcels (fid, name, geom) VALUES (60, 'new', ?)`, []any{inserted}},
		{`UPDATE parcels SET name = name WHERE fid = 5`, nil}, // written, not changed
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	// The stamp is size and modification time: make sure the time moved on coarse clocks.
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(path, future, future)

	scan = scanGeoPackage(t, s, path)
	want := []orb.Bound{
		box(20, 0, 5),                     // fid 2 renamed: its label may change
		box(30, 0, 5), box(1000, 1000, 5), // fid 3 moved: where it was and where it went
		box(40, 0, 5),   // fid 4 deleted
		box(2000, 0, 5), // fid 60 inserted
	}
	if scan.Dirty.Whole || scan.Changed != 4 || !sameBounds(scan.Dirty.Envelopes, want) {
		t.Fatalf("after 4 edits: changed %d, dirty %+v\nwant 4, %v", scan.Changed, scan.Dirty, want)
	}
	// Not acknowledged: a second scan finds the same.
	if again := scanGeoPackage(t, s, path); !sameBounds(again.Dirty.Envelopes, want) {
		t.Fatalf("unacknowledged scan lost: %v", again.Dirty.Envelopes)
	}
	if err := s.Ack(context.Background(), scan); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, future.Add(time.Second), future.Add(time.Second))
	if scan := scanGeoPackage(t, s, path); scan.Unchanged || scan.Changed != 0 || len(scan.Dirty.Envelopes) != 0 {
		t.Fatalf("after the ack, touched only: %+v, want read and nothing dirty", scan)
	}
}

func sameBounds(a, b []orb.Bound) bool {
	seen := map[orb.Bound]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		seen[x]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// A GeoJSON file replaced with other bytes makes its whole layer dirty; the same bytes written
// again do not.
func TestGeoJSONReplacedIsWhollyDirty(t *testing.T) {
	s := openState(t)
	path := filepath.Join(t.TempDir(), "roads.geojson")
	write := func(body string, at time.Time) {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, at, at)
	}
	scan := func() *changes.FileScan {
		sc, err := s.GeoJSON(context.Background(), "roads", path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Ack(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
		return sc
	}
	now := time.Now()
	write(`{"type":"FeatureCollection","features":[]}`, now)
	if sc := scan(); !sc.Baseline || sc.Dirty.Whole {
		t.Fatalf("first scan: %+v", sc)
	}
	write(`{"type":"FeatureCollection","features":[]}`, now.Add(time.Second))
	if sc := scan(); sc.Dirty.Whole {
		t.Fatal("the same bytes written again made the layer dirty")
	}
	write(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{}}]}`, now.Add(2*time.Second))
	if sc := scan(); !sc.Dirty.Whole {
		t.Fatal("a replaced file did not make the layer dirty")
	}
	if sc := scan(); sc.Dirty.Whole || !sc.Unchanged {
		t.Fatalf("after the ack: %+v, want unchanged", sc)
	}
}

// BenchmarkGeoPackageRescan is one scan of a 100,000-row GeoPackage whose stamp moved but whose
// rows did not: the cost of finding the few changed rows of a large file.
func BenchmarkGeoPackageRescan(b *testing.B) {
	path := filepath.Join(b.TempDir(), "parcels.gpkg")
	w, err := gpkg.Create(path, "parcels", 3857, "POLYGON", []feature.Field{{Name: "fid", Type: feature.FieldOID}, {Name: "name", Type: feature.FieldString}})
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= 100_000; i++ {
		if err := w.Add([]any{int64(i), fmt.Sprint("parcel ", i)}, box(float64(10*i), 0, 5).ToPolygon()); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	s, err := changes.OpenFileState(filepath.Join(b.TempDir(), "state.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	scan, err := s.GeoPackage(ctx, "parcels", path, "parcels")
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Ack(ctx, scan); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		at := time.Now().Add(time.Duration(i+1) * time.Second)
		os.Chtimes(path, at, at)
		scan, err := s.GeoPackage(ctx, "parcels", path, "parcels")
		if err != nil || scan.Unchanged || scan.Changed != 0 {
			b.Fatalf("rescan: %+v %v", scan, err)
		}
	}
}
