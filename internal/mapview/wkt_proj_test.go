//go:build proj

package mapview_test

import (
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// ogc3035 is LAEA Europe in OGC WKT1 (GDAL's flavour, as projinfo -o WKT1_GDAL writes it),
// without its authority codes: a system a client gives only as WKT.
const ogc3035 = `PROJCS["ETRS89-extended / LAEA Europe",GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",` +
	`SPHEROID["GRS 1980",6378137,298.257222101]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],` +
	`PROJECTION["Lambert_Azimuthal_Equal_Area"],PARAMETER["latitude_of_center",52],PARAMETER["longitude_of_center",10],` +
	`PARAMETER["false_easting",4321000],PARAMETER["false_northing",3210000],UNIT["metre",1]]`

// TestSpatialReferenceWKT: as ArcGIS, a response describes a system given by WKID with its WKID
// and its Esri WKT, and a system given only as WKT with its Esri WKT (PROJ's rewriting of the
// client's OGC text) and no WKID; the view a request in either resolves to carries it.
func TestSpatialReferenceWKT(t *testing.T) {
	sys := proj.NewSystems(0)
	m := fakeMap{sr: proj.SR{WKID: 3857}, ext: orb.Bound{Min: orb.Point{-100, -50}, Max: orb.Point{100, 50}}, sys: sys}
	for _, tc := range []struct {
		name     string
		in       gisxml.SpatialReference
		ext      *gisxml.MapExtent
		wkid     int // 0: none reported
		wktStart string
	}{
		{"WKID 5070", &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(5070)}},
			extent(-2e6, 0, 2e6, 3e6), 5070, `PROJCS["NAD_1983_Contiguous_USA_Albers",GEOGCS["GCS_North_American_1983"`},
		{"WKT only", &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKT: ptr(ogc3035)}},
			extent(2.3e6, 1.2e6, 7.4e6, 5.5e6), 0, `PROJCS["ETRS_1989_LAEA",GEOGCS["GCS_ETRS_1989"`},
		{"WKID 4269, geographic", &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptr(4269)}},
			extent(-120, 30, -70, 50), 4269, `GEOGCS["GCS_North_American_1983"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := mapview.Resolve(m, &gisxml.MapDescription{SpatialReference: tc.in, MapArea: tc.ext}, display(400, 300, 96), mapview.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			out := mapview.SpatialReference(v.SR)
			f := out.SpatialReferencePart()
			switch {
			case tc.wkid == 0 && (f.WKID != nil || f.LatestWKID != nil):
				t.Errorf("WKID %v, latest %v reported for a system given as WKT", *f.WKID, *f.LatestWKID)
			case tc.wkid != 0 && (f.WKID == nil || *f.WKID != tc.wkid):
				t.Errorf("WKID %v, want %d", f.WKID, tc.wkid)
			}
			if f.WKT == nil || !strings.HasPrefix(*f.WKT, tc.wktStart) {
				t.Errorf("WKT %s, want Esri's, starting %s", deref(f.WKT), tc.wktStart)
			}
			_, geographic := out.(*gisxml.GeographicCoordinateSystem)
			if want := strings.HasPrefix(tc.wktStart, "GEOGCS"); geographic != want {
				t.Errorf("described as %T", out)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
