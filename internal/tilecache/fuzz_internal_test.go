package tilecache

import (
	"encoding/binary"
	"testing"
)

// v2Seed returns a small valid V2 bundle for the fuzz corpus.
func v2Seed(t testing.TB) []byte {
	b := Bundle{TopLeft: Tile{Level: 1}}
	data, err := EncodeCompactV2(b, map[Tile][]byte{{Level: 1}: []byte("abc"), {Level: 1, Row: 3, Col: 127}: []byte("defgh")})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FuzzBundleIndexV2 feeds corrupt V2 bundles to the index parser and the
// decoder: they must return an error or tiles inside the data, never panic.
// The fuzzer mutates a short prefix (header and first index entries) and the
// tail, spliced onto a valid bundle, so that mutations reach the checks.
func FuzzBundleIndexV2(f *testing.F) {
	seed := v2Seed(f)
	f.Add(seed[:64+32], seed[v2DataStart:], int64(0))
	f.Add([]byte{3, 0, 0, 0}, []byte{}, int64(-1))
	f.Add(seed[:64], seed[v2DataStart:], int64(1<<41))
	f.Fuzz(func(t *testing.T, head, tail []byte, sizeDelta int64) {
		data := make([]byte, 0, v2DataStart+len(tail))
		data = append(data, head...)
		if len(head) < v2DataStart {
			data = append(data, seed[len(head):v2DataStart]...)
		}
		data = append(data, tail...)
		objSize := int64(len(data)) + sizeDelta%1024
		ix, err := parseIndexV2(data, objSize)
		if err == nil {
			for pos := range bundleTiles {
				off, size, ok := ix.v2Entry(pos)
				if ok && (off < v2DataStart+4 || off+size > objSize || size <= 0) {
					t.Fatalf("entry %d: off %d size %d outside a %d-byte bundle", pos, off, size, objSize)
				}
			}
		}
		set, err := decodeV2(data)
		if err == nil {
			for _, tile := range set {
				if len(tile) > len(data) {
					t.Fatal("tile larger than the bundle")
				}
			}
		}
	})
}

// FuzzBundleIndexV1 does the same for V1 header + .bundlx + records.
func FuzzBundleIndexV1(f *testing.F) {
	b := Bundle{TopLeft: Tile{Level: 2}}
	bundle, bundlx, err := EncodeCompactV1(b, map[Tile][]byte{{Level: 2, Row: 1}: []byte("xyz")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bundle[:v1HeaderSize], bundlx[:64], bundle[v1DataStart:], uint32(0))
	f.Add([]byte{}, []byte{}, []byte{}, uint32(7))
	f.Fuzz(func(t *testing.T, header, xprefix, records []byte, patch uint32) {
		x := make([]byte, bundlxSize)
		copy(x, bundlx)
		copy(x, xprefix)
		// Point one entry at an arbitrary offset.
		binary.LittleEndian.PutUint32(x[16+5*int(patch%bundleTiles):], patch)
		data := make([]byte, 0, v1DataStart+len(records))
		data = append(data, header...)
		if len(data) < v1DataStart {
			data = append(data, bundle[len(data):v1DataStart]...)
		}
		data = append(data, records...)
		set, err := decodeV1(data, x)
		if err == nil {
			for _, tile := range set {
				if len(tile) > len(data) {
					t.Fatal("tile larger than the bundle")
				}
			}
		}
		if len(header) >= v1HeaderSize {
			_, _ = parseIndexV1(header, x, int64(len(data)))
		}
	})
}
