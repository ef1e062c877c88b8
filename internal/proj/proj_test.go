package proj_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func TestToMercator(t *testing.T) {
	tests := []struct {
		name string
		in   orb.Point
		want orb.Point
	}{
		{"origin", orb.Point{0, 0}, orb.Point{0, 0}},
		{"antimeridian", orb.Point{180, 0}, orb.Point{20037508.342789244, 0}},
		{"west antimeridian", orb.Point{-180, 0}, orb.Point{-20037508.342789244, 0}},
		{"max latitude", orb.Point{0, proj.MaxLatitude}, orb.Point{0, 20037508.342789244}},
		{"north pole clamped", orb.Point{0, 90}, orb.Point{0, 20037508.342789244}},
		{"south pole clamped", orb.Point{0, -90}, orb.Point{0, -20037508.342789244}},
		{"new york", orb.Point{-74.006, 40.7128}, orb.Point{-8238310.24, 4970071.58}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := proj.ToMercator(tc.in)
			if !near(got[0], tc.want[0], 1) || !near(got[1], tc.want[1], 1) {
				t.Fatalf("ToMercator(%v) = %v, want %v", tc.in, got, tc.want)
			}
			back := proj.FromMercator(got)
			if math.Abs(tc.in[1]) <= proj.MaxLatitude && (!near(back[0], tc.in[0], 1e-9) || !near(back[1], tc.in[1], 1e-9)) {
				t.Fatalf("round trip %v → %v → %v", tc.in, got, back)
			}
		})
	}
	if got := proj.ToMercator(orb.Point{180, 0})[0]; got != 20037508.342789244 {
		t.Errorf("x(180) = %.9f, want 20037508.342789244 exactly", got)
	}
}

func TestSR(t *testing.T) {
	tests := []struct {
		wkid       int
		geographic bool
		mercator   bool
		units      string
		latest     int
		hasWKT     bool
	}{
		{4326, true, false, "degrees", 4326, true},
		{3857, false, true, "meters", 3857, true},
		{102100, false, true, "meters", 3857, true},
		{900913, false, true, "meters", 3857, true},
		{102113, false, true, "meters", 3857, true},
		{32633, false, false, "meters", 32633, false},
	}
	for _, tc := range tests {
		sr := proj.SR{WKID: tc.wkid}
		if sr.IsGeographic() != tc.geographic || sr.IsWebMercator() != tc.mercator || sr.Units() != tc.units ||
			sr.LatestWKID() != tc.latest || (sr.WKT() != "") != tc.hasWKT {
			t.Errorf("SR %d: geographic=%v mercator=%v units=%q latest=%d wkt=%q", tc.wkid,
				sr.IsGeographic(), sr.IsWebMercator(), sr.Units(), sr.LatestWKID(), sr.WKT())
		}
	}
	if w := (proj.SR{WKID: 102100}).WKT(); !strings.HasPrefix(w, `PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS`) {
		t.Errorf("WKT(102100) = %q", w)
	}
	if w := (proj.SR{WKID: 4326}).WKT(); !strings.HasPrefix(w, `GEOGCS["GCS_WGS_1984"`) {
		t.Errorf("WKT(4326) = %q", w)
	}
}

func TestTransform(t *testing.T) {
	tests := []struct {
		from, to int
		in, want orb.Point
		err      bool
	}{
		{4326, 3857, orb.Point{180, 0}, orb.Point{20037508.342789244, 0}, false},
		{4326, 102100, orb.Point{180, 0}, orb.Point{20037508.342789244, 0}, false},
		{3857, 4326, orb.Point{20037508.342789244, 0}, orb.Point{180, 0}, false},
		{900913, 4326, orb.Point{-20037508.342789244, 20037508.342789244}, orb.Point{-180, proj.MaxLatitude}, false},
		{3857, 102100, orb.Point{1, 2}, orb.Point{1, 2}, false},
		{4326, 4326, orb.Point{1, 2}, orb.Point{1, 2}, false},
		{99999, 99999, orb.Point{}, orb.Point{}, true},
		{4326, 99999, orb.Point{}, orb.Point{}, true},
	}
	for _, tc := range tests {
		fn, err := proj.Transform(proj.SR{WKID: tc.from}, proj.SR{WKID: tc.to})
		if tc.err {
			if !errors.Is(err, proj.ErrUnsupported) {
				t.Errorf("Transform(%d, %d) error = %v, want ErrUnsupported", tc.from, tc.to, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Transform(%d, %d): %v", tc.from, tc.to, err)
		}
		got := fn(tc.in)
		if !near(got[0], tc.want[0], 1e-6) || !near(got[1], tc.want[1], 1e-6) {
			t.Errorf("Transform(%d, %d)(%v) = %v, want %v", tc.from, tc.to, tc.in, got, tc.want)
		}
	}
}

func TestGeometryAndBound(t *testing.T) {
	poly := orb.MultiPolygon{{{{-180, -85}, {180, -85}, {180, 85}, {-180, 85}, {-180, -85}}}}
	got := proj.Geometry(poly, proj.ToMercator).(orb.MultiPolygon)
	if !near(got[0][0][1][0], 20037508.342789244, 1e-6) {
		t.Errorf("projected corner = %v", got[0][0][1])
	}
	b := proj.Bound(orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}}, proj.ToMercator)
	want := orb.Bound{Min: orb.Point{-proj.MaxExtent, -proj.MaxExtent}, Max: orb.Point{proj.MaxExtent, proj.MaxExtent}}
	if !near(b.Min[0], want.Min[0], 1e-6) || !near(b.Max[1], want.Max[1], 1e-6) {
		t.Errorf("Bound = %v, want %v", b, want)
	}
	if g := proj.Geometry(orb.Point{180, 0}, proj.ToMercator).(orb.Point); !near(g[0], 20037508.342789244, 1e-6) {
		t.Errorf("point = %v", g)
	}
	if proj.Geometry(nil, proj.ToMercator) != nil {
		t.Error("nil geometry should stay nil")
	}
}

// TestSystems checks what every build knows: the built-in systems' descriptions, bounds along
// edges, and a clear error naming an unknown WKID.
func TestSystems(t *testing.T) {
	sys := proj.NewSystems(2)
	c, err := sys.CRS(proj.SR{WKID: 102100})
	if err != nil || c.Geographic || c.LatestWKID != 3857 || c.MetersPerUnit != 1 || !strings.Contains(c.WKT, "Web_Mercator") {
		t.Errorf("CRS(102100) = %+v, %v", c, err)
	}
	tr, err := sys.Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: 3857})
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.Bound(orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}})
	if err != nil || !near(b.Max[0], proj.MaxExtent, 1e-6) || !near(b.Max[1], proj.MaxExtent, 1e-6) {
		t.Errorf("Bound = %v, %v", b, err)
	}
	g, err := tr.Geometry(orb.LineString{{0, 0}, {180, 0}})
	if err != nil || !near(g.(orb.LineString)[1][0], proj.MaxExtent, 1e-6) {
		t.Errorf("Geometry = %v, %v", g, err)
	}
	if _, err := sys.CRS(proj.SR{WKID: 99999}); !errors.Is(err, proj.ErrUnsupported) || !strings.Contains(err.Error(), "WKID 99999") {
		t.Errorf("CRS(99999) error = %v, want ErrUnsupported naming WKID 99999", err)
	}
	if _, err := sys.CRS(proj.SR{}); !errors.Is(err, proj.ErrUnsupported) {
		t.Errorf("CRS(zero) error = %v", err)
	}
}
