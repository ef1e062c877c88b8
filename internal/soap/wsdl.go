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

// WriteWSDL writes the MapServer WSDL, generated from the gisxml Go types (their `gis` tags and
// schema table) — the same description the codec reads and writes by. Its shape follows
// ArcGIS's: wrapped document/literal, unqualified children, soapAction "" on every operation,
// portType MapServerPort, binding MapServerBinding, service <Name>_MapServer.
func (c *Codec) WriteWSDL(buf *bytes.Buffer, opt WSDLOptions) {
	w := &wsdlWriter{c: c, buf: buf}
	ns := c.namespace
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

	ops := w.mapServerOps()
	for _, op := range ops {
		w.wrapperElement(op.Name, op.Request)
		w.wrapperElement(op.Name+"Response", op.Response)
	}
	for i := range c.schema.Types {
		w.typeDecl(&c.schema.Types[i])
	}
	buf.WriteString("</xs:schema>\n</types>\n")

	for _, op := range ops {
		buf.WriteString(`<message name="` + op.Name + `In"><part name="parameters" element="e:` + op.Name + `"/></message>` + "\n")
		buf.WriteString(`<message name="` + op.Name + `Out"><part name="parameters" element="e:` + op.Name + `Response"/></message>` + "\n")
	}
	buf.WriteString(`<portType name="MapServerPort">` + "\n")
	for _, op := range ops {
		buf.WriteString(`<operation name="` + op.Name + `"><input message="e:` + op.Name + `In"/><output message="e:` + op.Name + `Out"/></operation>` + "\n")
	}
	buf.WriteString("</portType>\n")
	buf.WriteString(`<binding name="MapServerBinding" type="e:MapServerPort"><soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>` + "\n")
	for _, op := range ops {
		buf.WriteString(`<operation name="` + op.Name + `"><soap:operation soapAction="" style="document"/><input><soap:body use="literal"/></input><output><soap:body use="literal"/></output></operation>` + "\n")
	}
	buf.WriteString("</binding>\n")
	buf.WriteString(`<service name="`)
	escapeText(buf, strings.ReplaceAll(opt.ServiceName, "/", "_")+"_MapServer")
	buf.WriteString(`"><port name="MapServerPort" binding="e:MapServerBinding"><soap:address location="`)
	escapeText(buf, opt.Address)
	buf.WriteString("\"/></port></service>\n</definitions>\n")
}

type wsdlWriter struct {
	c   *Codec
	buf *bytes.Buffer
}

func (w *wsdlWriter) mapServerOps() []gisxml.OperationDef {
	var ops []gisxml.OperationDef
	for _, op := range w.c.schema.Operations {
		if !op.Catalog {
			ops = append(ops, op)
		}
	}
	return ops
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
