package postgis

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
)

// TWKB ("tiny WKB", PostGIS's ST_AsTWKB) is how a draw's geometries travel when the query gives
// a Resolution: coordinates as integers on a decimal grid, each point a zigzag varint delta from
// the previous one, repeated points dropped by the server. A 48 m square parcel of a region view
// (0.01 m grid) is 24 bytes instead of WKB's 93. The format: https://github.com/TWKB/Specification.

// errTWKB is the error of a malformed TWKB value.
var errTWKB = errors.New("malformed TWKB")

// twkbReader decodes TWKB values; one reader serves a whole scan, handing out points and rings
// from blocks it allocates, so that small geometries cost no allocation of their own.
type twkbReader struct {
	b    []byte
	at   int
	f    float64 // 10^precision: a coordinate is its integer over f
	dims int     // coordinates per point (2, 3 or 4); only x and y are kept
	last [4]int64
	err  error

	pts   []orb.Point // free points of the current block
	rings []orb.Ring  // free rings of the current block
}

// twkbBlock is the size of the point and ring blocks: geometries up to it share blocks; larger
// ones get their own slices.
const twkbBlock = 1024

func (r *twkbReader) allocPoints(n int) []orb.Point {
	if n > twkbBlock/4 {
		return make([]orb.Point, n)
	}
	if len(r.pts) < n {
		r.pts = make([]orb.Point, twkbBlock)
	}
	p := r.pts[:n:n]
	r.pts = r.pts[n:]
	return p
}

func (r *twkbReader) allocRings(n int) []orb.Ring {
	if n > twkbBlock/4 {
		return make([]orb.Ring, 0, n)
	}
	if len(r.rings) < n {
		r.rings = make([]orb.Ring, twkbBlock)
	}
	p := r.rings[:0:n]
	r.rings = r.rings[n:]
	return p
}

func (r *twkbReader) byte() byte {
	if r.at >= len(r.b) {
		r.err = errTWKB
		return 0
	}
	c := r.b[r.at]
	r.at++
	return c
}

func (r *twkbReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b[min(r.at, len(r.b)):])
	if n <= 0 {
		r.err = errTWKB
		return 0
	}
	r.at += n
	return v
}

func (r *twkbReader) varint() int64 {
	v := r.uvarint()
	return int64(v>>1) ^ -int64(v&1)
}

// count reads a count, bounded by the bytes left (every item takes at least one).
func (r *twkbReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)-r.at) {
		r.err = errTWKB
		return 0
	}
	return int(n)
}

func (r *twkbReader) points(n int) []orb.Point {
	if r.err != nil || n > (len(r.b)-r.at)/r.dims {
		r.err = errTWKB
		return nil
	}
	pts := r.allocPoints(n)
	for i := range pts {
		for d := range r.dims {
			r.last[d] += r.varint()
		}
		pts[i] = orb.Point{float64(r.last[0]) / r.f, float64(r.last[1]) / r.f}
	}
	return pts
}

func (r *twkbReader) polygon() orb.Polygon {
	n := r.count()
	p := orb.Polygon(r.allocRings(n))
	for range n {
		ring := orb.Ring(r.points(r.count()))
		if r.err != nil {
			return nil
		}
		p = append(p, ring)
	}
	return p
}

// decode decodes one TWKB geometry (2D: Z and M are read and dropped). An empty geometry
// decodes to nil. The geometry does not share memory with b.
func (r *twkbReader) decode(b []byte) (orb.Geometry, error) {
	r.b, r.at, r.err = b, 0, nil
	g := r.geometry()
	if r.err != nil {
		return nil, fmt.Errorf("%w at byte %d of %d", errTWKB, r.at, len(b))
	}
	return g, nil
}

func (r *twkbReader) geometry() orb.Geometry {
	head := r.byte()
	meta := r.byte()
	typ := head & 0x0f
	prec := int64(head>>4>>1) ^ -int64(head>>4&1)
	r.f = math.Pow10(int(prec))
	r.dims = 2
	if meta&0x08 != 0 { // extended dimensions: Z and M flags
		ext := r.byte()
		r.dims += int(ext & 1)
		r.dims += int(ext >> 1 & 1)
	}
	if meta&0x02 != 0 { // size
		r.uvarint()
	}
	if meta&0x01 != 0 { // bounding box: a min and a delta per dimension
		for range 2 * r.dims {
			r.varint()
		}
	}
	if r.err != nil || meta&0x10 != 0 { // empty
		return nil
	}
	r.last = [4]int64{}
	idList := meta&0x04 != 0
	parts := func() int {
		n := r.count()
		if idList {
			for range n {
				r.varint()
			}
		}
		return n
	}
	switch typ {
	case 1:
		pts := r.points(1)
		if r.err != nil {
			return nil
		}
		return pts[0]
	case 2:
		return orb.LineString(r.points(r.count()))
	case 3:
		return r.polygon()
	case 4:
		return orb.MultiPoint(r.points(parts()))
	case 5:
		n := parts()
		ml := make(orb.MultiLineString, 0, n)
		for range n {
			ml = append(ml, r.points(r.count()))
		}
		return ml
	case 6:
		n := parts()
		mp := make(orb.MultiPolygon, 0, n)
		for range n {
			mp = append(mp, r.polygon())
		}
		return mp
	case 7:
		n := parts()
		c := make(orb.Collection, 0, n)
		for range n {
			if g := r.geometry(); g != nil {
				c = append(c, g)
			}
			if r.err != nil {
				return nil
			}
		}
		return c
	}
	r.err = errTWKB
	return nil
}
