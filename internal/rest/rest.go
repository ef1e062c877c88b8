// Package rest is the ArcGIS REST front end of the map services: the catalog
// (/arcgis/rest/info, /arcgis/rest/services) and the MapServer resource with its layers and
// tables, their query, queryRelatedRecords and attachments, legend, export, identify and find,
// answered as ArcGIS Server 10.7 answers them; the services directory (f=html, html.go) and the
// map viewer of internal/viewer.
//
// A handler here only decodes the REST parameters into the gisxml request of a transport-free
// operation of internal/mapserver, calls that typed operation (a method of one of
// mapserver.Families, or a drawing operation with its picture step, mapserver.Drawing) through
// invoke (mapservice.go), which runs it under the api's request policy (Params.Admit: the
// request limits, the heavy lane and its priority, shared with SOAP), and encodes the gisxml
// response as ArcGIS JSON (or GeoJSON, or image bytes). No operation is written twice: SOAP
// and REST answer from the same code; only SOAP dispatches by operation name.
//
// One file per resource: catalog.go, mapservice.go (root, layers, one layer; renderer.go for
// drawingInfo), query.go (geometry.go decodes geometry parameters, features.go encodes feature
// sets as Esri JSON and GeoJSON), export.go, identify.go (identify and find), related.go
// (legend, queryRelatedRecords, attachments); errors.go writes errors as ArcGIS does; json.go
// holds the JSON writer and the encoding of geometries and spatial references. Metadata answers
// are ordered Go structs encoded by encoding/json; feature sets keep the hand-made writer for
// speed (json.go says why, and how both write the same bytes; testdata/golden pins them).
package rest

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/kvp"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/viewer"
)

// Routes are the paths the handler serves, in httprouter (gin) syntax, for the HTTP front end to
// mount; each path is served for GET and POST (ArcGIS takes both, with form bodies). Routes of
// other handlers below /arcgis/rest/services/:service/MapServer/ (tile/…, WMTS/…) must name
// the service :service too, as gin requires of one path segment.
var Routes = []string{
	"/arcgis/rest/info",
	"/arcgis/rest/services",
	"/arcgis/rest/services/:service",
	"/arcgis/rest/services/:service/MapServer",
	"/arcgis/rest/services/:service/MapServer/", // esri-leaflet's form
	"/arcgis/rest/services/:service/MapServer/:op",
	"/arcgis/rest/services/:service/MapServer/:op/:sub",
	"/arcgis/rest/services/:service/MapServer/:op/:sub/attachments",
	"/arcgis/rest/services/:service/MapServer/:op/:sub/attachments/:attachment",
}

// Services lists the catalog's services.
type Services interface {
	Services() []*catalog.Service
}

// Params configure a Handler.
type Params struct {
	Ops      *mapserver.Server
	Services Services
	// MaxRecordCount is the most records one query answers (the service's maxRecordCount).
	MaxRecordCount int
	// MaxImageWidth and MaxImageHeight bound export.
	MaxImageWidth, MaxImageHeight int
	// CurrentVersion is written in every answer's currentVersion; 0 means 10.71.
	CurrentVersion float64
	// PublicURL is the base URL clients use, no trailing slash (soapUrl, export hrefs).
	PublicURL string
	// Admit, when set, runs each operation (run) under the api's request policy, as the SOAP
	// endpoint's are (api.Admission.Operation): it checks req, the operation op's gisxml
	// request, against the request limits (a *limits.Error, answered 400) and takes a slot of
	// the heavy lane for a heavy one (an error wrapping limits.ErrBusy when none frees before
	// the request's deadline, answered 503). Nil: operations run at once, unchecked.
	Admit func(ctx context.Context, op string, req any, run func()) error
	// OperationTimeout bounds every operation, as for SOAP; 0: none.
	OperationTimeout time.Duration
	// WMS says every map service is also served as WMS (internal/wms): the service resource
	// lists the capability as ArcGIS does, supportedExtensions "WMSServer".
	WMS bool
	// VectorTiles says every map service also has a VectorTileServer (internal/vectortileserver):
	// the catalog lists it, as ArcGIS lists a service once per type.
	VectorTiles bool
	// TokenBased says the services need a token; TokenServicesURL is where to get one.
	TokenBased       bool
	TokenServicesURL string
	// Observe, when set, is told of every operation a request runs, with its start and its
	// error (nil on success; a refusal by Admit too): the api counts them in its metrics.
	Observe func(op string, start time.Time, err error)
	Logger  *slog.Logger
}

// Handler serves the REST API.
type Handler struct {
	p      Params
	dir    *directory
	viewer *viewer.Handler
}

// New returns the REST handler.
func New(p Params) *Handler {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.MaxRecordCount <= 0 {
		p.MaxRecordCount = 1000
	}
	p.MaxImageWidth, p.MaxImageHeight = limits.ImageSize(p.MaxImageWidth, p.MaxImageHeight)
	if p.CurrentVersion == 0 {
		p.CurrentVersion = 10.71
	}
	return &Handler{p: p, dir: newDirectory(), viewer: viewer.New()}
}

// request is one decoded REST call: its parameters (query string and form body together) and
// the output format f.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	ctx    context.Context
	params kvp.Params // query string and form body; names in any letter case
	f      string
}

// param returns a parameter by name (case-insensitive), "" when absent.
func (q *request) param(name string) string { return q.params.Get(name) }

// readParams reads the query string and the form body into q.params (internal/kvp: names are
// case-insensitive; one given twice with different values is refused with a 400 naming it).
// Until they are read, errors are written as JSON.
func (h *Handler) readParams(q *request) error {
	q.f = "json"
	if err := q.r.ParseForm(); err != nil {
		return badRequest("Unable to read the request: %v", err)
	}
	p, err := kvp.Read(q.r.Form)
	if err != nil {
		return badRequest("%v", err)
	}
	q.params, q.f = p, ""
	return nil
}

// ServeHTTP routes a request by its path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r, ctx: r.Context()}
	if h.p.OperationTimeout > 0 {
		var cancel context.CancelFunc
		q.ctx, cancel = context.WithTimeout(q.ctx, h.p.OperationTimeout)
		defer cancel()
	}
	if err := h.readParams(q); err != nil {
		h.writeError(q, err)
		return
	}
	path := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/arcgis/rest"), "/")
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	// Without f the directory's resources answer HTML (html.go), operations JSON.
	q.f = strings.ToLower(q.param("f"))
	if q.f == "" && htmlDefault(parts) {
		q.f = "html"
	}
	if q.f == "" {
		q.f = "json"
	}
	if q.f == "html" && !isViewer(parts) {
		if err := h.serveHTML(q, parts); err != nil {
			h.writeHTMLError(q, h.asLoggedError(q, err))
		}
		return
	}
	var err error
	switch {
	case path == "/info":
		err = h.info(q)
	case path == "/services":
		err = h.catalog(q, "")
	case len(parts) == 2 && parts[0] == "services":
		err = h.catalog(q, parts[1])
	case len(parts) >= 3 && parts[0] == "services" && parts[2] == "MapServer":
		err = h.mapServer(q, parts[1], parts[3:])
	default:
		err = notFoundErr("Requested path was not found")
	}
	if err != nil {
		h.writeError(q, err)
	}
}

// mapServer routes the MapServer resource and its children.
func (h *Handler) mapServer(q *request, service string, rest []string) error {
	svc, ok := h.p.Ops.Service(service)
	if !ok {
		return notFoundErr("Service %s/MapServer not found", service)
	}
	ms := &mapService{h: h, svc: svc, call: &mapserver.Call{Service: svc, RequestID: requestID(q.r)}}
	switch {
	case len(rest) == 0:
		return ms.root(q)
	case len(rest) == 1 && rest[0] == "layers":
		return ms.layers(q)
	case len(rest) == 1 && rest[0] == "viewer":
		h.viewer.ServePage(q.w, viewer.Page{Service: service, ServiceURL: serviceHref(service), Token: q.param("token")})
		return nil
	case len(rest) == 2 && rest[0] == "viewer":
		h.viewer.ServeAsset(q.w, q.r, rest[1])
		return nil
	case len(rest) == 1 && rest[0] == "legend":
		return ms.legend(q)
	case len(rest) == 1 && rest[0] == "export":
		return ms.export(q)
	case len(rest) == 1 && rest[0] == "identify":
		return ms.identify(q)
	case len(rest) == 1 && rest[0] == "find":
		return ms.find(q)
	case len(rest) == 1:
		id, err := layerID(rest[0])
		if err != nil {
			return err
		}
		return ms.layer(q, id)
	case len(rest) == 2 && rest[1] == "query":
		id, err := layerID(rest[0])
		if err != nil {
			return err
		}
		return ms.query(q, id)
	case len(rest) == 2 && rest[1] == "queryRelatedRecords":
		id, err := layerID(rest[0])
		if err != nil {
			return err
		}
		return ms.queryRelatedRecords(q, id)
	case (len(rest) == 3 || len(rest) == 4) && rest[2] == "attachments":
		id, err := layerID(rest[0])
		if err != nil {
			return err
		}
		oid, err := strconv.Atoi(rest[1])
		if err != nil {
			return badRequest("Invalid feature ID: %q", rest[1])
		}
		var attachment string
		if len(rest) == 4 {
			attachment = rest[3]
		}
		return ms.attachments(q, id, oid, attachment)
	}
	return notFoundErr("Requested path was not found")
}
