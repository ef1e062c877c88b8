package cartography

import (
	"context"
	"math"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/geodesy"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapview"
)

// This file holds the operations that only compute map geometry: scale, distance and the
// conversions between pixels and map coordinates. They share mapview's rules with
// ExportMapImage, so a point converted here lands on the pixel the image shows it at.

// ComputeScale returns the scale a MapDescription would be drawn at in an ImageDisplay.
func (s *Service) ComputeScale(ctx context.Context, c *operation.Call, req *gisxml.ComputeScale) (*gisxml.ComputeScaleResponse, error) {
	v, err := s.viewOf(ctx, c, req.MapDescription, req.MapImageDisplay)
	if err != nil {
		return nil, err
	}
	return &gisxml.ComputeScaleResponse{Result: v.Scale()}, nil
}

func (s *Service) viewOf(ctx context.Context, c *operation.Call, md *gisxml.MapDescription, disp *gisxml.ImageDisplay) (mapview.View, error) {
	if md == nil {
		return mapview.View{}, operation.Invalid("MapDescription is required")
	}
	m, err := operation.MapOf(c, md.Name)
	if err != nil {
		return mapview.View{}, err
	}
	return operation.ResolveView(ctx, m, md, disp, s.p.Limits)
}

// unitMeters is the length of one unit in metres; gisDecimalDegrees counts degrees of arc on
// the equator (mapview.MetersPerDegree), gisUnknownUnits the map's own unit.
var unitMeters = map[gisxml.Units]float64{
	gisxml.Inches: 0.0254, gisxml.Points: 0.0254 / 72, gisxml.Feet: 0.3048, gisxml.Yards: 0.9144,
	gisxml.Miles: 1609.344, gisxml.NauticalMiles: 1852, gisxml.Millimeters: 0.001, gisxml.Centimeters: 0.01,
	gisxml.Meters: 1, gisxml.Kilometers: 1000, gisxml.DecimalDegrees: mapview.MetersPerDegree, gisxml.Decimeters: 0.1,
}

// ComputeDistance measures between two points of a map: along the geodesic on the WGS 84
// ellipsoid for a geographic map, in the plane for a projected one, in the requested units.
func (s *Service) ComputeDistance(ctx context.Context, c *operation.Call, req *gisxml.ComputeDistance) (*gisxml.ComputeDistanceResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	from, err := pointOf(req.FromPoint, "FromPoint")
	if err != nil {
		return nil, err
	}
	to, err := pointOf(req.ToPoint, "ToPoint")
	if err != nil {
		return nil, err
	}
	var meters float64
	if m.SR.IsGeographic() {
		if math.Abs(from[1]) > 90 || math.Abs(to[1]) > 90 {
			return nil, operation.Invalid("latitudes must lie within ±90° (got %g and %g)", from[1], to[1])
		}
		meters, err = geodesy.Distance(from, to)
		if err != nil {
			return nil, err
		}
	} else {
		meters = math.Hypot(to[0]-from[0], to[1]-from[1])
	}
	u := req.Units
	if u == "" || u == gisxml.UnknownUnits {
		if m.SR.IsGeographic() {
			return &gisxml.ComputeDistanceResponse{Result: meters / mapview.MetersPerDegree}, nil
		}
		return &gisxml.ComputeDistanceResponse{Result: meters}, nil
	}
	f, ok := unitMeters[u]
	if !ok {
		return nil, operation.Invalid("Units %s is not a unit of length", u)
	}
	return &gisxml.ComputeDistanceResponse{Result: meters / f}, nil
}

func pointOf(p gisxml.Point, what string) (orb.Point, error) {
	pn, ok := p.(*gisxml.PointN)
	if !ok || pn == nil {
		return orb.Point{}, operation.Invalid("%s: a PointN is required", what)
	}
	if math.IsNaN(pn.X) || math.IsNaN(pn.Y) || math.IsInf(pn.X, 0) || math.IsInf(pn.Y, 0) {
		return orb.Point{}, operation.Invalid("%s: coordinates must be finite numbers", what)
	}
	return orb.Point{pn.X, pn.Y}, nil
}

// maxPoints is the most points one conversion takes (config limits.maxPoints).
func (s *Service) maxPoints() int {
	if s.p.Limits.MaxPoints > 0 {
		return s.p.Limits.MaxPoints
	}
	return limits.DefaultMaxPoints
}

func (s *Service) checkPoints(n int, what string) error {
	if n > s.maxPoints() {
		return operation.OverLimit(limits.Points, "%s: %d points is more than the limit of %d (%s)", what, n, s.maxPoints(), limits.Points)
	}
	return nil
}

// ToMapPoints converts pixel positions (origin top left) to map coordinates.
func (s *Service) ToMapPoints(ctx context.Context, c *operation.Call, req *gisxml.ToMapPoints) (*gisxml.ToMapPointsResponse, error) {
	v, err := s.viewOf(ctx, c, req.MapDescription, req.MapImageDisplay)
	if err != nil {
		return nil, err
	}
	xs, ys := req.ScreenXValues, req.ScreenYValues
	if len(xs) != len(ys) {
		return nil, operation.Invalid("ScreenXValues has %d values and ScreenYValues %d: they must pair up", len(xs), len(ys))
	}
	if err := s.checkPoints(len(xs), "ScreenXValues"); err != nil {
		return nil, err
	}
	sr := operation.SpatialReference(v.SR)
	pts := make(gisxml.ArrayOfPoint, len(xs))
	b := orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
	for i := range xs {
		p := v.ToMap(float64(xs[i]), float64(ys[i]))
		b = b.Extend(p)
		pts[i] = &gisxml.PointN{X: p[0], Y: p[1]}
	}
	mp := &gisxml.MultipointN{PointArray: pts, SpatialReference: sr}
	if len(pts) > 0 {
		mp.Extent = operation.Envelope(b, v.SR)
	}
	return &gisxml.ToMapPointsResponse{Result: mp}, nil
}

// FromMapPoints converts map coordinates to pixel positions, rounded to the nearest pixel.
func (s *Service) FromMapPoints(ctx context.Context, c *operation.Call, req *gisxml.FromMapPoints) (*gisxml.FromMapPointsResponse, error) {
	v, err := s.viewOf(ctx, c, req.MapDescription, req.MapImageDisplay)
	if err != nil {
		return nil, err
	}
	mp, ok := req.MapPoints.(*gisxml.MultipointN)
	if !ok || mp == nil {
		return nil, operation.Invalid("MapPoints: a MultipointN is required")
	}
	if err := s.checkPoints(len(mp.PointArray), "MapPoints"); err != nil {
		return nil, err
	}
	// Points carry the view's system unless they (or the multipoint) say otherwise.
	m, err := operation.MapOf(c, req.MapDescription.Name)
	if err != nil {
		return nil, err
	}
	xs := make(gisxml.ArrayOfInt, len(mp.PointArray))
	ys := make(gisxml.ArrayOfInt, len(mp.PointArray))
	for i, gp := range mp.PointArray {
		p, err := pointOf(gp, "MapPoints")
		if err != nil {
			return nil, err
		}
		sr := operation.SRIn(mp.SpatialReference)
		if pn, ok := gp.(*gisxml.PointN); ok && !operation.SRIn(pn.SpatialReference).IsZero() {
			sr = operation.SRIn(pn.SpatialReference)
		}
		t, err := operation.Transformer(m, sr, v.SR, "MapPoints/SpatialReference")
		if err != nil {
			return nil, err
		}
		if t != nil {
			if p, err = t.Point(p); err != nil {
				return nil, operation.Invalid("MapPoints[%d]: %v", i, err)
			}
		}
		x, y := v.ToPixel(p)
		if math.Abs(x) > math.MaxInt32 || math.Abs(y) > math.MaxInt32 {
			return nil, operation.Invalid("MapPoints[%d] is too far outside the image to have a pixel position", i)
		}
		xs[i], ys[i] = int(math.Round(x)), int(math.Round(y))
	}
	return &gisxml.FromMapPointsResponse{ScreenXValues: xs, ScreenYValues: ys}, nil
}
