package ogcapi

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// jsonBuf appends JSON to a byte slice: the features of an items page are written here, without
// a value per feature for encoding/json to reflect on.
type jsonBuf struct {
	b    []byte
	need bool // a comma before the next value
}

func (j *jsonBuf) sep() {
	if j.need {
		j.b = append(j.b, ',')
	}
	j.need = false
}

func (j *jsonBuf) objOpen()  { j.sep(); j.b = append(j.b, '{') }
func (j *jsonBuf) objClose() { j.b = append(j.b, '}'); j.need = true }
func (j *jsonBuf) arrOpen()  { j.sep(); j.b = append(j.b, '[') }
func (j *jsonBuf) arrClose() { j.b = append(j.b, ']'); j.need = true }

func (j *jsonBuf) key(k string) {
	j.sep()
	j.b = appendString(j.b, k)
	j.b = append(j.b, ':')
}

func (j *jsonBuf) str(s string) { j.sep(); j.b = appendString(j.b, s); j.need = true }
func (j *jsonBuf) int(n int)    { j.sep(); j.b = strconv.AppendInt(j.b, int64(n), 10); j.need = true }
func (j *jsonBuf) raw(b []byte) { j.sep(); j.b = append(j.b, b...); j.need = true }
func (j *jsonBuf) null()        { j.sep(); j.b = append(j.b, "null"...); j.need = true }

func (j *jsonBuf) float(f float64) {
	j.sep()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		j.b = append(j.b, "null"...)
	} else {
		j.b = strconv.AppendFloat(j.b, f, 'f', -1, 64)
	}
	j.need = true
}

// value writes an attribute value: numbers, strings, booleans, dates as RFC 3339 (GeoJSON has
// no date type; OGC API Features writes them so), blobs as null.
func (j *jsonBuf) value(v any) {
	switch x := v.(type) {
	case nil:
		j.null()
	case int:
		j.int(x)
	case int16:
		j.int(int(x))
	case int32:
		j.int(int(x))
	case int64:
		j.sep()
		j.b = strconv.AppendInt(j.b, x, 10)
		j.need = true
	case float32:
		j.float(float64(x))
	case float64:
		j.float(x)
	case string:
		j.str(x)
	case bool:
		j.sep()
		j.b = strconv.AppendBool(j.b, x)
		j.need = true
	case time.Time:
		j.str(x.UTC().Format(time.RFC3339))
	case []byte:
		j.null()
	default:
		j.raw(mustJSON(x))
	}
}

// textOf is an attribute value as the HTML pages show it.
func textOf(v any) string {
	switch x := v.(type) {
	case nil, []byte:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	var b jsonBuf
	b.value(v)
	return string(b.b)
}

// mustJSON is v as JSON, null when it has none.
func mustJSON(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// marshal is v as JSON, with &, < and > as they are: links hold query strings, and JSON is
// never read as HTML here.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
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
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, `\u202`...)
				b = append(b, "0123456789abcdef"[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// featureEncoder writes the records of one record set as GeoJSON features: the id field's
// value as the id, the shape as the geometry (in the order of the answer's system: latitude
// first when northFirst), the other fields as properties.
type featureEncoder struct {
	fields     []*gisxml.Field
	keys       [][]byte // the properties' names, encoded once
	shape, id  int
	northFirst bool
}

func newFeatureEncoder(rs *gisxml.RecordSet, idField string, northFirst bool) *featureEncoder {
	e := &featureEncoder{shape: -1, id: -1, northFirst: northFirst}
	if rs.Fields != nil {
		e.fields = rs.Fields.FieldArray
	}
	e.keys = make([][]byte, len(e.fields))
	for i, f := range e.fields {
		e.keys[i] = append(appendString(nil, f.Name), ':')
		switch {
		case f.GeometryDef != nil:
			e.shape = i
		case strings.EqualFold(f.Name, idField):
			e.id = i
		}
	}
	return e
}

func (e *featureEncoder) feature(b *jsonBuf, rec *gisxml.Record) { e.featureWith(b, rec, nil) }

// featureWith writes one feature, with links when given.
func (e *featureEncoder) featureWith(b *jsonBuf, rec *gisxml.Record, links []link) {
	b.objOpen()
	b.key("type")
	b.str("Feature")
	if e.id >= 0 && e.id < len(rec.Values) {
		b.key("id")
		b.value(rec.Values[e.id])
	}
	b.key("geometry")
	if e.shape >= 0 && e.shape < len(rec.Values) {
		e.geometry(b, rec.Values[e.shape])
	} else {
		b.null()
	}
	b.key("properties")
	b.objOpen()
	for i, v := range rec.Values {
		if i == e.shape || i >= len(e.keys) {
			continue
		}
		b.sep()
		b.b = append(b.b, e.keys[i]...)
		b.value(v)
	}
	b.objClose()
	if links != nil {
		b.key("links")
		b.raw(mustJSON(links))
	}
	b.objClose()
}

// geometry writes a shape as a GeoJSON geometry (RFC 7946: exterior rings counter-clockwise,
// holes clockwise), null for none.
func (e *featureEncoder) geometry(b *jsonBuf, v any) {
	g, ok := v.(gisxml.GeometryKind)
	if !ok || g == nil {
		b.null()
		return
	}
	og, _, err := operation.GeometryIn(g, "shape")
	if err != nil || og == nil {
		b.null()
		return
	}
	b.objOpen()
	b.key("type")
	switch x := og.(type) {
	case orb.Point:
		b.str("Point")
		b.key("coordinates")
		e.point(b, x)
	case orb.MultiPoint:
		b.str("MultiPoint")
		b.key("coordinates")
		e.points(b, x)
	case orb.LineString:
		b.str("LineString")
		b.key("coordinates")
		e.points(b, x)
	case orb.MultiLineString:
		b.str("MultiLineString")
		b.key("coordinates")
		b.arrOpen()
		for _, ls := range x {
			e.points(b, ls)
		}
		b.arrClose()
	case orb.Polygon:
		b.str("Polygon")
		b.key("coordinates")
		e.polygon(b, x)
	case orb.MultiPolygon:
		b.str("MultiPolygon")
		b.key("coordinates")
		b.arrOpen()
		for _, p := range x {
			e.polygon(b, p)
		}
		b.arrClose()
	case orb.Bound:
		b.str("Polygon")
		b.key("coordinates")
		e.polygon(b, x.ToPolygon())
	default:
		b.str("GeometryCollection")
		b.key("geometries")
		b.arrOpen()
		b.arrClose()
	}
	b.objClose()
}

func (e *featureEncoder) point(b *jsonBuf, p orb.Point) {
	b.sep()
	x, y := p[0], p[1]
	if e.northFirst {
		x, y = y, x
	}
	b.b = append(b.b, '[')
	b.b = strconv.AppendFloat(b.b, x, 'f', -1, 64)
	b.b = append(b.b, ',')
	b.b = strconv.AppendFloat(b.b, y, 'f', -1, 64)
	b.b = append(b.b, ']')
	b.need = true
}

func (e *featureEncoder) points(b *jsonBuf, ps []orb.Point) {
	b.arrOpen()
	for _, p := range ps {
		e.point(b, p)
	}
	b.arrClose()
}

// polygon writes rings, the exterior counter-clockwise and holes clockwise (in easting-first
// coordinates), closed.
func (e *featureEncoder) polygon(b *jsonBuf, p orb.Polygon) {
	b.arrOpen()
	for i, ring := range p {
		ccw := ringArea(ring) > 0
		reverse := i == 0 && !ccw || i > 0 && ccw
		b.arrOpen()
		n := len(ring)
		for k := 0; k < n; k++ {
			j := k
			if reverse {
				j = n - 1 - k
			}
			e.point(b, ring[j])
		}
		if n > 0 && ring[0] != ring[n-1] {
			if reverse {
				e.point(b, ring[n-1])
			} else {
				e.point(b, ring[0])
			}
		}
		b.arrClose()
	}
	b.arrClose()
}

// ringArea is twice the signed area of a ring: positive counter-clockwise.
func ringArea(r orb.Ring) float64 {
	var a float64
	for i := range r {
		j := (i + 1) % len(r)
		a += r[i][0]*r[j][1] - r[j][0]*r[i][1]
	}
	return a
}
