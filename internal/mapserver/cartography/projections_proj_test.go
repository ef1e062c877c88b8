//go:build proj

package cartography_test

import (
	"math"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// exportIn draws a service's default map in the system wkid over the extent given in it.
func exportIn(t *testing.T, f *mapservertest.Fixture, service string, wkid int, ext orb.Bound, w, h int) *gisxml.MapImage {
	t.Helper()
	md := mapservertest.MapDesc(ext.Min[0], ext.Min[1], ext.Max[0], ext.Max[1], 0)
	md.SpatialReference = srOf(wkid)
	md.MapArea.(*gisxml.MapExtent).Extent.(*gisxml.EnvelopeN).SpatialReference = srOf(wkid)
	return mapservertest.Must[gisxml.ExportMapImageResponse](f, service, "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: w, ImageHeight: h, ImageDPI: 96}}}).Result
}

// TestProjectedGolden draws the USA (states and counties, stored in Web Mercator) in US
// National Albers (EPSG:5070) and Europe (world countries, Web Mercator) in LAEA Europe
// (EPSG:3035) through ExportMapImage, projected on the fly by PROJ, and compares with golden
// images (MAPFARM_UPDATE_GOLDEN=1 rewrites them); the answer's extent is in the asked system.
func TestProjectedGolden(t *testing.T) {
	f, _ := newCartoFixture(t)
	for _, tc := range []struct {
		name, service string
		wkid          int
		ext           orb.Bound
		w, h          int
	}{
		{"usa_5070", "usa", 5070, orb.Bound{Min: orb.Point{-2450000, 200000}, Max: orb.Point{2350000, 3250000}}, 480, 320},
		{"europe_3035", "world", 3035, orb.Bound{Min: orb.Point{2300000, 1200000}, Max: orb.Point{7400000, 5500000}}, 400, 336},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := exportIn(t, f, tc.service, tc.wkid, tc.ext, tc.w, tc.h)
			ext := img.Extent.(*gisxml.EnvelopeN)
			if wkid := *ext.SpatialReference.SpatialReferencePart().WKID; wkid != tc.wkid {
				t.Errorf("MapImage extent in WKID %d, want %d", wkid, tc.wkid)
			}
			if c := (orb.Bound{Min: orb.Point{ext.XMin, ext.YMin}, Max: orb.Point{ext.XMax, ext.YMax}}).Center(); math.Abs(c[0]-tc.ext.Center()[0]) > 1e-6 {
				t.Errorf("extent centre %v, want %v", c, tc.ext.Center())
			}
			checkGolden(t, tc.name, decodePNG(t, img.ImageData))
		})
	}
}

// TestProjectedOperations: the operations that take or return geometry in another system
// than the map's, with PROJ: query output (OutputSpatialReference) and input (a filter
// geometry in Lambert-93), Identify and Find in a view in 5070, ToMapPoints and
// FromMapPoints, ComputeScale in a system in US survey feet, ExportScaleBar.
func TestProjectedOperations(t *testing.T) {
	f, _ := newCartoFixture(t)
	sys := proj.NewSystems(0)
	to2154, err := sys.Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: 2154})
	if err != nil {
		t.Fatal(err)
	}
	paris, _ := to2154.Point(orb.Point{2.35, 48.85})

	// Output in Lambert-93: France's polygon lies around Paris's Lambert-93 coordinates.
	rs := mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "world", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.QueryFilter{
		WhereClause: "NAME = 'France'", SubFields: operation.Ptr("NAME, Shape"), OutputSpatialReference: srOf(2154)}}).Result
	if len(rs.Records) != 1 {
		t.Fatalf("%d records for France", len(rs.Records))
	}
	poly := rs.Records[0].Values[1].(*gisxml.PolygonN)
	env := poly.Extent.(*gisxml.EnvelopeN)
	if !(env.XMin < paris[0] && paris[0] < env.XMax && env.YMin < paris[1] && paris[1] < env.YMax) {
		t.Errorf("France in 2154: extent %v %v %v %v does not hold Paris %v", env.XMin, env.YMin, env.XMax, env.YMax, paris)
	}
	if wkid := *poly.SpatialReference.SpatialReferencePart().WKID; wkid != 2154 {
		t.Errorf("output geometry in WKID %d", wkid)
	}

	// Input in Lambert-93: a 10 km box around Paris finds France.
	box := &gisxml.EnvelopeN{XMin: paris[0] - 5000, YMin: paris[1] - 5000, XMax: paris[0] + 5000, YMax: paris[1] + 5000, SpatialReference: srOf(2154)}
	rs = mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "world", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.SpatialFilter{
		QueryFilter: gisxml.QueryFilter{SubFields: operation.Ptr("NAME")}, SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: box}}).Result
	if len(rs.Records) != 1 || rs.Records[0].Values[0] != "France" {
		t.Errorf("a box around Paris in 2154 found %v", rs.Records)
	}

	// A view of the USA in 5070: Identify a point in Kansas given in 5070, Find Utah.
	md := mapservertest.MapDesc(-2450000, 200000, 2350000, 3250000, 0)
	md.SpatialReference = srOf(5070)
	disp := &gisxml.ImageDisplay{ImageWidth: 480, ImageHeight: 320, ImageDPI: 96}
	to5070, err := sys.Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: 5070})
	if err != nil {
		t.Fatal(err)
	}
	kansas, _ := to5070.Point(orb.Point{-98.5, 38.5})
	ids := mapservertest.Must[gisxml.IdentifyResponse](f, "usa", "Identify", &gisxml.Identify{MapDescription: md, MapImageDisplay: disp,
		SearchShape: &gisxml.PointN{X: kansas[0], Y: kansas[1]}, Tolerance: 1, IdentifyOption: gisxml.IdentifyTopmost, LayerIDs: gisxml.ArrayOfInt{0}}).Result
	if len(ids) != 1 || ids[0].Name != "States" {
		t.Fatalf("Identify in 5070: %+v", ids)
	}
	shape := ids[0].Shape.(*gisxml.PolygonN)
	if e := shape.Extent.(*gisxml.EnvelopeN); !(e.XMin < kansas[0] && kansas[0] < e.XMax) || *shape.SpatialReference.SpatialReferencePart().WKID != 5070 {
		t.Errorf("Identify shape extent %v…%v (WKID %d) does not hold Kansas %v", e.XMin, e.XMax, *shape.SpatialReference.SpatialReferencePart().WKID, kansas)
	}
	found := mapservertest.Must[gisxml.FindResponse](f, "usa", "Find", &gisxml.Find{MapDescription: md, MapImageDisplay: disp, SearchString: "Utah", SearchFields: "NAME",
		FindOption: gisxml.FindAllLayers, LayerIDs: gisxml.ArrayOfInt{0}}).Result
	if len(found) != 1 || *found[0].Shape.(*gisxml.PolygonN).SpatialReference.SpatialReferencePart().WKID != 5070 {
		t.Errorf("Find in 5070: %+v", found)
	}

	// ToMapPoints: the image centre is the extent's centre in 5070; FromMapPoints takes a point
	// in 4326 (its own system) and gives the pixel it is drawn at in 5070.
	mp := mapservertest.Must[gisxml.ToMapPointsResponse](f, "usa", "ToMapPoints", &gisxml.ToMapPoints{MapDescription: md, MapImageDisplay: disp,
		ScreenXValues: gisxml.ArrayOfInt{240}, ScreenYValues: gisxml.ArrayOfInt{160}}).Result.(*gisxml.MultipointN)
	c := mp.PointArray[0].(*gisxml.PointN)
	if math.Abs(c.X+50000) > 1e-6 || math.Abs(c.Y-1725000) > 1e-6 || *mp.SpatialReference.SpatialReferencePart().WKID != 5070 {
		t.Errorf("ToMapPoints centre = %v, %v", c.X, c.Y)
	}
	px := mapservertest.Must[gisxml.FromMapPointsResponse](f, "usa", "FromMapPoints", &gisxml.FromMapPoints{MapDescription: md, MapImageDisplay: disp,
		MapPoints: &gisxml.MultipointN{PointArray: gisxml.ArrayOfPoint{&gisxml.PointN{X: -98.5, Y: 38.5}}, SpatialReference: srOf(4326)}})
	res := 4800000.0 / 480 // the extent is 4.8e6 m wide, taller than 3:2 so it keeps its width
	wantX, wantY := 240+(kansas[0]+50000)/res, 160-(kansas[1]-1725000)/res
	if math.Abs(float64(px.ScreenXValues[0])-wantX) > 1 || math.Abs(float64(px.ScreenYValues[0])-wantY) > 1 {
		t.Errorf("FromMapPoints Kansas = %d, %d; want %.1f, %.1f", px.ScreenXValues[0], px.ScreenYValues[0], wantX, wantY)
	}

	// ComputeScale in NY Long Island (US survey feet): 96,000 ft across 1000 px at 96 DPI.
	ny := mapservertest.MapDesc(900000, 150000, 996000, 198000, 0)
	ny.SpatialReference = srOf(2263)
	scale := mapservertest.Must[gisxml.ComputeScaleResponse](f, "usa", "ComputeScale", &gisxml.ComputeScale{MapDescription: ny,
		MapImageDisplay: &gisxml.ImageDisplay{ImageWidth: 1000, ImageHeight: 500, ImageDPI: 96}}).Result
	if want := 96000 * 1200.0 / 3937 / (1000.0 / 96 * 0.0254); math.Abs(scale-want) > 1e-6*want {
		t.Errorf("ComputeScale in 2263 = %.3f, want %.3f", scale, want)
	}
	// ExportScaleBar of the 5070 view.
	km := gisxml.Kilometers
	mapservertest.Must[gisxml.ExportScaleBarResponse](f, "usa", "ExportScaleBar", &gisxml.ExportScaleBar{
		ScaleBar:       &gisxml.AlternatingScaleBar{ScaleBarFields: gisxml.ScaleBarFields{Units: &km}},
		MapDescription: md, MapDisplay: disp,
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: 300, ImageHeight: 40, ImageDPI: 96}}})
}
