package soap

import (
	"bytes"
	"reflect"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// WSDLOptions name the service a WSDL describes.
type WSDLOptions struct {
	ServiceName string // e.g. "world": the WSDL's service is "world_MapServer"
	Address     string // the endpoint URL written in soap:address
}

// AsksForWSDL reports whether a GET's raw query asks for an endpoint's WSDL: it has a key
// "wsdl", in any case, with or without a value (?wsdl, ?WSDL, ?wsdl=1), as ArcGIS answers it.
func AsksForWSDL(rawQuery string) bool {
	for _, kv := range strings.Split(rawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if strings.EqualFold(k, "wsdl") {
			return true
		}
	}
	return false
}

// WriteWSDL writes the MapServer WSDL, generated from the gisxml Go types (their `gis` tags and
// schema table) — the same description the codec reads and writes by. Its shape follows
// ArcGIS's: wrapped document/literal, unqualified children, soapAction "" on every operation,
// portType MapServerPort, binding MapServerBinding, service <Name>_MapServer.
func (c *Codec) WriteWSDL(buf *bytes.Buffer, opt WSDLOptions) {
	types := make([]*gisxml.TypeDef, len(c.schema.Types))
	for i := range c.schema.Types {
		types[i] = &c.schema.Types[i]
	}
	w := &wsdlWriter{c: c, buf: buf}
	w.write(w.operations(false), types, "MapServer", strings.ReplaceAll(opt.ServiceName, "/", "_")+"_MapServer", opt.Address)
}

// WriteCatalogWSDL writes the WSDL of the SOAP Catalog (/arcgis/services), generated from the
// same Go types: the Catalog operations and the types they use, portType ServiceCatalogPort,
// binding ServiceCatalogBinding, service Catalog, as ArcGIS names them; address is the
// endpoint URL written in soap:address.
func (c *Codec) WriteCatalogWSDL(buf *bytes.Buffer, address string) {
	w := &wsdlWriter{c: c, buf: buf}
	ops := w.operations(true)
	w.write(ops, w.typesUsedBy(ops), "ServiceCatalog", "Catalog", address)
}

// write writes a WSDL of ops and types; the portType is port+"Port", the binding port+"Binding".
func (w *wsdlWriter) write(ops []gisxml.OperationDef, types []*gisxml.TypeDef, port, service, address string) {
	buf, ns := w.buf, w.c.namespace
	buf.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	buf.WriteString(`<definitions xmlns:e="`)
	escapeText(buf, ns)
	buf.WriteString(`" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="`)
	escapeText(buf, ns)
	buf.WriteString(`" xmlns="http://schemas.xmlsoap.org/wsdl/">` + "\n<types>\n<xs:schema xmlns=\"")
	escapeText(buf, ns)
	buf.WriteString(`" targetNamespace="`)
	escapeText(buf, ns)
	buf.WriteString("\">\n")

	for _, op := range ops {
		w.wrapperElement(op.Name, op.Request)
		w.wrapperElement(op.Name+"Response", op.Response)
	}
	for _, t := range types {
		w.typeDecl(t)
	}
	buf.WriteString("</xs:schema>\n</types>\n")

	for _, op := range ops {
		buf.WriteString(`<message name="` + op.Name + `In"><part name="parameters" element="e:` + op.Name + `"/></message>` + "\n")
		buf.WriteString(`<message name="` + op.Name + `Out"><part name="parameters" element="e:` + op.Name + `Response"/></message>` + "\n")
	}
	buf.WriteString(`<portType name="` + port + `Port">` + "\n")
	for _, op := range ops {
		buf.WriteString(`<operation name="` + op.Name + `"><input message="e:` + op.Name + `In"/><output message="e:` + op.Name + `Out"/></operation>` + "\n")
	}
	buf.WriteString("</portType>\n")
	buf.WriteString(`<binding name="` + port + `Binding" type="e:` + port + `Port"><soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>` + "\n")
	for _, op := range ops {
		buf.WriteString(`<operation name="` + op.Name + `"><soap:operation soapAction="" style="document"/><input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>` + "\n")
	}
	buf.WriteString("</binding>\n")
	buf.WriteString(`<service name="`)
	escapeText(buf, service)
	buf.WriteString(`"><port name="` + port + `Port" binding="e:` + port + `Binding"><soap:address location="`)
	escapeText(buf, address)
	buf.WriteString("\"/></port></service>\n</definitions>\n")
}

type wsdlWriter struct {
	c   *Codec
	buf *bytes.Buffer
}

// operations returns the Catalog operations (catalog) or the MapServer ones, in schema order.
func (w *wsdlWriter) operations(catalog bool) []gisxml.OperationDef {
	var ops []gisxml.OperationDef
	for _, op := range w.c.schema.Operations {
		if op.Catalog == catalog {
			ops = append(ops, op)
		}
	}
	return ops
}

// typesUsedBy returns, in schema order, the types the operations' messages reach: field types,
// array items, bases, and the types derived from any of them (an xsi:type may name those).
func (w *wsdlWriter) typesUsedBy(ops []gisxml.OperationDef) []*gisxml.TypeDef {
	s := w.c.schema
	used := map[string]bool{}
	var visit func(name string)
	var visitFields func(t reflect.Type)
	visit = func(name string) {
		t, ok := s.Type(name)
		if !ok || used[name] {
			return
		}
		used[name] = true
		if t.Base != "" {
			visit(t.Base)
		}
		if t.Kind == gisxml.KindArray {
			visit(t.ItemType)
		} else if t.Kind == gisxml.KindComplex && t.Go != nil && t.Go.Kind() == reflect.Struct {
			visitFields(t.Go)
		}
		for i := range s.Types {
			if d := &s.Types[i]; d.Name != name && s.DerivesFrom(d.Name, name) {
				visit(d.Name)
			}
		}
	}
	visitFields = func(t reflect.Type) {
		for _, f := range w.c.fieldsOf(t) {
			visit(f.typ)
		}
	}
	for _, op := range ops {
		visitFields(op.Request)
		visitFields(op.Response)
	}
	var out []*gisxml.TypeDef
	for i := range s.Types {
		if used[s.Types[i].Name] {
			out = append(out, &s.Types[i])
		}
	}
	return out
}

// wrapperElement declares a request or response element with its children in order.
func (w *wsdlWriter) wrapperElement(name string, t reflect.Type) {
	w.buf.WriteString(`<xs:element name="` + name + `"><xs:complexType>`)
	if fields := w.c.fieldsOf(t); len(fields) > 0 {
		w.buf.WriteString("<xs:sequence>")
		for _, f := range fields {
			w.elementDecl(f)
		}
		w.buf.WriteString("</xs:sequence>")
	}
	w.buf.WriteString("</xs:complexType></xs:element>\n")
}

func typeRef(t string) string {
	if strings.HasPrefix(t, "xs:") {
		return t
	}
	return "e:" + t
}

func (w *wsdlWriter) elementDecl(f fieldInfo) {
	b := w.buf
	b.WriteString("<xs:element")
	if f.opt {
		b.WriteString(` minOccurs="0"`)
	}
	if f.many {
		b.WriteString(` maxOccurs="unbounded"`)
	}
	b.WriteString(` name="` + f.name + `"`)
	if f.nillable {
		b.WriteString(` nillable="true"`)
	}
	b.WriteString(` type="` + typeRef(f.typ) + `"/>`)
}

func (w *wsdlWriter) typeDecl(t *gisxml.TypeDef) {
	b := w.buf
	switch t.Kind {
	case gisxml.KindEnum:
		b.WriteString(`<xs:simpleType name="` + t.Name + `"><xs:restriction base="xs:string">`)
		for _, v := range t.Values {
			b.WriteString(`<xs:enumeration value="`)
			escapeText(b, v)
			b.WriteString(`"/>`)
		}
		b.WriteString("</xs:restriction></xs:simpleType>\n")
	case gisxml.KindArray:
		b.WriteString(`<xs:complexType name="` + t.Name + `"><xs:sequence>`)
		w.elementDecl(fieldInfo{name: t.Item, typ: t.ItemType, opt: true, many: true, nillable: t.ItemNillable})
		b.WriteString("</xs:sequence></xs:complexType>\n")
	default:
		b.WriteString(`<xs:complexType name="` + t.Name + `"`)
		if t.Abstract {
			b.WriteString(` abstract="true"`)
		}
		b.WriteString(">")
		var own []fieldInfo
		if t.Go != nil {
			for _, f := range w.c.fieldsOf(t.Go) {
				if f.own {
					own = append(own, f)
				}
			}
		}
		if t.Base != "" {
			b.WriteString(`<xs:complexContent mixed="false"><xs:extension base="e:` + t.Base + `">`)
		}
		b.WriteString("<xs:sequence>")
		for _, f := range own {
			w.elementDecl(f)
		}
		b.WriteString("</xs:sequence>")
		if t.Base != "" {
			b.WriteString("</xs:extension></xs:complexContent>")
		}
		b.WriteString("</xs:complexType>\n")
	}
}
