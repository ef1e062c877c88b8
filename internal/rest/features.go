package rest

import (
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// encodeFeatureSet writes a record set as the Esri JSON feature set a REST query answers:
// displayFieldName, fieldAliases, geometryType, spatialReference, fields, features and
// exceededTransferLimit when the page is not the last.
func encodeFeatureSet(w *jsonWriter, rs *gisxml.RecordSet, display, idField string, exceeded bool) {
	fields, shapeDef := schemaOf(rs.Fields)
	w.objOpen()
	w.key("displayFieldName")
	w.str(display)
	w.key("fieldAliases")
	w.objOpen()
	for _, f := range fields {
		w.key(f.Name)
		w.str(alias(f))
	}
	w.objClose()
	writeSchema(w, fields, shapeDef, idField)
	w.key("features")
	writeFeatures(w, rs)
	if exceeded {
		w.key("exceededTransferLimit")
		w.bool(true)
	}
	w.objClose()
}

// schemaOf splits a record set's fields into the published fields and the shape's definition
// (nil for none).
func schemaOf(fs *gisxml.Fields) (fields []*gisxml.Field, shapeDef *gisxml.GeometryDef) {
	if fs == nil {
		return nil, nil
	}
	for _, f := range fs.FieldArray {
		if f.GeometryDef != nil {
			shapeDef = f.GeometryDef
			continue
		}
		fields = append(fields, f)
	}
	return fields, shapeDef
}

// writeSchema writes the members a feature set and related records have about their fields:
// geometryType and spatialReference when there is a shape, then fields.
func writeSchema(w *jsonWriter, fields []*gisxml.Field, shapeDef *gisxml.GeometryDef, idField string) {
	if shapeDef != nil {
		w.key("geometryType")
		w.str(esriType(string(shapeDef.GeometryType)))
		w.key("spatialReference")
		w.spatialReference(shapeDef.SpatialReference)
	}
	w.key("fields")
	w.encoded(fieldsJSON(fields, idField))
}

// writeFeatures writes a record set's records as Esri JSON features: attributes, and the
// geometry when the set has a shape field.
func writeFeatures(w *jsonWriter, rs *gisxml.RecordSet) {
	shape := -1
	var keys [][]byte // encoded once, not per feature
	if rs.Fields != nil {
		keys = make([][]byte, len(rs.Fields.FieldArray))
		for i, f := range rs.Fields.FieldArray {
			keys[i] = append(appendString(nil, f.Name), ':')
			if f.GeometryDef != nil {
				shape = i
			}
		}
	}
	w.arrOpen()
	for _, r := range rs.Records {
		w.objOpen()
		w.key("attributes")
		w.objOpen()
		for i, v := range r.Values {
			if i == shape || i >= len(keys) {
				continue
			}
			w.sep()
			w.b = append(w.b, keys[i]...)
			w.need = false
			w.value(v)
		}
		w.objClose()
		if shape >= 0 && shape < len(r.Values) {
			w.key("geometry")
			w.geometry(r.Values[shape])
		}
		w.objClose()
	}
	w.arrClose()
}

// encodeGeoJSON writes a record set as a GeoJSON FeatureCollection (RFC 7946: polygons with
// counter-clockwise exterior rings); the id field's value is each feature's id.
func encodeGeoJSON(w *jsonWriter, rs *gisxml.RecordSet, idField string, exceeded bool) {
	shape, id := -1, -1
	if rs.Fields != nil {
		for i, f := range rs.Fields.FieldArray {
			switch {
			case f.GeometryDef != nil:
				shape = i
			case strings.EqualFold(f.Name, idField):
				id = i
			}
		}
	}
	w.objOpen()
	w.key("type")
	w.str("FeatureCollection")
	if exceeded {
		w.key("properties")
		w.objOpen()
		w.key("exceededTransferLimit")
		w.bool(true)
		w.objClose()
	}
	w.key("features")
	w.arrOpen()
	for _, r := range rs.Records {
		w.objOpen()
		w.key("type")
		w.str("Feature")
		if id >= 0 && id < len(r.Values) {
			w.key("id")
			w.value(r.Values[id])
		}
		w.key("geometry")
		if shape >= 0 && shape < len(r.Values) {
			geoJSONGeometry(w, r.Values[shape])
		} else {
			w.null()
		}
		w.key("properties")
		w.objOpen()
		for i, v := range r.Values {
			if i == shape {
				continue
			}
			w.key(rs.Fields.FieldArray[i].Name)
			w.value(v)
		}
		w.objClose()
		w.objClose()
	}
	w.arrClose()
	w.objClose()
}

func xy(p gisxml.Point) []float64 {
	x, y, _ := pointXY(p)
	return []float64{x, y}
}

func (w *jsonWriter) position(c []float64) {
	w.sep()
	w.b = append(w.b, '[')
	w.b = appendFloat(w.b, c[0])
	w.b = append(w.b, ',')
	w.b = appendFloat(w.b, c[1])
	w.b = append(w.b, ']')
	w.need = true
}

// ringArea is twice the signed area of a ring: negative for a clockwise ring (an Esri exterior).
func ringArea(pts gisxml.ArrayOfPoint) float64 {
	var a float64
	for i := range pts {
		x1, y1, _ := pointXY(pts[i])
		x2, y2, _ := pointXY(pts[(i+1)%len(pts)])
		a += x1*y2 - x2*y1
	}
	return a
}

func geoJSONGeometry(w *jsonWriter, g any) {
	switch x := g.(type) {
	case *gisxml.PointN:
		w.objOpen()
		w.key("type")
		w.str("Point")
		w.key("coordinates")
		w.position([]float64{x.X, x.Y})
		w.objClose()
	case *gisxml.MultipointN:
		w.objOpen()
		w.key("type")
		w.str("MultiPoint")
		w.key("coordinates")
		w.arrOpen()
		for _, p := range x.PointArray {
			w.position(xy(p))
		}
		w.arrClose()
		w.objClose()
	case *gisxml.PolylineN:
		w.objOpen()
		w.key("type")
		w.str("MultiLineString")
		w.key("coordinates")
		w.arrOpen()
		for _, p := range x.PathArray {
			w.arrOpen()
			for _, pt := range p.PathPart().PointArray {
				w.position(xy(pt))
			}
			w.arrClose()
		}
		w.arrClose()
		w.objClose()
	case *gisxml.PolygonN:
		// Esri rings: a clockwise ring starts a polygon, the counter-clockwise ones after it are
		// its holes. GeoJSON wants the opposite orientation, so every ring is reversed.
		var polys [][]gisxml.ArrayOfPoint
		for _, r := range x.RingArray {
			if r == nil || len(r.PointArray) == 0 {
				continue
			}
			if ringArea(r.PointArray) < 0 || len(polys) == 0 {
				polys = append(polys, nil)
			}
			polys[len(polys)-1] = append(polys[len(polys)-1], r.PointArray)
		}
		w.objOpen()
		w.key("type")
		w.str("MultiPolygon")
		w.key("coordinates")
		w.arrOpen()
		for _, p := range polys {
			w.arrOpen()
			for _, ring := range p {
				w.arrOpen()
				for i := len(ring) - 1; i >= 0; i-- {
					w.position(xy(ring[i]))
				}
				w.arrClose()
			}
			w.arrClose()
		}
		w.arrClose()
		w.objClose()
	default:
		w.null()
	}
}
