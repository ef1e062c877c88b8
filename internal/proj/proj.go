// Package proj holds the spatial references mapfarm understands and moves coordinates between
// them.
//
// A spatial reference (SR) is a well-known ID (an EPSG or Esri WKID) or, for a system without
// one, its well-known text. What an SR means — geographic or projected, its linear unit, its
// area of use, its Esri WKT — is a CRS, and coordinates move between two SRs through a
// Transformer. Systems hands out both and keeps the most recently used ones (building a PROJ
// transformation reads PROJ's database and costs milliseconds).
//
// Two engines do the work, chosen when the binary is built:
//
//   - with the build tag proj, PROJ itself (through github.com/twpayne/go-proj and a few direct
//     calls into libproj for a CRS's metadata): every EPSG and Esri WKID and WKT that PROJ knows,
//     with datum shifts where PROJ's database gives them;
//   - without it, the built-in engine (pure Go): WGS 84 geographic coordinates (WKID 4326) and
//     Web Mercator (3857, 102100, 102113, 900913), nothing else. Any other system is an error
//     wrapping ErrUnsupported that names the WKID.
//
// A system given as text goes through one WKT parser (wkt.go) before either engine sees it:
// text that is not a WKT is an error wrapping ErrInvalid, and a WKT of WGS 84 or Web Mercator,
// in any of the spellings clients send, is read as its WKID by its parameters (FromWKT), so
// that both builds know it.
//
// Both engines compute 4326 ↔ Web Mercator with the same Go code (ToMercator, FromMercator):
// Web Mercator is spherical, with the WGS 84 semi-major axis as the sphere radius, as EPSG:3857
// defines; latitudes beyond ±MaxLatitude are clamped so that the poles map to finite
// coordinates. docs/projections.md explains the choice of engines.
package proj

import (
	"errors"
	"fmt"
	"math"
	"strings"

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

// ErrUnsupported is wrapped by errors about spatial references, or pairs of them, that the
// engine of this build cannot describe or transform between.
var ErrUnsupported = errors.New("proj: unsupported spatial reference")

// SR is a spatial reference: a well-known ID, or (WKID 0) the well-known text of a system.
// The zero value means "unknown". SR values are comparable, so they can key maps.
type SR struct {
	WKID int
	// Text is the system's well-known text when it has no WKID (OGC or Esri WKT1, or WKT2).
	Text string
	// EsriWKT is the Esri WKT1 text PROJ writes for the system, what responses report (WKT);
	// Systems.Described fills it. It is not part of the SR's identity: Same ignores it.
	EsriWKT string
}

// IsZero reports whether the SR is unknown (neither WKID nor WKT).
func (s SR) IsZero() bool { return s.WKID == 0 && strings.TrimSpace(s.Text) == "" }

// IsWebMercator reports whether the SR is Web Mercator under any of its
// aliases (3857, 102100, 102113, 900913).
func (s SR) IsWebMercator() bool {
	switch s.WKID {
	case WebMercator, EsriWebMercator, EsriWebMercatorOld, GoogleMercator:
		return true
	}
	return false
}

// IsGeographic reports whether coordinates in this SR are angles (degrees), as far as the SR
// alone tells: a few common geographic WKIDs, or a WKT that defines a geographic system. A
// CRS from Systems knows it for every system.
func (s SR) IsGeographic() bool {
	switch s.WKID {
	case WGS84, 4269, 4258, 4283, 4617, 4167, 4267, 4230: // WGS84, NAD83, ETRS89, GDA94, NAD83(CSRS), NZGD2000, NAD27, ED50
		return true
	case 0:
		w := strings.ToUpper(strings.TrimSpace(s.Text))
		return strings.HasPrefix(w, "GEOGCS[") || strings.HasPrefix(w, "GEOGCRS[") || strings.HasPrefix(w, "GEODCRS[")
	}
	return strings.HasPrefix(s.EsriWKT, "GEOGCS[")
}

// Known reports whether the SR is one of the built-in systems (WGS 84 or Web Mercator), which
// every build describes and transforms without asking an engine.
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
// Web Mercator aliases as equal. Two WKT-only SRs are the same when their texts are.
func (s SR) Same(o SR) bool {
	if s.WKID == 0 && o.WKID == 0 {
		return strings.TrimSpace(s.Text) == strings.TrimSpace(o.Text)
	}
	return s.LatestWKID() == o.LatestWKID()
}

// String returns "EPSG:<wkid>", "WKT …" (cut) for a WKT-only SR, or "unknown".
func (s SR) String() string {
	switch {
	case s.WKID != 0:
		return fmt.Sprintf("EPSG:%d", s.WKID)
	case s.IsZero():
		return "unknown"
	}
	w := strings.TrimSpace(s.Text)
	if len(w) > 60 {
		w = w[:60] + "…"
	}
	return "WKT " + w
}

// Name names the SR in messages: "WKID 5070", or its WKT (cut).
func (s SR) Name() string {
	if s.WKID != 0 {
		return fmt.Sprintf("WKID %d", s.WKID)
	}
	return s.String()
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

// WKT returns the Esri-style well-known text ArcGIS reports for the SR: the built-in text of
// WGS 84 and Web Mercator, the Esri WKT PROJ writes for it (EsriWKT, when Systems.Described
// filled it), else the SR's own WKT when it has one, else "".
func (s SR) WKT() string {
	switch {
	case s.WKID == WGS84:
		return wktWGS84
	case s.IsWebMercator():
		return wktWebMercator
	case s.EsriWKT != "":
		return s.EsriWKT
	}
	return strings.TrimSpace(s.Text)
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

// Bound transforms a bound by projecting its corners, for transformations monotone on each
// axis (the built-in ones). An empty bound is returned unchanged. Transformer.Bound follows
// the edges of any transformation.
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
	_ = EachSlice(g, func(ps []orb.Point) error {
		for i, p := range ps {
			ps[i] = fn(p)
		}
		return nil
	})
	switch g := g.(type) {
	case orb.Point:
		return fn(g)
	case orb.Bound:
		return Bound(g, fn)
	case orb.Collection:
		for i := range g {
			switch c := g[i].(type) {
			case orb.Point:
				g[i] = fn(c)
			case orb.Bound:
				g[i] = Bound(c, fn)
			}
		}
	}
	return g
}

// EachSlice calls fn with every point slice of g (rings, lines, multipoints), stopping at the
// first error. Points and bounds, which are values, are not visited.
func EachSlice(g orb.Geometry, fn func([]orb.Point) error) error {
	switch g := g.(type) {
	case orb.MultiPoint:
		return fn(g)
	case orb.LineString:
		return fn(g)
	case orb.Ring:
		return fn(g)
	case orb.MultiLineString:
		for _, ls := range g {
			if err := fn(ls); err != nil {
				return err
			}
		}
	case orb.Polygon:
		for _, r := range g {
			if err := fn(r); err != nil {
				return err
			}
		}
	case orb.MultiPolygon:
		for _, p := range g {
			for _, r := range p {
				if err := fn(r); err != nil {
					return err
				}
			}
		}
	case orb.Collection:
		for _, c := range g {
			if err := EachSlice(c, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
