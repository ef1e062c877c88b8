package cartography

import (
	"reflect"
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// TestLabelPlacementMapping: each schema placement type maps to its placement, and back to the
// same type (Before and After come back as Start and End); descriptions for another geometry
// type are ignored.
func TestLabelPlacementMapping(t *testing.T) {
	points := map[gisxml.ServerPointLabelPlacementType]symbology.PointPosition{
		gisxml.ServerPointLabelPlacementAboveCenter: "above", gisxml.ServerPointLabelPlacementAboveLeft: "above-left",
		gisxml.ServerPointLabelPlacementAboveRight: "above-right", gisxml.ServerPointLabelPlacementBelowCenter: "below",
		gisxml.ServerPointLabelPlacementBelowLeft: "below-left", gisxml.ServerPointLabelPlacementBelowRight: "below-right",
		gisxml.ServerPointLabelPlacementCenterCenter: "center", gisxml.ServerPointLabelPlacementCenterLeft: "left",
		gisxml.ServerPointLabelPlacementCenterRight: "right",
	}
	for typ, pos := range points {
		p := placementIn(&gisxml.PointLabelPlacementDescription{Type: typ}, feature.Point)
		if !reflect.DeepEqual(p, symbology.LabelPlacement{Points: []symbology.PointPosition{pos}}) {
			t.Errorf("%s: %+v, want %s", typ, p, pos)
		}
		if out := placementOut(p, feature.Point); out.(*gisxml.PointLabelPlacementDescription).Type != typ {
			t.Errorf("%s comes back as %v", typ, out)
		}
	}
	lines := []struct {
		typ   gisxml.ServerLineLabelPlacementType
		side  symbology.LineSide
		along symbology.LineAnchor
		back  gisxml.ServerLineLabelPlacementType
	}{
		{gisxml.ServerLinePlacementAboveAfter, "above", "end", gisxml.ServerLinePlacementAboveEnd},
		{gisxml.ServerLinePlacementAboveAlong, "above", "", gisxml.ServerLinePlacementAboveAlong},
		{gisxml.ServerLinePlacementAboveBefore, "above", "start", gisxml.ServerLinePlacementAboveStart},
		{gisxml.ServerLinePlacementAboveStart, "above", "start", gisxml.ServerLinePlacementAboveStart},
		{gisxml.ServerLinePlacementAboveEnd, "above", "end", gisxml.ServerLinePlacementAboveEnd},
		{gisxml.ServerLinePlacementBelowAfter, "below", "end", gisxml.ServerLinePlacementBelowEnd},
		{gisxml.ServerLinePlacementBelowAlong, "below", "", gisxml.ServerLinePlacementBelowAlong},
		{gisxml.ServerLinePlacementBelowBefore, "below", "start", gisxml.ServerLinePlacementBelowStart},
		{gisxml.ServerLinePlacementBelowStart, "below", "start", gisxml.ServerLinePlacementBelowStart},
		{gisxml.ServerLinePlacementBelowEnd, "below", "end", gisxml.ServerLinePlacementBelowEnd},
		{gisxml.ServerLinePlacementCenterAfter, "", "end", gisxml.ServerLinePlacementCenterEnd},
		{gisxml.ServerLinePlacementCenterAlong, "", "", gisxml.ServerLinePlacementCenterAlong},
		{gisxml.ServerLinePlacementCenterBefore, "", "start", gisxml.ServerLinePlacementCenterStart},
		{gisxml.ServerLinePlacementCenterStart, "", "start", gisxml.ServerLinePlacementCenterStart},
		{gisxml.ServerLinePlacementCenterEnd, "", "end", gisxml.ServerLinePlacementCenterEnd},
	}
	for _, c := range lines {
		p := placementIn(&gisxml.LineLabelPlacementDescription{Type: c.typ}, feature.Polyline)
		if p.Line != c.side || p.Along != c.along {
			t.Errorf("%s: side %q along %q, want %q %q", c.typ, p.Line, p.Along, c.side, c.along)
		}
		if out := placementOut(p, feature.Polyline); out.(*gisxml.LineLabelPlacementDescription).Type != c.back {
			t.Errorf("%s comes back as %v, want %s", c.typ, out, c.back)
		}
	}
	poly := placementIn(&gisxml.PolygonLabelPlacementDescription{Type: gisxml.ServerPolygonPlacementAlwaysHorizontal}, feature.Polygon)
	if !reflect.DeepEqual(poly, symbology.LabelPlacement{}) {
		t.Errorf("polygon placement %+v, want the default", poly)
	}
	// Straight polygon labels have no schema type: described as horizontal.
	if out := placementOut(symbology.LabelPlacement{PolygonStraight: true}, feature.Polygon); out.(*gisxml.PolygonLabelPlacementDescription).Type != gisxml.ServerPolygonPlacementAlwaysHorizontal {
		t.Errorf("polygon placement out %v", out)
	}
	// Another geometry type's description, or none: the default.
	for _, c := range []struct {
		d  gisxml.LabelPlacementDescription
		gt feature.GeometryType
	}{
		{&gisxml.PointLabelPlacementDescription{Type: gisxml.ServerPointLabelPlacementAboveLeft}, feature.Polygon},
		{&gisxml.LineLabelPlacementDescription{Type: gisxml.ServerLinePlacementAboveAlong}, feature.Point},
		{nil, feature.Polyline},
		{(*gisxml.PointLabelPlacementDescription)(nil), feature.Point},
	} {
		if p := placementIn(c.d, c.gt); !reflect.DeepEqual(p, symbology.LabelPlacement{}) {
			t.Errorf("%T for geometry %v: %+v, want the default", c.d, c.gt, p)
		}
	}
	// Defaults are described as the first position tried: right of points, centred along lines.
	if out := placementOut(symbology.LabelPlacement{}, feature.Point); out.(*gisxml.PointLabelPlacementDescription).Type != gisxml.ServerPointLabelPlacementCenterRight {
		t.Errorf("default point placement out %v", out)
	}
	if out := placementOut(symbology.LabelPlacement{}, feature.Polyline); out.(*gisxml.LineLabelPlacementDescription).Type != gisxml.ServerLinePlacementCenterAlong {
		t.Errorf("default line placement out %v", out)
	}
}

// TestLabelOutPlacement: GetDefaultLayerDrawingDescriptions describes the service definition's
// placement.
func TestLabelOutPlacement(t *testing.T) {
	lb := &symbology.Label{Placement: symbology.LabelPlacement{Line: symbology.LineBelow, Along: symbology.LineStart}}
	if d := labelOut(lb, feature.Polyline, true).LabelPlacementDescription; d.(*gisxml.LineLabelPlacementDescription).Type != gisxml.ServerLinePlacementBelowStart {
		t.Errorf("line label described as %v", d)
	}
	lb = &symbology.Label{Placement: symbology.LabelPlacement{Points: []symbology.PointPosition{symbology.PointBelowLeft, symbology.PointAbove}}}
	if d := labelOut(lb, feature.Point, true).LabelPlacementDescription; d.(*gisxml.PointLabelPlacementDescription).Type != gisxml.ServerPointLabelPlacementBelowLeft {
		t.Errorf("point label described as %v", d)
	}
}
