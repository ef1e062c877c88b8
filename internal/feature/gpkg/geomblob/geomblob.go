// Package geomblob reads and writes GeoPackage geometry blobs (GeoPackage 1.3 §2.1.3): the "GP"
// header with its optional envelope, then ISO WKB. It is the part of the GeoPackage format that
// holds untrusted bytes and has no SQLite in it, so it is fuzzed on its own.
package geomblob

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"
)

// ErrInvalid is wrapped by every decoding error.
var ErrInvalid = errors.New("gpkg: invalid geometry")

// Envelope flags of the GeoPackage binary header (spec §2.1.3.1.1).
const (
	flagLittleEndian = 1 << 0
	flagEnvelopeMask = 0x0e
	flagEmpty        = 1 << 4
	flagExtended     = 1 << 5
)

// Decode decodes a GeoPackage geometry blob: the "GP" header (with
// its optional envelope) followed by ISO WKB. Z and M ordinates are dropped.
// A NULL blob (nil) or a blob flagged empty yields a nil geometry and no
// error.
func Decode(blob []byte) (orb.Geometry, error) {
	if blob == nil {
		return nil, nil
	}
	if len(blob) < 8 || blob[0] != 'G' || blob[1] != 'P' {
		return nil, fmt.Errorf("%w: missing GP header", ErrInvalid)
	}
	flags := blob[3]
	if flags&flagExtended != 0 {
		return nil, fmt.Errorf("%w: extended geometry types are not supported", ErrInvalid)
	}
	var envLen int
	switch (flags & flagEnvelopeMask) >> 1 {
	case 0:
	case 1:
		envLen = 32
	case 2, 3:
		envLen = 48
	case 4:
		envLen = 64
	default:
		return nil, fmt.Errorf("%w: bad envelope indicator", ErrInvalid)
	}
	if flags&flagEmpty != 0 {
		return nil, nil
	}
	start := 8 + envLen
	if len(blob) < start {
		return nil, fmt.Errorf("%w: truncated header", ErrInvalid)
	}
	d := wkbReader{buf: blob[start:]}
	g := d.geometry(0)
	if d.err != nil {
		return nil, d.err
	}
	return g, nil
}

// wkbReader is a cursor over a WKB buffer. The first error sticks; later
// reads return zero values.
type wkbReader struct {
	buf []byte
	off int
	err error
}

func (r *wkbReader) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", ErrInvalid, msg, r.off)
	}
}

func (r *wkbReader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if len(r.buf)-r.off < n {
		r.fail("truncated WKB")
		return false
	}
	return true
}

func (r *wkbReader) uint32(order binary.ByteOrder) uint32 {
	if !r.need(4) {
		return 0
	}
	v := order.Uint32(r.buf[r.off:])
	r.off += 4
	return v
}

func (r *wkbReader) count(order binary.ByteOrder, min int) int {
	n := int(r.uint32(order))
	// every element takes at least min bytes: refuse counts the buffer cannot hold
	if r.err == nil && n*min > len(r.buf)-r.off {
		r.fail("element count exceeds data")
		return 0
	}
	return n
}

// header reads a byte order and a type code and returns the base type
// (1…7) and the number of ordinates per point.
func (r *wkbReader) header() (binary.ByteOrder, uint32, int) {
	if !r.need(1) {
		return nil, 0, 0
	}
	var order binary.ByteOrder = binary.LittleEndian
	switch r.buf[r.off] {
	case 0:
		order = binary.BigEndian
	case 1:
	default:
		r.fail("bad byte order")
		return nil, 0, 0
	}
	r.off++
	code := r.uint32(order)
	dims := 2
	// EWKB flags
	if code&0x80000000 != 0 {
		dims++
	}
	if code&0x40000000 != 0 {
		dims++
	}
	code &= 0x0fffffff
	// ISO: 1000 Z, 2000 M, 3000 ZM
	switch code / 1000 {
	case 1, 2:
		dims++
	case 3:
		dims += 2
	}
	return order, code % 1000, dims
}

// point reads one point. Its coordinates must be finite: NaN and infinities would reach the
// index, the queries and the drawing; only a lone point may be NaN, NaN (WKB's POINT EMPTY).
func (r *wkbReader) point(order binary.ByteOrder, dims int) orb.Point {
	p := r.anyPoint(order, dims)
	if r.err == nil && !finite(p) {
		r.fail("coordinate is not a finite number")
	}
	return p
}

func (r *wkbReader) anyPoint(order binary.ByteOrder, dims int) orb.Point {
	if !r.need(8 * dims) {
		return orb.Point{}
	}
	x := math.Float64frombits(order.Uint64(r.buf[r.off:]))
	y := math.Float64frombits(order.Uint64(r.buf[r.off+8:]))
	r.off += 8 * dims
	return orb.Point{x, y}
}

func finite(p orb.Point) bool {
	return !math.IsNaN(p[0]) && !math.IsInf(p[0], 0) && !math.IsNaN(p[1]) && !math.IsInf(p[1], 0)
}

func (r *wkbReader) points(order binary.ByteOrder, dims int) []orb.Point {
	n := r.count(order, 8*dims)
	ps := make([]orb.Point, n)
	for i := range ps {
		ps[i] = r.point(order, dims)
	}
	return ps
}

func (r *wkbReader) polygon(order binary.ByteOrder, dims int) orb.Polygon {
	n := r.count(order, 4)
	p := make(orb.Polygon, n)
	for i := range p {
		p[i] = r.points(order, dims)
	}
	return p
}

func (r *wkbReader) geometry(depth int) orb.Geometry {
	if depth > 8 {
		r.fail("geometry nested too deeply")
		return nil
	}
	order, typ, dims := r.header()
	if r.err != nil {
		return nil
	}
	switch typ {
	case 1:
		p := r.anyPoint(order, dims)
		if r.err == nil && !finite(p) && !(math.IsNaN(p[0]) && math.IsNaN(p[1])) {
			r.fail("coordinate is not a finite number")
		}
		return p
	case 2:
		return orb.LineString(r.points(order, dims))
	case 3:
		return r.polygon(order, dims)
	case 4:
		return orb.MultiPoint(members[orb.Point](r, order, 5, depth, "multipoint member is not a point"))
	case 5:
		return orb.MultiLineString(members[orb.LineString](r, order, 9, depth, "multilinestring member is not a linestring"))
	case 6:
		return orb.MultiPolygon(members[orb.Polygon](r, order, 9, depth, "multipolygon member is not a polygon"))
	case 7:
		n := r.count(order, 5)
		c := make(orb.Collection, n)
		for i := range c {
			c[i] = r.geometry(depth + 1)
		}
		return c
	}
	r.fail(fmt.Sprintf("unsupported WKB type %d", typ))
	return nil
}

// members reads the members of a multi-geometry at depth: a count, then that many geometries
// (min bytes each at the least), each of which must be a T; one that is not fails with msg.
func members[T orb.Geometry](r *wkbReader, order binary.ByteOrder, min, depth int, msg string) []T {
	ms := make([]T, r.count(order, min))
	for i := range ms {
		if m, ok := r.geometry(depth + 1).(T); ok {
			ms[i] = m
		} else {
			r.fail(msg)
		}
	}
	return ms
}

// Encode writes a GeoPackage geometry blob: a little-endian "GP" header with the envelope, then
// WKB. A nil geometry is NULL.
func Encode(g orb.Geometry, srsID int) ([]byte, error) {
	if g == nil {
		return nil, nil
	}
	body, err := wkb.Marshal(g, binary.LittleEndian)
	if err != nil {
		return nil, fmt.Errorf("gpkg: encode geometry: %w", err)
	}
	b := g.Bound()
	out := make([]byte, 0, 40+len(body))
	out = append(out, 'G', 'P', 0, flagLittleEndian|1<<1)
	out = binary.LittleEndian.AppendUint32(out, uint32(int32(srsID)))
	for _, v := range []float64{b.Min[0], b.Max[0], b.Min[1], b.Max[1]} {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return append(out, body...), nil
}

// Envelope returns the envelope a GeoPackage geometry blob carries in
// its header, without decoding the WKB; ok is false when it has none.
func Envelope(blob []byte) (orb.Bound, bool) {
	if len(blob) < 8+32 || blob[0] != 'G' || blob[1] != 'P' {
		return orb.Bound{}, false
	}
	flags := blob[3]
	if (flags&flagEnvelopeMask)>>1 == 0 || flags&flagEmpty != 0 {
		return orb.Bound{}, false
	}
	var order binary.ByteOrder = binary.BigEndian
	if flags&flagLittleEndian != 0 {
		order = binary.LittleEndian
	}
	f := func(i int) float64 { return math.Float64frombits(order.Uint64(blob[8+8*i:])) }
	return orb.Bound{Min: orb.Point{f(0), f(2)}, Max: orb.Point{f(1), f(3)}}, true
}
