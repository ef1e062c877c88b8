package gpkg_test

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/proj"
)

func sample(name string) string { return filepath.Join("..", "..", "..", "data", "sample", name) }

func open(t *testing.T, name string) *gpkg.File {
	t.Helper()
	f, err := gpkg.Open(sample(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestCatalogue(t *testing.T) {
	tests := []struct {
		file, table, geomCol string
		gt                   feature.GeometryType
		wkid                 int
		fields               []string
	}{
		{"world_countries_50m_3857.gpkg", "countries", "geom", feature.Polygon, 3857, []string{"fid", "ISO_N3", "NAME"}},
		{"world_country_points_50m_4326.gpkg", "country_points", "geom", feature.Point, 4326, []string{"fid", "NAME", "ISO_N3"}},
		{"us_counties_10m_4326.gpkg", "counties", "geom", feature.Polygon, 4326, []string{"fid", "GEOID", "NAME", "STATE", "STATEFP"}},
		{"us_states_10m_3857.gpkg", "states", "geom", feature.Polygon, 3857, []string{"fid", "NAME", "STATEFP"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			f := open(t, tc.file)
			if len(f.Tables()) != 1 {
				t.Fatalf("got %d tables, want 1", len(f.Tables()))
			}
			tb, ok := f.Table(tc.table)
			if !ok {
				t.Fatalf("table %s missing", tc.table)
			}
			if tb.GeometryColumn != tc.geomCol || tb.GeometryType != tc.gt || tb.SR.WKID != tc.wkid {
				t.Errorf("got column %q type %v SR %v", tb.GeometryColumn, tb.GeometryType, tb.SR)
			}
			if want := "rtree_" + tc.table + "_geom"; tb.RTree != want {
				t.Errorf("RTree = %q, want %q", tb.RTree, want)
			}
			var names []string
			for _, fl := range tb.Fields {
				names = append(names, fl.Name)
			}
			if !slices.Equal(names, tc.fields) {
				t.Errorf("fields = %v, want %v", names, tc.fields)
			}
			if tb.OIDField != "fid" || tb.Fields[0].Type != feature.FieldOID || tb.Fields[0].Nullable {
				t.Errorf("OID field = %q %+v", tb.OIDField, tb.Fields[0])
			}
			if fl, _ := tb.Field("name"); fl.Type != feature.FieldString || !fl.Nullable {
				t.Errorf("NAME field = %+v", fl)
			}
		})
	}
}

func TestOpenMissing(t *testing.T) {
	if _, err := gpkg.Open(filepath.Join(t.TempDir(), "nope.gpkg")); err == nil {
		t.Fatal("opening a missing file succeeded")
	}
}

func TestReadLayer(t *testing.T) {
	tests := []struct {
		file, table string
		to          int
		count       int
		extent      orb.Bound
	}{
		{"world_countries_50m_3857.gpkg", "countries", 3857, 241,
			orb.Bound{Min: orb.Point{-20037508.34, -20037508.34}, Max: orb.Point{20037508.34, 18394384.32}}},
		{"world_countries_50m_4326.gpkg", "countries", 4326, 241,
			orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 83.6}}},
		// reprojected at load: the 4326 file served in Web Mercator
		{"world_countries_50m_4326.gpkg", "countries", 102100, 241,
			orb.Bound{Min: orb.Point{-20037508.34, -20037508.34}, Max: orb.Point{20037508.34, 18394384.32}}},
		{"us_states_10m_3857.gpkg", "states", 3857, 56,
			orb.Bound{Min: orb.Point{-19941392, -1617144.5}, Max: orb.Point{20012450, 11523913}}},
		{"us_counties_10m_4326.gpkg", "counties", 4326, 3231,
			orb.Bound{Min: orb.Point{-179.1366, -14.3739}, Max: orb.Point{179.7749, 71.3526}}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			l, err := open(t, tc.file).ReadLayer(tc.table, proj.SR{WKID: tc.to})
			if err != nil {
				t.Fatal(err)
			}
			if l.Len() != tc.count {
				t.Errorf("Len = %d, want %d", l.Len(), tc.count)
			}
			e := l.Info().Extent
			tol := math.Max(e.Max[0]-e.Min[0], e.Max[1]-e.Min[1]) * 1e-5
			for i, got := range []float64{e.Min[0], e.Min[1], e.Max[0], e.Max[1]} {
				want := []float64{tc.extent.Min[0], tc.extent.Min[1], tc.extent.Max[0], tc.extent.Max[1]}[i]
				if math.Abs(got-want) > tol {
					t.Errorf("extent = %v, want %v", e, tc.extent)
					break
				}
			}
		})
	}
}

func TestReadValues(t *testing.T) {
	l, err := open(t, "world_countries_50m_3857.gpkg").ReadLayer("countries", proj.SR{WKID: 3857})
	if err != nil {
		t.Fatal(err)
	}
	france, ok := l.ByID(161)
	if !ok {
		t.Fatal("no feature 161")
	}
	name, iso := france.Values[l.FieldIndex("NAME")], france.Values[l.FieldIndex("ISO_N3")]
	if name != "France" || iso != "250" || france.Values[0] != int64(161) {
		t.Errorf("feature 161 = %v", france.Values)
	}
	if _, ok := france.Geom.(orb.MultiPolygon); !ok {
		t.Errorf("geometry is %T, want MultiPolygon", france.Geom)
	}
	if l.VertexCount() != 99292 {
		t.Errorf("VertexCount = %d, want 99292", l.VertexCount())
	}
	kosovo, _ := l.ByID(131)
	if v := kosovo.Values[l.FieldIndex("ISO_N3")]; v != nil {
		t.Errorf("Kosovo ISO_N3 = %#v, want nil (NULL)", v)
	}
}

// Falls Church (GEOID 51610) has a NULL geometry: the row is kept, without
// geometry, and the index never returns it.
func TestNullGeometry(t *testing.T) {
	l, err := open(t, "us_counties_10m_3857.gpkg").ReadLayer("counties", proj.SR{WKID: 3857})
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := l.ByID(630)
	if !ok {
		t.Fatal("Falls Church (fid 630) missing")
	}
	if fc.Geom != nil || fc.Values[l.FieldIndex("GEOID")] != "51610" || !fc.Bound.IsEmpty() {
		t.Errorf("Falls Church = %+v", fc)
	}
	n := 0
	l.Search(l.Info().Extent, func(f *feature.Feature) bool {
		if f.ID == 630 {
			t.Error("Search returned the NULL-geometry feature")
		}
		n++
		return true
	})
	if n != 3230 {
		t.Errorf("Search over the full extent found %d, want 3230", n)
	}
}

// The file's own R-tree and the in-memory one agree.
func TestSearchMatchesFileIndex(t *testing.T) {
	f := open(t, "us_counties_10m_4326.gpkg")
	l, err := f.ReadLayer("counties", proj.SR{WKID: 4326})
	if err != nil {
		t.Fatal(err)
	}
	// Virginia around Falls Church / Washington DC
	b := orb.Bound{Min: orb.Point{-77.6, 38.6}, Max: orb.Point{-76.9, 39.1}}
	fileIDs, err := f.Search("counties", b)
	if err != nil {
		t.Fatal(err)
	}
	var memIDs []int64
	l.Search(b, func(ft *feature.Feature) bool { memIDs = append(memIDs, ft.ID); return true })
	slices.Sort(memIDs)
	// the file's R-tree stores float32-rounded boxes (outward), so it may
	// return a few more; every in-memory hit must be among them
	for _, id := range memIDs {
		if _, ok := slices.BinarySearch(fileIDs, id); !ok {
			t.Errorf("id %d found in memory but not in the file index", id)
		}
	}
	if len(memIDs) < 5 || len(fileIDs) > len(memIDs)+3 {
		t.Errorf("memory %d ids, file %d ids", len(memIDs), len(fileIDs))
	}
	var scanned []string
	if err := f.Scan("counties", &b, func(r *gpkg.Row) error {
		scanned = append(scanned, r.Values[2].(string))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(scanned) != len(fileIDs) || !slices.Contains(scanned, "Arlington") {
		t.Errorf("Scan found %v", scanned)
	}
}

func TestReadAttributes(t *testing.T) {
	l, err := open(t, "us_counties_10m_4326.gpkg").ReadAttributes("counties")
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 3231 || l.GeometryType() != feature.None || !l.Info().Extent.IsEmpty() {
		t.Errorf("Len %d type %v extent %v", l.Len(), l.GeometryType(), l.Info().Extent)
	}
	if f, _ := l.ByID(630); f.Geom != nil || f.Values[2] != "Falls Church" {
		t.Errorf("row 630 = %+v", f)
	}
}

func TestUnsupportedReprojection(t *testing.T) {
	_, err := open(t, "us_states_10m_4326.gpkg").ReadLayer("states", proj.SR{WKID: 99999})
	if !errors.Is(err, proj.ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported", err)
	}
}
