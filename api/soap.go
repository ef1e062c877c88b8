package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// soapHandler serves the MapServer SOAP endpoint of every service.
type soapHandler struct {
	p    Params
	adm  *Admission
	bufs sync.Pool
}

func (h *soapHandler) buffer() *bytes.Buffer {
	if b, ok := h.bufs.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

// serveSOAP decodes the request, runs the operation and writes the response or a fault.
func (h *soapHandler) serveSOAP(c *gin.Context) {
	buf := h.buffer()
	defer h.bufs.Put(buf)

	svc, ok := h.p.Ops.Service(c.Param("service"))
	if !ok {
		h.fault(c, buf, http.StatusNotFound, soap.ClientFault("service %q does not exist", c.Param("service")))
		return
	}
	ctx := c.Request.Context()
	if h.p.OperationTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.p.OperationTimeout)
		defer cancel()
	}
	// The request runs under its admission (admission.go): a body declared large takes a slot
	// of the heavy lane before it is decoded, one of unknown length may lower its thread while
	// it is read, and a request measured heavy takes a slot before its operation runs.
	if err := h.adm.serve(ctx, c.Request.ContentLength, func(t *ticket) { h.decodeAndDo(ctx, c, buf, svc, t) }); err != nil {
		h.laneRefused(c, buf, "", err)
	}
}

// decodeAndDo decodes the request body, raises the request's admission t once the request is
// decoded and measured, runs the operation as t says and writes the answer.
func (h *soapHandler) decodeAndDo(ctx context.Context, c *gin.Context, buf *bytes.Buffer, svc *catalog.Service, t *ticket) {
	// The body is decoded as it arrives, never held whole: memory follows the decoded request
	// (bounded by the codec's MaxDecodedBytes), not the body.
	body := &bodyReader{r: http.MaxBytesReader(c.Writer, c.Request.Body, h.p.MaxBodyBytes)}
	body.large, body.atLarge = t.bodyLimit()
	if max := h.p.MaxBodyBytes; max > 0 && c.Request.ContentLength > max {
		// Declared over the limit: refused without decoding a byte of it. It is still read
		// on to the limit (discarding, as a body found over it while decoding is), so that a
		// client still sending gets the answer rather than a reset connection.
		_, _ = io.Copy(io.Discard, body)
		h.refuse(c, buf, http.StatusRequestEntityTooLarge, limits.Refuse(limits.BodyBytes,
			"request body is larger than the limit of %d bytes (%s)", max, limits.BodyBytes))
		return
	}
	req, err := h.p.Codec.ReadRequest(body, isMapServerOp)
	if err != nil {
		if body.err == nil {
			// A body over the size limit is refused as such, whatever its XML: read on to
			// the limit (discarding) to find out.
			_, _ = io.Copy(io.Discard, body)
		}
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(body.err, &tooLarge):
			h.refuse(c, buf, http.StatusRequestEntityTooLarge, limits.Refuse(limits.BodyBytes,
				"request body is larger than the limit of %d bytes (%s)", h.p.MaxBodyBytes, limits.BodyBytes))
		case body.err != nil:
			h.fault(c, buf, http.StatusBadRequest, soap.ClientFault("reading the request body: %v", body.err))
		default:
			h.refuse(c, buf, http.StatusInternalServerError, err)
		}
		return
	}
	c.Set("soap_op", req.Operation)
	if err := t.admit(ctx, req.Operation, req.Body, body.n); err != nil {
		if _, over := limits.Of(err); over {
			h.observe(req.Operation, time.Now(), err)
			h.refuse(c, buf, http.StatusInternalServerError, err)
			return
		}
		h.laneRefused(c, buf, req.Operation, err)
		return
	}
	call := &mapserver.Call{Service: svc, RequestID: requestIDOf(c)}
	start := time.Now()
	var resp any
	t.run(func() { resp, err = h.p.Ops.Do(ctx, call, req.Operation, req.Body) })
	h.observe(req.Operation, start, err)
	if err != nil {
		if clientGone(c, err) {
			h.p.Logger.Info("client went away before the answer", "request_id", call.RequestID, "op", req.Operation, "err", err)
			c.AbortWithStatus(statusClientClosed)
			return
		}
		if toFault(err).Code == soap.FaultServer {
			h.p.Logger.Error("operation failed", "request_id", call.RequestID, "op", req.Operation, "err", err)
		}
		h.refuse(c, buf, http.StatusInternalServerError, err)
		return
	}
	if err := h.p.Codec.WriteResponse(buf, req.Operation, resp); err != nil {
		h.p.Logger.Error("writing the response failed", "request_id", call.RequestID, "op", req.Operation, "err", err)
		buf.Reset()
		h.fault(c, buf, http.StatusInternalServerError, withRequestID(toFault(err), call.RequestID))
		return
	}
	if ri := call.Render; ri != nil {
		c.Header("Server-Timing", fmt.Sprintf(`render;dur=%.3f;desc="%s"`, float64(ri.Render.Microseconds())/1000, ri.Worker))
		c.Set("worker", ri.Worker)
	}
	c.Data(http.StatusOK, "text/xml; charset=utf-8", buf.Bytes())
}

// laneRefused answers a heavy request that got no slot of the heavy lane before its deadline
// (a soap:Server fault saying so) or whose client left while it waited (no answer).
func (h *soapHandler) laneRefused(c *gin.Context, buf *bytes.Buffer, op string, err error) {
	if clientGone(c, err) {
		h.p.Logger.Info("client went away while waiting for the heavy lane", "request_id", requestIDOf(c), "op", op)
		c.AbortWithStatus(statusClientClosed)
		return
	}
	h.p.Logger.Warn("heavy request refused: no slot of the heavy lane before its deadline", "request_id", requestIDOf(c), "op", op)
	h.fault(c, buf, http.StatusServiceUnavailable, withRequestID(toFault(err), requestIDOf(c)))
}

// observe records one operation in the metrics.
func (h *soapHandler) observe(op string, start time.Time, err error) {
	m := h.p.Metrics
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "server_fault"
		if toFault(err).Code == soap.FaultClient {
			outcome = "client_fault"
		}
	}
	m.SOAPRequests.WithLabelValues(op, outcome).Inc()
	m.SOAPDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

// refuse answers err as its fault (toFault), with the request id on a soap:Server fault, and
// counts a refusal by a limit in mapfarm_limit_refusals_total.
func (h *soapHandler) refuse(c *gin.Context, buf *bytes.Buffer, status int, err error) {
	h.p.Metrics.Refused(err)
	h.fault(c, buf, status, withRequestID(toFault(err), requestIDOf(c)))
}

// bodyReader reads a request body and keeps the first error reading it gave (io.EOF aside),
// so that a body over the size limit, or cut short, is told from bad XML.
type bodyReader struct {
	r   io.Reader
	n   int64 // bytes read
	err error
	// atLarge, when set, is called once, when the bytes read reach large.
	large   int64
	atLarge func()
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.atLarge != nil && b.n >= b.large {
		b.atLarge()
		b.atLarge = nil
	}
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

func (h *soapHandler) fault(c *gin.Context, buf *bytes.Buffer, status int, f *soap.Fault) {
	buf.Reset()
	h.p.Codec.WriteFault(buf, f)
	c.Data(status, "text/xml; charset=utf-8", buf.Bytes())
}

// withRequestID adds the request's id to a soap:Server fault, so that an operator can find its
// cause in the log.
func withRequestID(f *soap.Fault, id string) *soap.Fault {
	if f.Code != soap.FaultServer || id == "" {
		return f
	}
	return &soap.Fault{Code: f.Code, String: f.String + " (request id " + id + ")", Err: f.Err}
}

// toFault is the one place errors become faults: the request's fault (soap:Client) for bad
// input, unknown names and unimplemented operations, quoting at most 200 characters of any
// value of the request (the operations build their errors with quote.Sprintf) and at most
// soap.MaxFaultString in all; soap:Server for the rest, with a fixed message (the render
// farm's timeout says so) and the error itself only in the log.
func toFault(err error) *soap.Fault {
	var f *soap.Fault
	switch {
	case errors.As(err, &f):
		return f
	case errors.Is(err, mapserver.ErrInvalidArgument), errors.Is(err, mapserver.ErrNotFound):
		return &soap.Fault{Code: soap.FaultClient, String: err.Error(), Err: err}
	case errors.As(err, new(*limits.Error)):
		return &soap.Fault{Code: soap.FaultClient, String: err.Error(), Err: err}
	case errors.Is(err, mapserver.ErrNotImplemented):
		return &soap.Fault{Code: soap.FaultClient, String: err.Error() + " by this server yet", Err: err}
	case errors.Is(err, limits.ErrBusy):
		return &soap.Fault{Code: soap.FaultServer, String: limits.ErrBusy.Error(), Err: err}
	case errors.Is(err, farm.ErrTimeout):
		return &soap.Fault{Code: soap.FaultServer, String: "the render farm did not answer in time; try again", Err: err}
	}
	return soap.AsFault(err)
}

// serveGet answers GET on the endpoint: the WSDL for ?wsdl, a short note otherwise.
func (h *soapHandler) serveGet(c *gin.Context) {
	svc, ok := h.p.Ops.Service(c.Param("service"))
	if !ok {
		c.String(http.StatusNotFound, "service %q does not exist\n", c.Param("service"))
		return
	}
	if !soap.AsksForWSDL(c.Request.URL.RawQuery) {
		c.String(http.StatusOK, "%s MapServer SOAP endpoint. POST SOAP 1.1 requests here; the WSDL is at ?wsdl.\n", svc.Name)
		return
	}
	buf := h.buffer()
	defer h.bufs.Put(buf)
	h.p.Codec.WriteWSDL(buf, soap.WSDLOptions{ServiceName: svc.Name, Address: h.p.PublicURL + "/arcgis/services/" + svc.Name + "/MapServer"})
	c.Data(http.StatusOK, "text/xml; charset=utf-8", buf.Bytes())
}

// isMapServerOp reports whether op is an operation of the MapServer interface: the Catalog's
// (GetServiceDescriptions…, served at /arcgis/services) are unknown operations here, as they
// are to an ArcGIS MapServer endpoint.
func isMapServerOp(op string) bool {
	o, ok := gisxml.Load().Operation(op)
	return ok && !o.Catalog
}
