package catalog_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

func openSamples(t *testing.T) *catalog.Catalog {
	t.Helper()
	c := catalogtest.Samples(t)
	return c
}

func nearBound(a, b orb.Bound, tol float64) bool {
	return math.Abs(a.Min[0]-b.Min[0]) <= tol && math.Abs(a.Min[1]-b.Min[1]) <= tol &&
		math.Abs(a.Max[0]-b.Max[0]) <= tol && math.Abs(a.Max[1]-b.Max[1]) <= tol
}

func TestSamples(t *testing.T) {
	c := openSamples(t)
	if n := len(c.Services()); n != 4 {
		t.Fatalf("%d services, want 4", n)
	}
	mercWorld := orb.Bound{Min: orb.Point{-20037508.34, -20037508.34}, Max: orb.Point{20037508.34, 18394384.32}}
	geoWorld := orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 83.6}}
	tests := []struct {
		service    string
		wkid       int
		layers     map[string]int // name → feature count
		fullExtent orb.Bound
		tol        float64
	}{
		{"world", 3857, map[string]int{"Countries": 241, "Country points": 241}, mercWorld, 1},
		{"WORLD_Geographic", 4326, map[string]int{"Countries": 241, "Country points": 241}, geoWorld, 0.001},
		{"usa", 3857, map[string]int{"States": 56, "Counties": 3231, "State facts": 56},
			orb.Bound{Min: orb.Point{-19941392, -1617144.5}, Max: orb.Point{20012450, 11523913}}, 10},
		{"usa_geographic", 4326, map[string]int{"States": 56, "Counties": 3231},
			orb.Bound{Min: orb.Point{-179.1366, -14.3739}, Max: orb.Point{179.7749, 71.3526}}, 0.001},
	}
	for _, tc := range tests {
		t.Run(tc.service, func(t *testing.T) {
			s, ok := c.Service(tc.service)
			if !ok {
				t.Fatalf("service %q not found", tc.service)
			}
			m, ok := s.Map("")
			if !ok || m != s.DefaultMap() || m.Name != "Layers" {
				t.Fatalf("default map = %v", m)
			}
			if m2, ok := s.Map("layers"); !ok || m2 != m {
				t.Error("map lookup is not case-insensitive")
			}
			if m.SR.WKID != tc.wkid {
				t.Errorf("SR = %v, want %d", m.SR, tc.wkid)
			}
			if len(m.Layers) != len(tc.layers) {
				t.Fatalf("%d layers, want %d", len(m.Layers), len(tc.layers))
			}
			for _, l := range m.Layers {
				if want := tc.layers[l.Name]; count(t, l.Data) != want {
					t.Errorf("layer %s has %d features, want %d", l.Name, count(t, l.Data), want)
				}
				if l.Data.Info().SR.WKID != tc.wkid || l.IDField != "fid" || l.DisplayField != "NAME" {
					t.Errorf("layer %s: SR %v IDField %q DisplayField %q", l.Name, l.Data.Info().SR, l.IDField, l.DisplayField)
				}
				if got, ok := m.Layer(l.ID); !ok || got != l {
					t.Errorf("Layer(%d) lookup failed", l.ID)
				}
			}
			if !nearBound(m.FullExtent, tc.fullExtent, tc.tol) {
				t.Errorf("full extent = %v, want %v", m.FullExtent, tc.fullExtent)
			}
		})
	}
}

func TestFieldsAndTables(t *testing.T) {
	c := openSamples(t)
	s, _ := c.Service("usa")
	m := s.DefaultMap()
	counties, ok := m.Layer(1)
	if !ok || counties.Name != "Counties" {
		t.Fatalf("layer 1 = %v", counties)
	}
	want := []struct{ name, alias string }{
		{"fid", "fid"}, {"GEOID", "County FIPS"}, {"NAME", "County"}, {"STATE", "State"}, {"STATEFP", "State FIPS"},
	}
	if len(counties.Fields) != len(want) {
		t.Fatalf("fields = %+v", counties.Fields)
	}
	for i, w := range want {
		f := counties.Fields[i]
		if f.Name != w.name || f.Alias != w.alias {
			t.Errorf("field %d = %s/%s, want %s/%s", i, f.Name, f.Alias, w.name, w.alias)
		}
		if got := counties.Data.Info().Fields[counties.FieldIndex[i]].Name; got != w.name {
			t.Errorf("FieldIndex[%d] points at %s", i, got)
		}
	}
	if counties.Fields[0].Type != feature.FieldOID || counties.Fields[1].Type != feature.FieldString {
		t.Errorf("field types %v %v", counties.Fields[0].Type, counties.Fields[1].Type)
	}
	// Falls Church keeps its row without geometry
	var fc []*feature.Feature
	_ = counties.Data.Scan(context.Background(), &feature.Query{IDs: []int64{630}}, func(f *feature.Feature) error { fc = append(fc, f); return nil })
	if len(fc) != 1 || fc[0].Geom != nil {
		t.Errorf("Falls Church = %+v", fc)
	}
	if len(m.Tables) != 1 {
		t.Fatalf("tables = %v", m.Tables)
	}
	tbl, ok := m.Table(2)
	if !ok || tbl.Name != "County attributes" || count(t, tbl.Data) != 3231 || tbl.Data.Info().GeometryType != feature.None || tbl.IDField != "fid" {
		t.Errorf("table 2 = %+v", tbl)
	}
	// the initial extent comes from the definition
	if m.InitialExtent.Min[0] != -14000000 || m.InitialExtent.Max[1] != 6500000 {
		t.Errorf("initial extent = %v", m.InitialExtent)
	}
	if _, ok := c.Service("nope"); ok {
		t.Error("unknown service found")
	}
	if _, ok := s.Map("nope"); ok {
		t.Error("unknown map found")
	}
}

// A 4326 GeoPackage served by a 3857 map is reprojected at load.
func TestReprojectedLayer(t *testing.T) {
	cfg := &servicedef.Config{Services: []*servicedef.Service{{
		Name: "x",
		Maps: []*servicedef.Map{{
			Name: "Layers", SpatialReference: proj.SR{WKID: 102100},
			Layers: []*servicedef.Layer{{
				ID: 0, Name: "Countries", GeometryType: feature.Polygon,
				Source: gpkg.Definition{File: filepath.Join("..", "..", "data", "sample", "world_countries_50m_4326.gpkg"), Table: "countries"},
			}},
		}},
	}}}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	s, _ := c.Service("x")
	l := s.DefaultMap().Layers[0]
	e := l.Extent
	if math.Abs(e.Max[0]-proj.MaxExtent) > 1 || math.Abs(e.Min[1]+proj.MaxExtent) > 1 || len(l.Fields) != 3 {
		t.Errorf("extent = %v, fields %+v", e, l.Fields)
	}
	if s.DefaultMap().InitialExtent != s.DefaultMap().FullExtent {
		t.Error("initial extent should default to the full extent")
	}
}

func TestGeoJSONLayer(t *testing.T) {
	cfg := &servicedef.Config{Services: []*servicedef.Service{{
		Name: "places",
		Maps: []*servicedef.Map{{
			Name: "Layers", SpatialReference: proj.SR{WKID: 3857},
			Layers: []*servicedef.Layer{{
				ID: 0, Name: "Places", GeometryType: feature.Point,
				Source: geojson.Definition{File: filepath.Join("..", "feature", "geojson", "testdata", "places.geojson")},
				Fields: []servicedef.Field{{Name: "name", Alias: "Place"}},
			}},
		}},
	}}}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	l := c.Services()[0].DefaultMap().Layers[0]
	if count(t, l.Data) != 3 || l.IDField != "OBJECTID" || len(l.Fields) != 2 || l.Fields[1].Alias != "Place" {
		t.Errorf("layer = %+v fields %+v", l, l.Fields)
	}
	paris := proj.ToMercator(orb.Point{2.3522, 48.8566})
	if !nearBound(l.Extent, orb.Bound{Min: orb.Point{-8238310.24, 4970071.58}, Max: paris}, 1) {
		t.Errorf("extent = %v", l.Extent)
	}
}

func TestAttachmentsAndRelationships(t *testing.T) {
	c := openSamples(t)
	s, _ := c.Service("usa")
	m := s.DefaultMap()
	facts, ok := m.Layer(3)
	if !ok || facts.Name != "State facts" {
		t.Fatalf("layer 3 = %v", facts)
	}
	// make_state_facts.sh writes a note for each of the 13 western states and a swatch for Texas.
	if facts.Attachments == nil || count(t, facts.Attachments) != 15 {
		t.Fatalf("attachments = %v, want 15 rows", facts.Attachments)
	}
	for _, col := range servicedef.AttachmentColumns() {
		if facts.Attachments.Info().FieldIndex(col) < 0 {
			t.Errorf("attachments table lacks %s", col)
		}
	}
	if counties, _ := m.Layer(1); counties.Attachments != nil {
		t.Error("the counties layer has attachments")
	}
	if len(m.Def.Relationships) != 3 || m.Def.Relationships[0].OriginKey != "STATEFP" {
		t.Errorf("relationships = %+v", m.Def.Relationships)
	}
}

// count returns how many features a source holds.
func count(t *testing.T, src feature.Source) int {
	t.Helper()
	n, err := src.Count(context.Background(), &feature.Query{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
