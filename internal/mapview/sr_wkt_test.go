package mapview_test

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

func wktFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../proj/testdata/srs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSOAPSpatialReferenceWKT: a SOAP request's SpatialReference given only by WKT (a
// ProjectedCoordinateSystem or GeographicCoordinateSystem with a WKT child, as SOAP clients
// copy it from a service's description) goes through the same recognition as REST's: in any
// build, the Esri, OGC WKT1 and WKT2 texts of Web Mercator draw a 4326 map in Web Mercator,
// described by its WKID; text that is not a WKT is a bad request saying so.
func TestSOAPSpatialReferenceWKT(t *testing.T) {
	m := fakeMap{sr: proj.SR{WKID: 4326}, ext: orb.Bound{Min: orb.Point{-180, -85}, Max: orb.Point{180, 85}}, sys: proj.NewSystems(0)}
	for file, wkid := range map[string]int{
		"102100.arcgis-js-sdk.txt":           102100,
		"3857.arcgis-server-10.7.txt":        3857,
		"3857.gdal-wkt1.txt":                 3857,
		"3857.gdal-wkt2.txt":                 3857,
		"3857.qgis-wkt2-2019-simplified.txt": 3857,
	} {
		in := &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKT: ptr(wktFile(t, file))}}
		v, err := mapview.Resolve(m, &gisxml.MapDescription{SpatialReference: in, MapArea: extent(-1e6, -1e6, 1e6, 1e6)}, display(200, 200, 96), mapview.Limits{})
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if v.SR.WKID != wkid || v.MetersPerUnit != 1 || math.Abs(v.Extent.Max[0]-1e6) > 1e-6 {
			t.Errorf("%s: view in %v, %g m a unit, extent %v", file, v.SR, v.MetersPerUnit, v.Extent)
		}
		f := mapview.SpatialReference(v.SR).SpatialReferencePart()
		if f.WKID == nil || *f.WKID != wkid || f.LatestWKID == nil || *f.LatestWKID != 3857 {
			t.Errorf("%s: described as WKID %v latest %v", file, f.WKID, f.LatestWKID)
		}
	}
	geo := &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKT: ptr(wktFile(t, "4326.gdal-wkt2-pretty.txt"))}}
	if sr := mapview.SR(geo); sr.WKID != proj.WGS84 {
		t.Errorf("SR of GDAL's WKT2 of 4326 = %+v, want WKID 4326", sr)
	}
	for _, text := range []string{"foo", "zz", "WGS", "EPSG:3857"} {
		in := &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKT: ptr(text)}}
		_, err := mapview.Resolve(m, &gisxml.MapDescription{SpatialReference: in}, display(10, 10, 96), mapview.Limits{})
		var bad *mapview.BadRequestError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "invalid spatial reference") {
			t.Errorf("WKT %q: err = %v, want a bad request: invalid spatial reference", text, err)
		}
	}
}
