package geojson_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/proj"
)

func TestOpen(t *testing.T) {
	f, err := geojson.Open(filepath.Join("testdata", "places.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name string
		typ  feature.FieldType
	}{
		{"OBJECTID", feature.FieldOID}, {"name", feature.FieldString}, {"population", feature.FieldInteger},
		{"area_km2", feature.FieldDouble}, {"capital", feature.FieldSmallInteger}, {"note", feature.FieldString},
	}
	if len(f.Fields) != len(want) {
		t.Fatalf("fields = %+v", f.Fields)
	}
	for i, w := range want {
		if f.Fields[i].Name != w.name || f.Fields[i].Type != w.typ {
			t.Errorf("field %d = %s %v, want %s %v", i, f.Fields[i].Name, f.Fields[i].Type, w.name, w.typ)
		}
	}
	if f.GeometryType != feature.Point || f.Name != "places" {
		t.Errorf("geometry type %v name %q", f.GeometryType, f.Name)
	}

	l, err := f.ReadLayer(proj.SR{WKID: 3857})
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 3 || l.GeometryType() != feature.Point {
		t.Fatalf("Len %d", l.Len())
	}
	paris, ok := l.ByID(10)
	if !ok {
		t.Fatal("no feature 10")
	}
	want3857 := proj.ToMercator(orb.Point{2.3522, 48.8566})
	if p := paris.Geom.(orb.Point); math.Abs(p[0]-want3857[0]) > 1e-6 || math.Abs(p[1]-want3857[1]) > 1e-6 {
		t.Errorf("Paris at %v, want %v", p, want3857)
	}
	if paris.Values[1] != "Paris" || paris.Values[2] != int64(2102650) || paris.Values[3] != 105.4 || paris.Values[4] != int64(1) || paris.Values[5] != nil {
		t.Errorf("Paris values = %#v", paris.Values)
	}
	if nowhere, _ := l.ByID(30); nowhere.Geom != nil || nowhere.Values[2] != nil || nowhere.Values[3] != 1.0 {
		t.Errorf("Nowhere = %#v", nowhere)
	}
	// reading again starts from the original coordinates
	l2, err := f.ReadLayer(proj.SR{WKID: 4326})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := l2.ByID(10); p.Geom.(orb.Point) != (orb.Point{2.3522, 48.8566}) {
		t.Errorf("second read = %v", p.Geom)
	}
	if a := f.ReadAttributes(); a.Len() != 3 || a.GeometryType() != feature.None {
		t.Errorf("attributes Len %d", a.Len())
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, body string }{
		{"not json", "{"},
		{"not a collection", `{"type": "Feature", "geometry": null, "properties": {}}`},
	}
	for _, tc := range tests {
		p := filepath.Join(dir, tc.name+".geojson")
		if err := os.WriteFile(p, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := geojson.Open(p); !errors.Is(err, geojson.ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", tc.name, err)
		}
	}
	if _, err := geojson.Open(filepath.Join(dir, "missing.geojson")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

// Features without usable ids are numbered by position.
func TestPositionalIDs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.geojson")
	body := `{"type": "FeatureCollection", "features": [
		{"type": "Feature", "id": "a", "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, "properties": {"k": 1}},
		{"type": "Feature", "geometry": {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]]]}, "properties": {"k": "x"}}]}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := geojson.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.ReadLayer(proj.SR{WKID: 4326})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.ByID(2); !ok || l.GeometryType() != feature.Polyline || f.Fields[1].Type != feature.FieldString {
		t.Errorf("ids/types wrong: %v %+v", l.GeometryType(), f.Fields)
	}
	if v, _ := l.ByID(1); v.Values[1] != "1" {
		t.Errorf("mixed-type value = %#v, want \"1\"", v.Values[1])
	}
}
