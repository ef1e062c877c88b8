package tilearchive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// The PMTiles v3 layout (github.com/protomaps/PMTiles, spec/v3/spec.md), as this writer makes
// it:
//
//	header (127 bytes) | root directory | metadata (JSON) | leaf directories | tile data
//
// Directories and metadata are gzipped ("internal compression" 2); the root directory and the
// header fit in the first 16,384 bytes, so a client's first read gets both. Tile data is
// clustered (in tile-id order) and deduplicated: identical tiles are stored once, and runs of
// consecutive tile ids with the same bytes are one directory entry.
const (
	pmHeaderLen = 127
	// pmRootMax is the most bytes header and root directory may take together.
	pmRootMax = 16384
	// pmMaxDirBytes bounds a directory the reader inflates (a leaf of millions of entries is
	// a few MiB).
	pmMaxDirBytes = 256 << 20
)

// PMTiles compression and tile-type codes.
const (
	pmCompressNone = 1
	pmCompressGzip = 2

	pmTypeUnknown = 0
	pmTypeMVT     = 1
	pmTypePNG     = 2
	pmTypeJPEG    = 3
	pmTypeWebP    = 4
	pmTypeAVIF    = 5
)

// pmTypes maps tile types to the MBTiles/TileJSON format names.
var pmTypes = map[byte]string{pmTypeMVT: "pbf", pmTypePNG: "png", pmTypeJPEG: "jpg", pmTypeWebP: "webp", pmTypeAVIF: "avif"}

func pmTileType(format string) byte {
	for k, v := range pmTypes {
		if v == format {
			return k
		}
	}
	if format == "jpeg" {
		return pmTypeJPEG
	}
	return pmTypeUnknown
}

// TileID is a tile's PMTiles id: the tiles of all lower zooms, (4^z − 1)/3, plus the tile's
// position along the Hilbert curve over its zoom's 2^z × 2^z grid.
func TileID(t ZXY) uint64 {
	z := uint(t.Z)
	n := uint64(1) << z
	x, y := uint64(t.X), uint64(t.Y)
	var d uint64
	for s := n / 2; s > 0; s /= 2 {
		var rx, ry uint64
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		x, y = hilbertRotate(n, x, y, rx, ry)
	}
	return ((uint64(1)<<(2*z))-1)/3 + d
}

// TileOf is the tile of a PMTiles id (the inverse of TileID); ok is false past zoom 30.
func TileOf(id uint64) (t ZXY, ok bool) {
	base := uint64(0)
	for z := 0; z <= 30; z++ {
		count := uint64(1) << (2 * z)
		if id < base+count {
			d := id - base
			var x, y uint64
			for s := uint64(1); s < uint64(1)<<z; s *= 2 {
				rx := 1 & (d / 2)
				ry := 1 & (d ^ rx)
				x, y = hilbertRotate(s, x, y, rx, ry)
				x += s * rx
				y += s * ry
				d /= 4
			}
			return ZXY{Z: z, X: int(x), Y: int(y)}, true
		}
		base += count
	}
	return ZXY{}, false
}

// hilbertRotate turns a quadrant of side n so that the curve's pieces join.
func hilbertRotate(n, x, y, rx, ry uint64) (uint64, uint64) {
	if ry == 0 {
		if rx == 1 {
			x, y = n-1-x, n-1-y
		}
		return y, x
	}
	return x, y
}

// pmEntry is a directory entry: a run of Run tiles from ID with the same bytes at Offset in
// the tile data, or (Run 0) a leaf directory at Offset in the leaf section.
type pmEntry struct {
	ID     uint64
	Offset uint64
	Length uint32
	Run    uint32
}

func encodeDirectory(entries []pmEntry) ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(len(entries)))
	last := uint64(0)
	for _, e := range entries {
		b = binary.AppendUvarint(b, e.ID-last)
		last = e.ID
	}
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(e.Run))
	}
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(e.Length))
	}
	for i, e := range entries {
		if i > 0 && e.Offset == entries[i-1].Offset+uint64(entries[i-1].Length) {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, e.Offset+1)
		}
	}
	return gzipBytes(b)
}

func decodeDirectory(b []byte) ([]pmEntry, error) {
	bad := func(what string) error { return fmt.Errorf("%w: PMTiles directory: %s", ErrFormat, what) }
	r := bytes.NewReader(b)
	n, err := binary.ReadUvarint(r)
	if err != nil || n > uint64(len(b)) {
		return nil, bad("entry count")
	}
	entries := make([]pmEntry, n)
	last := uint64(0)
	for i := range entries {
		d, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, bad("tile ids")
		}
		last += d
		entries[i].ID = last
	}
	for i := range entries {
		v, err := binary.ReadUvarint(r)
		if err != nil || v > math.MaxUint32 {
			return nil, bad("run lengths")
		}
		entries[i].Run = uint32(v)
	}
	for i := range entries {
		v, err := binary.ReadUvarint(r)
		if err != nil || v > math.MaxUint32 {
			return nil, bad("lengths")
		}
		entries[i].Length = uint32(v)
	}
	for i := range entries {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, bad("offsets")
		}
		if v == 0 {
			if i == 0 {
				return nil, bad("first offset 0")
			}
			entries[i].Offset = entries[i-1].Offset + uint64(entries[i-1].Length)
		} else {
			entries[i].Offset = v - 1
		}
	}
	return entries, nil
}

// gzipBytes compresses b the same way every time (no name, no time in the gzip header).
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pmContent is where a distinct tile content lies in the writer's spool file.
type pmContent struct {
	off    uint64
	length uint32
}

// pmWriter collects tiles in a spool file beside the archive (in arrival order, each distinct
// content once) and lays the archive out when closed.
type pmWriter struct {
	path    string
	spool   *os.File
	spoolW  *bufio.Writer
	size    uint64
	byHash  map[[32]byte]pmContent
	tiles   []pmEntry // Offset: the content's offset in the spool
	zooms   zoomRange
	allGzip bool
}

func createPMTiles(path string) (*pmWriter, error) {
	spool, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".spool-*")
	if err != nil {
		return nil, fmt.Errorf("tilearchive: %w", err)
	}
	return &pmWriter{path: path, spool: spool, spoolW: bufio.NewWriterSize(spool, 1<<20), byHash: map[[32]byte]pmContent{}, allGzip: true}, nil
}

func (w *pmWriter) Put(t ZXY, data []byte) error {
	if !t.valid() {
		return fmt.Errorf("tilearchive: tile %v is not in the Web Mercator grid", t)
	}
	if len(data) == 0 || len(data) > math.MaxUint32 {
		return fmt.Errorf("tilearchive: tile %v has %d bytes", t, len(data))
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		w.allGzip = false
	}
	h := sha256.Sum256(data)
	c, ok := w.byHash[h]
	if !ok {
		if _, err := w.spoolW.Write(data); err != nil {
			return fmt.Errorf("tilearchive: spool: %w", err)
		}
		c = pmContent{off: w.size, length: uint32(len(data))}
		w.byHash[h] = c
		w.size += uint64(len(data))
	}
	w.tiles = append(w.tiles, pmEntry{ID: TileID(t), Offset: c.off, Length: c.length, Run: 1})
	w.zooms.add(t.Z)
	return nil
}

func (w *pmWriter) Abort() {
	w.spool.Close()
	os.Remove(w.spool.Name())
}

func (w *pmWriter) Close(md Metadata) (err error) {
	defer w.Abort()
	if err := w.spoolW.Flush(); err != nil {
		return fmt.Errorf("tilearchive: spool: %w", err)
	}
	slices.SortFunc(w.tiles, func(a, b pmEntry) int { return cmpUint64(a.ID, b.ID) })
	// Tile data in tile-id order, each content at its first use; runs of equal contents merged.
	newOff := map[uint64]uint64{} // spool offset → data offset
	var order []pmContent         // contents in data order
	var entries []pmEntry
	dataLen := uint64(0)
	for i, t := range w.tiles {
		if i > 0 && t.ID == w.tiles[i-1].ID {
			tile, _ := TileOf(t.ID)
			return fmt.Errorf("tilearchive: tile %v was put twice", tile)
		}
		off, ok := newOff[t.Offset]
		if !ok {
			off = dataLen
			newOff[t.Offset] = off
			order = append(order, pmContent{off: t.Offset, length: t.Length})
			dataLen += uint64(t.Length)
		}
		if n := len(entries); n > 0 && entries[n-1].Offset == off && entries[n-1].ID+uint64(entries[n-1].Run) == t.ID {
			entries[n-1].Run++
			continue
		}
		entries = append(entries, pmEntry{ID: t.ID, Offset: off, Length: t.Length, Run: 1})
	}
	root, leaves, err := buildDirectories(entries)
	if err != nil {
		return err
	}
	mdJSON, err := marshalJSONMetadata(md)
	if err != nil {
		return err
	}
	mdGz, err := gzipBytes(mdJSON)
	if err != nil {
		return err
	}
	h := make([]byte, pmHeaderLen)
	copy(h, "PMTiles")
	h[7] = 3
	le := binary.LittleEndian
	rootOff := uint64(pmHeaderLen)
	mdOff := rootOff + uint64(len(root))
	leafOff := mdOff + uint64(len(mdGz))
	dataOff := leafOff + uint64(len(leaves))
	for i, v := range []uint64{rootOff, uint64(len(root)), mdOff, uint64(len(mdGz)), leafOff, uint64(len(leaves)),
		dataOff, dataLen, uint64(len(w.tiles)), uint64(len(entries)), uint64(len(order))} {
		le.PutUint64(h[8+8*i:], v)
	}
	h[96] = 1 // clustered
	h[97] = pmCompressGzip
	h[98] = pmCompressNone
	if md.Format == "pbf" && w.allGzip && len(w.tiles) > 0 {
		h[98] = pmCompressGzip
	}
	h[99] = pmTileType(md.Format)
	h[100], h[101] = byte(w.zooms.min), byte(w.zooms.max)
	e7 := func(v float64) uint32 { return uint32(int32(math.Round(v * 1e7))) }
	le.PutUint32(h[102:], e7(md.Bounds[0]))
	le.PutUint32(h[106:], e7(md.Bounds[1]))
	le.PutUint32(h[110:], e7(md.Bounds[2]))
	le.PutUint32(h[114:], e7(md.Bounds[3]))
	h[118] = byte(min(max(int(md.Center[2]), w.zooms.min), w.zooms.max))
	le.PutUint32(h[119:], e7(md.Center[0]))
	le.PutUint32(h[123:], e7(md.Center[1]))

	tmp, err := os.CreateTemp(filepath.Dir(w.path), filepath.Base(w.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("tilearchive: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	for _, part := range [][]byte{h, root, mdGz, leaves} {
		bw.Write(part)
	}
	spool := windowReader{r: w.spool}
	for _, c := range order {
		data, err := spool.read(c.off, c.length)
		if err != nil {
			return fmt.Errorf("tilearchive: spool: %w", err)
		}
		bw.Write(data)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("tilearchive: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tilearchive: %w", err)
	}
	if err := publish(tmp.Name(), w.path); err != nil {
		return fmt.Errorf("tilearchive: %w", err)
	}
	return nil
}

// windowReader reads ranges of a file through a window of at least 1 MiB, so that reading
// tiles in the order they are stored costs a read per MiB, not one per tile.
type windowReader struct {
	r   io.ReaderAt
	off uint64
	buf []byte
}

// read returns n bytes at off, valid until the next read.
func (w *windowReader) read(off uint64, n uint32) ([]byte, error) {
	end := off + uint64(n)
	if off < w.off || end > w.off+uint64(len(w.buf)) {
		size := max(int(n), 1<<20)
		if cap(w.buf) < size {
			w.buf = make([]byte, size)
		}
		w.buf = w.buf[:size]
		got, err := w.r.ReadAt(w.buf, int64(off))
		if got < int(n) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		w.off, w.buf = off, w.buf[:got]
	}
	return w.buf[off-w.off : end-w.off], nil
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// buildDirectories returns the root directory and the leaf section: every entry in the root
// when it fits beside the header, else leaves of 4,096 entries (doubled until the root of
// their first ids fits).
func buildDirectories(entries []pmEntry) (root, leaves []byte, err error) {
	root, err = encodeDirectory(entries)
	if err != nil || pmHeaderLen+len(root) <= pmRootMax {
		return root, nil, err
	}
	for leafSize := 4096; ; leafSize *= 2 {
		var rootEntries []pmEntry
		leaves = leaves[:0]
		for chunk := range slices.Chunk(entries, leafSize) {
			b, err := encodeDirectory(chunk)
			if err != nil {
				return nil, nil, err
			}
			rootEntries = append(rootEntries, pmEntry{ID: chunk[0].ID, Offset: uint64(len(leaves)), Length: uint32(len(b))})
			leaves = append(leaves, b...)
		}
		if root, err = encodeDirectory(rootEntries); err != nil {
			return nil, nil, err
		}
		if pmHeaderLen+len(root) <= pmRootMax {
			return root, leaves, nil
		}
	}
}

// pmHeader is the part of a PMTiles header the reader uses.
type pmHeader struct {
	rootOff, rootLen, mdOff, mdLen, leafOff, leafLen, dataOff, dataLen uint64
	addressed                                                          uint64
	internal, tileCompression, tileType                                byte
	minZoom, maxZoom, centerZoom                                       int
	bounds                                                             [4]float64
	center                                                             [2]float64
}

func parsePMHeader(b []byte, size int64) (pmHeader, error) {
	var h pmHeader
	if len(b) < pmHeaderLen || string(b[:7]) != "PMTiles" {
		return h, fmt.Errorf("%w: not a PMTiles file", ErrFormat)
	}
	if b[7] != 3 {
		return h, fmt.Errorf("%w: PMTiles version %d: only version 3 is read", ErrFormat, b[7])
	}
	le := binary.LittleEndian
	u := func(i int) uint64 { return le.Uint64(b[8+8*i:]) }
	h.rootOff, h.rootLen, h.mdOff, h.mdLen, h.leafOff, h.leafLen, h.dataOff, h.dataLen = u(0), u(1), u(2), u(3), u(4), u(5), u(6), u(7)
	h.addressed = u(8)
	h.internal, h.tileCompression, h.tileType = b[97], b[98], b[99]
	h.minZoom, h.maxZoom, h.centerZoom = int(b[100]), int(b[101]), int(b[118])
	deg := func(i int) float64 { return float64(int32(le.Uint32(b[i:]))) / 1e7 }
	h.bounds = [4]float64{deg(102), deg(106), deg(110), deg(114)}
	h.center = [2]float64{deg(119), deg(123)}
	for _, s := range [][2]uint64{{h.rootOff, h.rootLen}, {h.mdOff, h.mdLen}, {h.leafOff, h.leafLen}, {h.dataOff, h.dataLen}} {
		if s[0] > uint64(size) || s[1] > uint64(size)-s[0] {
			return h, fmt.Errorf("%w: PMTiles section [%d, +%d) past the end of the file (%d bytes)", ErrFormat, s[0], s[1], size)
		}
	}
	if h.internal != pmCompressNone && h.internal != pmCompressGzip {
		return h, fmt.Errorf("%w: PMTiles internal compression %d: only none (1) and gzip (2) are read", ErrFormat, h.internal)
	}
	return h, nil
}

type pmReader struct {
	f    *os.File
	data windowReader // over f
	// yielded counts the tiles of a walk, which may not pass the header's addressed count
	// (a run may claim billions of tiles).
	yielded uint64
	h       pmHeader
	md      Metadata
	err     error
}

func openPMTiles(path string) (*pmReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tilearchive: %w", err)
	}
	r := &pmReader{f: f, data: windowReader{r: f}}
	if err := r.open(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func (r *pmReader) open() error {
	st, err := r.f.Stat()
	if err != nil {
		return err
	}
	b := make([]byte, pmHeaderLen)
	if _, err := r.f.ReadAt(b, 0); err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if r.h, err = parsePMHeader(b, st.Size()); err != nil {
		return err
	}
	md, err := r.section(r.h.mdOff, r.h.mdLen)
	if err != nil {
		return err
	}
	var j jsonMetadata
	if len(md) > 0 {
		if err := json.Unmarshal(md, &j); err != nil {
			return fmt.Errorf("%w: PMTiles metadata: %w", ErrFormat, err)
		}
	}
	r.md = Metadata{Name: j.Name, Format: pmTypes[r.h.tileType], Description: j.Description, Attribution: j.Attribution,
		Bounds: r.h.bounds, Center: [3]float64{r.h.center[0], r.h.center[1], float64(r.h.centerZoom)},
		MinZoom: r.h.minZoom, MaxZoom: r.h.maxZoom, VectorLayers: j.VectorLayers}
	if r.md.Format == "" {
		r.md.Format = j.Format
	}
	return nil
}

// section reads and inflates (internal compression) a metadata or directory section.
func (r *pmReader) section(off, length uint64) ([]byte, error) {
	if length > pmMaxDirBytes {
		return nil, fmt.Errorf("%w: PMTiles section of %d bytes", ErrFormat, length)
	}
	b := make([]byte, length)
	if _, err := r.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if r.h.internal == pmCompressNone || length == 0 {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: PMTiles section: %w", ErrFormat, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, pmMaxDirBytes+1))
	if err != nil || len(out) > pmMaxDirBytes {
		return nil, fmt.Errorf("%w: PMTiles section: %v", ErrFormat, err)
	}
	return out, nil
}

func (r *pmReader) Metadata() Metadata { return r.md }
func (r *pmReader) Err() error         { return r.err }
func (r *pmReader) Close() error       { return r.f.Close() }

func (r *pmReader) Tiles() iter.Seq2[ZXY, []byte] {
	return func(yield func(ZXY, []byte) bool) {
		r.err, r.yielded = nil, 0
		if err := r.walk(r.h.rootOff, r.h.rootLen, 0, yield); err != nil && !errors.Is(err, errStop) {
			r.err = err
			yield(ZXY{}, nil)
		}
	}
}

// errStop ends a walk whose consumer stopped.
var errStop = errors.New("stop")

// walk yields the tiles of the directory at [off, off+length): of the root when depth is 0,
// else of a leaf (offsets relative to the leaf section).
func (r *pmReader) walk(off, length uint64, depth int, yield func(ZXY, []byte) bool) error {
	if depth > 3 {
		return fmt.Errorf("%w: PMTiles leaf directories nested deeper than 3", ErrFormat)
	}
	b, err := r.section(off, length)
	if err != nil {
		return err
	}
	entries, err := decodeDirectory(b)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Run == 0 {
			if e.Offset > r.h.leafLen || uint64(e.Length) > r.h.leafLen-e.Offset {
				return fmt.Errorf("%w: PMTiles leaf directory past the leaf section", ErrFormat)
			}
			if err := r.walk(r.h.leafOff+e.Offset, uint64(e.Length), depth+1, yield); err != nil {
				return err
			}
			continue
		}
		if e.Offset > r.h.dataLen || uint64(e.Length) > r.h.dataLen-e.Offset {
			return fmt.Errorf("%w: PMTiles tile past the tile data section", ErrFormat)
		}
		data, err := r.data.read(r.h.dataOff+e.Offset, e.Length)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrFormat, err)
		}
		if r.yielded += uint64(e.Run); r.yielded > r.h.addressed {
			return fmt.Errorf("%w: PMTiles directories address more tiles than the header's %d", ErrFormat, r.h.addressed)
		}
		for i := range uint64(e.Run) {
			t, ok := TileOf(e.ID + i)
			if !ok {
				return fmt.Errorf("%w: PMTiles tile id %d", ErrFormat, e.ID+i)
			}
			if !yield(t, data) {
				return errStop
			}
		}
	}
	return nil
}
