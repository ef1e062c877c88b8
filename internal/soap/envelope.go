package soap

import (
	"bytes"
	"io"
	"reflect"
	"strings"

	"github.com/mapfarm/mapfarm/internal/quote"
)

// Envelope namespaces.
const (
	EnvelopeNS   = "http://schemas.xmlsoap.org/soap/envelope/"
	envelope12NS = "http://www.w3.org/2003/05/soap-envelope"
)

// Request is one decoded request message.
type Request struct {
	Operation string // the local name of the Body's first child, e.g. "ExportMapImage"
	Body      any    // a pointer to the operation's request struct, e.g. *gisxml.ExportMapImage
}

// ReadRequest reads a SOAP 1.1 request envelope and decodes its body into the operation's
// request type. The operation is the Body's first child (SOAPAction is empty in 10.7), in any
// namespace; its children are read unqualified. Every failure is a *Fault.
func (c *Codec) ReadRequest(r io.Reader, allow func(op string) bool) (*Request, error) {
	root, err := parse(r, c.limits)
	if err != nil {
		return nil, err
	}
	if root.local != "Envelope" || (root.space != EnvelopeNS && root.space != envelope12NS && root.space != "") {
		return nil, ClientFault("not a SOAP envelope: the document element is <%s>", root.local)
	}
	body := root.child("Body")
	if body == nil {
		return nil, ClientFault("the SOAP envelope has no Body")
	}
	if len(body.children) == 0 {
		return nil, ClientFault("the SOAP Body is empty: it must hold one operation element")
	}
	opNode := body.children[0]
	op, ok := c.schema.Operation(opNode.local)
	if !ok || (allow != nil && !allow(op.Name)) {
		return nil, ClientFault("unknown operation %q", opNode.local)
	}
	req := reflect.New(op.Request)
	if err := c.decodeStruct(opNode, req.Elem(), op.Name); err != nil {
		return nil, err
	}
	return &Request{Operation: op.Name, Body: req.Interface()}, nil
}

const envelopeOpen = `<?xml version="1.0" encoding="utf-8"?>` +
	`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" ` +
	`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ` +
	`xmlns:tns="`

// WriteResponse writes the response envelope for op: <tns:{op}Response> holding the fields of
// resp, a pointer to the operation's response struct.
func (c *Codec) WriteResponse(buf *bytes.Buffer, op string, resp any) error {
	buf.WriteString(envelopeOpen)
	escapeText(buf, c.namespace)
	buf.WriteString(`"><soap:Body><tns:`)
	buf.WriteString(op)
	buf.WriteString("Response>")
	e := &encoder{c: c, buf: buf}
	v := reflect.ValueOf(resp)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if err := e.structFields(v); err != nil {
		return err
	}
	buf.WriteString("</tns:")
	buf.WriteString(op)
	buf.WriteString("Response></soap:Body></soap:Envelope>")
	return nil
}

// WriteFault writes a SOAP 1.1 fault envelope; the faultstring is cut to MaxFaultString
// characters.
func (c *Codec) WriteFault(buf *bytes.Buffer, f *Fault) {
	buf.WriteString(envelopeOpen)
	escapeText(buf, c.namespace)
	buf.WriteString(`"><soap:Body><soap:Fault><faultcode>`)
	buf.WriteString(string(f.Code))
	buf.WriteString("</faultcode><faultstring>")
	escapeText(buf, quote.Clip(strings.TrimSpace(f.String), MaxFaultString))
	buf.WriteString("</faultstring><detail/></soap:Fault></soap:Body></soap:Envelope>")
}
