package rest

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// jsonGeometry is an Esri JSON geometry as a request gives it (geometry=…), any kind.
type jsonGeometry struct {
	X                *float64      `json:"x"`
	Y                *float64      `json:"y"`
	XMin             *float64      `json:"xmin"`
	YMin             *float64      `json:"ymin"`
	XMax             *float64      `json:"xmax"`
	YMax             *float64      `json:"ymax"`
	Points           [][]float64   `json:"points"`
	Paths            [][][]float64 `json:"paths"`
	Rings            [][][]float64 `json:"rings"`
	SpatialReference *jsonSR       `json:"spatialReference"`
}

type jsonSR struct {
	WKID       int    `json:"wkid"`
	LatestWKID int    `json:"latestWkid"`
	WKT        string `json:"wkt"`
}

// parseSR reads a spatial reference parameter: a WKID (4326) or JSON ({"wkid":4326}); "" is
// none (nil).
func parseSR(name, s string) (gisxml.SpatialReference, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var sr jsonSR
	if n, err := strconv.Atoi(s); err == nil {
		sr.WKID = n
	} else if err := json.Unmarshal([]byte(s), &sr); err != nil {
		return nil, badJSON(name, err)
	}
	return srValue(&sr), nil
}

// srParam is parseSR of the parameter name, def when the request has none.
func srParam(q *request, name string, def gisxml.SpatialReference) (gisxml.SpatialReference, error) {
	sr, err := parseSR(name, q.param(name))
	if err != nil || sr != nil {
		return sr, err
	}
	return def, nil
}

// srValue is the schema spatial reference of a WKID or WKT.
func srValue(sr *jsonSR) gisxml.SpatialReference {
	if sr == nil || (sr.WKID == 0 && sr.LatestWKID == 0 && sr.WKT == "") {
		return nil
	}
	f := gisxml.SpatialReferenceFields{}
	wkid := sr.WKID
	if wkid == 0 {
		wkid = sr.LatestWKID
	}
	if wkid != 0 {
		f.WKID = &wkid
	}
	if sr.WKT != "" {
		f.WKT = &sr.WKT
	}
	if wkid >= 4000 && wkid < 5000 || strings.HasPrefix(sr.WKT, "GEOGCS") {
		return &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: f}
	}
	return &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: f}
}

// parseGeometry reads geometry=… with geometryType: Esri JSON, or the simple syntax "x,y" of a
// point and "xmin,ymin,xmax,ymax" of an envelope. inSR applies to a geometry without its own.
func parseGeometry(s, geometryType string, inSR gisxml.SpatialReference) (gisxml.GeometryKind, error) {
	s = strings.TrimSpace(s)
	if geometryType == "" {
		geometryType = "esriGeometryEnvelope"
	}
	var g jsonGeometry
	if !strings.HasPrefix(s, "{") {
		var nums []float64
		for _, part := range strings.Split(s, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
			if err != nil {
				return nil, badRequest("'geometry' parameter is invalid: %q", s)
			}
			nums = append(nums, f)
		}
		switch {
		case len(nums) == 2:
			g.X, g.Y = &nums[0], &nums[1]
		case len(nums) == 4:
			g.XMin, g.YMin, g.XMax, g.YMax = &nums[0], &nums[1], &nums[2], &nums[3]
		default:
			return nil, badRequest("'geometry' parameter is invalid: %q", s)
		}
	} else if err := json.Unmarshal([]byte(s), &g); err != nil {
		return nil, badJSON("geometry", err)
	}
	sr := inSR
	if g.SpatialReference != nil {
		sr = srValue(g.SpatialReference)
	}
	switch geometryType {
	case "esriGeometryPoint":
		if g.X == nil || g.Y == nil {
			return nil, badRequest("'geometry' is not a point: %q", s)
		}
		return &gisxml.PointN{X: *g.X, Y: *g.Y, SpatialReference: sr}, nil
	case "esriGeometryEnvelope":
		if g.XMin == nil || g.YMin == nil || g.XMax == nil || g.YMax == nil {
			return nil, badRequest("'geometry' is not an envelope: %q", s)
		}
		return &gisxml.EnvelopeN{XMin: min(*g.XMin, *g.XMax), YMin: min(*g.YMin, *g.YMax), XMax: max(*g.XMin, *g.XMax), YMax: max(*g.YMin, *g.YMax), SpatialReference: sr}, nil
	case "esriGeometryMultipoint":
		return &gisxml.MultipointN{PointArray: points(g.Points), SpatialReference: sr}, nil
	case "esriGeometryPolyline":
		paths := make(gisxml.ArrayOfPath, 0, len(g.Paths))
		for _, p := range g.Paths {
			paths = append(paths, &gisxml.Path{PointArray: points(p)})
		}
		return &gisxml.PolylineN{PathArray: paths, SpatialReference: sr}, nil
	case "esriGeometryPolygon":
		rings := make(gisxml.ArrayOfRing, 0, len(g.Rings))
		for _, r := range g.Rings {
			rings = append(rings, &gisxml.Ring{Path: gisxml.Path{PointArray: points(r)}})
		}
		return &gisxml.PolygonN{RingArray: rings, SpatialReference: sr}, nil
	}
	return nil, badRequest("'geometryType' parameter is invalid: %q", geometryType)
}

func points(cs [][]float64) gisxml.ArrayOfPoint {
	out := make(gisxml.ArrayOfPoint, 0, len(cs))
	for _, c := range cs {
		if len(c) >= 2 {
			out = append(out, &gisxml.PointN{X: c[0], Y: c[1]})
		}
	}
	return out
}

// spatialRel maps esriSpatialRel* to the schema's enumeration.
func spatialRel(s string) (gisxml.SpatialRelEnum, error) {
	if s == "" {
		return gisxml.SpatialRelIntersects, nil
	}
	switch s {
	case "esriSpatialRelIntersects", "esriSpatialRelEnvelopeIntersects", "esriSpatialRelIndexIntersects",
		"esriSpatialRelTouches", "esriSpatialRelOverlaps", "esriSpatialRelCrosses", "esriSpatialRelWithin",
		"esriSpatialRelContains", "esriSpatialRelRelation":
		return gisxml.SpatialRelEnum("gis" + strings.TrimPrefix(s, "esri")), nil
	}
	return "", badRequest("'spatialRel' parameter is invalid: %q", s)
}
