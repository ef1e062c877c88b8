package proj

import (
	"errors"
	"fmt"
	"math"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/paulmach/orb"
)

// MetersPerDegree is the length of a degree of longitude on the WGS 84 equator: what one unit
// of a geographic system counts for in scales.
const MetersPerDegree = 111319.49079327357

// ErrOutside is wrapped by the error of a transformation some of whose points lie outside the
// region where the target system is defined (they come out infinite or NaN).
var ErrOutside = errors.New("proj: coordinates outside the system's domain")

// CRS is what a spatial reference means, as far as mapfarm needs to know.
type CRS struct {
	SR SR
	// LatestWKID is the system's current WKID (the authority code PROJ reports), or SR.WKID.
	LatestWKID int
	// Geographic says coordinates are longitude and latitude in degrees.
	Geographic bool
	// MetersPerUnit is the length of one coordinate unit in metres, for scales: the linear
	// unit of a projected system (0.3048006… for US survey feet), MetersPerDegree for a
	// geographic one.
	MetersPerUnit float64
	// Area is the area of use in WGS 84 longitude/latitude degrees (the whole world when the
	// system does not say).
	Area orb.Bound
	// LonOrigin is the central meridian in degrees: the system's antimeridian, where a map
	// drawn in it must be cut, is LonOrigin ± 180°.
	LonOrigin float64
	// Shape is the kind of map the system draws, which decides what of the world a drawing in
	// it shows (DrawWindows).
	Shape Shape
	// WKT is the Esri-style well-known text ArcGIS reports for the system.
	WKT string
	// NorthFirst says the authority's axis order puts latitude or northing first (EPSG:4326,
	// most EPSG geographic systems, some projected ones). mapfarm's coordinates are always
	// easting first; only a protocol that follows the authority's order (WMS 1.3.0) reads it.
	NorthFirst bool

	def string // the engine's definition of the system ("EPSG:5070", "ESRI:102003", a WKT)
}

// Shape is the kind of map a projected system draws, as far as drawing needs to know where it
// ends.
type Shape int

const (
	// ShapeRegional is any other system: drawn over its area of use widened by a margin, and
	// cut at its antimeridian, an edge of the map (transverse Mercator, oblique and equatorial
	// azimuthal systems, cylindrical and pseudocylindrical ones, and geographic systems).
	ShapeRegional Shape = iota
	// ShapeConic is a conic system (Albers, Lambert conformal conic, equidistant conic): its
	// meridians are rays from the cone's apex and it is defined over the whole world but the
	// pole away from the apex, so it is drawn over every longitude, cut at its antimeridian
	// (the ray the cone is opened along), and over latitudes well beyond its area of use.
	ShapeConic
	// ShapeNorthPolar and ShapeSouthPolar are azimuthal systems about a pole (polar
	// stereographic, Lambert azimuthal equal-area or azimuthal equidistant with a latitude of
	// origin of ±90°, UPS): their antimeridian is a ray from the pole inside the map, not an
	// edge, so nothing is cut there; they are drawn over the hemisphere of their pole and a
	// margin beyond the equator.
	ShapeNorthPolar
	ShapeSouthPolar
)

// world is the whole earth in longitude/latitude degrees.
func world() orb.Bound { return orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}} }

// builtin describes the systems every engine knows: WGS 84 and Web Mercator.
func builtin(sr SR) (CRS, bool) {
	switch {
	case sr.WKID == WGS84:
		return CRS{SR: sr, LatestWKID: WGS84, Geographic: true, MetersPerUnit: MetersPerDegree, Area: world(), WKT: wktWGS84, def: "EPSG:4326",
			NorthFirst: true}, true
	case sr.IsWebMercator():
		return CRS{SR: sr, LatestWKID: WebMercator, MetersPerUnit: 1, WKT: wktWebMercator, def: "EPSG:3857",
			Area: orb.Bound{Min: orb.Point{-180, -MaxLatitude}, Max: orb.Point{180, MaxLatitude}}}, true
	}
	return CRS{}, false
}

// operation moves point slices in place between two systems; what an engine provides. Points
// it cannot transform come out infinite or NaN.
type operation interface {
	forward(ps []orb.Point) error
	inverse(ps []orb.Point) error
}

// engine describes systems and makes operations between them: PROJ, or the built-in one.
type engine interface {
	describe(sr SR) (CRS, error)
	operation(from, to CRS) (operation, error)
}

type identity struct{}

func (identity) forward([]orb.Point) error { return nil }
func (identity) inverse([]orb.Point) error { return nil }

// mercator is WGS 84 → Web Mercator (inverse: back).
type mercator struct{}

func (mercator) forward(ps []orb.Point) error {
	for i, p := range ps {
		ps[i] = ToMercator(p)
	}
	return nil
}

func (mercator) inverse(ps []orb.Point) error {
	for i, p := range ps {
		ps[i] = FromMercator(p)
	}
	return nil
}

type inverted struct{ op operation }

func (o inverted) forward(ps []orb.Point) error { return o.op.inverse(ps) }
func (o inverted) inverse(ps []orb.Point) error { return o.op.forward(ps) }

// builtinOperation is the operation between built-in systems, when both are.
func builtinOperation(from, to CRS) (operation, bool) {
	switch {
	case from.SR.Same(to.SR):
		return identity{}, true
	case from.SR.WKID == WGS84 && to.SR.IsWebMercator():
		return mercator{}, true
	case from.SR.IsWebMercator() && to.SR.WKID == WGS84:
		return inverted{mercator{}}, true
	}
	return nil, false
}

// Transformer moves coordinates from Source to Target (Forward) and back (Inverse). It is
// safe for concurrent use.
type Transformer struct {
	Source, Target CRS
	op             operation
}

// Identity reports whether the transformer leaves coordinates as they are.
func (t *Transformer) Identity() bool {
	_, ok := t.op.(identity)
	return ok
}

// Forward transforms ps from Source to Target in place. Points outside the target's domain
// come out non-finite and the error wraps ErrOutside.
func (t *Transformer) Forward(ps []orb.Point) error {
	if _, ok := t.op.(interface{ checked() }); ok {
		return t.op.forward(ps)
	}
	return finish(t.op.forward(ps), ps)
}

// Inverse transforms ps from Target to Source in place, as Forward does the other way.
func (t *Transformer) Inverse(ps []orb.Point) error { return finish(t.op.inverse(ps), ps) }

func finish(err error, ps []orb.Point) error {
	if err != nil {
		return err
	}
	for _, p := range ps {
		if !finite(p) {
			return fmt.Errorf("%w: (%g, %g)", ErrOutside, p[0], p[1])
		}
	}
	return nil
}

func finite(p orb.Point) bool {
	return !math.IsNaN(p[0]) && !math.IsNaN(p[1]) && !math.IsInf(p[0], 0) && !math.IsInf(p[1], 0)
}

// Point transforms one point forward.
func (t *Transformer) Point(p orb.Point) (orb.Point, error) {
	ps := []orb.Point{p}
	err := t.Forward(ps)
	return ps[0], err
}

// Geometry transforms g forward in place (points and bounds, which are values, come back
// transformed) and returns it; a bound is transformed by Bound. nil stays nil.
func (t *Transformer) Geometry(g orb.Geometry) (orb.Geometry, error) {
	return t.geometry(g, t.Forward, t.Bound)
}

// InverseGeometry is Geometry from Target to Source.
func (t *Transformer) InverseGeometry(g orb.Geometry) (orb.Geometry, error) {
	return t.geometry(g, t.Inverse, t.InverseBound)
}

func (t *Transformer) geometry(g orb.Geometry, fn func([]orb.Point) error, bound func(orb.Bound) (orb.Bound, error)) (orb.Geometry, error) {
	switch v := g.(type) {
	case nil:
		return nil, nil
	case orb.Point:
		ps := []orb.Point{v}
		err := fn(ps)
		return ps[0], err
	case orb.Bound:
		return bound(v)
	case orb.Collection:
		for i := range v {
			c, err := t.geometry(v[i], fn, bound)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
		return v, nil
	}
	return g, EachSlice(g, fn)
}

// gridPoints is how many points per side Bound samples, over the whole bound (edges and
// inside): a straight edge in one system is a curve in another, with its extreme between the
// corners, and a bound may reach beyond where the other system is defined.
const gridPoints = 17

// Bound returns the bound in Target of a bound in Source, from a grid of points over it;
// points that fall outside the target's domain are left out (an error only when all do). An
// empty bound stays empty.
func (t *Transformer) Bound(b orb.Bound) (orb.Bound, error) {
	out, _, err := t.bound(b, t.op.forward)
	return out, err
}

// InverseBound is Bound from Target to Source.
func (t *Transformer) InverseBound(b orb.Bound) (orb.Bound, error) {
	out, _, err := t.bound(b, t.op.inverse)
	return out, err
}

// InverseCover returns a bound in Source that holds every point of b (in Target), for a
// candidate filter: ok is false when part of b lies outside Source's domain, so that no bound
// in Source is sure to hold all of it.
func (t *Transformer) InverseCover(b orb.Bound) (orb.Bound, bool) {
	out, whole, err := t.bound(b, t.op.inverse)
	return out, err == nil && whole
}

func (t *Transformer) bound(b orb.Bound, fn func([]orb.Point) error) (orb.Bound, bool, error) {
	if b.IsEmpty() || t.Identity() {
		return b, true, nil
	}
	ps := make([]orb.Point, 0, gridPoints*gridPoints)
	w, h := b.Max[0]-b.Min[0], b.Max[1]-b.Min[1]
	for i := range gridPoints {
		for j := range gridPoints {
			ps = append(ps, orb.Point{b.Min[0] + w*float64(i)/(gridPoints-1), b.Min[1] + h*float64(j)/(gridPoints-1)})
		}
	}
	if err := fn(ps); err != nil {
		return orb.Bound{}, false, err
	}
	out := orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
	whole := true
	for _, p := range ps {
		if finite(p) {
			out = out.Extend(p)
		} else {
			whole = false
		}
	}
	if out.Min[0] > out.Max[0] {
		return orb.Bound{}, false, fmt.Errorf("%w: no point of the bound %v transforms from %s to %s", ErrOutside, b, t.Source.SR.Name(), t.Target.SR.Name())
	}
	return out, whole, nil
}

// Systems describes spatial references and makes transformers between them, keeping the
// most recently used of each (size of each kind). It is safe for concurrent use.
type Systems struct {
	eng   engine
	crss  *lru.Cache[SR, CRS]
	ops   *lru.Cache[[2]SR, *Transformer]
	draws *lru.Cache[drawKey, *Transformer] // approximate transformers of recent views
}

// drawKey names an approximate transformer: its systems, view and error.
type drawKey struct {
	from, to SR
	view     orb.Bound
	maxErr   float64
}

// DefaultCacheSize is how many systems and transformers a Systems keeps by default.
const DefaultCacheSize = 64

// NewSystems returns a Systems on this build's engine keeping size systems and size
// transformers (DefaultCacheSize when size ≤ 0).
func NewSystems(size int) *Systems {
	if size <= 0 {
		size = DefaultCacheSize
	}
	crss, _ := lru.New[SR, CRS](size) // errors only for size ≤ 0
	ops, _ := lru.New[[2]SR, *Transformer](size)
	draws, _ := lru.New[drawKey, *Transformer](size)
	return &Systems{eng: newEngine(), crss: crss, ops: ops, draws: draws}
}

// key is the cache key of an SR: Web Mercator aliases share one.
func key(sr SR) SR {
	if sr.IsWebMercator() {
		return SR{WKID: WebMercator}
	}
	if sr.WKID != 0 {
		return SR{WKID: sr.WKID}
	}
	return SR{Text: sr.Text}
}

// CRS describes an SR. Text that is not a WKT is an error wrapping ErrInvalid; a WKT of WGS 84
// or Web Mercator is described as the built-in system (its CRS.SR has the WKID, see FromWKT);
// an SR the engine does not know is an error wrapping ErrUnsupported that names the WKID (or
// the WKT).
func (s *Systems) CRS(sr SR) (CRS, error) {
	if sr.IsZero() {
		return CRS{}, fmt.Errorf("%w: no spatial reference given", ErrUnsupported)
	}
	if c, ok := builtin(sr); ok {
		return c, nil
	}
	k := key(sr)
	if c, ok := s.crss.Get(k); ok {
		c.SR = sr
		c.SR.EsriWKT = c.WKT
		return c, nil
	}
	if sr.WKID == 0 {
		// Text must be a WKT before an engine sees it (PROJ would take a name and guess);
		// one of WGS 84 or Web Mercator is the built-in system, in every build.
		wkt, err := FromWKT(sr.Text)
		if err != nil {
			return CRS{}, err
		}
		if c, ok := builtin(wkt); ok {
			return c, nil
		}
	}
	c, err := s.eng.describe(k)
	if err != nil {
		return CRS{}, err
	}
	c.SR.EsriWKT = c.WKT
	s.crss.Add(k, c)
	c.SR = sr
	c.SR.EsriWKT = c.WKT
	return c, nil
}

// Described returns sr with the Esri WKT PROJ writes for it (SR.EsriWKT), which responses
// report; sr itself when it is a built-in system (whose WKT every build knows), when the
// engine does not know it, or for a nil Systems.
func (s *Systems) Described(sr SR) SR {
	if s == nil || sr.IsZero() || sr.Known() || sr.EsriWKT != "" {
		return sr
	}
	c, err := s.CRS(sr)
	if err != nil {
		return sr
	}
	return c.SR
}

// Transformer returns the transformer from one SR to another.
func (s *Systems) Transformer(from, to SR) (*Transformer, error) {
	k := [2]SR{key(from), key(to)}
	if t, ok := s.ops.Get(k); ok {
		return t, nil
	}
	src, err := s.CRS(from)
	if err != nil {
		return nil, err
	}
	dst, err := s.CRS(to)
	if err != nil {
		return nil, err
	}
	op, ok := builtinOperation(src, dst)
	if !ok {
		if op, err = s.eng.operation(src, dst); err != nil {
			return nil, err
		}
	}
	t := &Transformer{Source: src, Target: dst, op: op}
	s.ops.Add(k, t)
	return t, nil
}

// Transform returns a point function from one SR to another, for code that transforms a few
// points once (loading data stored in another system than its map's): it builds the
// transformation afresh, keeping nothing. Points it cannot transform come out NaN.
func Transform(from, to SR) (func(orb.Point) orb.Point, error) {
	t, err := NewSystems(1).Transformer(from, to)
	if err != nil {
		return nil, err
	}
	if t.Identity() {
		return func(p orb.Point) orb.Point { return p }, nil
	}
	return func(p orb.Point) orb.Point {
		q, err := t.Point(p)
		if err != nil {
			return orb.Point{math.NaN(), math.NaN()}
		}
		return q
	}, nil
}

// Copy returns g transformed forward into new memory, and its bound: every coordinate of g in
// one allocation and one pass of the transformation (one call into PROJ), which is what a
// drawing's scan does for each feature. g itself is not changed; nil gives nil.
func (t *Transformer) Copy(g orb.Geometry) (orb.Geometry, orb.Bound, error) {
	if g == nil {
		return nil, orb.Bound{}, nil
	}
	n := 0
	switch v := g.(type) {
	case orb.Point, orb.Bound:
		out, err := t.Geometry(v)
		if err != nil {
			return nil, orb.Bound{}, err
		}
		return out, out.Bound(), nil
	case orb.Collection:
		out, err := t.Geometry(orb.Clone(v))
		if err != nil {
			return nil, orb.Bound{}, err
		}
		return out, out.Bound(), nil
	}
	_ = EachSlice(g, func(ps []orb.Point) error { n += len(ps); return nil })
	buf := make([]orb.Point, 0, n)
	take := func(ps []orb.Point) []orb.Point {
		start := len(buf)
		buf = append(buf, ps...)
		return buf[start:len(buf):len(buf)]
	}
	var out orb.Geometry
	switch v := g.(type) {
	case orb.MultiPoint:
		out = orb.MultiPoint(take(v))
	case orb.LineString:
		out = orb.LineString(take(v))
	case orb.Ring:
		out = orb.Ring(take(v))
	case orb.MultiLineString:
		m := make(orb.MultiLineString, len(v))
		for i, ls := range v {
			m[i] = take(ls)
		}
		out = m
	case orb.Polygon:
		p := make(orb.Polygon, len(v))
		for i, r := range v {
			p[i] = take(r)
		}
		out = p
	case orb.MultiPolygon:
		rings := 0
		for _, p := range v {
			rings += len(p)
		}
		all := make([]orb.Ring, 0, rings)
		m := make(orb.MultiPolygon, len(v))
		for i, p := range v {
			start := len(all)
			for _, r := range p {
				all = append(all, take(r))
			}
			m[i] = all[start:len(all):len(all)]
		}
		out = m
	default:
		return nil, orb.Bound{}, fmt.Errorf("proj: cannot transform a %T", g)
	}
	if err := t.Forward(buf); err != nil {
		return nil, orb.Bound{}, err
	}
	b := orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
	for _, p := range buf {
		b.Min[0], b.Min[1] = min(b.Min[0], p[0]), min(b.Min[1], p[1])
		b.Max[0], b.Max[1] = max(b.Max[0], p[0]), max(b.Max[1], p[1])
	}
	return out, b, nil
}
