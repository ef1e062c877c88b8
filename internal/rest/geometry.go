package rest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
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
	WKID       jsonWKID `json:"wkid"`
	LatestWKID jsonWKID `json:"latestWkid"`
	WKT        string   `json:"wkt"`
	WKT2       string   `json:"wkt2"` // the ArcGIS Maps SDK's SpatialReference.wkt2
}

// jsonWKID is a WKID in JSON: a number, or a number in a string, as QGIS writes it
// ({"wkid":"4326"}: QgsArcGisRestUtils::crsToJson).
type jsonWKID int

func (w *jsonWKID) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		*w = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("a WKID is a whole number, not %s", b)
	}
	*w = jsonWKID(n)
	return nil
}

// parseSR reads a spatial reference parameter: a WKID (4326), JSON ({"wkid":4326},
// {"wkt":"PROJCS[…]"}, {"wkt2":"PROJCRS[…]"}) or a WKT itself; "" is none (nil). A WKT must
// be one (proj.FromWKT): other text ({"wkt":"foo"}, zz) is 400 "Invalid spatial reference".
func parseSR(name, s string) (gisxml.SpatialReference, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var sr jsonSR
	if n, err := strconv.Atoi(s); err == nil {
		sr.WKID = jsonWKID(n)
	} else if !strings.HasPrefix(s, "{") {
		sr.WKT = s
	} else if err := json.Unmarshal([]byte(s), &sr); err != nil {
		return nil, badJSON(name, err)
	}
	return checkedSR(name, &sr)
}

// checkedSR is srValue of a spatial reference read from the parameter name, after checking that
// a WKT (wkt, else wkt2) it is given by is one.
func checkedSR(name string, sr *jsonSR) (gisxml.SpatialReference, error) {
	if sr.WKT == "" {
		sr.WKT = sr.WKT2
	}
	if sr.WKID == 0 && sr.LatestWKID == 0 && sr.WKT != "" {
		if _, err := proj.FromWKT(sr.WKT); err != nil {
			return nil, invalidSR(name, err)
		}
	}
	return srValue(sr), nil
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
	wkid := int(sr.WKID)
	if wkid == 0 {
		wkid = int(sr.LatestWKID)
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
		var err error
		if sr, err = checkedSR("geometry", g.SpatialReference); err != nil {
			return nil, err
		}
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
