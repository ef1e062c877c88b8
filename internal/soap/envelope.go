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
// namespace; its children are read unqualified. The document is streamed: no tree of it is
// built, and the decoded values are charged to Limits.MaxDecodedBytes as they are made. The
// whole document is read and checked even when its values are at fault, and a syntax or limit
// error anywhere in it outranks an error in its values. Every failure is a *Fault.
func (c *Codec) ReadRequest(rd io.Reader, allow func(op string) bool) (*Request, error) {
	r := newReader(rd, c.limits)
	req, err := c.readRequest(r, allow)
	if err != nil {
		return nil, r.settle(err)
	}
	if err := r.finish(); err != nil {
		return nil, err
	}
	return req, nil
}

func (c *Codec) readRequest(r *reader, allow func(op string) bool) (*Request, error) {
	root, err := r.start()
	if err != nil {
		return nil, err
	}
	if root.local != "Envelope" || (root.space != EnvelopeNS && root.space != envelope12NS && root.space != "") {
		return nil, ClientFault("not a SOAP envelope: the document element is <%s>", root.local)
	}
	found, err := childNamed(r, "Body")
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ClientFault("the SOAP envelope has no Body")
	}
	opEl, ok, err := r.child()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ClientFault("the SOAP Body is empty: it must hold one operation element")
	}
	op, ok := c.schema.Operation(opEl.local)
	if !ok || (allow != nil && !allow(op.Name)) {
		return nil, ClientFault("unknown operation %q", opEl.local)
	}
	req, err := newCharged(r, op.Request)
	if err != nil {
		return nil, err
	}
	if err := c.decodeStruct(r, opEl, req.Elem(), rootPath(op.Name)); err != nil {
		return nil, err
	}
	return &Request{Operation: op.Name, Body: req.Interface()}, nil
}

// childNamed reads on to the first child of the current element named local, passing over
// the children before it; false when there is none (the current element has then ended).
func childNamed(r *reader, local string) (bool, error) {
	for {
		ch, ok, err := r.child()
		if err != nil || !ok || ch.local == local {
			return ok && err == nil, err
		}
		if err := r.skip(); err != nil {
			return false, err
		}
	}
}

const envelopeOpen = `<?xml version="1.0" encoding="utf-8"?>` +
	`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" ` +
	`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ` +
	`xmlns:tns="`

// WriteResponse writes the response envelope for op: <tns:{op}Response> holding the fields of
// resp, a pointer to the operation's response struct.
func (c *Codec) WriteResponse(buf *bytes.Buffer, op string, resp any) error {
	return c.writeEnvelope(buf, op, "Response", resp)
}

// writeEnvelope writes an envelope whose body is the element <tns:{op}{suffix}> holding the
// fields of body, a struct or a pointer to one.
func (c *Codec) writeEnvelope(buf *bytes.Buffer, op, suffix string, body any) error {
	buf.WriteString(envelopeOpen)
	escapeText(buf, c.namespace)
	buf.WriteString(`"><soap:Body><tns:`)
	buf.WriteString(op)
	buf.WriteString(suffix)
	buf.WriteByte('>')
	v := reflect.ValueOf(body)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if err := (&encoder{c: c, buf: buf}).structFields(v); err != nil {
		return err
	}
	buf.WriteString("</tns:")
	buf.WriteString(op)
	buf.WriteString(suffix)
	buf.WriteString("></soap:Body></soap:Envelope>")
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
