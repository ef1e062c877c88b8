package soap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
)

// WriteRequest writes a request envelope for op whose body holds the fields of req, a pointer
// to the operation's request struct.
func (c *Codec) WriteRequest(buf *bytes.Buffer, op string, req any) error {
	return c.writeEnvelope(buf, op, "", req)
}

// ReadResponse reads a response envelope of op into resp, a pointer to the operation's response
// struct. A fault in the body is returned as a *Fault. Responses are bounded in depth and
// elements, not in decoded bytes.
func (c *Codec) ReadResponse(rd io.Reader, op string, resp any) error {
	r := newReader(rd, c.limits)
	r.budget = math.MaxInt64
	if err := c.readResponse(r, op, resp); err != nil {
		return r.settle(err)
	}
	return r.finish()
}

var errNotEnvelope = errors.New("soap: response is not a SOAP envelope with a body")

func (c *Codec) readResponse(r *reader, op string, resp any) error {
	root, err := r.start()
	if err != nil {
		return err
	}
	if root.local != "Envelope" {
		return errNotEnvelope
	}
	found, err := childNamed(r, "Body")
	if err != nil {
		return err
	}
	if !found {
		return errNotEnvelope
	}
	n, ok, err := r.child()
	if err != nil {
		return err
	}
	if !ok {
		return errNotEnvelope
	}
	if n.local == "Fault" {
		f := &Fault{Code: FaultServer}
		for {
			ch, ok, err := r.child()
			if err != nil {
				return err
			}
			if !ok {
				return f
			}
			s, err := text(r)
			if err != nil {
				return err
			}
			switch ch.local {
			case "faultcode":
				f.Code = FaultCode(s)
			case "faultstring":
				f.String = s
			}
		}
	}
	if n.local != op+"Response" {
		return fmt.Errorf("soap: got <%s>, want <%sResponse>", n.local, op)
	}
	return c.decodeStruct(r, n, reflect.ValueOf(resp).Elem(), rootPath(n.local))
}

// Client calls one MapServer endpoint.
type Client struct {
	Codec    *Codec
	Endpoint string // e.g. http://127.0.0.1:8080/arcgis/services/world/MapServer
	HTTP     *http.Client
}

// NewRequest returns the HTTP request that Call sends for op: req (a pointer to op's request
// struct) in a SOAP envelope, posted to the endpoint.
func (cl *Client) NewRequest(ctx context.Context, op string, req any) (*http.Request, error) {
	var buf bytes.Buffer
	if err := cl.Codec.WriteRequest(&buf, op, req); err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.Endpoint, &buf)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "text/xml; charset=utf-8")
	hr.Header.Set("SOAPAction", `""`)
	return hr, nil
}

// Call sends req (a pointer to op's request struct) and reads the answer into resp.
func (cl *Client) Call(ctx context.Context, op string, req, resp any) error {
	hr, err := cl.NewRequest(ctx, op, req)
	if err != nil {
		return err
	}
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
