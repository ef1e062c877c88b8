package operation

import (
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// This file turns catalog values into the schema's descriptions of them.

// Ptr returns a pointer to a copy of v, for the schema's optional elements.
func Ptr[T any](v T) *T { return &v }

// SpatialReference describes an SR as ArcGIS does (mapview.SpatialReference: WKID and WKT, or
// the WKT alone for a system that has no WKID).
func SpatialReference(sr proj.SR) gisxml.SpatialReference { return mapview.SpatialReference(sr) }

// Envelope is a bound in the schema's form, with its spatial reference.
func Envelope(b orb.Bound, sr proj.SR) *gisxml.EnvelopeN {
	return &gisxml.EnvelopeN{XMin: b.Min[0], YMin: b.Min[1], XMax: b.Max[0], YMax: b.Max[1], SpatialReference: SpatialReference(sr)}
}

// RGB is a service-definition colour in the schema's form.
func RGB(c symbology.Color) *gisxml.RgbColor {
	return &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: Ptr(c.A)}, Red: c.R, Green: c.G, Blue: c.B}
}

func gisName(esri string) string { return "gis" + strings.TrimPrefix(esri, "esri") }

// FieldType is a field type in the schema's form (esriFieldTypeX becomes gisFieldTypeX).
func FieldType(t feature.FieldType) gisxml.FieldType { return gisxml.FieldType(gisName(t.String())) }

// GeometryType is a geometry type in the schema's form.
func GeometryType(g feature.GeometryType) gisxml.GeometryType {
	return gisxml.GeometryType(gisName(g.String()))
}

// Fields describes a layer's or table's published fields, the shape field included for layers.
func Fields(fs []feature.Field, shape *gisxml.GeometryDef) *gisxml.Fields {
	out := &gisxml.Fields{}
	for _, f := range fs {
		gf := &gisxml.Field{Name: f.Name, Type: FieldType(f.Type), IsNullable: f.Nullable, Length: f.Length,
			Editable: Ptr(f.Type != feature.FieldOID), AliasName: Ptr(f.Alias), Required: Ptr(f.Type == feature.FieldOID)}
		if f.Type == feature.FieldOID {
			gf.IsNullable = false
		}
		if f.Type == feature.FieldDouble {
			gf.Precision, gf.Scale = 0, 0
		}
		out.FieldArray = append(out.FieldArray, gf)
	}
	if shape != nil {
		out.FieldArray = append(out.FieldArray, &gisxml.Field{Name: "Shape", Type: gisxml.FieldTypeGeometry, IsNullable: true,
			Editable: Ptr(true), Required: Ptr(true), AliasName: Ptr("Shape"), GeometryDef: shape})
	}
	return out
}

// CanScaleSymbols reports whether the layers of a map can scale their symbols: whether the map
// has a reference scale, without which ScaleSymbols changes nothing.
func CanScaleSymbols(m *catalog.Map) bool { return m.Def != nil && m.Def.ReferenceScale > 0 }

// ScaleSymbolsDefault is a layer's ScaleSymbols in the default map description: the service
// definition's scaleSymbols (default true) when the map has a reference scale, else false.
func ScaleSymbolsDefault(m *catalog.Map, l *catalog.Layer) bool {
	return CanScaleSymbols(m) && l.Def.ScaleSymbols
}

// Units are the map units of a system: decimal degrees when geographic, else meters.
func Units(sr proj.SR) gisxml.Units {
	if sr.IsGeographic() {
		return gisxml.DecimalDegrees
	}
	return gisxml.Meters
}
