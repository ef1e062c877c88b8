// Package proj holds the spatial references mapfarm understands and the math
// that moves coordinates between them.
//
// Only two coordinate systems are built in: WGS 84 geographic coordinates
// (WKID 4326, longitude/latitude in degrees) and WGS 84 Web Mercator
// (WKID 3857, also known by its Esri and legacy codes 102100, 102113 and
// 900913). Any other WKID can still be carried around in an SR value, and
// data stored in it can be served as long as no transformation is needed;
// Transform reports an error for any pair it cannot convert.
//
// Web Mercator is spherical: it uses the WGS 84 semi-major axis as the sphere
// radius, as EPSG:3857 defines. Latitudes beyond ±MaxLatitude are clamped
// before projection so that the poles map to finite coordinates.
package proj

import (
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
)

// Well-known WKIDs.
const (
	// WGS84 is EPSG:4326, geographic longitude/latitude on WGS 84.
	WGS84 = 4326
	// WebMercator is EPSG:3857, the latest WKID of Web Mercator.
	WebMercator = 3857
	// EsriWebMercator is Esri's WKID 102100 for Web Mercator.
	EsriWebMercator = 102100
	// EsriWebMercatorOld is Esri's deprecated WKID 102113.
	EsriWebMercatorOld = 102113
	// GoogleMercator is the unofficial 900913 code for Web Mercator.
	GoogleMercator = 900913
)

// Earth constants used by Web Mercator.
const (
	// EarthRadius is the WGS 84 semi-major axis in meters, the sphere radius
	// of Web Mercator.
	EarthRadius = 6378137.0
	// MaxLatitude is the latitude at which Web Mercator becomes square
	// (y = ±MaxExtent).
	MaxLatitude = 85.0511287798066
	// MaxExtent is the Web Mercator x (and y) of longitude 180°: π·R.
	MaxExtent = math.Pi * EarthRadius
)

// ErrUnsupported is wrapped by errors about spatial reference pairs this
// package cannot transform between.
var ErrUnsupported = errors.New("proj: unsupported transformation")

// SR is a spatial reference identified by its well-known ID. The zero value
// (WKID 0) means "unknown".
type SR struct {
	WKID int
}

// IsWebMercator reports whether the SR is Web Mercator under any of its
// aliases (3857, 102100, 102113, 900913).
func (s SR) IsWebMercator() bool {
	switch s.WKID {
	case WebMercator, EsriWebMercator, EsriWebMercatorOld, GoogleMercator:
		return true
	}
	return false
}

// IsGeographic reports whether coordinates in this SR are angles (degrees).
// Only WGS 84 (4326) and a few common geographic WKIDs are recognised.
func (s SR) IsGeographic() bool {
	switch s.WKID {
	case WGS84, 4269, 4258, 4283, 4617, 4167: // WGS84, NAD83, ETRS89, GDA94, NAD83(CSRS), NZGD2000
		return true
	}
	return false
}

// Known reports whether the package knows this SR's definition (WKT and
// precision), i.e. it is WGS 84 or Web Mercator.
func (s SR) Known() bool { return s.WKID == WGS84 || s.IsWebMercator() }

// Units returns "degrees" for a geographic SR and "meters" otherwise.
func (s SR) Units() string {
	if s.IsGeographic() {
		return "degrees"
	}
	return "meters"
}

// LatestWKID returns the current EPSG code for an alias: 3857 for every Web
// Mercator alias, the WKID itself otherwise.
func (s SR) LatestWKID() int {
	if s.IsWebMercator() {
		return WebMercator
	}
	return s.WKID
}

// Same reports whether s and o denote the same coordinate system, treating
// Web Mercator aliases as equal.
func (s SR) Same(o SR) bool { return s.LatestWKID() == o.LatestWKID() }

// String returns "EPSG:<wkid>" (or "unknown" for WKID 0).
func (s SR) String() string {
	if s.WKID == 0 {
		return "unknown"
	}
	return fmt.Sprintf("EPSG:%d", s.WKID)
}

// Esri-style WKT, as ArcGIS Server 10.7 reports these systems.
const (
	wktWGS84 = `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],` +
		`PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433],AUTHORITY["EPSG",4326]]`
	wktWebMercator = `PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",` +
		`SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],` +
		`PROJECTION["Mercator_Auxiliary_Sphere"],PARAMETER["False_Easting",0.0],PARAMETER["False_Northing",0.0],` +
		`PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",0.0],PARAMETER["Auxiliary_Sphere_Type",0.0],` +
		`UNIT["Meter",1.0],AUTHORITY["EPSG",3857]]`
)

// WKT returns the Esri-style well-known text ArcGIS reports for the SR, or
// "" when the SR is not one of the built-in systems.
func (s SR) WKT() string {
	switch {
	case s.WKID == WGS84:
		return wktWGS84
	case s.IsWebMercator():
		return wktWebMercator
	}
	return ""
}

// Precision is the coordinate grid ArcGIS attaches to a spatial reference
// (the XOrigin … HighPrecision children of a SOAP SpatialReference).
type Precision struct {
	XOrigin, YOrigin, XYScale float64
	ZOrigin, ZScale           float64
	MOrigin, MScale           float64
	XYTolerance               float64
	ZTolerance, MTolerance    float64
	HighPrecision             bool
}

// Precision returns ArcGIS's default high-precision grid for the SR: the
// values ArcGIS Server 10.7 reports for 4326 and 3857. Other SRs get the
// projected defaults with an XY tolerance of 1 mm.
func (s SR) Precision() Precision {
	p := Precision{
		ZOrigin: -100000, ZScale: 10000,
		MOrigin: -100000, MScale: 10000,
		ZTolerance: 0.001, MTolerance: 0.001,
		HighPrecision: true,
	}
	if s.IsGeographic() {
		p.XOrigin, p.YOrigin = -400, -400
		p.XYScale = 999999999.99999988
		p.XYTolerance = 8.983152841195215e-09
		return p
	}
	p.XOrigin, p.YOrigin = -20037700, -30241100
	p.XYScale = 10000
	p.XYTolerance = 0.001
	return p
}

// ToMercator projects a WGS 84 longitude/latitude point to Web Mercator
// meters. Latitude is clamped to ±MaxLatitude.
func ToMercator(p orb.Point) orb.Point {
	lat := math.Max(-MaxLatitude, math.Min(MaxLatitude, p[1]))
	x := p[0] / 180 * MaxExtent
	y := EarthRadius * math.Log(math.Tan(math.Pi/4+lat*math.Pi/360))
	return orb.Point{x, y}
}

// FromMercator converts a Web Mercator point in meters to WGS 84
// longitude/latitude.
func FromMercator(p orb.Point) orb.Point {
	lon := p[0] / MaxExtent * 180
	lat := (2*math.Atan(math.Exp(p[1]/EarthRadius)) - math.Pi/2) * 180 / math.Pi
	return orb.Point{lon, lat}
}

func identity(p orb.Point) orb.Point { return p }

// Transform returns the point function that converts coordinates from one SR
// to another. Equal SRs (including Web Mercator aliases) give the identity;
// 4326 ↔ Web Mercator give ToMercator and FromMercator. Any other pair is an
// error wrapping ErrUnsupported.
func Transform(from, to SR) (func(orb.Point) orb.Point, error) {
	switch {
	case from.Same(to):
		return identity, nil
	case from.WKID == WGS84 && to.IsWebMercator():
		return ToMercator, nil
	case from.IsWebMercator() && to.WKID == WGS84:
		return FromMercator, nil
	}
	return nil, fmt.Errorf("%w: %v to %v (only 4326 and 3857/102100 are supported)", ErrUnsupported, from, to)
}

// Bound transforms a bound by projecting its corners. Both built-in
// transformations are monotone on each axis, so the corners are exact.
// An empty bound is returned unchanged.
func Bound(b orb.Bound, fn func(orb.Point) orb.Point) orb.Bound {
	if b.IsEmpty() {
		return b
	}
	return orb.Bound{Min: fn(b.Min), Max: fn(b.Max)}
}

// Geometry transforms every coordinate of g in place with fn and returns g.
// A nil geometry is returned as nil. Bounds inside g (orb.Bound) are
// transformed by their corners.
func Geometry(g orb.Geometry, fn func(orb.Point) orb.Point) orb.Geometry {
	switch g := g.(type) {
	case nil:
		return nil
	case orb.Point:
		return fn(g)
	case orb.MultiPoint:
		points(g, fn)
	case orb.LineString:
		points(g, fn)
	case orb.Ring:
		points(g, fn)
	case orb.MultiLineString:
		for _, ls := range g {
			points(ls, fn)
		}
	case orb.Polygon:
		for _, r := range g {
			points(r, fn)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			for _, r := range p {
				points(r, fn)
			}
		}
	case orb.Collection:
		for i := range g {
			g[i] = Geometry(g[i], fn)
		}
	case orb.Bound:
		return Bound(g, fn)
	}
	return g
}

func points[S ~[]orb.Point](ps S, fn func(orb.Point) orb.Point) {
	for i, p := range ps {
		ps[i] = fn(p)
	}
}
