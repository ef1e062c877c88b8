package feature

import (
	"fmt"
	"strings"
)

// GeometryType is the kind of geometry a layer holds, in ArcGIS terms.
// Multi-part geometries share the type of their parts: a MultiPolygon layer
// is a Polygon layer, a MultiLineString layer a Polyline layer.
type GeometryType int

// Geometry types. None is a standalone table (no geometry column).
const (
	None GeometryType = iota
	Point
	Multipoint
	Polyline
	Polygon
)

// String returns the esriGeometryType name ("esriGeometryPolygon", …), or
// "esriGeometryNull" for None.
func (g GeometryType) String() string {
	switch g {
	case Point:
		return "esriGeometryPoint"
	case Multipoint:
		return "esriGeometryMultipoint"
	case Polyline:
		return "esriGeometryPolyline"
	case Polygon:
		return "esriGeometryPolygon"
	}
	return "esriGeometryNull"
}

// Name returns the short lower-case name used in service definitions:
// "point", "multipoint", "polyline", "polygon" or "none".
func (g GeometryType) Name() string {
	switch g {
	case Point:
		return "point"
	case Multipoint:
		return "multipoint"
	case Polyline:
		return "polyline"
	case Polygon:
		return "polygon"
	}
	return "none"
}

// ParseGeometryType parses a short name ("point", "multipoint", "polyline",
// "polygon", "none") or an esriGeometryType name, case-insensitively.
func ParseGeometryType(s string) (GeometryType, error) {
	k := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(s, "esriGeometry"), "esrigeometry"))
	for g := None; g <= Polygon; g++ {
		if k == g.Name() {
			return g, nil
		}
	}
	if k == "null" {
		return None, nil
	}
	return None, fmt.Errorf("unknown geometry type %q (want point, multipoint, polyline or polygon)", s)
}

// FieldType is the type of an attribute, in ArcGIS terms. The Go type of a
// value in Feature.Values follows it: OID, Integer and SmallInteger hold
// int64; Double and Single float64; String string; Date time.Time; Blob
// []byte. NULL is nil for every type.
type FieldType int

// Field types.
const (
	FieldOID FieldType = iota
	FieldInteger
	FieldSmallInteger
	FieldDouble
	FieldSingle
	FieldString
	FieldDate
	FieldBlob
	FieldGeometry
)

var fieldTypeNames = [...]string{
	FieldOID:          "esriFieldTypeOID",
	FieldInteger:      "esriFieldTypeInteger",
	FieldSmallInteger: "esriFieldTypeSmallInteger",
	FieldDouble:       "esriFieldTypeDouble",
	FieldSingle:       "esriFieldTypeSingle",
	FieldString:       "esriFieldTypeString",
	FieldDate:         "esriFieldTypeDate",
	FieldBlob:         "esriFieldTypeBlob",
	FieldGeometry:     "esriFieldTypeGeometry",
}

// String returns the esriFieldType name, e.g. "esriFieldTypeString".
func (t FieldType) String() string {
	if t >= 0 && int(t) < len(fieldTypeNames) {
		return fieldTypeNames[t]
	}
	return fmt.Sprintf("FieldType(%d)", int(t))
}

// Numeric reports whether values of the type are int64 or float64.
func (t FieldType) Numeric() bool {
	switch t {
	case FieldOID, FieldInteger, FieldSmallInteger, FieldDouble, FieldSingle:
		return true
	}
	return false
}

// Field describes one attribute column.
type Field struct {
	// Name is the column name as stored.
	Name string
	// Alias is the display name; it equals Name unless a service definition
	// sets one.
	Alias string
	// Type is the ArcGIS field type.
	Type FieldType
	// Length is the maximum length of a String field (from TEXT(n), or the
	// longest value found, at least 255 when undeclared); the byte size
	// for numeric types (8 for Double/OID/Integer as stored in SQLite,
	// 4 for Single, 2 for SmallInteger, 8 for Date).
	Length int
	// Nullable reports whether the column may hold NULL.
	Nullable bool
}
