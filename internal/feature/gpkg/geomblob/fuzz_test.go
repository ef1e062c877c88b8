package geomblob_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
)

// FuzzDecodeGeometry feeds arbitrary bytes to the GeoPackage geometry reader (header, envelope
// and WKB): it returns a geometry or an error, never panics, never allocates beyond what the
// bytes can hold, and what it returns encodes back to a blob that decodes to the same geometry.
func FuzzDecodeGeometry(f *testing.F) {
	for _, g := range []orb.Geometry{
		orb.Point{1, 2},
		orb.LineString{{0, 0}, {1, 1}, {2, 0}},
		orb.Polygon{{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0}}, {{1, 1}, {2, 1}, {2, 2}, {1, 1}}},
		orb.MultiPoint{{1, 1}, {2, 2}},
		orb.MultiLineString{{{0, 0}, {1, 1}}, {{2, 2}, {3, 3}}},
		orb.MultiPolygon{{{{0, 0}, {1, 0}, {1, 1}, {0, 0}}}},
		orb.Collection{orb.Point{1, 1}, orb.LineString{{0, 0}, {1, 1}}},
	} {
		blob, err := geomblob.Encode(g, 4326)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
	}
	// A header announcing far more points than the blob holds.
	huge := []byte{'G', 'P', 0, 1, 0, 0, 0, 0, 1}
	huge = binary.LittleEndian.AppendUint32(huge, 2) // LineString
	huge = binary.LittleEndian.AppendUint32(huge, 1<<30)
	f.Add(huge)
	f.Add([]byte("GP"))
	f.Fuzz(func(t *testing.T, blob []byte) {
		g, err := geomblob.Decode(blob)
		if err != nil || g == nil {
			return
		}
		again, err := geomblob.Encode(g, 4326)
		if err != nil {
			return // e.g. a collection type the writer does not write
		}
		g2, err := geomblob.Decode(again)
		if err != nil {
			t.Fatalf("re-encoded %T does not decode: %v", g, err)
		}
		// Compared as printed: POINT EMPTY is NaN, NaN, which no == equals.
		if fmt.Sprintf("%T%v", g, g) != fmt.Sprintf("%T%v", g2, g2) {
			t.Fatalf("round trip changed the geometry: %v → %v", g, g2)
		}
	})
}
