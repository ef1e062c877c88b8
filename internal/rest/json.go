package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// Two encoders write the JSON answers, to the same bytes.
//
// jsonWriter appends JSON to a buffer without reflection: query answers of thousands of
// features are written value by value (see BenchmarkEncodeFeatures), and so are the feature
// sets of identify, find and queryRelatedRecords. Commas are placed by the writer: need says a
// value was written at this level.
//
// The metadata resources (the service root, its layers and tables, drawing info, legend,
// attachments, export's JSON) are Go structs encoded by encoding/json (see encode): a struct's
// field order is ArcGIS's key order, and a member shared by several resources is declared once.
// Those answers are small and written once per request, so reflection costs nothing that
// matters there. Their members use the types below, which encoding/json writes as jsonWriter
// does: text escapes as appendString (\u0008 and \u000c, not \b and \f; no HTML escaping), num
// formats as appendFloat (integers without a fraction, no exponent, NaN and infinities null).
type jsonWriter struct {
	b    []byte
	need bool
}

func (w *jsonWriter) bytes() []byte { return w.b }

func (w *jsonWriter) sep() {
	if w.need {
		w.b = append(w.b, ',')
	}
}

func (w *jsonWriter) objOpen()  { w.sep(); w.b = append(w.b, '{'); w.need = false }
func (w *jsonWriter) objClose() { w.b = append(w.b, '}'); w.need = true }
func (w *jsonWriter) arrOpen()  { w.sep(); w.b = append(w.b, '['); w.need = false }
func (w *jsonWriter) arrClose() { w.b = append(w.b, ']'); w.need = true }

func (w *jsonWriter) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
	w.need = false
}

func (w *jsonWriter) str(s string) { w.sep(); w.b = appendString(w.b, s); w.need = true }
func (w *jsonWriter) int(i int64)  { w.sep(); w.b = strconv.AppendInt(w.b, i, 10); w.need = true }
func (w *jsonWriter) null()        { w.sep(); w.b = append(w.b, "null"...); w.need = true }

func (w *jsonWriter) bool(v bool) {
	w.sep()
	w.b = strconv.AppendBool(w.b, v)
	w.need = true
}

// float writes a number as ArcGIS does: integers without a fraction, NaN and infinities as null.
func (w *jsonWriter) float(f float64) {
	w.sep()
	w.b = appendFloat(w.b, f)
	w.need = true
}

// encoded writes v through encode, null if it cannot be encoded.
func (w *jsonWriter) encoded(v any) {
	data, err := encode(v)
	if err != nil {
		w.null()
		return
	}
	w.raw(data)
}

// raw writes already encoded JSON as one value.
func (w *jsonWriter) raw(v []byte) { w.sep(); w.b = append(w.b, v...); w.need = true }

// any writes a value of no fixed type through encoding/json.
func (w *jsonWriter) any(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		w.null()
		return
	}
	w.raw(data)
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// encode writes v as compact JSON with encoding/json, without its HTML escaping (jsonWriter
// has none).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// text is a string member, escaped as appendString escapes.
type text string

func (t text) MarshalJSON() ([]byte, error) { return appendString(nil, string(t)), nil }

// optText is *p as a nullable member (nil: null, or absent with omitempty).
func optText(p *string) *text { return (*text)(p) }

// num is a number member, formatted as appendFloat formats.
type num float64

func (n num) MarshalJSON() ([]byte, error) { return appendFloat(nil, float64(n)), nil }

// null is a member that is always null.
type null struct{}

func (null) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// emptyList is a member that is always [].
type emptyList struct{}

func (emptyList) MarshalJSON() ([]byte, error) { return []byte("[]"), nil }

// srJSON is a spatialReference member, written by jsonWriter.spatialReference.
type srJSON struct{ sr gisxml.SpatialReference }

func (s srJSON) MarshalJSON() ([]byte, error) {
	var w jsonWriter
	w.spatialReference(s.sr)
	return w.bytes(), nil
}

// extentJSON is an extent member, written by jsonWriter.envelope.
type extentJSON struct{ env gisxml.Envelope }

func (e extentJSON) MarshalJSON() ([]byte, error) {
	var w jsonWriter
	w.envelope(e.env)
	return w.bytes(), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping as encoding/json does (HTML characters
// aside).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// indent is f=pjson: the same JSON, indented two spaces as ArcGIS's pretty JSON.
func indent(data []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, data, "", "  "); err != nil {
		return data
	}
	return out.Bytes()
}

// value writes a record value as ArcGIS JSON: numbers, strings, dates as epoch milliseconds.
func (w *jsonWriter) value(v any) {
	switch x := v.(type) {
	case nil:
		w.null()
	case int:
		w.int(int64(x))
	case int16:
		w.int(int64(x))
	case int32:
		w.int(int64(x))
	case int64:
		w.int(x)
	case float32:
		w.float(float64(x))
	case float64:
		w.float(x)
	case string:
		w.str(x)
	case bool:
		w.bool(x)
	case time.Time:
		w.int(x.UnixMilli())
	case []byte:
		w.null() // blobs are not returned by query, as in ArcGIS
	default:
		w.any(x)
	}
}

// srWKID returns a spatial reference's wkid and latestWkid (0 when absent).
func srWKID(sr gisxml.SpatialReference) (wkid, latest int) {
	if sr == nil {
		return 0, 0
	}
	f := sr.SpatialReferencePart()
	if f == nil {
		return 0, 0
	}
	if f.WKID != nil {
		wkid = *f.WKID
	}
	if f.LatestWKID != nil {
		latest = *f.LatestWKID
	}
	return wkid, latest
}

// spatialReference writes {"wkid":…,"latestWkid":…}, or {"wkt":…} for a system without a WKID.
func (w *jsonWriter) spatialReference(sr gisxml.SpatialReference) {
	w.objOpen()
	wkid, latest := srWKID(sr)
	switch {
	case wkid != 0:
		w.key("wkid")
		w.int(int64(wkid))
		if latest != 0 {
			w.key("latestWkid")
			w.int(int64(latest))
		}
	case sr != nil && sr.SpatialReferencePart() != nil && sr.SpatialReferencePart().WKT != nil:
		w.key("wkt")
		w.str(*sr.SpatialReferencePart().WKT)
	}
	w.objClose()
}

// envelope writes an extent {"xmin",…,"spatialReference"}.
func (w *jsonWriter) envelope(e gisxml.Envelope) {
	env, ok := e.(*gisxml.EnvelopeN)
	if !ok || env == nil {
		w.null()
		return
	}
	w.objOpen()
	w.key("xmin")
	w.float(env.XMin)
	w.key("ymin")
	w.float(env.YMin)
	w.key("xmax")
	w.float(env.XMax)
	w.key("ymax")
	w.float(env.YMax)
	w.key("spatialReference")
	w.spatialReference(env.SpatialReference)
	w.objClose()
}

func pointXY(p gisxml.Point) (float64, float64, bool) {
	pn, ok := p.(*gisxml.PointN)
	if !ok || pn == nil {
		return 0, 0, false
	}
	return pn.X, pn.Y, true
}

func (w *jsonWriter) coords(pts gisxml.ArrayOfPoint) {
	w.arrOpen()
	for _, p := range pts {
		x, y, ok := pointXY(p)
		if !ok {
			continue
		}
		w.sep()
		w.b = append(w.b, '[')
		w.b = appendFloat(w.b, x)
		w.b = append(w.b, ',')
		w.b = appendFloat(w.b, y)
		w.b = append(w.b, ']')
		w.need = true
	}
	w.arrClose()
}

// geometry writes a schema geometry as an Esri JSON geometry (without its spatial reference,
// which a feature set gives once).
func (w *jsonWriter) geometry(g any) {
	switch x := g.(type) {
	case *gisxml.PointN:
		w.objOpen()
		w.key("x")
		w.float(x.X)
		w.key("y")
		w.float(x.Y)
		w.objClose()
	case *gisxml.MultipointN:
		w.objOpen()
		w.key("points")
		w.coords(x.PointArray)
		w.objClose()
	case *gisxml.PolylineN:
		w.objOpen()
		w.key("paths")
		w.arrOpen()
		for _, p := range x.PathArray {
			if pp := p.PathPart(); pp != nil {
				w.coords(pp.PointArray)
			}
		}
		w.arrClose()
		w.objClose()
	case *gisxml.PolygonN:
		w.objOpen()
		w.key("rings")
		w.arrOpen()
		for _, r := range x.RingArray {
			if r != nil {
				w.coords(r.PointArray)
			}
		}
		w.arrClose()
		w.objClose()
	case *gisxml.EnvelopeN:
		w.envelope(x)
	default:
		w.null()
	}
}

// esriType turns a schema enumeration value (gisFieldTypeOID) into ArcGIS's (esriFieldTypeOID).
func esriType(gis string) string {
	if len(gis) > 3 && gis[:3] == "gis" {
		return "esri" + gis[3:]
	}
	return gis
}

// geometryTypeOf names the Esri geometry type of a schema geometry value.
func geometryTypeOf(g any) string {
	switch g.(type) {
	case *gisxml.PointN:
		return "esriGeometryPoint"
	case *gisxml.MultipointN:
		return "esriGeometryMultipoint"
	case *gisxml.PolylineN:
		return "esriGeometryPolyline"
	case *gisxml.PolygonN:
		return "esriGeometryPolygon"
	case *gisxml.EnvelopeN:
		return "esriGeometryEnvelope"
	}
	return ""
}
