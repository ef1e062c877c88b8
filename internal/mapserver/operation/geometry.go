package operation

import (
	"math"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// This file is the one place geometries change representation: schema geometries (gisxml) to
// orb and back, and orb to simplefeatures for the exact spatial predicates.

// GeometryIn converts a schema geometry to orb. An EnvelopeN becomes an orb.Bound; polygon
// rings are grouped into polygons by orientation (ArcGIS writes exterior rings clockwise,
// holes counter-clockwise). The second result is the geometry's own spatial reference (zero
// when it carries none). what names the request slot for error messages.
func GeometryIn(g gisxml.GeometryKind, what string) (orb.Geometry, proj.SR, error) {
	switch g := g.(type) {
	case nil:
		return nil, proj.SR{}, Invalid("%s: a geometry is required", what)
	case *gisxml.PointN:
		p, err := PointIn(g, what)
		return p, SRIn(g.SpatialReference), err
	case *gisxml.MultipointN:
		mp, err := pointsIn(g.PointArray, what)
		if err != nil {
			return nil, proj.SR{}, err
		}
		if len(mp) == 0 {
			return nil, proj.SR{}, Invalid("%s: the MultipointN has no points", what)
		}
		return orb.MultiPoint(mp), SRIn(g.SpatialReference), nil
	case *gisxml.EnvelopeN:
		b := orb.Bound{Min: orb.Point{g.XMin, g.YMin}, Max: orb.Point{g.XMax, g.YMax}}
		for _, f := range []float64{g.XMin, g.YMin, g.XMax, g.YMax} {
			if !finite(f) {
				return nil, proj.SR{}, Invalid("%s: envelope coordinates must be finite numbers", what)
			}
		}
		if g.XMax < g.XMin || g.YMax < g.YMin {
			return nil, proj.SR{}, Invalid("%s: XMax must not be less than XMin, nor YMax than YMin (got %g %g %g %g)", what, g.XMin, g.YMin, g.XMax, g.YMax)
		}
		return b, SRIn(g.SpatialReference), nil
	case *gisxml.PolylineN:
		var mls orb.MultiLineString
		for i, path := range g.PathArray {
			if path == nil {
				continue
			}
			ls, err := pointsIn(path.PathPart().PointArray, what)
			if err != nil {
				return nil, proj.SR{}, err
			}
			if len(ls) < 2 {
				return nil, proj.SR{}, Invalid("%s: path %d has %d point(s); a path needs at least 2", what, i, len(ls))
			}
			mls = append(mls, orb.LineString(ls))
		}
		if len(mls) == 0 {
			return nil, proj.SR{}, Invalid("%s: the PolylineN has no paths", what)
		}
		if len(mls) == 1 {
			return mls[0], SRIn(g.SpatialReference), nil
		}
		return mls, SRIn(g.SpatialReference), nil
	case *gisxml.PolygonN:
		var rings []orb.Ring
		for i, r := range g.RingArray {
			if r == nil {
				continue
			}
			ps, err := pointsIn(r.PointArray, what)
			if err != nil {
				return nil, proj.SR{}, err
			}
			if len(ps) > 0 && ps[0] != ps[len(ps)-1] {
				ps = append(ps, ps[0])
			}
			if len(ps) < 4 {
				return nil, proj.SR{}, Invalid("%s: ring %d has %d distinct point(s); a ring needs at least 3", what, i, max(len(ps)-1, 0))
			}
			rings = append(rings, orb.Ring(ps))
		}
		if len(rings) == 0 {
			return nil, proj.SR{}, Invalid("%s: the PolygonN has no rings", what)
		}
		mp := groupRings(rings)
		if len(mp) == 1 {
			return mp[0], SRIn(g.SpatialReference), nil
		}
		return mp, SRIn(g.SpatialReference), nil
	}
	return nil, proj.SR{}, Invalid("%s: geometry type %s is not supported (use PointN, MultipointN, EnvelopeN, PolylineN or PolygonN)", what, g.GisType())
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// PointIn reads one schema point; what names it in a fault.
func PointIn(p gisxml.Point, what string) (orb.Point, error) {
	pn, ok := p.(*gisxml.PointN)
	if !ok || pn == nil {
		return orb.Point{}, Invalid("%s: points must be PointN", what)
	}
	if !finite(pn.X) || !finite(pn.Y) {
		return orb.Point{}, Invalid("%s: coordinates must be finite numbers", what)
	}
	return orb.Point{pn.X, pn.Y}, nil
}

func pointsIn(ps gisxml.ArrayOfPoint, what string) ([]orb.Point, error) {
	out := make([]orb.Point, 0, len(ps))
	for _, p := range ps {
		q, err := PointIn(p, what)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// groupRings makes polygons of rings in ArcGIS order: a clockwise ring starts a polygon, a
// counter-clockwise ring is a hole of the polygon whose exterior contains it (or of the
// previous polygon). A lone counter-clockwise first ring is taken as an exterior.
func groupRings(rings []orb.Ring) orb.MultiPolygon {
	var mp orb.MultiPolygon
	for _, r := range rings {
		if r.Orientation() == orb.CW || len(mp) == 0 {
			mp = append(mp, orb.Polygon{r})
			continue
		}
		owner := len(mp) - 1
		for i, p := range mp {
			if planar.RingContains(p[0], r[0]) {
				owner = i
				break
			}
		}
		mp[owner] = append(mp[owner], r)
	}
	return mp
}

// SRIn reads a schema spatial reference (mapview.SR, the one reader); the zero SR when absent.
func SRIn(sr gisxml.SpatialReference) proj.SR { return mapview.SR(sr) }

// GeometryOut converts an orb geometry to its schema form in sr: points to PointN, multipoints
// to MultipointN, lines to PolylineN, polygons to PolygonN with exterior rings clockwise and
// holes counter-clockwise, bounds to EnvelopeN. nil gives nil.
func GeometryOut(g orb.Geometry, sr proj.SR) gisxml.GeometryKind {
	ref := SpatialReference(sr)
	switch g := g.(type) {
	case orb.Point:
		return &gisxml.PointN{X: g[0], Y: g[1], SpatialReference: ref}
	case orb.MultiPoint:
		return &gisxml.MultipointN{PointArray: pointsOut(g), Extent: envelopeNoSR(g.Bound()), SpatialReference: ref}
	case orb.LineString:
		return &gisxml.PolylineN{PathArray: gisxml.ArrayOfPath{&gisxml.Path{PointArray: pointsOut(g)}}, Extent: envelopeNoSR(g.Bound()), SpatialReference: ref}
	case orb.MultiLineString:
		paths := make(gisxml.ArrayOfPath, 0, len(g))
		for _, ls := range g {
			paths = append(paths, &gisxml.Path{PointArray: pointsOut(ls)})
		}
		return &gisxml.PolylineN{PathArray: paths, Extent: envelopeNoSR(g.Bound()), SpatialReference: ref}
	case orb.Polygon:
		return &gisxml.PolygonN{RingArray: ringsOut(g, nil), Extent: envelopeNoSR(g.Bound()), SpatialReference: ref}
	case orb.MultiPolygon:
		var rings gisxml.ArrayOfRing
		for _, p := range g {
			rings = ringsOut(p, rings)
		}
		return &gisxml.PolygonN{RingArray: rings, Extent: envelopeNoSR(g.Bound()), SpatialReference: ref}
	case orb.Bound:
		return &gisxml.EnvelopeN{XMin: g.Min[0], YMin: g.Min[1], XMax: g.Max[0], YMax: g.Max[1], SpatialReference: ref}
	}
	return nil
}

func envelopeNoSR(b orb.Bound) *gisxml.EnvelopeN {
	return &gisxml.EnvelopeN{XMin: b.Min[0], YMin: b.Min[1], XMax: b.Max[0], YMax: b.Max[1]}
}

func pointsOut(ps []orb.Point) gisxml.ArrayOfPoint {
	out := make(gisxml.ArrayOfPoint, len(ps))
	for i, p := range ps {
		out[i] = &gisxml.PointN{X: p[0], Y: p[1]}
	}
	return out
}

func ringsOut(p orb.Polygon, out gisxml.ArrayOfRing) gisxml.ArrayOfRing {
	for i, r := range p {
		want := orb.CW
		if i > 0 {
			want = orb.CCW
		}
		pts := pointsOut(r)
		if r.Orientation() != want {
			for a, b := 0, len(pts)-1; a < b; a, b = a+1, b-1 {
				pts[a], pts[b] = pts[b], pts[a]
			}
		}
		out = append(out, &gisxml.Ring{Path: gisxml.Path{PointArray: pts}})
	}
	return out
}

// Reproject returns a copy of g transformed by t (g itself when t is nil); nil when g cannot be
// expressed in t's target system.
func Reproject(g orb.Geometry, t *proj.Transformer) orb.Geometry {
	if t == nil || g == nil {
		return g
	}
	out, err := t.Geometry(orb.Clone(g))
	if err != nil {
		return nil
	}
	return out
}
