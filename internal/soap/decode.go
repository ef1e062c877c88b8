package soap

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/quote"
)

// decodeError is a problem with one element of a request, reported with its path.
func decodeError(path *elemPath, format string, args ...any) *Fault {
	return &Fault{Code: FaultClient, String: quote.Clip(path.String(), quote.MaxLen) + ": " + quote.Sprintf(format, args...)}
}

// elemPath is the path of the element being decoded, spelled out only for an error
// ("ExportMapImage/LayerDescriptions/LayerDescription[2]/LayerID"), so that reading a
// 100,000-point array makes no 100,000 path strings.
type elemPath struct {
	up    *elemPath
	name  string
	index int // the item's index in its array; -1 for a field
}

func rootPath(name string) *elemPath { return &elemPath{name: name, index: -1} }

func (p *elemPath) String() string {
	var parts []string
	for ; p != nil; p = p.up {
		if p.index >= 0 {
			parts = append(parts, p.name+"["+strconv.Itoa(p.index)+"]")
		} else {
			parts = append(parts, p.name)
		}
	}
	slices.Reverse(parts)
	return strings.Join(parts, "/")
}

// decodeStruct fills the struct v (addressable) from the children of el, read from r up to
// el's end. Children are matched to fields by element name whatever their order; unknown
// children are passed over, as are missing ones (a missing required scalar reads as its zero
// value, as the research on real clients advises).
func (c *Codec) decodeStruct(r *reader, el element, v reflect.Value, path *elemPath) error {
	fields := c.fieldsOf(v.Type())
	for {
		ch, ok, err := r.child()
		if err != nil || !ok {
			return err
		}
		fi := findField(fields, ch.local)
		if fi == nil {
			if err := r.skip(); err != nil {
				return err
			}
			continue
		}
		fv := v.FieldByIndex(fi.index)
		p := &elemPath{up: path, name: ch.local, index: -1}
		if fi.many && fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8 {
			if _, isArray := c.schema.TypeOfGo(fv.Type()); !isArray {
				item := reflect.New(fv.Type().Elem()).Elem()
				if err := c.decodeValue(r, ch, item, fi.typ, p); err != nil {
					return err
				}
				if err := appendCharged(r, fv, item); err != nil {
					return err
				}
				continue
			}
		}
		if err := c.decodeValue(r, ch, fv, fi.typ, p); err != nil {
			return err
		}
	}
}

// appendCharged appends item to the slice s (settable), charging what the slice's growth
// allocates.
func appendCharged(r *reader, s, item reflect.Value) error {
	before := s.Cap()
	s.Set(reflect.Append(s, item))
	if grown := s.Cap() - before; grown > 0 {
		return r.charge(int64(grown) * int64(s.Type().Elem().Size()))
	}
	return nil
}

// newCharged returns a new value of type t, charged to the message's budget.
func newCharged(r *reader, t reflect.Type) (reflect.Value, error) {
	if err := r.charge(int64(t.Size())); err != nil {
		return reflect.Value{}, err
	}
	return reflect.New(t), nil
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

// text reads the character data of el, which ends it; an element with children reads as "".
func text(r *reader) (string, error) {
	s, _, err := r.content()
	return s, err
}

// parseText reads el's character data and parses it; text that parse rejects is a fault
// saying it is not article+" "+what ("an xs:boolean").
func parseText[T any](r *reader, path *elemPath, parse func(string) (T, error), article, what string) (T, error) {
	s, err := text(r)
	if err != nil {
		var zero T
		return zero, err
	}
	x, err := parse(s)
	if err != nil {
		return x, decodeError(path, "%q is not %s %s", s, article, what)
	}
	return x, nil
}

// decodeValue reads element el into v, whose schema type is typ, consuming el up to its end.
func (c *Codec) decodeValue(r *reader, el element, v reflect.Value, typ string, path *elemPath) error {
	if el.nil {
		v.Set(reflect.Zero(v.Type()))
		return r.skip()
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.Type().NumMethod() == 0 {
			return c.decodeAny(r, el, v, path)
		}
		return c.decodePolymorphic(r, el, v, typ, path)
	case reflect.Pointer:
		elem, err := newCharged(r, v.Type().Elem())
		if err != nil {
			return err
		}
		if err := c.decodeValue(r, el, elem.Elem(), typ, path); err != nil {
			return err
		}
		v.Set(elem)
		return nil
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			t, err := parseText(r, path, parseDateTime, "an", "xs:dateTime")
			if err != nil {
				return err
			}
			v.Set(reflect.ValueOf(t))
			return nil
		}
		return c.decodeStruct(r, el, v, path)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s, err := text(r)
			if err != nil {
				return err
			}
			b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
			if err != nil {
				return decodeError(path, "not valid base64: %v", err)
			}
			if err := r.charge(int64(len(b))); err != nil {
				return err
			}
			v.SetBytes(b)
			return nil
		}
		td, ok := c.schema.TypeOfGo(v.Type())
		if !ok || td.Kind != gisxml.KindArray {
			return decodeError(path, "cannot read into %s", v.Type())
		}
		out := reflect.New(v.Type()).Elem()
		for i := 0; ; i++ {
			ch, ok, err := r.child()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			item := reflect.New(v.Type().Elem()).Elem()
			if err := c.decodeValue(r, ch, item, td.ItemType, &elemPath{up: path, name: ch.local, index: i}); err != nil {
				return err
			}
			if err := appendCharged(r, out, item); err != nil {
				return err
			}
		}
		if out.IsNil() {
			out = reflect.MakeSlice(v.Type(), 0, 0)
		}
		v.Set(out)
		return nil
	case reflect.String:
		s, err := text(r)
		if err != nil {
			return err
		}
		if err := r.charge(int64(len(s))); err != nil {
			return err
		}
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
		b, err := parseText(r, path, parseBool, "an", "xs:boolean")
		if err != nil {
			return err
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		i, err := parseText(r, path, func(s string) (int64, error) {
			return strconv.ParseInt(strings.TrimSpace(s), 10, bits)
		}, "an", typ)
		if err != nil {
			return err
		}
		v.SetInt(i)
		return nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := v.Type().Bits()
		i, err := parseText(r, path, func(s string) (uint64, error) {
			return strconv.ParseUint(strings.TrimSpace(s), 10, bits)
		}, "an", typ)
		if err != nil {
			return err
		}
		v.SetUint(i)
		return nil
	case reflect.Float32, reflect.Float64:
		f, err := parseText(r, path, parseDouble, "an", typ)
		if err != nil {
			return err
		}
		v.SetFloat(f)
		return nil
	}
	return decodeError(path, "cannot read into %s", v.Type())
}

// decodePolymorphic reads an element whose slot holds an interface: the concrete type comes
// from xsi:type (any prefix), or, when that is absent, from the slot's own type.
func (c *Codec) decodePolymorphic(r *reader, el element, v reflect.Value, typ string, path *elemPath) error {
	slot, ok := c.schema.TypeOfIface(v.Type())
	if !ok {
		return decodeError(path, "no schema type for %s", v.Type())
	}
	name := el.xsiType
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
	if !reflect.PointerTo(td.Go).Implements(v.Type()) {
		return decodeError(path, "xsi:type %q cannot stand in a %s slot", name, slot.Name)
	}
	ptr, err := newCharged(r, td.Go)
	if err != nil {
		return err
	}
	if err := c.decodeStruct(r, el, ptr.Elem(), path); err != nil {
		return err
	}
	v.Set(ptr)
	return nil
}

// decodeAny reads an xs:anyType slot: a built-in typed by xsi:type, a gis type, or, untyped, a
// string.
func (c *Codec) decodeAny(r *reader, el element, v reflect.Value, path *elemPath) error {
	var val any
	switch el.xsiType {
	case "", "string", "anyType":
		s, textOnly, err := r.content()
		if err != nil {
			return err
		}
		if el.xsiType == "" && !textOnly {
			return decodeError(path, "an untyped value must be text")
		}
		if err := r.charge(int64(len(s))); err != nil {
			return err
		}
		val = s
	case "int", "short", "long", "integer", "byte", "unsignedByte", "unsignedShort", "unsignedInt":
		i, err := parseText(r, path, func(s string) (int64, error) {
			return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		}, "an", "integer")
		if err != nil {
			return err
		}
		if el.xsiType == "long" || el.xsiType == "integer" || el.xsiType == "unsignedInt" {
			val = i
		} else {
			val = int(i)
		}
	case "double", "float", "decimal":
		f, err := parseText(r, path, parseDouble, "a", "number")
		if err != nil {
			return err
		}
		val = f
	case "boolean":
		b, err := parseText(r, path, parseBool, "a", "boolean")
		if err != nil {
			return err
		}
		val = b
	case "dateTime", "date":
		t, err := parseText(r, path, parseDateTime, "a", "dateTime")
		if err != nil {
			return err
		}
		val = t
	case "base64Binary":
		s, err := text(r)
		if err != nil {
			return err
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			return decodeError(path, "not valid base64: %v", err)
		}
		if err := r.charge(int64(len(b))); err != nil {
			return err
		}
		val = b
	default:
		td, ok := c.schema.Type(el.xsiType)
		if !ok || td.Go == nil || td.Abstract {
			return decodeError(path, "unknown xsi:type %q", el.xsiType)
		}
		ptr, err := newCharged(r, td.Go)
		if err != nil {
			return err
		}
		if td.Kind == gisxml.KindComplex {
			if err := c.decodeStruct(r, el, ptr.Elem(), path); err != nil {
				return err
			}
			val = ptr.Interface()
		} else {
			if err := c.decodeValue(r, el, ptr.Elem(), td.Name, path); err != nil {
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
