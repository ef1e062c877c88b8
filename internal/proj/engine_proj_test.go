//go:build proj

package proj_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// TestDescribePROJ checks what PROJ tells of a few systems: kind, unit, area of use, central
// meridian, Esri WKT; a WKT without a WKID; and the error for a WKID PROJ does not know.
func TestDescribePROJ(t *testing.T) {
	sys := proj.NewSystems(0)
	c, err := sys.CRS(proj.SR{WKID: 5070})
	if err != nil {
		t.Fatal(err)
	}
	if c.Geographic || c.MetersPerUnit != 1 || c.LonOrigin != -96 || !strings.HasPrefix(c.WKT, `PROJCS["NAD_1983_Contiguous_USA_Albers"`) ||
		!(c.Area.Min[0] < -124 && c.Area.Max[0] > -67 && c.Area.Min[1] < 25 && c.Area.Max[1] > 49) {
		t.Errorf("CRS(5070) = %+v", c)
	}
	ft, err := sys.CRS(proj.SR{WKID: 2263})
	if err != nil || math.Abs(ft.MetersPerUnit-1200.0/3937) > 1e-12 {
		t.Errorf("CRS(2263) unit = %v, %v; want US survey feet", ft.MetersPerUnit, err)
	}
	g, err := sys.CRS(proj.SR{WKID: 4267})
	if err != nil || !g.Geographic || g.MetersPerUnit != proj.MetersPerDegree {
		t.Errorf("CRS(4267) = %+v, %v", g, err)
	}
	esri, err := sys.CRS(proj.SR{WKID: 102003})
	if err != nil || esri.Geographic {
		t.Errorf("CRS(102003) = %+v, %v", esri, err)
	}
	// A system by its WKT only: the Esri WKT of 3035, as a client would send it.
	laea, err := sys.CRS(proj.SR{WKID: 3035})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := sys.Transformer(proj.SR{WKID: 4326}, proj.SR{Text: laea.WKT})
	if err != nil {
		t.Fatalf("Transformer to a WKT: %v", err)
	}
	p, err := tr.Point(orb.Point{10, 52})
	if err != nil || math.Abs(p[0]-4321000) > 0.01 || math.Abs(p[1]-3210000) > 0.01 {
		t.Errorf("4326 → WKT of 3035: (10, 52) → %v, %v", p, err)
	}
	if _, err := sys.CRS(proj.SR{WKID: 99999}); !errors.Is(err, proj.ErrUnsupported) || !strings.Contains(err.Error(), "WKID 99999") {
		t.Errorf("CRS(99999) error = %v", err)
	}
	if _, err := sys.CRS(proj.SR{Text: `PROJCS["nonsense"]`}); !errors.Is(err, proj.ErrUnsupported) {
		t.Errorf("CRS(bad WKT) error = %v", err)
	}
}

// PROJ tells the EPSG axis order: ETRS89-LAEA (3035), WGS 84 (4326) and ETRS89 geographic (4258)
// put northing or latitude first; UTM 33N (32633), Albers (5070) and Web Mercator easting first;
// an Esri code (102003), described by ESRI:n, is easting first.
func TestNorthFirstPROJ(t *testing.T) {
	sys := proj.NewSystems(0)
	for wkid, want := range map[int]bool{3035: true, 4326: true, 4258: true, 32633: false, 5070: false, 3857: false, 102003: false} {
		c, err := sys.CRS(proj.SR{WKID: wkid})
		if err != nil {
			t.Fatalf("%d: %v", wkid, err)
		}
		if c.NorthFirst != want {
			t.Errorf("%d: NorthFirst %v, want %v", wkid, c.NorthFirst, want)
		}
	}
}
