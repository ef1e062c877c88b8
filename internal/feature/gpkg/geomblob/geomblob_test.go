package geomblob_test

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
)

// gpBlob builds a GeoPackage blob around wkb with the given flags.
func gpBlob(flags byte, env []float64, wkb []byte) []byte {
	b := []byte{'G', 'P', 0, flags, 0, 0, 0, 0}
	for _, v := range env {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return append(b, wkb...)
}

func wkbPoint(order binary.AppendByteOrder, typ uint32, coords ...float64) []byte {
	b := []byte{1}
	if order == binary.AppendByteOrder(binary.BigEndian) {
		b[0] = 0
	}
	b = order.AppendUint32(b, typ)
	for _, c := range coords {
		b = order.AppendUint64(b, math.Float64bits(c))
	}
	return b
}

func TestDecodeGeometry(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	line := le.AppendUint32(le.AppendUint32([]byte{1}, 2), 2)
	for _, c := range []float64{0, 0, 3, 4} {
		line = le.AppendUint64(line, math.Float64bits(c))
	}
	tests := []struct {
		name string
		blob []byte
		want orb.Geometry
		err  bool
	}{
		{"nil blob", nil, nil, false},
		{"point no envelope", gpBlob(0x01, nil, wkbPoint(le, 1, 1, 2)), orb.Point{1, 2}, false},
		{"big-endian wkb", gpBlob(0x01, nil, wkbPoint(be, 1, -5, 7.5)), orb.Point{-5, 7.5}, false},
		{"xy envelope", gpBlob(0x03, []float64{1, 1, 2, 2}, wkbPoint(le, 1, 1, 2)), orb.Point{1, 2}, false},
		{"xyz envelope", gpBlob(0x05, []float64{1, 1, 2, 2, 0, 0}, wkbPoint(le, 1, 1, 2)), orb.Point{1, 2}, false},
		{"iso point z", gpBlob(0x01, nil, wkbPoint(le, 1001, 1, 2, 99)), orb.Point{1, 2}, false},
		{"iso point zm", gpBlob(0x01, nil, wkbPoint(le, 3001, 1, 2, 99, 98)), orb.Point{1, 2}, false},
		{"ewkb point z", gpBlob(0x01, nil, wkbPoint(le, 0x80000001, 1, 2, 99)), orb.Point{1, 2}, false},
		{"linestring", gpBlob(0x01, nil, line), orb.LineString{{0, 0}, {3, 4}}, false},
		{"empty flag", gpBlob(0x11, nil, nil), nil, false},
		{"bad magic", []byte("XP\x00\x01\x00\x00\x00\x00"), nil, true},
		{"truncated", gpBlob(0x01, nil, wkbPoint(le, 1, 1, 2))[:20], nil, true},
		{"unknown type", gpBlob(0x01, nil, wkbPoint(le, 17, 1, 2)), nil, true},
		{"huge count", gpBlob(0x01, nil, le.AppendUint32(le.AppendUint32([]byte{1}, 2), 1<<30)), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := geomblob.Decode(tc.blob)
			if tc.err {
				if !errors.Is(err, geomblob.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && !orb.Equal(got, tc.want)) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}
