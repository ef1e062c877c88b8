package feature_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/proj"
)

func load(tb testing.TB, file, table string, wkid int) *feature.Layer {
	tb.Helper()
	f, err := gpkg.Open(filepath.Join("..", "..", "data", "sample", file))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	l, err := f.ReadLayer(table, proj.SR{WKID: wkid})
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

func TestLayerBasics(t *testing.T) {
	l := load(t, "world_countries_50m_3857.gpkg", "countries", 3857)
	if l.Len() != 241 || l.GeometryType() != feature.Polygon || l.SR().WKID != 3857 || l.Name() != "countries" {
		t.Fatalf("Len %d type %v SR %v name %q", l.Len(), l.GeometryType(), l.SR(), l.Name())
	}
	fields := l.Fields()
	if len(fields) != 3 || fields[0].Type != feature.FieldOID || fields[2].Name != "NAME" || fields[2].Type != feature.FieldString {
		t.Errorf("fields = %+v", fields)
	}
	if l.FieldIndex("name") != 2 || l.FieldIndex("nope") != -1 {
		t.Errorf("FieldIndex(name) = %d", l.FieldIndex("name"))
	}
	if _, ok := l.ByID(0); ok {
		t.Error("ByID(0) found a feature")
	}
	f, ok := l.ByID(241)
	if !ok || f.ID != 241 {
		t.Fatalf("ByID(241) = %v, %v", f, ok)
	}
	// Paris is in France (fid 161) and the search around it finds France.
	paris := proj.ToMercator(orb.Point{2.35, 48.86})
	found := false
	l.Search(orb.Bound{Min: paris, Max: paris}, func(f *feature.Feature) bool {
		if f.Values[2] == "France" {
			found = true
		}
		return true
	})
	if !found {
		t.Error("a search at Paris did not find France")
	}
}

func TestSearchAllocatesNothing(t *testing.T) {
	l := load(t, "us_counties_10m_3857.gpkg", "counties", 3857)
	b := proj.Bound(orb.Bound{Min: orb.Point{-100, 30}, Max: orb.Point{-90, 40}}, proj.ToMercator)
	n := 0
	fn := func(*feature.Feature) bool { n++; return true }
	allocs := testing.AllocsPerRun(100, func() { l.Search(b, fn) })
	if allocs != 0 {
		t.Errorf("Search allocated %.1f times per call", allocs)
	}
	if n == 0 {
		t.Error("the search found nothing")
	}
}

// BenchmarkSearch queries boxes covering 1% of the world extent (a tenth
// of its width and height) at random positions over the world countries
// (Web Mercator), counting the features found.
func BenchmarkSearch(b *testing.B) {
	for _, tc := range []struct{ file, table string }{
		{"world_countries_50m_3857.gpkg", "countries"},
		{"us_counties_10m_3857.gpkg", "counties"},
	} {
		b.Run(tc.table, func(b *testing.B) {
			l := load(b, tc.file, tc.table, 3857)
			const world = 20037508.342789244
			r := rand.New(rand.NewPCG(7, 7))
			boxes := make([]orb.Bound, 1024)
			for i := range boxes {
				x, y := (r.Float64()*1.8-0.9)*world, (r.Float64()*1.8-0.9)*world
				boxes[i] = orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x + 0.2*world, y + 0.2*world}}
			}
			found := 0
			fn := func(*feature.Feature) bool { found++; return true }
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				l.Search(boxes[i%len(boxes)], fn)
			}
			b.ReportMetric(float64(found)/float64(b.N), "features/op")
		})
	}
}
