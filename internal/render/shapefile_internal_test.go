package render

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/paulmach/orb"
)

// writeShapefile writes geoms, all points, all lines or all polygons, as the ESRI shapefile
// base.shp, base.shx and base.dbf (one numeric field, ID), for UMN MapServer to read in the
// differential tests. Coordinates are written as they are (float64), so MapServer draws exactly the
// geometry the renderer is given.
func writeShapefile(base string, geoms []orb.Geometry) error {
	if len(geoms) == 0 {
		return fmt.Errorf("shapefile %s: no geometry", base)
	}
	var kind int32
	switch geoms[0].(type) {
	case orb.Point:
		kind = 1
	case orb.LineString, orb.MultiLineString:
		kind = 3
	case orb.Polygon, orb.MultiPolygon:
		kind = 5
	default:
		return fmt.Errorf("shapefile %s: unsupported geometry %T", base, geoms[0])
	}
	var shp, shx []byte
	var all orb.Bound
	for i, g := range geoms {
		b := g.Bound()
		if i == 0 {
			all = b
		} else {
			all = all.Union(b)
		}
		var rec []byte
		rec = binary.LittleEndian.AppendUint32(rec, uint32(kind))
		if kind == 1 {
			p, ok := g.(orb.Point)
			if !ok {
				return fmt.Errorf("shapefile %s: feature %d is %T among points", base, i, g)
			}
			rec = appendFloats(rec, p[0], p[1])
		} else {
			parts, err := shapeParts(g, kind)
			if err != nil {
				return fmt.Errorf("shapefile %s: feature %d: %w", base, i, err)
			}
			rec = appendFloats(rec, b.Min[0], b.Min[1], b.Max[0], b.Max[1])
			n := 0
			for _, p := range parts {
				n += len(p)
			}
			rec = binary.LittleEndian.AppendUint32(rec, uint32(len(parts)))
			rec = binary.LittleEndian.AppendUint32(rec, uint32(n))
			start := 0
			for _, p := range parts {
				rec = binary.LittleEndian.AppendUint32(rec, uint32(start))
				start += len(p)
			}
			for _, p := range parts {
				for _, q := range p {
					rec = appendFloats(rec, q[0], q[1])
				}
			}
		}
		offset := 100 + len(shp)
		shp = binary.BigEndian.AppendUint32(shp, uint32(i+1))
		shp = binary.BigEndian.AppendUint32(shp, uint32(len(rec)/2))
		shp = append(shp, rec...)
		shx = binary.BigEndian.AppendUint32(shx, uint32(offset/2))
		shx = binary.BigEndian.AppendUint32(shx, uint32(len(rec)/2))
	}
	header := func(length int) []byte {
		h := make([]byte, 100)
		binary.BigEndian.PutUint32(h[0:], 9994)
		binary.BigEndian.PutUint32(h[24:], uint32(length/2))
		binary.LittleEndian.PutUint32(h[28:], 1000)
		binary.LittleEndian.PutUint32(h[32:], uint32(kind))
		for i, v := range []float64{all.Min[0], all.Min[1], all.Max[0], all.Max[1]} {
			binary.LittleEndian.PutUint64(h[36+8*i:], math.Float64bits(v))
		}
		return h
	}
	if err := os.WriteFile(base+".shp", append(header(100+len(shp)), shp...), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".shx", append(header(100+len(shx)), shx...), 0o644); err != nil {
		return err
	}
	return os.WriteFile(base+".dbf", dbfIDs(len(geoms)), 0o644)
}

// shapeParts returns the parts of a line or polygon geometry as shapefile parts: polygon rings
// closed, exteriors clockwise and holes anticlockwise (y up), as the format asks.
func shapeParts(g orb.Geometry, kind int32) ([][]orb.Point, error) {
	var parts [][]orb.Point
	ring := func(r orb.Ring, exterior bool) {
		pts := append([]orb.Point(nil), r...)
		if pts[0] != pts[len(pts)-1] {
			pts = append(pts, pts[0])
		}
		// Shoelace sum: positive when anticlockwise with y up.
		var a float64
		for i := 0; i+1 < len(pts); i++ {
			a += pts[i][0]*pts[i+1][1] - pts[i+1][0]*pts[i][1]
		}
		if (a > 0) == exterior {
			for i, j := 0, len(pts)-1; i < j; i, j = i+1, j-1 {
				pts[i], pts[j] = pts[j], pts[i]
			}
		}
		parts = append(parts, pts)
	}
	switch g := g.(type) {
	case orb.LineString:
		parts = append(parts, g)
	case orb.MultiLineString:
		for _, l := range g {
			parts = append(parts, l)
		}
	case orb.Polygon:
		for i, r := range g {
			ring(r, i == 0)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			for i, r := range p {
				ring(r, i == 0)
			}
		}
	}
	if len(parts) == 0 || (kind == 3) != isLineGeom(g) {
		return nil, fmt.Errorf("geometry %T does not fit shape type %d", g, kind)
	}
	return parts, nil
}

func isLineGeom(g orb.Geometry) bool {
	switch g.(type) {
	case orb.LineString, orb.MultiLineString:
		return true
	}
	return false
}

func appendFloats(b []byte, vs ...float64) []byte {
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// dbfIDs returns a dBASE III table of n records with one field, ID (numeric, 10 digits), 1 to n.
func dbfIDs(n int) []byte {
	const width = 10
	h := make([]byte, 32+32+1)
	h[0] = 3
	h[1], h[2], h[3] = 126, 11, 27 // last update, any date
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	binary.LittleEndian.PutUint16(h[8:], uint16(len(h)))
	binary.LittleEndian.PutUint16(h[10:], 1+width)
	copy(h[32:], "ID")
	h[32+11] = 'N'
	h[32+16] = width
	h[64] = 0x0d
	for i := 1; i <= n; i++ {
		h = append(h, ' ')
		h = fmt.Appendf(h, "%*d", width, i)
	}
	return append(h, 0x1a)
}
