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
//     For geographic coordinates a degree counts 111,319.49 m (one degree of the equator).
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
const MetersPerDegree = 111319.49079327357

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
	SR       proj.SR
}

// Resolution returns map units per pixel.
func (v View) Resolution() float64 { return (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width) }

// Scale returns the map scale denominator.
func (v View) Scale() float64 {
	return v.Resolution() * metersPerUnit(v.SR) * v.DPI / metersPerInch
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

func metersPerUnit(sr proj.SR) float64 {
	if sr.IsGeographic() {
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
	if md.SpatialReference != nil {
		sr := srOf(md.SpatialReference)
		if sr.WKID != 0 && !sr.Same(v.SR) {
			return View{}, bad("MapDescription: SpatialReference %s differs from the map's %s; reprojected output is not supported", sr, v.SR)
		}
	}
	ext, err := extentOf(m, md.MapArea, v)
	if err != nil {
		return View{}, err
	}
	v.Extent = fitAspect(ext, v.Width, v.Height)
	return v, nil
}

func srOf(sr gisxml.SpatialReference) proj.SR {
	f := sr.SpatialReferencePart()
	if f.WKID != nil {
		return proj.SR{WKID: *f.WKID}
	}
	if f.LatestWKID != nil {
		return proj.SR{WKID: *f.LatestWKID}
	}
	return proj.SR{}
}

// envelope reads an Envelope value into a bound.
func envelope(e gisxml.Envelope, what string) (orb.Bound, error) {
	env, ok := e.(*gisxml.EnvelopeN)
	if !ok || env == nil {
		return orb.Bound{}, bad("%s: an EnvelopeN is required", what)
	}
	b := orb.Bound{Min: orb.Point{env.XMin, env.YMin}, Max: orb.Point{env.XMax, env.YMax}}
	for _, f := range []float64{env.XMin, env.YMin, env.XMax, env.YMax} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return orb.Bound{}, bad("%s: coordinates must be finite numbers", what)
		}
	}
	if !(b.Max[0] > b.Min[0]) || !(b.Max[1] > b.Min[1]) {
		return orb.Bound{}, bad("%s: XMax must exceed XMin and YMax exceed YMin (got %g %g %g %g)", what, env.XMin, env.YMin, env.XMax, env.YMax)
	}
	return b, nil
}

func point(p gisxml.Point, what string) (orb.Point, error) {
	pn, ok := p.(*gisxml.PointN)
	if !ok || pn == nil {
		return orb.Point{}, bad("%s: a PointN is required", what)
	}
	if math.IsNaN(pn.X) || math.IsNaN(pn.Y) || math.IsInf(pn.X, 0) || math.IsInf(pn.Y, 0) {
		return orb.Point{}, bad("%s: coordinates must be finite numbers", what)
	}
	return orb.Point{pn.X, pn.Y}, nil
}

// sizeAt returns the ground size in map units of the image at a scale.
func sizeAt(v View, scale float64) (w, h float64) {
	unitsPerPixel := scale * metersPerInch / v.DPI / metersPerUnit(v.SR)
	return unitsPerPixel * float64(v.Width), unitsPerPixel * float64(v.Height)
}

func around(c orb.Point, w, h float64) orb.Bound {
	return orb.Bound{Min: orb.Point{c[0] - w/2, c[1] - h/2}, Max: orb.Point{c[0] + w/2, c[1] + h/2}}
}

func extentOf(m Map, area gisxml.MapArea, v View) (orb.Bound, error) {
	switch a := area.(type) {
	case nil:
		return m.DefaultExtent(), nil
	case *gisxml.MapExtent:
		if a.Extent == nil {
			return m.DefaultExtent(), nil
		}
		return envelope(a.Extent, "MapArea/Extent")
	case *gisxml.CenterAndScale:
		if a.Scale <= 0 || math.IsNaN(a.Scale) || math.IsInf(a.Scale, 0) {
			return orb.Bound{}, bad("MapArea/Scale must be a positive number (got %g)", a.Scale)
		}
		c := m.DefaultExtent().Center()
		if a.Center != nil {
			p, err := point(a.Center, "MapArea/Center")
			if err != nil {
				return orb.Bound{}, err
			}
			c = p
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
		c := m.DefaultExtent().Center()
		if a.Center != nil {
			p, err := point(a.Center, "MapArea/Center")
			if err != nil {
				return orb.Bound{}, err
			}
			c = p
		}
		f, err := unitsToMap(a.Units, v.SR)
		if err != nil {
			return orb.Bound{}, err
		}
		return around(c, a.Width*f, a.Height*f), nil
	case *gisxml.FeatureExtent:
		b, err := m.FeatureBounds(a.LayerID, a.FeatureIDs)
		if err != nil {
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
func unitsToMap(units string, sr proj.SR) (float64, error) {
	u := strings.ToLower(strings.TrimSpace(units))
	u = strings.TrimPrefix(strings.TrimPrefix(u, "gis"), "esri")
	meters := map[string]float64{
		"": 0, "unknownunits": 0, "meters": 1, "kilometers": 1000, "decimeters": 0.1, "centimeters": 0.01, "millimeters": 0.001,
		"feet": 0.3048, "yards": 0.9144, "miles": 1609.344, "nauticalmiles": 1852, "inches": 0.0254, "points": 0.0254 / 72,
	}
	if u == "decimaldegrees" || u == "degrees" {
		if sr.IsGeographic() {
			return 1, nil
		}
		return MetersPerDegree, nil
	}
	m, ok := meters[u]
	if !ok {
		return 0, bad("MapArea/Units %q is not a known unit", units)
	}
	if m == 0 { // map units
		return 1, nil
	}
	return m / metersPerUnit(sr), nil
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
