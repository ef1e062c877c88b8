package soap

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// encoder writes gisxml values as ArcGIS does: unqualified child elements, xsi:type="tns:…" on
// every complex element (arrays included), xsi:type="xsd:…" on xs:anyType values.
type encoder struct {
	c   *Codec
	buf *bytes.Buffer
}

// element writes one element named name holding v, whose declared schema type is typ.
func (e *encoder) element(name string, v reflect.Value, fi *fieldInfo) error {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			if fi != nil && fi.nillable {
				e.open(name, "", true)
			}
			return nil
		}
		if v.Kind() == reflect.Interface && v.Type().NumMethod() == 0 {
			return e.anyValue(name, v.Elem())
		}
		return e.element(name, v.Elem(), fi)
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			e.simple(name, t.UTC().Format("2006-01-02T15:04:05Z"))
			return nil
		}
		td, ok := e.c.schema.TypeOfGo(v.Type())
		if !ok {
			return fmt.Errorf("soap: %s is not a schema type", v.Type())
		}
		e.open(name, td.Name, false)
		if err := e.structFields(v); err != nil {
			return err
		}
		e.close(name)
		return nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.IsNil() && fi != nil && fi.opt {
				return nil
			}
			e.base64(name, v.Bytes())
			return nil
		}
		td, ok := e.c.schema.TypeOfGo(v.Type())
		if !ok || td.Kind != gisxml.KindArray {
			return fmt.Errorf("soap: %s is not a schema array", v.Type())
		}
		if v.IsNil() && fi != nil && fi.opt {
			return nil
		}
		e.open(name, td.Name, false)
		itemFI := &fieldInfo{name: td.Item, typ: td.ItemType, nillable: td.ItemNillable}
		for i := 0; i < v.Len(); i++ {
			if err := e.element(td.Item, v.Index(i), itemFI); err != nil {
				return err
			}
		}
		e.close(name)
		return nil
	default:
		e.simple(name, scalarText(v))
		return nil
	}
}

func (e *encoder) structFields(v reflect.Value) error {
	for _, fi := range e.c.fieldsOf(v.Type()) {
		fv := v.FieldByIndex(fi.index)
		if fi.many && fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8 {
			if _, isArray := e.c.schema.TypeOfGo(fv.Type()); !isArray {
				for i := 0; i < fv.Len(); i++ {
					if err := e.element(fi.name, fv.Index(i), &fi); err != nil {
						return err
					}
				}
				continue
			}
		}
		if err := e.element(fi.name, fv, &fi); err != nil {
			return err
		}
	}
	return nil
}

// anyValue writes an xs:anyType slot with the concrete type named.
func (e *encoder) anyValue(name string, v reflect.Value) error {
	var xsd string
	switch v.Kind() {
	case reflect.String:
		if td, ok := e.c.schema.TypeOfGo(v.Type()); ok {
			e.typed(name, "tns:"+td.Name, v.String())
			return nil
		}
		xsd = "string"
	case reflect.Bool:
		xsd = "boolean"
	case reflect.Int, reflect.Int32:
		xsd = "int"
	case reflect.Int16:
		xsd = "short"
	case reflect.Int64:
		xsd = "long"
	case reflect.Uint8:
		xsd = "unsignedByte"
	case reflect.Float32:
		xsd = "float"
	case reflect.Float64:
		xsd = "double"
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			e.typed(name, "xsd:base64Binary", base64.StdEncoding.EncodeToString(v.Bytes()))
			return nil
		}
		return e.element(name, v, nil)
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			e.typed(name, "xsd:dateTime", t.UTC().Format("2006-01-02T15:04:05Z"))
			return nil
		}
		return e.element(name, v, nil)
	case reflect.Pointer:
		if v.IsNil() {
			e.open(name, "", true)
			return nil
		}
		return e.anyValue(name, v.Elem())
	default:
		return fmt.Errorf("soap: cannot write %s as xs:anyType", v.Type())
	}
	e.typed(name, "xsd:"+xsd, scalarText(v))
	return nil
}

func (e *encoder) open(name, typ string, nilled bool) {
	e.buf.WriteByte('<')
	e.buf.WriteString(name)
	if typ != "" {
		e.buf.WriteString(` xsi:type="tns:`)
		e.buf.WriteString(typ)
		e.buf.WriteByte('"')
	}
	if nilled {
		e.buf.WriteString(` xsi:nil="true"/>`)
		return
	}
	e.buf.WriteByte('>')
}

func (e *encoder) close(name string) {
	e.buf.WriteString("</")
	e.buf.WriteString(name)
	e.buf.WriteByte('>')
}

// base64 writes an xs:base64Binary element, encoding straight into the buffer: the base64
// alphabet needs no XML escaping, and a tile's bytes need no intermediate string.
func (e *encoder) base64(name string, data []byte) {
	e.buf.WriteByte('<')
	e.buf.WriteString(name)
	e.buf.WriteByte('>')
	e.buf.Grow(base64.StdEncoding.EncodedLen(len(data)))
	e.buf.Write(base64.StdEncoding.AppendEncode(e.buf.AvailableBuffer(), data))
	e.close(name)
}

func (e *encoder) simple(name, text string) {
	e.buf.WriteByte('<')
	e.buf.WriteString(name)
	e.buf.WriteByte('>')
	escapeText(e.buf, text)
	e.close(name)
}

func (e *encoder) typed(name, xsiType, text string) {
	e.buf.WriteByte('<')
	e.buf.WriteString(name)
	e.buf.WriteString(` xsi:type="`)
	e.buf.WriteString(xsiType)
	e.buf.WriteString(`">`)
	escapeText(e.buf, text)
	e.close(name)
}

func scalarText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return FormatDouble(v.Float())
	}
	return fmt.Sprint(v.Interface())
}

// FormatDouble writes an xs:double: the shortest text that reads back to the same value, with
// INF, -INF and NaN spelled as XML Schema does.
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// escapeText writes s with XML's special characters escaped and characters XML 1.0 cannot carry
// replaced by U+FFFD.
func escapeText(b *bytes.Buffer, s string) {
	last := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == '<':
			esc = "&lt;"
		case r == '>':
			esc = "&gt;"
		case r == '&':
			esc = "&amp;"
		case r == '"':
			esc = "&quot;"
		case r == '\r':
			esc = "&#xD;"
		case r == utf8.RuneError && w == 1, r < 0x20 && r != '\t' && r != '\n', r == 0xFFFE, r == 0xFFFF:
			esc = "\uFFFD"
		default:
			i += w
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		i += w
		last = i
	}
	b.WriteString(s[last:])
}
