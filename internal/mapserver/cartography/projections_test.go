package cartography_test

import (
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// srOf is a request's spatial reference by WKID.
func srOf(wkid int) gisxml.SpatialReference {
	return &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: operation.Ptr(wkid)}}
}

// TestOtherSystemBuiltin: what every build answers about systems other than a map's — a Web
// Mercator map drawn and queried in 4326 (built in), and a clear client fault naming a WKID
// nobody knows.
func TestOtherSystemBuiltin(t *testing.T) {
	f, _ := newCartoFixture(t)
	disp := &gisxml.ImageDisplay{ImageWidth: 360, ImageHeight: 180, ImageDPI: 96}
	md := mapservertest.MapDesc(-180, -90, 180, 90, 0)
	md.SpatialReference = srOf(4326)
	r := mapservertest.Must[gisxml.ExportMapImageResponse](f, "world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md,
		ImageDescription: &gisxml.ImageDescription{ImageType: &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData}, ImageDisplay: disp}})
	ext := r.Result.Extent.(*gisxml.EnvelopeN)
	if wkid := *ext.SpatialReference.SpatialReferencePart().WKID; wkid != 4326 || ext.XMin != -180 || ext.XMax != 180 {
		t.Errorf("extent %v %v %v in WKID %d, want -180…180 in 4326", ext.XMin, ext.XMax, ext.YMax, wkid)
	}
	img := decodePNG(t, r.Result.ImageData)
	// Equirectangular: Brazil (-50, -10) is land, the mid Atlantic (-30, 0) sea.
	land, sea := pixel(img, 180-50, 90+10), pixel(img, 180-30, 90)
	if land == sea {
		t.Errorf("Brazil and the Atlantic have the same colour %v in the 4326 drawing", land)
	}
	for _, wkid := range []int{99999} {
		md := mapservertest.MapDesc(0, 0, 1, 1, 0)
		md.SpatialReference = srOf(wkid)
		msg := f.ClientFault("world", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: md, ImageDescription: &gisxml.ImageDescription{ImageDisplay: disp}})
		if !strings.Contains(msg, "WKID 99999") {
			t.Errorf("fault %q does not name WKID 99999", msg)
		}
		msg = f.ClientFault("usa", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 0, QueryFilter: &gisxml.QueryFilter{WhereClause: "1=1", OutputSpatialReference: srOf(wkid)}})
		if !strings.Contains(msg, "OutputSpatialReference") || !strings.Contains(msg, "WKID 99999") {
			t.Errorf("fault %q does not name OutputSpatialReference and WKID 99999", msg)
		}
	}
}
