package limits_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
)

func ring(n int) *gisxml.PolygonN {
	pts := make(gisxml.ArrayOfPoint, n)
	for i := range pts {
		pts[i] = &gisxml.PointN{X: float64(i), Y: float64(i % 7)}
	}
	return &gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{{Path: gisxml.Path{PointArray: pts}}}}
}

func display(w, h int, dpi float64) *gisxml.ImageDescription {
	return &gisxml.ImageDescription{ImageDisplay: &gisxml.ImageDisplay{ImageWidth: w, ImageHeight: h, ImageDPI: dpi}}
}

// Each limit refuses the first request over it, naming the limit, its value and the element
// at fault; a request at the limit passes.
func TestCheck(t *testing.T) {
	lim := limits.Request{MaxVertices: 10, MaxIDs: 5, MaxStringBytes: 16, MaxImageWidth: 800, MaxImageHeight: 600, MaxImageDPI: 300}
	dpi := 301.0
	fields := strings.Repeat("A,", 9)
	for _, tc := range []struct {
		name  string
		op    string
		req   any
		limit limits.Name // "" when the request passes
		want  string
	}{
		{"vertices at the limit", "QueryFeatureCount", &gisxml.QueryFeatureCount{QueryFilter: &gisxml.SpatialFilter{FilterGeometry: ring(10)}}, "", ""},
		{"vertices over", "QueryFeatureCount", &gisxml.QueryFeatureCount{QueryFilter: &gisxml.SpatialFilter{FilterGeometry: ring(11)}},
			limits.Vertices, "QueryFeatureCount/QueryFilter/FilterGeometry/RingArray[0]/PointArray[10]: more than 10 vertices in the request's geometries; the limit is 10 (maxVertices)"},
		{"vertices summed over geometries", "Identify", &gisxml.Identify{SearchShape: ring(6), MapDescription: &gisxml.MapDescription{MapArea: &gisxml.MapExtent{}}},
			"", ""},
		{"ids over", "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: &gisxml.QueryFilter{FIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{1, 2, 3, 4, 5, 6}}}},
			limits.IDs, "QueryFeatureCount/QueryFilter/FIDSet/FIDArray: more than 5 ids in the request's id lists; the limit is 5 (maxIDs)"},
		{"screen values are not ids", "ToMapPoints", &gisxml.ToMapPoints{ScreenXValues: make(gisxml.ArrayOfInt, 50), ScreenYValues: make(gisxml.ArrayOfInt, 50)}, "", ""},
		{"where clause", "QueryFeatureCount", &gisxml.QueryFeatureCount{QueryFilter: &gisxml.QueryFilter{WhereClause: strings.Repeat("x", 17)}},
			limits.StringBytes, "QueryFeatureCount/QueryFilter/WhereClause: a string of 17 bytes is longer than the limit of 16 bytes (maxStringBytes)"},
		{"field list", "QueryFeatureCount", &gisxml.QueryFeatureCount{QueryFilter: &gisxml.QueryFilter{SubFields: &fields}},
			limits.StringBytes, "QueryFilter/SubFields: a string of 18 bytes"},
		{"image width", "ExportMapImage", &gisxml.ExportMapImage{ImageDescription: display(801, 10, 96)},
			limits.ImageWidth, "ExportMapImage/ImageDescription/ImageDisplay: 801×10 pixels is larger than the limit of 800×600 (maxImageWidth, maxImageHeight)"},
		{"image height", "ExportMapImage", &gisxml.ExportMapImage{ImageDescription: display(10, 601, 96)}, limits.ImageHeight, "10×601 pixels"},
		{"dpi 0 means 96", "ExportMapImage", &gisxml.ExportMapImage{ImageDescription: display(10, 10, 0)}, "", ""},
		{"dpi NaN", "ExportMapImage", &gisxml.ExportMapImage{ImageDescription: display(10, 10, math.NaN())}, limits.ImageDPI, "ImageDisplay/ImageDPI NaN is out of range: the limit is 1 to 300 DPI, 0 meaning 96 (maxImageDPI)"},
		{"dpi negative", "ExportMapImage", &gisxml.ExportMapImage{ImageDescription: display(10, 10, -96)}, limits.ImageDPI, "ImageDPI -96 is out of range"},
		{"map area dpi", "ExportMapImage", &gisxml.ExportMapImage{MapDescription: &gisxml.MapDescription{MapArea: &gisxml.CenterAndScale{DPI: &dpi}}},
			limits.ImageDPI, "ExportMapImage/MapDescription/MapArea/DPI 301 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := lim.Check(tc.op, tc.req)
			if tc.limit == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			name, ok := limits.Of(err)
			if !ok || name != tc.limit || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (limit %q), want %s containing %q", err, name, tc.limit, tc.want)
			}
			var le *limits.Error
			if !errors.As(err, &le) {
				t.Fatal("not a *limits.Error")
			}
		})
	}
}

// The zero Request has the documented defaults.
func TestCheckDefaults(t *testing.T) {
	var lim limits.Request
	if err := lim.Check("Identify", &gisxml.Identify{SearchShape: ring(limits.DefaultMaxVertices)}); err != nil {
		t.Fatalf("%d vertices refused: %v", limits.DefaultMaxVertices, err)
	}
	if _, ok := limits.Of(lim.Check("Identify", &gisxml.Identify{SearchShape: ring(limits.DefaultMaxVertices + 1)})); !ok {
		t.Fatalf("%d vertices accepted", limits.DefaultMaxVertices+1)
	}
	if err := lim.Check("ExportMapImage", &gisxml.ExportMapImage{ImageDescription: display(4096, 4096, 2400)}); err != nil {
		t.Fatalf("4096×4096 at 2400 DPI refused: %v", err)
	}
}

// Measure counts what the api's heavy lane classifies by: vertices summed over the request's
// geometries, ids over its id lists, and screen points (one per ScreenXValues value).
func TestMeasure(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   string
		req  any
		want limits.Size
	}{
		{"geometries", "Identify", &gisxml.Identify{SearchShape: ring(6), MapDescription: &gisxml.MapDescription{MapArea: &gisxml.MapExtent{}}},
			limits.Size{Vertices: 6}},
		{"ids", "QueryFeatureCount", &gisxml.QueryFeatureCount{QueryFilter: &gisxml.SpatialFilter{FilterGeometry: ring(3),
			QueryFilter: gisxml.QueryFilter{FIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{1, 2, 3, 4}}}}}, limits.Size{Vertices: 3, IDs: 4}},
		{"a multipoint's points are vertices", "QueryFeatureCount", &gisxml.QueryFeatureCount{QueryFilter: &gisxml.SpatialFilter{
			FilterGeometry: &gisxml.MultipointN{PointArray: ring(500).RingArray[0].PointArray}}}, limits.Size{Vertices: 500}},
		{"points", "ToMapPoints", &gisxml.ToMapPoints{ScreenXValues: make(gisxml.ArrayOfInt, 50), ScreenYValues: make(gisxml.ArrayOfInt, 50)},
			limits.Size{Points: 50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := limits.Request{}.Measure(tc.op, tc.req)
			if err != nil || got != tc.want {
				t.Errorf("Measure = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
