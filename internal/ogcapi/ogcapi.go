// Package ogcapi serves the OGC API standards for every map service under /ogc: Common (landing
// page, conformance, the OpenAPI definition, collections), Features Part 1 core with Part 2's
// crs, Maps 1.0 core and Tiles 1.0, in JSON and HTML.
//
// Each map service is one OGC API of its own, at /ogc/<service>: its collections are the map's
// layers, named by their layer ids as ArcGIS Server's OGCFeatureServer and the WMS name them;
// /ogc lists the services. docs/ogcapi.md describes the choices.
//
// It is a transport codec only, as internal/wms is. Every answer comes from the typed MapServer
// operations (mapserver.Families), run under the api's request policy (Params.Admit,
// api.Admission.Operation): the collections read GetServerInfo, items are QueryRowIDs (the
// matching ids, numberMatched) and QueryData (one page of them, by id), maps and tiles drawn on
// demand are ExportMapImage through the farm, and cached tiles are GetMapTile, read from the
// store as WMTS reads them. No operation is written here a second time.
package ogcapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/quote"
)

// Prefix is the path the APIs are served under.
const Prefix = "/ogc"

// Params configure a Handler.
type Params struct {
	// Server composes the operations; its drawing operations go through mapserver.Drawing.
	Server *mapserver.Server
	// PublicURL is the base URL clients use, no trailing slash: links are absolute under it.
	PublicURL string
	// Admit runs each operation under the api's request policy (api.Admission.Operation: the
	// request limits checked on req, the heavy lane); nil runs them at once, unchecked.
	Admit func(ctx context.Context, op string, req any, run func()) error
	// Timeout bounds each operation (0: none).
	Timeout time.Duration
	// MaxRecordCount bounds a page of items (limit), as it bounds a REST query's page
	// (0: 1000, the default of docs/limits.md).
	MaxRecordCount int
	// MaxImageWidth and MaxImageHeight bound a map's width and height (0: 4096), as they bound
	// REST's export and WMS's GetMap.
	MaxImageWidth, MaxImageHeight int
	// VectorTiles builds the Mapbox vector tiles of the vector tilesets (/tiles); nil: the APIs
	// have none.
	VectorTiles VectorTiles
	// TileBuild runs the build of one vector tile (as the VectorTileServer's builds run: the api
	// Admission's lower CPU priority, no lane slot); nil runs it at once.
	TileBuild func(build func())
	Logger    *slog.Logger
}

// VectorTiles builds one Mapbox vector tile of a map of a service, z/x/y of Web Mercator
// (internal/vectortile's Builder).
type VectorTiles interface {
	WebMercatorTile(ctx context.Context, service, mapName string, z, x, y int) (*mvt.Result, error)
	// MaxZoom is the last zoom it builds; clients overzoom its tiles.
	MaxZoom() int
}

// Handler serves the OGC APIs of every service of Params.Server.
type Handler struct {
	p Params
}

// New returns a Handler.
func New(p Params) *Handler {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.MaxRecordCount <= 0 {
		p.MaxRecordCount = 1000
	}
	p.MaxImageWidth, p.MaxImageHeight = limits.ImageSize(p.MaxImageWidth, p.MaxImageHeight)
	return &Handler{p: p}
}

// visibleKey holds the function that says which services a request may see.
type visibleKey struct{}

// WithVisible returns ctx with the services a request may see (a token scoped to some
// services): /ogc lists only those. Without it every service is listed.
func WithVisible(ctx context.Context, allows func(service string) bool) context.Context {
	return context.WithValue(ctx, visibleKey{}, allows)
}

func visible(ctx context.Context, service string) bool {
	f, ok := ctx.Value(visibleKey{}).(func(string) bool)
	return !ok || f(service)
}

// ServeHTTP answers a request under Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, r, &Error{Status: http.StatusMethodNotAllowed, Code: "MethodNotAllowed", Description: "the OGC APIs are read over GET and HEAD"})
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok || rest != "" && rest[0] != '/' {
		writeError(w, r, notFound("no such resource"))
		return
	}
	segs := splitPath(rest)
	if len(segs) == 0 {
		h.fail(w, r, h.root(w, r))
		return
	}
	svc, found := h.p.Server.Service(segs[0])
	if !found {
		writeError(w, r, notFound("service "+quoted(segs[0])+" does not exist"))
		return
	}
	s := &service{h: h, svc: svc, ctx: r.Context(), base: h.p.PublicURL + Prefix + "/" + svc.Name,
		call: &mapserver.Call{Service: svc, RequestID: mapserver.RequestID(r.Context())}}
	h.fail(w, r, s.route(w, r, segs[1:]))
}

// splitPath splits a path into its segments; a trailing slash adds none.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// route answers the resource segs names under a service's landing page.
func (s *service) route(w http.ResponseWriter, r *http.Request, segs []string) error {
	n := len(segs)
	switch {
	case n == 0:
		return s.landing(w, r)
	case n == 1 && segs[0] == "conformance":
		return s.conformance(w, r)
	case n == 1 && segs[0] == "api":
		return s.openAPI(w, r)
	case n == 1 && segs[0] == "collections":
		return s.collections(w, r)
	case n == 1 && segs[0] == "tileMatrixSets":
		return s.tileMatrixSets(w, r)
	case n == 2 && segs[0] == "tileMatrixSets":
		return s.tileMatrixSet(w, r, segs[1])
	case segs[0] == "map":
		return s.mapResource(w, r, nil, segs[1:])
	case segs[0] == "tiles" && s.h.p.VectorTiles != nil:
		return s.vectorResource(w, r, segs[1:])
	case segs[0] == "collections":
		l, err := s.layer(segs[1])
		if err != nil {
			return err
		}
		switch {
		case n == 2:
			return s.collection(w, r, l)
		case n == 3 && segs[2] == "items":
			return s.items(w, r, l)
		case n == 4 && segs[2] == "items":
			return s.item(w, r, l, segs[3])
		case segs[2] == "map":
			return s.mapResource(w, r, l, segs[3:])
		}
	}
	return notFound("no such resource")
}

// mapResource answers /map and what is under it, of the dataset (l nil) or of a collection.
func (s *service) mapResource(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo, segs []string) error {
	switch {
	case len(segs) == 0:
		return s.drawMap(w, r, l)
	case segs[0] != "tiles":
	case len(segs) == 1:
		return s.tilesets(w, r, l)
	case len(segs) == 2:
		return s.tileset(w, r, l, segs[1])
	case len(segs) == 5:
		return s.tile(w, r, l, segs[1], segs[2], segs[3], segs[4])
	}
	return notFound("no such resource")
}

// service is one request's service and its operation calls.
type service struct {
	h    *Handler
	svc  *catalog.Service
	call *mapserver.Call
	ctx  context.Context
	base string // the service's landing page URL
	info *gisxml.MapServerInfo
}

// invoke runs the typed operation f under the request policy and the handler's timeout.
func invoke[Req, Resp any](s *service, op string, f func(context.Context, *mapserver.Call, *Req) (*Resp, error), req *Req) (*Resp, error) {
	ctx := s.ctx
	if s.h.p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.h.p.Timeout)
		defer cancel()
	}
	return mapserver.Admitted(ctx, s.h.p.Admit, op, f, s.call, req)
}

func (s *service) families() mapserver.Families { return s.h.p.Server.Families() }

// serverInfo is GetServerInfo of the service's default map, read once per request.
func (s *service) serverInfo() (*gisxml.MapServerInfo, error) {
	if s.info != nil {
		return s.info, nil
	}
	resp, err := invoke(s, "GetServerInfo", s.families().Information.GetServerInfo, &gisxml.GetServerInfo{MapName: s.svc.DefaultMap().Name})
	if err != nil {
		return nil, err
	}
	if resp.Result == nil || resp.Result.DefaultMapDescription == nil {
		return nil, errors.New("ogcapi: GetServerInfo of " + s.svc.Name + " has no default map description")
	}
	s.info = resp.Result
	return s.info, nil
}

// layer finds the collection id names: a layer id of the default map.
func (s *service) layer(id string) (*gisxml.MapLayerInfo, error) {
	info, err := s.serverInfo()
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(id)
	if err == nil && strconv.Itoa(n) == id {
		for _, l := range info.MapLayerInfos {
			if l.LayerID == n {
				return l, nil
			}
		}
	}
	return nil, notFound("collection " + quoted(id) + " does not exist")
}

// Error is an answer that is not the resource: the OGC API exception (code, description) with
// its HTTP status.
type Error struct {
	Status      int
	Code        string
	Description string
	err         error
}

func (e *Error) Error() string { return e.Description }
func (e *Error) Unwrap() error { return e.err }

func notFound(msg string) *Error {
	return &Error{Status: http.StatusNotFound, Code: "NotFound", Description: msg}
}

func invalid(param, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "InvalidParameterValue", Description: param + ": " + msg}
}

// fail answers err: an *Error as it is, a refusal of the request policy or an operation's client
// error as a 400 (503 when the heavy lane is full, 404 for what does not exist), anything else
// as a 500 that is logged. A client that went away gets nothing.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if err == nil {
		return
	}
	var e *Error
	switch {
	case errors.As(err, &e):
	case r.Context().Err() != nil:
		return
	case errors.Is(err, limits.ErrBusy):
		w.Header().Set("Retry-After", "1")
		e = &Error{Status: http.StatusServiceUnavailable, Code: "ServerBusy", Description: "the server is busy; try again", err: err}
	case errors.Is(err, mapserver.ErrNotFound):
		e = &Error{Status: http.StatusNotFound, Code: "NotFound", Description: err.Error(), err: err}
	case isClientError(err):
		e = &Error{Status: http.StatusBadRequest, Code: "InvalidParameterValue", Description: err.Error(), err: err}
	default:
		h.p.Logger.Error("ogc api request failed", "request_id", mapserver.RequestID(r.Context()), "path", r.URL.Path, "query", r.URL.RawQuery, "err", err)
		e = &Error{Status: http.StatusInternalServerError, Code: "ServerError", Description: "the request could not be completed", err: err}
	}
	writeError(w, r, e)
}

// isClientError reports whether an operation refused the request itself (a bad argument, a
// request limit).
func isClientError(err error) bool {
	if _, over := limits.Of(err); over {
		return true
	}
	return errors.Is(err, mapserver.ErrInvalidArgument)
}

// writeError writes e as JSON, {"code": …, "description": …}, the exception of OGC API Common
// and Features; errors are never cached.
func writeError(w http.ResponseWriter, r *http.Request, e *Error) {
	b, _ := json.Marshal(struct {
		Code        string `json:"code"`
		Description string `json:"description"`
	}{e.Code, e.Description})
	writeBody(w, r, e.Status, "application/json", "no-store", b)
}

// WriteRefusal answers a request the api's policy refused (no token, a token for another
// service, the rate limit) as an OGC API exception with status.
func WriteRefusal(w http.ResponseWriter, r *http.Request, status int, msg string) {
	code := "Unauthorized"
	switch status {
	case http.StatusForbidden:
		code = "Forbidden"
	case http.StatusTooManyRequests:
		code = "TooManyRequests"
	case http.StatusBadRequest:
		code = "InvalidParameterValue"
	}
	writeError(w, r, &Error{Status: status, Code: code, Description: msg})
}

// writeBody answers r with status and body: its Content-Type, Content-Length and
// Cache-Control, then the bytes unless r is a HEAD request. Every answer goes out here.
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

func quoted(s string) string { return strconv.Quote(quote.Clip(s, quote.MaxLen)) }
