package tilecache_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// fakeTile returns deterministic, distinct bytes for a tile.
func fakeTile(t tilecache.Tile, size int) []byte {
	b := bytes.Repeat([]byte{byte(t.Row), byte(t.Col), byte(t.Level)}, size/3+1)[:size]
	copy(b, fmt.Sprintf("tile %v;", t))
	return b
}

var le = binary.LittleEndian

func TestCompactV2HeaderAndIndex(t *testing.T) {
	b := tilecache.Bundle{TopLeft: tilecache.Tile{Level: 1}}
	// One tile the size of the first tile of Esri's sample bundle
	// L01/R0000C0000.bundle (research §5.4).
	t00 := tilecache.Tile{Level: 1, Row: 0, Col: 0}
	t01 := tilecache.Tile{Level: 1, Row: 0, Col: 1}
	t10 := tilecache.Tile{Level: 1, Row: 1, Col: 0}
	tiles := map[tilecache.Tile][]byte{t00: fakeTile(t00, 43588), t01: fakeTile(t01, 1000), t10: fakeTile(t10, 20)}
	data, err := tilecache.EncodeCompactV2(b, tiles)
	if err != nil {
		t.Fatal(err)
	}
	wantSize := 64 + 131072 + (4 + 43588) + (4 + 1000) + (4 + 20)
	if len(data) != wantSize {
		t.Fatalf("bundle is %d bytes, want %d", len(data), wantSize)
	}
	// Header: (3,16384,max,5,0,size,40,131092,3,16,16384,5,131072), as in
	// the sample's (3,16384,43588,5,0,267676,40,131092,3,16,16384,5,131072).
	h := data[:64]
	u32 := func(off int) uint32 { return le.Uint32(h[off:]) }
	u64 := func(off int) uint64 { return le.Uint64(h[off:]) }
	got := []uint64{uint64(u32(0)), uint64(u32(4)), uint64(u32(8)), uint64(u32(12)), u64(16), u64(24), u64(32),
		uint64(u32(40)), uint64(u32(44)), uint64(u32(48)), uint64(u32(52)), uint64(u32(56)), uint64(u32(60))}
	want := []uint64{3, 16384, 43588, 5, 0, uint64(wantSize), 40, 131092, 3, 16, 16384, 5, 131072}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("header %v, want %v", got, want)
	}
	entry := func(row, col int) (off, size uint64) {
		v := le.Uint64(data[64+8*(128*row+col):])
		return v & (1<<40 - 1), v >> 40
	}
	// Tiles are stored in row-major order: (0,0), (0,1), (1,0).
	if off, size := entry(0, 0); off != 131140 || size != 43588 {
		t.Errorf("index[0] = off %d size %d, want 131140, 43588 (as in the sample)", off, size)
	}
	if off, size := entry(0, 1); off != 131140+43588+4 || size != 1000 {
		t.Errorf("index[1] (row 0, col 1) = off %d size %d", off, size)
	}
	if off, size := entry(1, 0); off != 131140+43588+4+1000+4 || size != 20 {
		t.Errorf("index[128] (row 1, col 0) = off %d size %d", off, size)
	}
	if off, size := entry(5, 5); off != 0 || size != 0 {
		t.Errorf("absent tile index = %d, %d", off, size)
	}
	for tile, tdata := range tiles {
		off, size := entry(tile.Row, tile.Col)
		if le.Uint32(data[off-4:]) != uint32(size) || !bytes.Equal(data[off:off+size], tdata) {
			t.Errorf("tile %v: length word or data wrong", tile)
		}
	}
	dec, err := tilecache.DecodeCompactV2(b, data)
	if err != nil || len(dec) != 3 {
		t.Fatalf("decode: %d tiles, %v", len(dec), err)
	}
	for tile, tdata := range tiles {
		if !bytes.Equal(dec[tile], tdata) {
			t.Errorf("decoded tile %v differs", tile)
		}
	}
	// Deterministic: the same tiles give the same bytes.
	again, _ := tilecache.EncodeCompactV2(b, tiles)
	if !bytes.Equal(again, data) {
		t.Fatal("encoding is not deterministic")
	}
}

func TestCompactV1Layout(t *testing.T) {
	b := tilecache.Bundle{TopLeft: tilecache.Tile{Level: 3, Row: 128, Col: 256}}
	ta := tilecache.Tile{Level: 3, Row: 128, Col: 257} // row 0, col 1
	tb := tilecache.Tile{Level: 3, Row: 130, Col: 256} // row 2, col 0
	tiles := map[tilecache.Tile][]byte{ta: fakeTile(ta, 300), tb: fakeTile(tb, 7)}
	bundle, bundlx, err := tilecache.EncodeCompactV1(b, tiles)
	if err != nil {
		t.Fatal(err)
	}
	// .bundlx: 16-byte header 3,16,16384,5; 16384 5-byte entries; footer 0,16,16,0.
	if len(bundlx) != 81952 {
		t.Fatalf(".bundlx is %d bytes, want 81952", len(bundlx))
	}
	hx := []uint32{le.Uint32(bundlx[0:]), le.Uint32(bundlx[4:]), le.Uint32(bundlx[8:]), le.Uint32(bundlx[12:])}
	fx := []uint32{le.Uint32(bundlx[81936:]), le.Uint32(bundlx[81940:]), le.Uint32(bundlx[81944:]), le.Uint32(bundlx[81948:])}
	if fmt.Sprint(hx) != "[3 16 16384 5]" || fmt.Sprint(fx) != "[0 16 16 0]" {
		t.Fatalf(".bundlx header %v footer %v", hx, fx)
	}
	// Bundle header <4I3Q5I: 3, 16384, max, 5, n*4, size, 40, 16, row0, row0+127, col0, col0+127.
	size := 60 + 65536 + 4 + 300 + 4 + 7
	if len(bundle) != size {
		t.Fatalf("bundle is %d bytes, want %d", len(bundle), size)
	}
	got := []uint64{uint64(le.Uint32(bundle[0:])), uint64(le.Uint32(bundle[4:])), uint64(le.Uint32(bundle[8:])), uint64(le.Uint32(bundle[12:])),
		le.Uint64(bundle[16:]), le.Uint64(bundle[24:]), le.Uint64(bundle[32:]),
		uint64(le.Uint32(bundle[40:])), uint64(le.Uint32(bundle[44:])), uint64(le.Uint32(bundle[48:])), uint64(le.Uint32(bundle[52:])), uint64(le.Uint32(bundle[56:]))}
	want := []uint64{3, 16384, 300, 5, 8, uint64(size), 40, 16, 128, 255, 256, 383}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("bundle header %v, want %v", got, want)
	}
	// Index is column-major: entry 128·col + row at 16 + 5·i, offset of the
	// length word. Row-major data order puts ta (row 0) before tb (row 2).
	entry := func(row, col int) uint64 {
		i := 16 + 5*(128*col+row)
		var b8 [8]byte
		copy(b8[:], bundlx[i:i+5])
		return le.Uint64(b8[:])
	}
	if off := entry(0, 1); off != 60+65536 {
		t.Errorf("entry (0,1) = %d, want %d", off, 60+65536)
	}
	if off := entry(2, 0); off != 60+65536+4+300 {
		t.Errorf("entry (2,0) = %d", off)
	}
	// Absent tiles point at their zero "empty record" 60 + 4·i.
	if off := entry(5, 7); off != uint64(60+4*(128*7+5)) || le.Uint32(bundle[off:]) != 0 {
		t.Errorf("absent entry (5,7) = %d", off)
	}
	if le.Uint32(bundle[entry(0, 1):]) != 300 {
		t.Error("length word of (0,1)")
	}
	dec, err := tilecache.DecodeCompactV1(b, bundle, bundlx)
	if err != nil || len(dec) != 2 || !bytes.Equal(dec[ta], tiles[ta]) || !bytes.Equal(dec[tb], tiles[tb]) {
		t.Fatalf("decode: %d tiles, %v", len(dec), err)
	}
}

func TestEncodeRejects(t *testing.T) {
	b := tilecache.Bundle{TopLeft: tilecache.Tile{Level: 2}}
	if _, err := tilecache.EncodeCompactV2(b, map[tilecache.Tile][]byte{{Level: 2, Row: 128}: {1}}); !errors.Is(err, tilecache.ErrInvalidTile) {
		t.Errorf("tile outside bundle: %v", err)
	}
	if _, err := tilecache.EncodeCompactV2(b, map[tilecache.Tile][]byte{{Level: 2}: {}}); err == nil {
		t.Error("empty tile accepted")
	}
	if _, err := tilecache.EncodeCompactV2(tilecache.Bundle{TopLeft: tilecache.Tile{Level: 2, Row: 5}}, nil); !errors.Is(err, tilecache.ErrInvalidTile) {
		t.Errorf("unaligned bundle: %v", err)
	}
	if _, err := tilecache.DecodeCompactV2(b, make([]byte, 100)); !errors.Is(err, tilecache.ErrCorruptBundle) {
		t.Errorf("short bundle: %v", err)
	}
}

func TestParseStorageFormat(t *testing.T) {
	for in, want := range map[string]tilecache.StorageFormat{
		"esriMapCacheStorageModeExploded":  tilecache.Exploded,
		"esriMapCacheStorageModeCompact":   tilecache.CompactV1,
		"esriMapCacheStorageModeCompactV2": tilecache.CompactV2,
		"gisMapCacheStorageModeCompactV2":  tilecache.CompactV2,
		"v1":                               tilecache.CompactV1,
		"CompactV2":                        tilecache.CompactV2,
	} {
		got, err := tilecache.ParseStorageFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseStorageFormat(%q) = %v, %v", in, got, err)
		}
		if back, _ := tilecache.ParseStorageFormat(got.String()); back != got {
			t.Errorf("String round trip of %v", got)
		}
	}
	if _, err := tilecache.ParseStorageFormat("zip"); !errors.Is(err, tilecache.ErrInvalidFormat) {
		t.Errorf("zip: %v", err)
	}
}
