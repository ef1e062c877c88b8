// Package mapview turns what a request says about the map to draw — a MapDescription's MapArea
// (an extent, a centre and scale, a centre and size, or the extent of some features), its
// rotation and spatial reference, and an ImageDisplay's size and DPI — into one View: the exact
// extent, size, resolution and scale of the image. Every operation that relates pixels to map
// coordinates (ExportMapImage, ComputeScale, ToMapPoints, Identify, …) resolves its view here, so
// the rules live in one place:
//
//   - The extent keeps the image's aspect ratio: the requested extent grows about its centre in
//     the short direction, as ArcGIS does, so the returned MapImage.Extent may differ from the
//     requested one.
//   - Scale is the ground distance of the image width over its width on the display at the DPI.
//     For geographic coordinates a degree counts 111,319.49 m (one degree of the equator); a
//     projected system's unit counts what it is (0.3048006 m for a US survey foot).
//   - The MapDescription's SpatialReference is the system the image is drawn in, when it is not
//     the map's: the extent, centre and size are read in it (an Extent or Center carrying a
//     spatial reference of its own is transformed from it), and the map's default extent and
//     feature extents are transformed into it. SR is the one place a request's spatial
//     reference is read.
//   - Rotation is degrees anticlockwise about the centre; the extent is the unrotated one.
//   - A missing MapArea means the map's initial extent.
package mapview

import (
	"fmt"
	"math"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
)

// MetersPerDegree converts degrees to metres for scales of geographic maps.
const MetersPerDegree = proj.MetersPerDegree

const metersPerInch = 0.0254

// DefaultDPI is used when a request gives none.
const DefaultDPI = 96

// DPI checks a request's DPI (what names it in the fault): 0 means DefaultDPI, as ArcGIS reads
// a missing ImageDPI; any other value must lie within render.MinDPI and render.MaxDPI (1 to 2400),
// so NaN, infinities and negative values are refused, never drawn at some default.
func DPI(dpi float64, what string) (float64, error) {
	if dpi == 0 {
		return DefaultDPI, nil
	}
	if !(dpi >= render.MinDPI && dpi <= render.MaxDPI) {
		return 0, bad("%s %g is out of range: the limit is %d to %d DPI (0 means %d)", what, dpi, render.MinDPI, render.MaxDPI, DefaultDPI)
	}
	return dpi, nil
}

// View is the resolved geometry of one map image.
type View struct {
	Extent   orb.Bound // map units, aspect ratio equal to Width/Height
	Width    int
	Height   int
	DPI      float64
	Rotation float64 // degrees anticlockwise
	// SR is the system the image is drawn in: the map's, or the one the request asks for.
	SR proj.SR
	// MetersPerUnit is the length of one unit of SR in metres, for scales (0: guessed from SR,
	// MetersPerDegree for a geographic system, else 1).
	MetersPerUnit float64
}

// Resolution returns map units per pixel.
func (v View) Resolution() float64 { return (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width) }

// Scale returns the map scale denominator.
func (v View) Scale() float64 {
	return v.Resolution() * v.metersPerUnit() * v.DPI / metersPerInch
}

// ToMap converts a pixel position (origin top left, y down) to map coordinates, rotation
// included.
func (v View) ToMap(px, py float64) orb.Point {
	res := v.Resolution()
	c := v.Extent.Center()
	dx := (px - float64(v.Width)/2) * res
	dy := (float64(v.Height)/2 - py) * res
	s, co := math.Sincos(v.Rotation * math.Pi / 180)
	// The map is drawn rotated anticlockwise by Rotation, so undo it.
	return orb.Point{c[0] + dx*co + dy*s, c[1] - dx*s + dy*co}
}

// ToPixel converts map coordinates to a pixel position; the inverse of ToMap.
func (v View) ToPixel(p orb.Point) (float64, float64) {
	res := v.Resolution()
	c := v.Extent.Center()
	dx, dy := p[0]-c[0], p[1]-c[1]
	s, co := math.Sincos(v.Rotation * math.Pi / 180)
	rx := dx*co - dy*s
	ry := dx*s + dy*co
	return float64(v.Width)/2 + rx/res, float64(v.Height)/2 - ry/res
}

func (v View) metersPerUnit() float64 {
	switch {
	case v.MetersPerUnit > 0:
		return v.MetersPerUnit
	case v.SR.IsGeographic():
		return MetersPerDegree
	}
	return 1
}

// Map is what the resolver needs to know of the map being drawn.
type Map interface {
	SpatialReference() proj.SR
	DefaultExtent() orb.Bound
	// FeatureBounds returns the union of the bounds of the given features of a layer, in the
	// map's spatial reference (every feature when ids is empty).
	FeatureBounds(layerID int, ids []int) (orb.Bound, error)
	// Systems describes and transforms spatial references, for a view in another system than
	// the map's; nil allows only the map's own.
	Systems() *proj.Systems
}

// Limits bound the images a view may describe.
type Limits struct {
	MaxWidth, MaxHeight int
}

// BadRequestError is an error caused by the request; its message names the field at fault.
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

func bad(format string, args ...any) error {
	return &BadRequestError{Msg: fmt.Sprintf(format, args...)}
}

// Resolve computes the view of a MapDescription drawn into an ImageDisplay.
func Resolve(m Map, md *gisxml.MapDescription, disp *gisxml.ImageDisplay, lim Limits) (View, error) {
	if md == nil {
		return View{}, bad("MapDescription is required")
	}
	if disp == nil {
		return View{}, bad("ImageDisplay is required")
	}
	v := View{Width: disp.ImageWidth, Height: disp.ImageHeight, DPI: disp.ImageDPI, Rotation: md.Rotation, SR: m.SpatialReference()}
	if v.Width <= 0 || v.Height <= 0 {
		return View{}, bad("ImageDisplay: ImageWidth and ImageHeight must be positive (got %d×%d)", v.Width, v.Height)
	}
	if lim.MaxWidth > 0 && (v.Width > lim.MaxWidth || v.Height > lim.MaxHeight) {
		return View{}, bad("ImageDisplay: %d×%d pixels is larger than the limit of %d×%d", v.Width, v.Height, lim.MaxWidth, lim.MaxHeight)
	}
	dpi, err := DPI(v.DPI, "ImageDisplay/ImageDPI")
	if err != nil {
		return View{}, err
	}
	v.DPI = dpi
	if math.IsNaN(v.Rotation) || math.IsInf(v.Rotation, 0) {
		return View{}, bad("MapDescription: Rotation must be a finite number")
	}
	r := resolver{m: m, mapSR: v.SR}
	if sr := SR(md.SpatialReference); !sr.IsZero() && !sr.Same(v.SR) {
		crs, err := r.crs(sr, "MapDescription/SpatialReference")
		if err != nil {
			return View{}, err
		}
		v.SR, v.MetersPerUnit = crs.SR, crs.MetersPerUnit // with the Esri WKT responses report
	} else if sys := m.Systems(); sys != nil && !v.SR.IsZero() {
		if crs, err := sys.CRS(v.SR); err == nil {
			v.SR, v.MetersPerUnit = crs.SR, crs.MetersPerUnit
		}
	}
	ext, err := r.extentOf(md.MapArea, v)
	if err != nil {
		return View{}, err
	}
	v.Extent = fitAspect(ext, v.Width, v.Height)
	return v, nil
}

// SR reads a request's spatial reference: its WKID (or LatestWKID), else its WKT (proj.FromWKT:
// a WKT of WGS 84 or Web Mercator, in any spelling, is read as its WKID); the zero SR when it
// has neither. Every operation reads spatial references through it.
func SR(sr gisxml.SpatialReference) proj.SR {
	if sr == nil {
		return proj.SR{}
	}
	f := sr.SpatialReferencePart()
	if f == nil {
		return proj.SR{}
	}
	switch {
	case f.WKID != nil && *f.WKID != 0:
		return proj.SR{WKID: *f.WKID}
	case f.LatestWKID != nil && *f.LatestWKID != 0:
		return proj.SR{WKID: *f.LatestWKID}
	case f.WKT != nil && strings.TrimSpace(*f.WKT) != "":
		sr, err := proj.FromWKT(*f.WKT)
		if err != nil {
			// Not a WKT: kept as text, which proj.Systems refuses (ErrInvalid) wherever it is used.
			return proj.SR{Text: strings.TrimSpace(*f.WKT)}
		}
		return sr
	}
	return proj.SR{}
}

// SpatialReference describes an SR in a response as ArcGIS does: geographic or projected, with
// its precision; its WKID and latest WKID when it has one, none for a system given only as WKT;
// and its Esri WKT1 text (proj.SR.WKT: the built-in text of WGS 84 and Web Mercator, PROJ's for
// any other system whose SR went through proj.Systems, as every view's, map's and reprojected
// layer's does). A system with neither WKID nor WKT is unknown.
func SpatialReference(sr proj.SR) gisxml.SpatialReference {
	p := sr.Precision()
	f := gisxml.SpatialReferenceFields{
		XOrigin: &p.XOrigin, YOrigin: &p.YOrigin, XYScale: &p.XYScale,
		ZOrigin: &p.ZOrigin, ZScale: &p.ZScale, MOrigin: &p.MOrigin, MScale: &p.MScale,
		XYTolerance: &p.XYTolerance, ZTolerance: &p.ZTolerance, MTolerance: &p.MTolerance,
		HighPrecision: &p.HighPrecision,
	}
	if sr.WKID != 0 {
		wkid, latest := sr.WKID, sr.LatestWKID()
		f.WKID, f.LatestWKID = &wkid, &latest
	}
	if wkt := sr.WKT(); wkt != "" {
		f.WKT = &wkt
	}
	switch {
	case sr.IsGeographic():
		return &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: f}
	case !sr.IsZero():
		return &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: f}
	default:
		return &gisxml.UnknownCoordinateSystem{SpatialReferenceFields: f}
	}
}

// resolver reads a request's map area for a map, transforming what is not in the view's
// system.
type resolver struct {
	m     Map
	mapSR proj.SR
}

func (r resolver) crs(sr proj.SR, what string) (proj.CRS, error) {
	sys := r.m.Systems()
	if sys == nil {
		return proj.CRS{}, bad("%s: %s differs from the map's %s, and this map cannot be drawn in another system", what, sr.Name(), r.mapSR.Name())
	}
	c, err := sys.CRS(sr)
	if err != nil {
		return proj.CRS{}, bad("%s: %v", what, err)
	}
	return c, nil
}

// bound returns b, in from, in the view's system to.
func (r resolver) bound(b orb.Bound, from, to proj.SR, what string) (orb.Bound, error) {
	if from.IsZero() || from.Same(to) || b.IsEmpty() {
		return b, nil
	}
	t, err := r.transformer(from, to, what)
	if err != nil {
		return orb.Bound{}, err
	}
	out, err := t.Bound(b)
	if err != nil {
		return orb.Bound{}, bad("%s: %v", what, err)
	}
	return out, nil
}

func (r resolver) point(p orb.Point, from, to proj.SR, what string) (orb.Point, error) {
	if from.IsZero() || from.Same(to) {
		return p, nil
	}
	t, err := r.transformer(from, to, what)
	if err != nil {
		return orb.Point{}, err
	}
	out, err := t.Point(p)
	if err != nil {
		return orb.Point{}, bad("%s: %v", what, err)
	}
	return out, nil
}

func (r resolver) transformer(from, to proj.SR, what string) (*proj.Transformer, error) {
	sys := r.m.Systems()
	if sys == nil {
		return nil, bad("%s: %s differs from the map's %s, and this map cannot be drawn in another system", what, from.Name(), to.Name())
	}
	t, err := sys.Transformer(from, to)
	if err != nil {
		return nil, bad("%s: %v", what, err)
	}
	return t, nil
}

// defaultExtent is the map's default extent in the view's system.
func (r resolver) defaultExtent(v View) (orb.Bound, error) {
	return r.bound(r.m.DefaultExtent(), r.mapSR, v.SR, "the map's default extent")
}

// envelope reads an Envelope value into a bound, in the view's system.
func (r resolver) envelope(e gisxml.Envelope, v View, what string) (orb.Bound, error) {
	env, ok := e.(*gisxml.EnvelopeN)
	if !ok || env == nil {
		return orb.Bound{}, bad("%s: an EnvelopeN is required", what)
	}
	b, err := envelope(env, what)
	if err != nil {
		return orb.Bound{}, err
	}
	return r.bound(b, SR(env.SpatialReference), v.SR, what)
}

func envelope(env *gisxml.EnvelopeN, what string) (orb.Bound, error) {
	b := orb.Bound{Min: orb.Point{env.XMin, env.YMin}, Max: orb.Point{env.XMax, env.YMax}}
	for _, f := range []float64{env.XMin, env.YMin, env.XMax, env.YMax} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return orb.Bound{}, bad("%s: coordinates must be finite numbers", what)
		}
	}
	if !(b.Max[0] > b.Min[0]) || !(b.Max[1] > b.Min[1]) {
		return orb.Bound{}, bad("%s: XMax must exceed XMin and YMax exceed YMin (got %g %g %g %g)", what, env.XMin, env.YMin, env.XMax, env.YMax)
	}
	if math.IsInf(b.Max[0]-b.Min[0], 0) || math.IsInf(b.Max[1]-b.Min[1], 0) {
		// -1e308 to 1e308: each coordinate finite, the width not, and so the scale.
		return orb.Bound{}, bad("%s: the width and height must be finite numbers (got %g %g %g %g)", what, env.XMin, env.YMin, env.XMax, env.YMax)
	}
	return b, nil
}

// center reads a map area's centre in the view's system; the default extent's centre when
// it has none.
func (r resolver) center(p gisxml.Point, v View, what string) (orb.Point, error) {
	if p == nil {
		d, err := r.defaultExtent(v)
		return d.Center(), err
	}
	pn, ok := p.(*gisxml.PointN)
	if !ok || pn == nil {
		return orb.Point{}, bad("%s: a PointN is required", what)
	}
	if math.IsNaN(pn.X) || math.IsNaN(pn.Y) || math.IsInf(pn.X, 0) || math.IsInf(pn.Y, 0) {
		return orb.Point{}, bad("%s: coordinates must be finite numbers", what)
	}
	return r.point(orb.Point{pn.X, pn.Y}, SR(pn.SpatialReference), v.SR, what)
}

// sizeAt returns the ground size in map units of the image at a scale.
func sizeAt(v View, scale float64) (w, h float64) {
	unitsPerPixel := scale * metersPerInch / v.DPI / v.metersPerUnit()
	return unitsPerPixel * float64(v.Width), unitsPerPixel * float64(v.Height)
}

func around(c orb.Point, w, h float64) orb.Bound {
	return orb.Bound{Min: orb.Point{c[0] - w/2, c[1] - h/2}, Max: orb.Point{c[0] + w/2, c[1] + h/2}}
}

func (r resolver) extentOf(area gisxml.MapArea, v View) (orb.Bound, error) {
	switch a := area.(type) {
	case nil:
		return r.defaultExtent(v)
	case *gisxml.MapExtent:
		if a.Extent == nil {
			return r.defaultExtent(v)
		}
		return r.envelope(a.Extent, v, "MapArea/Extent")
	case *gisxml.CenterAndScale:
		if a.Scale <= 0 || math.IsNaN(a.Scale) || math.IsInf(a.Scale, 0) {
			return orb.Bound{}, bad("MapArea/Scale must be a positive number (got %g)", a.Scale)
		}
		c, err := r.center(a.Center, v, "MapArea/Center")
		if err != nil {
			return orb.Bound{}, err
		}
		vv := v
		if a.DPI != nil && *a.DPI != 0 {
			dpi, err := DPI(*a.DPI, "MapArea/DPI")
			if err != nil {
				return orb.Bound{}, err
			}
			vv.DPI = dpi
		}
		w, h := sizeAt(vv, a.Scale)
		return around(c, w, h), nil
	case *gisxml.CenterAndSize:
		if a.Width <= 0 || a.Height <= 0 {
			return orb.Bound{}, bad("MapArea: Width and Height must be positive (got %g×%g)", a.Width, a.Height)
		}
		c, err := r.center(a.Center, v, "MapArea/Center")
		if err != nil {
			return orb.Bound{}, err
		}
		f, err := unitsToMap(a.Units, v)
		if err != nil {
			return orb.Bound{}, err
		}
		return around(c, a.Width*f, a.Height*f), nil
	case *gisxml.FeatureExtent:
		b, err := r.m.FeatureBounds(a.LayerID, a.FeatureIDs)
		if err != nil {
			return orb.Bound{}, err
		}
		if b, err = r.bound(b, r.mapSR, v.SR, "MapArea/FeatureIDs"); err != nil {
			return orb.Bound{}, err
		}
		ratio := a.ExpandRatio
		if ratio <= 0 {
			ratio = 1
		}
		w, h := (b.Max[0]-b.Min[0])*ratio, (b.Max[1]-b.Min[1])*ratio
		if w <= 0 || h <= 0 { // a point, or features on one line: fall back to the default scale
			scale := a.DefaultScale
			if scale <= 0 {
				scale = 24000
			}
			dw, dh := sizeAt(v, scale)
			w, h = math.Max(w, dw), math.Max(h, dh)
		}
		return around(b.Center(), w, h), nil
	default:
		return orb.Bound{}, bad("MapArea kind %s is not supported", area.GisType())
	}
}

// unitsToMap returns how many map units one unit of a CenterAndSize's Units string is. Units
// may be a gisUnits value ("gisMeters"), its esri spelling, or a plain name ("meters").
func unitsToMap(units string, v View) (float64, error) {
	u := strings.ToLower(strings.TrimSpace(units))
	u = strings.TrimPrefix(strings.TrimPrefix(u, "gis"), "esri")
	meters := map[string]float64{
		"": 0, "unknownunits": 0, "meters": 1, "kilometers": 1000, "decimeters": 0.1, "centimeters": 0.01, "millimeters": 0.001,
		"feet": 0.3048, "yards": 0.9144, "miles": 1609.344, "nauticalmiles": 1852, "inches": 0.0254, "points": 0.0254 / 72,
	}
	if u == "decimaldegrees" || u == "degrees" {
		if v.metersPerUnit() == MetersPerDegree {
			return 1, nil
		}
		return MetersPerDegree / v.metersPerUnit(), nil
	}
	m, ok := meters[u]
	if !ok {
		return 0, bad("MapArea/Units %q is not a known unit", units)
	}
	if m == 0 { // map units
		return 1, nil
	}
	return m / v.metersPerUnit(), nil
}

// fitAspect grows b about its centre so that its aspect ratio equals w/h.
func fitAspect(b orb.Bound, w, h int) orb.Bound {
	bw, bh := b.Max[0]-b.Min[0], b.Max[1]-b.Min[1]
	want := float64(w) / float64(h)
	c := b.Center()
	if bw/bh < want {
		bw = bh * want
	} else {
		bh = bw / want
	}
	return around(c, bw, bh)
}
