package cartography_test

import (
	"math"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
)

func TestComputeScale(t *testing.T) {
	f := mapservertest.New(t)
	// 1000 px at 96 DPI show 1000/96 inch; 254 km across them is 1:960,000.
	r := mapservertest.Must[gisxml.ComputeScaleResponse](f, "world", "ComputeScale", &gisxml.ComputeScale{
		MapDescription: mapservertest.MapDesc(0, 0, 254000, 127000, 0), MapImageDisplay: &gisxml.ImageDisplay{ImageWidth: 1000, ImageHeight: 500, ImageDPI: 96}})
	if math.Abs(r.Result-960000) > 1e-6 {
		t.Fatalf("scale %v, want 960000", r.Result)
	}
	msg := f.ClientFault("world", "ComputeScale", &gisxml.ComputeScale{MapDescription: mapservertest.MapDesc(0, 0, 1, 1, 0)})
	if !strings.Contains(msg, "ImageDisplay is required") {
		t.Fatalf("fault %q", msg)
	}
}

// ToMapPoints and FromMapPoints invert each other to within half a pixel, rotation included.
func TestMapPointsRoundTrip(t *testing.T) {
	f := mapservertest.New(t)
	disp := &gisxml.ImageDisplay{ImageWidth: 800, ImageHeight: 600, ImageDPI: 96}
	xs := gisxml.ArrayOfInt{0, 799, 400, 13, 650}
	ys := gisxml.ArrayOfInt{0, 599, 300, 577, 42}
	for _, rot := range []float64{0, 33, 90, 180, -120} {
		md := mapservertest.MapDesc(-2e6, -1.5e6, 2e6, 1.5e6, rot)
		mp := mapservertest.Must[gisxml.ToMapPointsResponse](f, "world", "ToMapPoints", &gisxml.ToMapPoints{MapDescription: md, MapImageDisplay: disp, ScreenXValues: xs, ScreenYValues: ys}).Result.(*gisxml.MultipointN)
		if len(mp.PointArray) != len(xs) {
			t.Fatalf("%d points back", len(mp.PointArray))
		}
		back := mapservertest.Must[gisxml.FromMapPointsResponse](f, "world", "FromMapPoints", &gisxml.FromMapPoints{MapDescription: md, MapImageDisplay: disp, MapPoints: mp})
		for i := range xs {
			if back.ScreenXValues[i] != xs[i] || back.ScreenYValues[i] != ys[i] {
				t.Errorf("rotation %v: pixel %d,%d → %v → %d,%d", rot, xs[i], ys[i], mp.PointArray[i], back.ScreenXValues[i], back.ScreenYValues[i])
			}
		}
		if rot == 0 {
			// The top-left pixel is the extent's top-left corner; the centre the centre.
			p0, pc := mp.PointArray[0].(*gisxml.PointN), mp.PointArray[2].(*gisxml.PointN)
			if math.Abs(p0.X+2e6) > 1e-6 || math.Abs(p0.Y-1.5e6) > 1e-6 || math.Abs(pc.X) > 1e-6 || math.Abs(pc.Y) > 1e-6 {
				t.Errorf("corner %v, centre %v", p0, pc)
			}
		}
	}
	msg := f.ClientFault("world", "ToMapPoints", &gisxml.ToMapPoints{MapDescription: mapservertest.MapDesc(0, 0, 1, 1, 0), MapImageDisplay: disp, ScreenXValues: xs, ScreenYValues: ys[:2]})
	if !strings.Contains(msg, "must pair up") {
		t.Fatalf("fault %q", msg)
	}
}

func TestComputeDistance(t *testing.T) {
	f := mapservertest.New(t)
	pt := func(x, y float64) gisxml.Point { return &gisxml.PointN{X: x, Y: y} }
	// London–Paris on the ellipsoid (geod: 343923.120 m).
	geo := mapservertest.Must[gisxml.ComputeDistanceResponse](f, "world_geographic", "ComputeDistance", &gisxml.ComputeDistance{
		FromPoint: pt(-0.1278, 51.5074), ToPoint: pt(2.3522, 48.8566), Units: gisxml.Kilometers})
	if math.Abs(geo.Result-343.923120) > 1e-6 {
		t.Errorf("London–Paris %v km, want 343.923120", geo.Result)
	}
	// A projected map measures in the plane: a 3-4-5 triangle.
	for _, tc := range []struct {
		units gisxml.Units
		want  float64
	}{{gisxml.Meters, 5000}, {gisxml.Kilometers, 5}, {gisxml.Feet, 5000 / 0.3048}, {gisxml.NauticalMiles, 5000.0 / 1852}, {gisxml.UnknownUnits, 5000}} {
		r := mapservertest.Must[gisxml.ComputeDistanceResponse](f, "world", "ComputeDistance", &gisxml.ComputeDistance{FromPoint: pt(0, 0), ToPoint: pt(3000, 4000), Units: tc.units})
		if math.Abs(r.Result-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.units, r.Result, tc.want)
		}
	}
	msg := f.ClientFault("world_geographic", "ComputeDistance", &gisxml.ComputeDistance{FromPoint: pt(0, 95), ToPoint: pt(0, 0), Units: gisxml.Meters})
	if !strings.Contains(msg, "±90") {
		t.Fatalf("fault %q", msg)
	}
}
