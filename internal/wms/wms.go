// Package wms serves OGC Web Map Service 1.1.1 and 1.3.0 for every map service, at ArcGIS
// Server's address of the WMSServer capability, /arcgis/services/<service>/MapServer/WMSServer.
//
// It is a transport codec only. Every answer comes from the typed MapServer operations
// (mapserver.Families), run under the api's request policy (Params.Admit, api.Admission.
// Operation) like the REST front end's: GetCapabilities reads GetServerInfo and GetLegendInfo,
// GetMap is ExportMapImage (through the farm, its bytes served inline), GetFeatureInfo is
// Identify and GetLegendGraphic is GetLegendInfo. No operation is written here a second time.
//
// One request is read in one place (request.go): KVP through internal/kvp (names in any letter
// case, a name given twice with two values refused), then the version, the layers, the CRS and
// the BBOX in the axis order of the version (1.3.0 takes latitude first for EPSG:4326 and every
// CRS whose EPSG axis order puts northing first; CRS:84 and 1.1.1 are always easting first).
// Errors are *Exception values (exception.go), written as the version's ServiceExceptionReport,
// or in an image for GetMap's EXCEPTIONS=INIMAGE and BLANK. docs/wms.md describes the service.
package wms

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// Params configure a Handler.
type Params struct {
	// Server composes the operations; its drawing operations go through mapserver.Drawing.
	Server *mapserver.Server
	// PublicURL is the base URL clients use, no trailing slash: the capabilities name the
	// online resources under it.
	PublicURL string
	// Admit runs each operation under the api's request policy (api.Admission.Operation: the
	// request limits checked on req, the heavy lane); nil runs them at once, unchecked.
	Admit func(ctx context.Context, op string, req any, run func()) error
	// Timeout bounds each operation (0: none).
	Timeout time.Duration
	// Observe, when set, is told of every operation a request runs, with its start and its
	// error (a refusal by Admit too): the api counts refusals of the request limits in its
	// metrics (api.WMSObserver).
	Observe func(op string, start time.Time, err error)
	// MaxImageWidth and MaxImageHeight bound GetMap's WIDTH and HEIGHT (0: 4096), as they do
	// REST's export; the capabilities announce them as MaxWidth and MaxHeight.
	MaxImageWidth, MaxImageHeight int
	Logger                        *slog.Logger
}

// Handler serves WMS for every service of Params.Server.
type Handler struct {
	p Params
}

// New returns a Handler.
func New(p Params) *Handler {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	p.MaxImageWidth, p.MaxImageHeight = limits.ImageSize(p.MaxImageWidth, p.MaxImageHeight)
	return &Handler{p: p}
}

// ServeHTTP answers a WMS request for the service named by the path value "service".
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeException(w, r, version130, &Exception{Status: http.StatusMethodNotAllowed, Message: "WMS is served over HTTP GET"})
		return
	}
	svc, ok := h.p.Server.Service(r.PathValue("service"))
	if !ok {
		writeException(w, r, version130, &Exception{Status: http.StatusNotFound, Message: "service " + quoted(r.PathValue("service")) + " does not exist"})
		return
	}
	q, exc := readRequest(r)
	if exc != nil {
		writeException(w, r, q.version, exc)
		return
	}
	s := &service{h: h, svc: svc, call: &mapserver.Call{Service: svc, RequestID: mapserver.RequestID(r.Context())}, ctx: r.Context()}
	var err error
	switch q.operation {
	case opCapabilities:
		err = s.capabilities(w, r, q)
	case opMap:
		err = s.getMap(w, r, q)
	case opFeatureInfo:
		err = s.featureInfo(w, r, q)
	case opLegend:
		err = s.legendGraphic(w, r, q)
	}
	if err != nil {
		h.fail(w, r, q, err)
	}
}

// fail answers err: an *Exception as it is, a refusal of the request policy or an operation's
// client error as a 400 (503 when the heavy lane is full), anything else as a 500 that is
// logged. A client that went away gets nothing.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, q *request, err error) {
	var exc *Exception
	switch {
	case errors.As(err, &exc):
	case r.Context().Err() != nil:
		return
	case errors.Is(err, limits.ErrBusy):
		w.Header().Set("Retry-After", "1")
		exc = &Exception{Status: http.StatusServiceUnavailable, Message: "the server is busy; try again", err: err}
	case isClientError(err):
		exc = &Exception{Status: http.StatusBadRequest, Message: err.Error(), err: err}
	default:
		h.p.Logger.Error("wms request failed", "request_id", mapserver.RequestID(r.Context()), "request", q.raw, "err", err)
		exc = &Exception{Status: http.StatusInternalServerError, Message: "the request could not be completed", err: err}
	}
	if q.operation == opMap && (q.exceptions == excInImage || q.exceptions == excBlank) {
		if werr := writeImageException(w, r, q, exc); werr == nil {
			return
		}
	}
	writeException(w, r, q.version, exc)
}

// isClientError reports whether an operation refused the request itself (a bad argument, a
// request limit).
func isClientError(err error) bool {
	if _, over := limits.Of(err); over {
		return true
	}
	return errors.Is(err, mapserver.ErrInvalidArgument)
}

// service is one request's service and its operation calls.
type service struct {
	h    *Handler
	svc  *catalog.Service
	call *mapserver.Call
	ctx  context.Context
	// bounds are the extents transformed for this request's capabilities (boundIn).
	bounds map[boundKey]boundResult
}

// invoke runs the typed operation f under the request policy and the handler's timeout.
func invoke[Req, Resp any](s *service, op string, f func(context.Context, *mapserver.Call, *Req) (*Resp, error), req *Req) (*Resp, error) {
	ctx := s.ctx
	if s.h.p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.h.p.Timeout)
		defer cancel()
	}
	start := time.Now()
	resp, err := mapserver.Admitted(ctx, s.h.p.Admit, op, f, s.call, req)
	if o := s.h.p.Observe; o != nil {
		o(op, start, err)
	}
	return resp, err
}

func (s *service) families() mapserver.Families { return s.h.p.Server.Families() }

// writeBody answers r with status and body: its Content-Type, Content-Length and
// Cache-Control, then the bytes unless r is a HEAD request. Every WMS answer goes out here.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType, cacheControl string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", cacheControl)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
