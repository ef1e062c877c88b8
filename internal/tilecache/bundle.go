package tilecache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// StorageFormat is how a cache stores its tiles (Esri's
// esriMapCacheStorageFormat). The zero value means "not set".
type StorageFormat int

// Storage formats.
const (
	// Exploded stores one object per tile:
	// Lnn/Rxxxxxxxx/Cxxxxxxxx.ext.
	Exploded StorageFormat = iota + 1
	// CompactV1 stores 128×128 tiles in a .bundle with a separate .bundlx
	// index (ArcGIS 10.0–10.2).
	CompactV1
	// CompactV2 stores 128×128 tiles in one .bundle with its index inside
	// (ArcGIS 10.3 and later).
	CompactV2
)

// ErrInvalidFormat is wrapped by errors for an unknown storage format.
var ErrInvalidFormat = errors.New("tilecache: unknown storage format")

// String returns Esri's enumeration name, such as
// "esriMapCacheStorageModeCompactV2".
func (f StorageFormat) String() string {
	switch f {
	case Exploded:
		return "esriMapCacheStorageModeExploded"
	case CompactV1:
		return "esriMapCacheStorageModeCompact"
	case CompactV2:
		return "esriMapCacheStorageModeCompactV2"
	}
	return fmt.Sprintf("StorageFormat(%d)", int(f))
}

// PacketSize is Esri's CacheStorageInfo.PacketSize: 0 for exploded, 128 for
// compact caches.
func (f StorageFormat) PacketSize() int {
	if f == CompactV1 || f == CompactV2 {
		return BundleSize
	}
	return 0
}

// ParseStorageFormat accepts Esri's names (esriMapCacheStorageModeExploded,
// …Compact, …CompactV2), the service interface's gis-prefixed names, and the
// short names exploded, compact (or compactv1, v1) and compactv2 (or v2),
// in any case.
func ParseStorageFormat(s string) (StorageFormat, error) {
	name := strings.ToLower(s)
	for _, p := range []string{"esrimapcachestoragemode", "gismapcachestoragemode"} {
		name = strings.TrimPrefix(name, p)
	}
	switch name {
	case "exploded":
		return Exploded, nil
	case "compact", "compactv1", "v1":
		return CompactV1, nil
	case "compactv2", "v2":
		return CompactV2, nil
	}
	return 0, fmt.Errorf("%w %q", ErrInvalidFormat, s)
}

// ErrCorruptBundle is wrapped by errors for bundle or index bytes that do
// not follow the compact layout.
var ErrCorruptBundle = errors.New("tilecache: corrupt bundle")

// Byte layout of compact bundles; see docs/tile-caches.md.
const (
	v1HeaderSize   = 60
	v1EmptyRecords = bundleTiles * 4 // u32 zero "empty tile" records after the header
	v1DataStart    = v1HeaderSize + v1EmptyRecords
	bundlxSize     = 16 + bundleTiles*5 + 16 // 81952

	v2HeaderSize = 64
	v2IndexSize  = bundleTiles * 8 // 131072
	v2DataStart  = v2HeaderSize + v2IndexSize

	maxV2TileSize = 1<<24 - 1 // size field is 24 bits
	maxV2Offset   = 1<<40 - 1 // offset field is 40 bits
	maxV1Offset   = 1<<40 - 1 // offsets are 5 bytes
)

// bundlxHeader and bundlxFooter are the fixed 16 bytes around a .bundlx
// index, as MapProxy writes them: u32 3, 16, 16384, 5 and u32 0, 16, 16, 0.
const (
	bundlxHeader = "\x03\x00\x00\x00\x10\x00\x00\x00\x00\x40\x00\x00\x05\x00\x00\x00"
	bundlxFooter = "\x00\x00\x00\x00\x10\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00"
)

// bundleSet holds the tiles of one bundle by row-major position; nil means
// absent.
type bundleSet [][]byte

func newBundleSet() bundleSet { return make(bundleSet, bundleTiles) }

// fromMap fills a bundleSet from a map, checking that every tile is in b.
func fromMap(b Bundle, tiles map[Tile][]byte) (bundleSet, error) {
	if !b.Valid() {
		return nil, fmt.Errorf("%w: bundle %v not aligned", ErrInvalidTile, b.TopLeft)
	}
	set := newBundleSet()
	for t, data := range tiles {
		if !b.Contains(t) {
			return nil, fmt.Errorf("%w %v: not in bundle %v", ErrInvalidTile, t, b)
		}
		if len(data) == 0 {
			return nil, fmt.Errorf("tilecache: tile %v: empty data", t)
		}
		set[rowMajor(t)] = data
	}
	return set, nil
}

// toMap turns a bundleSet back into a map.
func (set bundleSet) toMap(b Bundle) map[Tile][]byte {
	m := make(map[Tile][]byte)
	for pos, data := range set {
		if data != nil {
			m[b.tileAt(pos)] = data
		}
	}
	return m
}

// EncodeCompactV2 returns a compact V2 bundle holding tiles, which must all
// lie in b and be non-empty. The bytes depend only on the tiles: tiles are
// stored in row-major order, absent tiles have index 0, so writing the same
// tiles again gives the same bytes.
func EncodeCompactV2(b Bundle, tiles map[Tile][]byte) ([]byte, error) {
	set, err := fromMap(b, tiles)
	if err != nil {
		return nil, err
	}
	return set.encodeV2()
}

func (set bundleSet) encodeV2() ([]byte, error) {
	size := int64(v2DataStart)
	maxTile := 0
	for pos, data := range set {
		if data == nil {
			continue
		}
		if len(data) > maxV2TileSize {
			return nil, fmt.Errorf("tilecache: tile at bundle position %d: %d bytes, compact V2 allows %d", pos, len(data), maxV2TileSize)
		}
		size += 4 + int64(len(data))
		maxTile = max(maxTile, len(data))
	}
	if size > maxV2Offset {
		return nil, fmt.Errorf("tilecache: bundle of %d bytes too large for compact V2", size)
	}
	out := make([]byte, size)
	le := binary.LittleEndian
	le.PutUint32(out[0:], 3)
	le.PutUint32(out[4:], bundleTiles)
	le.PutUint32(out[8:], uint32(maxTile))
	le.PutUint32(out[12:], 5)
	le.PutUint64(out[16:], 0)
	le.PutUint64(out[24:], uint64(size))
	le.PutUint64(out[32:], 40)
	le.PutUint32(out[40:], 20+v2IndexSize)
	le.PutUint32(out[44:], 3)
	le.PutUint32(out[48:], 16)
	le.PutUint32(out[52:], bundleTiles)
	le.PutUint32(out[56:], 5)
	le.PutUint32(out[60:], v2IndexSize)
	off := int64(v2DataStart)
	for pos, data := range set {
		if data == nil {
			continue
		}
		le.PutUint32(out[off:], uint32(len(data)))
		off += 4
		copy(out[off:], data)
		le.PutUint64(out[v2HeaderSize+8*pos:], uint64(off)|uint64(len(data))<<40)
		off += int64(len(data))
	}
	return out, nil
}

// DecodeCompactV2 returns the tiles of a compact V2 bundle. The slices
// share memory with data.
func DecodeCompactV2(b Bundle, data []byte) (map[Tile][]byte, error) {
	set, err := decodeV2(data)
	if err != nil {
		return nil, err
	}
	return set.toMap(b), nil
}

func decodeV2(data []byte) (bundleSet, error) {
	ix, err := parseIndexV2(data, int64(len(data)))
	if err != nil {
		return nil, err
	}
	set := newBundleSet()
	for pos := range bundleTiles {
		off, size, ok := ix.v2Entry(pos)
		if ok {
			set[pos] = data[off : off+size : off+size]
		}
	}
	return set, nil
}

// EncodeCompactV1 returns a compact V1 bundle and its .bundlx index holding
// tiles, in the layout MapProxy writes: a 60-byte header, 16384 zero
// "empty tile" records, then each tile as u32 length + bytes in row-major
// order; the index points absent tiles at their empty record. The bytes
// depend only on the tiles.
func EncodeCompactV1(b Bundle, tiles map[Tile][]byte) (bundle, bundlx []byte, err error) {
	set, err := fromMap(b, tiles)
	if err != nil {
		return nil, nil, err
	}
	return set.encodeV1(b)
}

func (set bundleSet) encodeV1(b Bundle) (bundle, bundlx []byte, err error) {
	size := int64(v1DataStart)
	maxTile, n := 16, 0 // MapProxy starts the largest-tile field at 16
	for _, data := range set {
		if data == nil {
			continue
		}
		if int64(len(data)) > 1<<32-1 {
			return nil, nil, fmt.Errorf("tilecache: tile of %d bytes too large for compact V1", len(data))
		}
		size += 4 + int64(len(data))
		maxTile = max(maxTile, len(data))
		n++
	}
	if size > maxV1Offset {
		return nil, nil, fmt.Errorf("tilecache: bundle of %d bytes too large for compact V1", size)
	}
	le := binary.LittleEndian
	bundle = make([]byte, size)
	le.PutUint32(bundle[0:], 3)
	le.PutUint32(bundle[4:], bundleTiles)
	le.PutUint32(bundle[8:], uint32(maxTile))
	le.PutUint32(bundle[12:], 5)
	le.PutUint64(bundle[16:], uint64(n)*4)
	le.PutUint64(bundle[24:], uint64(size))
	le.PutUint64(bundle[32:], 40)
	le.PutUint32(bundle[40:], 16)
	le.PutUint32(bundle[44:], uint32(b.TopLeft.Row))
	le.PutUint32(bundle[48:], uint32(b.TopLeft.Row+BundleSize-1))
	le.PutUint32(bundle[52:], uint32(b.TopLeft.Col))
	le.PutUint32(bundle[56:], uint32(b.TopLeft.Col+BundleSize-1))

	bundlx = make([]byte, bundlxSize)
	copy(bundlx, bundlxHeader)
	copy(bundlx[bundlxSize-16:], bundlxFooter)
	offsets := make([]int64, bundleTiles) // by column-major position
	for i := range offsets {
		offsets[i] = int64(v1HeaderSize + 4*i)
	}
	off := int64(v1DataStart)
	for pos, data := range set {
		if data == nil {
			continue
		}
		le.PutUint32(bundle[off:], uint32(len(data)))
		copy(bundle[off+4:], data)
		t := Bundle{}.tileAt(pos)
		offsets[colMajor(t)] = off
		off += 4 + int64(len(data))
	}
	for i, o := range offsets {
		putUint40(bundlx[16+5*i:], uint64(o))
	}
	return bundle, bundlx, nil
}

// DecodeCompactV1 returns the tiles of a compact V1 bundle and its index.
// The slices share memory with bundle.
func DecodeCompactV1(b Bundle, bundle, bundlx []byte) (map[Tile][]byte, error) {
	set, err := decodeV1(bundle, bundlx)
	if err != nil {
		return nil, err
	}
	return set.toMap(b), nil
}

func decodeV1(bundle, bundlx []byte) (bundleSet, error) {
	if len(bundle) < v1HeaderSize {
		return nil, fmt.Errorf("%w: %d-byte V1 bundle shorter than its header", ErrCorruptBundle, len(bundle))
	}
	ix, err := parseIndexV1(bundle[:v1HeaderSize], bundlx, int64(len(bundle)))
	if err != nil {
		return nil, err
	}
	set := newBundleSet()
	for pos := range bundleTiles {
		off, ok := ix.v1Entry(pos)
		if !ok {
			continue
		}
		data, err := v1Record(bundle[off:], off, int64(len(bundle)))
		if err != nil {
			return nil, err
		}
		if data != nil {
			set[pos] = data
		}
	}
	return set, nil
}

// v1Record reads the u32 length and tile bytes at the start of rec, found
// at offset off of a bundle of objSize bytes. nil, nil means an empty record.
func v1Record(rec []byte, off, objSize int64) ([]byte, error) {
	if len(rec) < 4 {
		return nil, fmt.Errorf("%w: tile record at %d cut short", ErrCorruptBundle, off)
	}
	n := int64(binary.LittleEndian.Uint32(rec))
	if n == 0 {
		return nil, nil
	}
	if off+4+n > objSize {
		return nil, fmt.Errorf("%w: tile record at %d of %d bytes runs past the end (%d)", ErrCorruptBundle, off, n, objSize)
	}
	if int64(len(rec)) < 4+n {
		return nil, errShortRead
	}
	return rec[4 : 4+n : 4+n], nil
}

// errShortRead means a ranged read returned fewer bytes than a record
// needs; the reader then fetches the record again with its exact size.
var errShortRead = errors.New("tilecache: short record read")

// putUint40 writes v as 5 little-endian bytes.
func putUint40(b []byte, v uint64) {
	_ = b[4]
	b[0], b[1], b[2], b[3], b[4] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32)
}

// uint40 reads 5 little-endian bytes.
func uint40(b []byte) uint64 {
	_ = b[4]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32
}

// bundleIndex is the parsed index of one compact bundle, in row-major
// order. For V2 an entry is offset | size<<40 of the tile data (0 when
// absent); for V1 it is the offset of the tile's length word (0 when
// absent).
type bundleIndex struct {
	format  StorageFormat
	entries []uint64
	// maxTile is the largest tile size from the header (V1 reads fetch
	// 4+maxTile bytes, enough for any tile, in one request).
	maxTile int64
	// size is the bundle's size in bytes.
	size int64
}

// memSize is the approximate memory an index uses, for the cache bound.
func (ix *bundleIndex) memSize() int64 { return int64(8*len(ix.entries)) + 64 }

// parseIndexV2 parses the header and index of a compact V2 bundle of
// objSize bytes from head, which holds at least its first v2DataStart
// bytes. Every non-empty entry must point inside the data area.
func parseIndexV2(head []byte, objSize int64) (*bundleIndex, error) {
	if len(head) < v2DataStart || objSize < v2DataStart {
		return nil, fmt.Errorf("%w: V2 bundle of %d bytes shorter than header and index (%d)", ErrCorruptBundle, min(int64(len(head)), objSize), v2DataStart)
	}
	le := binary.LittleEndian
	if v := le.Uint32(head[0:]); v != 3 {
		return nil, fmt.Errorf("%w: V2 header version %d, want 3", ErrCorruptBundle, v)
	}
	if n := le.Uint32(head[4:]); n != bundleTiles {
		return nil, fmt.Errorf("%w: V2 header record count %d, want %d", ErrCorruptBundle, n, bundleTiles)
	}
	if n := le.Uint32(head[60:]); n != v2IndexSize {
		return nil, fmt.Errorf("%w: V2 header index size %d, want %d", ErrCorruptBundle, n, v2IndexSize)
	}
	ix := &bundleIndex{format: CompactV2, entries: make([]uint64, bundleTiles), size: objSize}
	for pos := range bundleTiles {
		v := le.Uint64(head[v2HeaderSize+8*pos:])
		size := int64(v >> 40)
		if size == 0 {
			continue // absent, whatever the offset
		}
		off := int64(v & maxV2Offset)
		if off < v2DataStart+4 || off+size > objSize {
			return nil, fmt.Errorf("%w: V2 index entry %d (offset %d, size %d) outside the data area of a %d-byte bundle", ErrCorruptBundle, pos, off, size, objSize)
		}
		ix.entries[pos] = v
		ix.maxTile = max(ix.maxTile, size)
	}
	return ix, nil
}

// v2Entry returns the data offset and size of the tile at row-major
// position pos.
func (ix *bundleIndex) v2Entry(pos int) (off, size int64, ok bool) {
	v := ix.entries[pos]
	if v == 0 {
		return 0, 0, false
	}
	return int64(v & maxV2Offset), int64(v >> 40), true
}

// parseIndexV1 parses a compact V1 bundle's 60-byte header and its .bundlx
// for a bundle of objSize bytes. Every entry must point at a length word
// inside the bundle (or be 0).
func parseIndexV1(header, bundlx []byte, objSize int64) (*bundleIndex, error) {
	if len(header) < v1HeaderSize {
		return nil, fmt.Errorf("%w: V1 header of %d bytes, want %d", ErrCorruptBundle, len(header), v1HeaderSize)
	}
	if len(bundlx) != bundlxSize {
		return nil, fmt.Errorf("%w: .bundlx of %d bytes, want %d", ErrCorruptBundle, len(bundlx), bundlxSize)
	}
	le := binary.LittleEndian
	if v := le.Uint32(header[0:]); v != 3 {
		return nil, fmt.Errorf("%w: V1 header version %d, want 3", ErrCorruptBundle, v)
	}
	ix := &bundleIndex{
		format:  CompactV1,
		entries: make([]uint64, bundleTiles),
		maxTile: int64(le.Uint32(header[8:])),
		size:    objSize,
	}
	for i := range bundleTiles {
		off := uint40(bundlx[16+5*i:])
		if off == 0 {
			continue
		}
		if off < v1HeaderSize || int64(off)+4 > objSize {
			return nil, fmt.Errorf("%w: .bundlx entry %d (offset %d) outside a %d-byte bundle", ErrCorruptBundle, i, off, objSize)
		}
		// i is column-major: 128·col + row.
		ix.entries[BundleSize*(i%BundleSize)+i/BundleSize] = off
	}
	return ix, nil
}

// v1Entry returns the offset of the length word of the tile at row-major
// position pos.
func (ix *bundleIndex) v1Entry(pos int) (off int64, ok bool) {
	v := ix.entries[pos]
	return int64(v), v != 0
}
