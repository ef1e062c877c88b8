package postgis

import (
	"reflect"
	"testing"

	"github.com/paulmach/orb"
)

// TestDecodeTWKB decodes TWKB values written by hand from the specification (the PostGIS
// round trip is TestParity's "resolution"): precision, deltas carried from point to point and
// ring to ring, extended dimensions dropped, empty geometries, and truncated input refused.
func TestDecodeTWKB(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want orb.Geometry
	}{
		// POINT(1 2), precision 0: zigzag 2, 4.
		{"point", []byte{0x01, 0x00, 0x02, 0x04}, orb.Point{1, 2}},
		// POINT(0.5 -1) at precision 1 (zigzag 2 in the high nibble): 5, -10.
		{"precision", []byte{0x21, 0x00, 0x0a, 0x13}, orb.Point{0.5, -1}},
		// POINT(30 40) at precision -1 (zigzag 1): 3, 4.
		{"tens", []byte{0x11, 0x00, 0x06, 0x08}, orb.Point{30, 40}},
		// LINESTRING(1 1, 3 2) with Z (extended dims): deltas (1,1,7), (2,1,0).
		{"line with z", []byte{0x02, 0x08, 0x01, 0x02, 0x02, 0x02, 0x0e, 0x04, 0x02, 0x00}, orb.LineString{{1, 1}, {3, 2}}},
		// POLYGON((0 0,4 0,4 4,0 0),(1 1,2 1,1 2,1 1)) with a bounding box: the second ring's
		// first delta is from the first ring's last point.
		{"polygon", []byte{0x03, 0x01, 0x00, 0x08, 0x00, 0x08, 0x02,
			0x04, 0x00, 0x00, 0x08, 0x00, 0x00, 0x08, 0x07, 0x07,
			0x04, 0x02, 0x02, 0x02, 0x00, 0x01, 0x02, 0x00, 0x01}, orb.Polygon{
			{{0, 0}, {4, 0}, {4, 4}, {0, 0}}, {{1, 1}, {2, 1}, {1, 2}, {1, 1}}}},
		// MULTIPOINT((1 1),(2 3)) with an id list.
		{"multipoint ids", []byte{0x04, 0x04, 0x02, 0x0e, 0x10, 0x02, 0x02, 0x02, 0x04}, orb.MultiPoint{{1, 1}, {2, 3}}},
		{"empty", []byte{0x03, 0x10}, nil},
	} {
		var r twkbReader
		got, err := r.decode(tc.b)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range [][]byte{{}, {0x01}, {0x01, 0x00, 0x02}, {0x02, 0x00, 0x7f, 0x02}, {0x03, 0x00, 0x01, 0x05, 0x02}, {0x09, 0x00}} {
		var r twkbReader
		if g, err := r.decode(bad); err == nil {
			t.Errorf("% x: %v, no error", bad, g)
		}
	}
}
