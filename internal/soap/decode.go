package soap

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/quote"
)

// decodeError is a problem with one element of a request, reported with its path.
func decodeError(path, format string, args ...any) *Fault {
	return &Fault{Code: FaultClient, String: quote.Clip(path, quote.MaxLen) + ": " + quote.Sprintf(format, args...)}
}

// decodeStruct fills the struct v (addressable) from the children of n. Children are matched to
// fields by element name whatever their order; unknown children are ignored, as are missing ones
// (a missing required scalar reads as its zero value, as the research on real clients advises).
func (c *Codec) decodeStruct(n *node, v reflect.Value, path string) error {
	fields := c.fieldsOf(v.Type())
	for _, ch := range n.children {
		fi := findField(fields, ch.local)
		if fi == nil {
			continue
		}
		fv := v.FieldByIndex(fi.index)
		p := path + "/" + ch.local
		if fi.many && fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8 {
			if _, isArray := c.schema.TypeOfGo(fv.Type()); !isArray {
				item := reflect.New(fv.Type().Elem()).Elem()
				if err := c.decodeValue(ch, item, fi.typ, p); err != nil {
					return err
				}
				fv.Set(reflect.Append(fv, item))
				continue
			}
		}
		if err := c.decodeValue(ch, fv, fi.typ, p); err != nil {
			return err
		}
	}
	return nil
}

func findField(fields []fieldInfo, name string) *fieldInfo {
	for i := range fields {
		if fields[i].name == name {
			return &fields[i]
		}
	}
	for i := range fields { // loose: accept a differently cased element name
		if strings.EqualFold(fields[i].name, name) {
			return &fields[i]
		}
	}
	return nil
}

// decodeValue reads element n into v, whose schema type is typ.
func (c *Codec) decodeValue(n *node, v reflect.Value, typ, path string) error {
	if n.nil {
		v.Set(reflect.Zero(v.Type()))
		return nil
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.Type().NumMethod() == 0 {
			return c.decodeAny(n, v, path)
		}
		return c.decodePolymorphic(n, v, typ, path)
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		if err := c.decodeValue(n, elem.Elem(), typ, path); err != nil {
			return err
		}
		v.Set(elem)
		return nil
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			t, err := parseDateTime(n.text)
			if err != nil {
				return decodeError(path, "%q is not an xs:dateTime", n.text)
			}
			v.Set(reflect.ValueOf(t))
			return nil
		}
		return c.decodeStruct(n, v, path)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.text), ""))
			if err != nil {
				return decodeError(path, "not valid base64: %v", err)
			}
			v.SetBytes(b)
			return nil
		}
		td, ok := c.schema.TypeOfGo(v.Type())
		if !ok || td.Kind != gisxml.KindArray {
			return decodeError(path, "cannot read into %s", v.Type())
		}
		out := reflect.MakeSlice(v.Type(), 0, len(n.children))
		for i, ch := range n.children {
			item := reflect.New(v.Type().Elem()).Elem()
			if err := c.decodeValue(ch, item, td.ItemType, fmt.Sprintf("%s/%s[%d]", path, ch.local, i)); err != nil {
				return err
			}
			out = reflect.Append(out, item)
		}
		v.Set(out)
		return nil
	case reflect.String:
		s := n.text
		if td, ok := c.schema.TypeOfGo(v.Type()); ok && td.Kind == gisxml.KindEnum {
			val, err := enumValue(td, s)
			if err != nil {
				return decodeError(path, "%v", err)
			}
			s = val
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, err := parseBool(n.text)
		if err != nil {
			return decodeError(path, "%q is not an xs:boolean", n.text)
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(strings.TrimSpace(n.text), 10, v.Type().Bits())
		if err != nil {
			return decodeError(path, "%q is not an %s", n.text, typ)
		}
		v.SetInt(i)
		return nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, err := strconv.ParseUint(strings.TrimSpace(n.text), 10, v.Type().Bits())
		if err != nil {
			return decodeError(path, "%q is not an %s", n.text, typ)
		}
		v.SetUint(i)
		return nil
	case reflect.Float32, reflect.Float64:
		f, err := parseDouble(n.text)
		if err != nil {
			return decodeError(path, "%q is not an %s", n.text, typ)
		}
		v.SetFloat(f)
		return nil
	}
	return decodeError(path, "cannot read into %s", v.Type())
}

// decodePolymorphic reads an element whose slot holds an interface: the concrete type comes
// from xsi:type (any prefix), or, when that is absent, from the slot's own type.
func (c *Codec) decodePolymorphic(n *node, v reflect.Value, typ, path string) error {
	slot, ok := c.schema.TypeOfIface(v.Type())
	if !ok {
		return decodeError(path, "no schema type for %s", v.Type())
	}
	name := n.xsiType
	if name == "" {
		switch {
		case !slot.Abstract:
			name = slot.Name
		case c.defaults[slot.Name] != "":
			name = c.defaults[slot.Name]
		default:
			return decodeError(path, "xsi:type is required: name a type derived from %s", slot.Name)
		}
	}
	td, ok := c.schema.Type(name)
	if !ok || td.Kind != gisxml.KindComplex || td.Abstract || td.Go == nil {
		return decodeError(path, "unknown or abstract xsi:type %q", name)
	}
	if !c.schema.DerivesFrom(name, slot.Name) {
		return decodeError(path, "xsi:type %q is not a %s", name, slot.Name)
	}
	ptr := reflect.New(td.Go)
	if !ptr.Type().Implements(v.Type()) {
		return decodeError(path, "xsi:type %q cannot stand in a %s slot", name, slot.Name)
	}
	if err := c.decodeStruct(n, ptr.Elem(), path); err != nil {
		return err
	}
	v.Set(ptr)
	return nil
}

// decodeAny reads an xs:anyType slot: a built-in typed by xsi:type, a gis type, or, untyped, a
// string.
func (c *Codec) decodeAny(n *node, v reflect.Value, path string) error {
	var val any
	switch n.xsiType {
	case "", "string", "anyType":
		if n.xsiType == "" && len(n.children) > 0 {
			return decodeError(path, "an untyped value must be text")
		}
		val = n.text
	case "int", "short", "long", "integer", "byte", "unsignedByte", "unsignedShort", "unsignedInt":
		i, err := strconv.ParseInt(strings.TrimSpace(n.text), 10, 64)
		if err != nil {
			return decodeError(path, "%q is not an integer", n.text)
		}
		if n.xsiType == "long" || n.xsiType == "integer" || n.xsiType == "unsignedInt" {
			val = i
		} else {
			val = int(i)
		}
	case "double", "float", "decimal":
		f, err := parseDouble(n.text)
		if err != nil {
			return decodeError(path, "%q is not a number", n.text)
		}
		val = f
	case "boolean":
		b, err := parseBool(n.text)
		if err != nil {
			return decodeError(path, "%q is not a boolean", n.text)
		}
		val = b
	case "dateTime", "date":
		t, err := parseDateTime(n.text)
		if err != nil {
			return decodeError(path, "%q is not a dateTime", n.text)
		}
		val = t
	case "base64Binary":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(n.text))
		if err != nil {
			return decodeError(path, "not valid base64: %v", err)
		}
		val = b
	default:
		td, ok := c.schema.Type(n.xsiType)
		if !ok || td.Go == nil || td.Abstract {
			return decodeError(path, "unknown xsi:type %q", n.xsiType)
		}
		ptr := reflect.New(td.Go)
		if td.Kind == gisxml.KindComplex {
			if err := c.decodeStruct(n, ptr.Elem(), path); err != nil {
				return err
			}
			val = ptr.Interface()
		} else {
			if err := c.decodeValue(n, ptr.Elem(), td.Name, path); err != nil {
				return err
			}
			val = ptr.Elem().Interface()
		}
	}
	v.Set(reflect.ValueOf(val))
	return nil
}

func enumValue(td *gisxml.TypeDef, s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "esri") { // clients built from Esri's own WSDL
		s = "gis" + strings.TrimPrefix(s, "esri")
	}
	for _, v := range td.Values {
		if v == s {
			return s, nil
		}
	}
	return "", fmt.Errorf("%q is not a value of %s (one of %s)", s, td.Name, strings.Join(td.Values, ", "))
}

func parseBool(s string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "true", "1":
		return true, nil
	case "false", "0", "":
		return false, nil
	}
	return false, fmt.Errorf("bad boolean")
}

func parseDouble(s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "INF", "+INF":
		s = "+Inf"
	case "-INF":
		s = "-Inf"
	case "NaN":
	}
	return strconv.ParseFloat(s, 64)
}

func parseDateTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("bad dateTime")
}
