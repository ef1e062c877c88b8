package soap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
)

// WriteRequest writes a request envelope for op whose body holds the fields of req, a pointer
// to the operation's request struct.
func (c *Codec) WriteRequest(buf *bytes.Buffer, op string, req any) error {
	buf.WriteString(envelopeOpen)
	escapeText(buf, c.namespace)
	buf.WriteString(`"><soap:Body><tns:`)
	buf.WriteString(op)
	buf.WriteByte('>')
	v := reflect.ValueOf(req)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if err := (&encoder{c: c, buf: buf}).structFields(v); err != nil {
		return err
	}
	buf.WriteString("</tns:")
	buf.WriteString(op)
	buf.WriteString("></soap:Body></soap:Envelope>")
	return nil
}

// ReadResponse reads a response envelope of op into resp, a pointer to the operation's response
// struct. A fault in the body is returned as a *Fault.
func (c *Codec) ReadResponse(r io.Reader, op string, resp any) error {
	root, err := parse(r, c.limits)
	if err != nil {
		return err
	}
	body := root.child("Body")
	if root.local != "Envelope" || body == nil || len(body.children) == 0 {
		return fmt.Errorf("soap: response is not a SOAP envelope with a body")
	}
	n := body.children[0]
	if n.local == "Fault" {
		f := &Fault{Code: FaultServer}
		if fc := n.child("faultcode"); fc != nil {
			f.Code = FaultCode(fc.text)
		}
		if fs := n.child("faultstring"); fs != nil {
			f.String = fs.text
		}
		return f
	}
	if n.local != op+"Response" {
		return fmt.Errorf("soap: got <%s>, want <%sResponse>", n.local, op)
	}
	return c.decodeStruct(n, reflect.ValueOf(resp).Elem(), n.local)
}

// Client calls one MapServer endpoint.
type Client struct {
	Codec    *Codec
	Endpoint string // e.g. http://127.0.0.1:8080/arcgis/services/world/MapServer
	HTTP     *http.Client
}

// Call sends req (a pointer to op's request struct) and reads the answer into resp.
func (cl *Client) Call(ctx context.Context, op string, req, resp any) error {
	var buf bytes.Buffer
	if err := cl.Codec.WriteRequest(&buf, op, req); err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.Endpoint, &buf)
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "text/xml; charset=utf-8")
	hr.Header.Set("SOAPAction", `""`)
	hc := cl.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(hr)
	if err != nil {
		return fmt.Errorf("soap: %s: %w", op, err)
	}
	defer res.Body.Close()
	if err := cl.Codec.ReadResponse(io.LimitReader(res.Body, 256<<20), op, resp); err != nil {
		return fmt.Errorf("soap: %s: %w", op, err)
	}
	return nil
}
