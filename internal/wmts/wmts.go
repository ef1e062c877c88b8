package wmts

import (
	"bytes"
	"encoding/xml"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/kvp"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// contentsTTL is how long a service's capabilities contents are reused, as long as the cache
// operations trust a conf.xml (a seeding job that adds levels shows within it).
const contentsTTL = 5 * time.Second

// contentsCache keeps each service's contents for contentsTTL, so that GetTile does not list
// the cache's folders for every tile.
type contentsCache struct {
	mu sync.Mutex
	m  map[string]cachedContents
}

type cachedContents struct {
	c  *contents
	at time.Time
}

// contents returns the WMTS contents of a service, from GetCacheDescriptionInfo.
func (h *Handler) contents(r *http.Request, svc *catalog.Service) (*contents, error) {
	h.cache.mu.Lock()
	cc, ok := h.cache.m[svc.Name]
	h.cache.mu.Unlock()
	if ok && time.Since(cc.at) < contentsTTL {
		return cc.c, nil
	}
	resp, err := call(r, h, svc, h.caches.GetCacheDescriptionInfo, gisxml.GetCacheDescriptionInfo{MapName: svc.Maps[0].Name})
	if err != nil {
		return nil, err
	}
	c, err := buildContents(svc, resp.Result)
	if err != nil {
		return nil, err
	}
	h.cache.mu.Lock()
	if h.cache.m == nil || len(h.cache.m) > 1024 {
		h.cache.m = map[string]cachedContents{}
	}
	h.cache.m[svc.Name] = cachedContents{c: c, at: time.Now()}
	h.cache.mu.Unlock()
	return c, nil
}

// ServeKVP serves the KVP encoding of WMTS at /arcgis/rest/services/<service>/MapServer/WMTS
// (path value "service"): SERVICE=WMTS with REQUEST=GetCapabilities or GetTile. Parameter
// names are case-insensitive, as OGC requires; a name given twice with different values is
// refused (internal/kvp).
func (h *Handler) ServeKVP(w http.ResponseWriter, r *http.Request) {
	svc, ok := h.services.Service(r.PathValue("service"))
	if !ok {
		writeException(w, http.StatusNotFound, "InvalidParameterValue", "service", "service "+quoted(r.PathValue("service"))+" does not exist")
		return
	}
	q, err := kvp.Read(r.URL.Query())
	if err != nil {
		var dup *kvp.DuplicateError
		name := ""
		if errors.As(err, &dup) {
			name = strings.ToLower(dup.Name)
		}
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", quote.Clip(name, quote.MaxLen), err.Error())
		return
	}
	if s := q.Get("SERVICE"); s == "" {
		writeException(w, http.StatusBadRequest, "MissingParameterValue", "service", "SERVICE is required (SERVICE=WMTS)")
		return
	} else if !strings.EqualFold(s, "WMTS") {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "service", "SERVICE must be WMTS, not "+quoted(s))
		return
	}
	switch req := q.Get("REQUEST"); {
	case req == "":
		writeException(w, http.StatusBadRequest, "MissingParameterValue", "request", "REQUEST is required: GetCapabilities or GetTile")
	case strings.EqualFold(req, "GetCapabilities"):
		if v := q.Get("ACCEPTVERSIONS"); q.Has("ACCEPTVERSIONS") && !contains(strings.Split(v, ","), "1.0.0") {
			writeException(w, http.StatusBadRequest, "VersionNegotiationFailed", "acceptversions", "this server speaks WMTS 1.0.0 only")
			return
		}
		h.serveCapabilities(w, r, svc)
	case strings.EqualFold(req, "GetTile"):
		if v := q.Get("VERSION"); v != "1.0.0" {
			code := "InvalidParameterValue"
			if v == "" {
				code = "MissingParameterValue"
			}
			writeException(w, http.StatusBadRequest, code, "version", "GetTile needs VERSION=1.0.0")
			return
		}
		for _, p := range []string{"LAYER", "STYLE", "FORMAT", "TILEMATRIXSET", "TILEMATRIX", "TILEROW", "TILECOL"} {
			if q.Get(p) == "" {
				writeException(w, http.StatusBadRequest, "MissingParameterValue", strings.ToLower(p), p+" is required by GetTile")
				return
			}
		}
		h.serveTile(w, r, svc, tileRequest{layer: q.Get("LAYER"), style: q.Get("STYLE"), format: q.Get("FORMAT"), set: q.Get("TILEMATRIXSET"),
			matrix: q.Get("TILEMATRIX"), row: q.Get("TILEROW"), col: q.Get("TILECOL")})
	case strings.EqualFold(req, "GetFeatureInfo"):
		writeException(w, http.StatusNotImplemented, "OperationNotSupported", "request", "GetFeatureInfo is not offered by this server")
	default:
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "request", "REQUEST must be GetCapabilities or GetTile, not "+quoted(req))
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if strings.TrimSpace(v) == s {
			return true
		}
	}
	return false
}

// ServeREST serves the RESTful encoding under /arcgis/rest/services/<service>/MapServer/WMTS/,
// with path values "service" and "path" (what follows WMTS/):
//
//	1.0.0/WMTSCapabilities.xml
//	tile/1.0.0/<layer>/<style>/<TileMatrixSet>/<TileMatrix>/<TileRow>/<TileCol>[.png|.jpg]
func (h *Handler) ServeREST(w http.ResponseWriter, r *http.Request) {
	h.ServeRESTAt(w, r, r.PathValue("service"), r.PathValue("path"))
}

// ServeRESTAt is ServeREST with the path's values given, for a router that has them already
// (as ServeTileAt: setting them as the request's path values costs two allocations a tile).
func (h *Handler) ServeRESTAt(w http.ResponseWriter, r *http.Request, service, path string) {
	svc, ok := h.services.Service(service)
	if !ok {
		writeException(w, http.StatusNotFound, "InvalidParameterValue", "service", "service "+quoted(service)+" does not exist")
		return
	}
	p := strings.TrimPrefix(path, "/")
	if p == "1.0.0/WMTSCapabilities.xml" {
		h.serveCapabilities(w, r, svc)
		return
	}
	parts := strings.Split(p, "/")
	if len(parts) != 8 || parts[0] != "tile" || parts[1] != "1.0.0" {
		writeException(w, http.StatusNotFound, "InvalidParameterValue", "path",
			"not a WMTS resource: want 1.0.0/WMTSCapabilities.xml or tile/1.0.0/<layer>/<style>/<TileMatrixSet>/<TileMatrix>/<TileRow>/<TileCol>")
		return
	}
	col := parts[7]
	if i := strings.LastIndexByte(col, '.'); i > 0 {
		col = col[:i]
	}
	h.serveTile(w, r, svc, tileRequest{layer: parts[2], style: parts[3], set: parts[4], matrix: parts[5], row: parts[6], col: col})
}

// tileRequest is a GetTile request's parameters, from either encoding (format is empty in
// the RESTful one, whose URL the capabilities give per format).
type tileRequest struct {
	layer, style, format, set, matrix, row, col string
}

func (h *Handler) serveTile(w http.ResponseWriter, r *http.Request, svc *catalog.Service, t tileRequest) {
	c, err := h.contents(r, svc)
	if err != nil {
		h.wmtsFailed(w, r, err)
		return
	}
	l, ok := c.layer(t.layer)
	if !ok {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "layer", "no layer "+quoted(t.layer)+" in this service's capabilities")
		return
	}
	if !strings.EqualFold(t.style, "default") {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "style", "the only style is default, not "+quoted(t.style))
		return
	}
	if t.format != "" && !strings.EqualFold(t.format, l.Format) {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "format", "layer "+l.ID+" has "+l.Format+" tiles, not "+quoted(t.format))
		return
	}
	set, ok := c.set(t.set)
	if !ok {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "tilematrixset", "no tile matrix set "+quoted(t.set))
		return
	}
	m, ok := set.matrix(t.matrix)
	if !ok {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "tilematrix", "no tile matrix "+quoted(t.matrix)+" in "+set.ID)
		return
	}
	row, ok := tilecache.ParseIndex(t.row)
	if !ok {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "tilerow", "TileRow must be a whole number ≥ 0 written in digits alone, not "+quoted(t.row))
		return
	}
	col, ok := tilecache.ParseIndex(t.col)
	if !ok {
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "tilecol", "TileCol must be a whole number ≥ 0 written in digits alone, not "+quoted(t.col))
		return
	}
	if row < 0 || row >= m.MatrixHeight {
		writeException(w, http.StatusBadRequest, "TileOutOfRange", "tilerow", "TileRow "+t.row+" is outside tile matrix "+m.ID+" (0 to "+strconv.Itoa(m.MatrixHeight-1)+")")
		return
	}
	if col < 0 || col >= m.MatrixWidth {
		writeException(w, http.StatusBadRequest, "TileOutOfRange", "tilecol", "TileCol "+t.col+" is outside tile matrix "+m.ID+" (0 to "+strconv.Itoa(m.MatrixWidth-1)+")")
		return
	}
	var data []byte
	if l.LayerID == -1 {
		resp, err := call(r, h, svc, h.caches.GetMapTile, gisxml.GetMapTile{MapName: svc.Maps[0].Name, Level: m.Level, Row: row, Column: col})
		if err != nil {
			h.wmtsFailed(w, r, err)
			return
		}
		data = resp.Result
	} else {
		resp, err := call(r, h, svc, h.caches.GetLayerTile, gisxml.GetLayerTile{MapName: svc.Maps[0].Name, LayerID: l.LayerID, Level: m.Level, Row: row, Column: col})
		if err != nil {
			h.wmtsFailed(w, r, err)
			return
		}
		data = resp.Result
	}
	h.writeTile(w, r, tileKey{service: svc.Name, layer: l.LayerID, level: m.Level, row: row, col: col}, data)
}

// wmtsFailed answers an operation's error as an exception report: 404 for a tile or cache that
// does not exist, 400 for another fault of the request, 500 with only the request id for a
// failure of the server (its cause goes to the log).
func (h *Handler) wmtsFailed(w http.ResponseWriter, r *http.Request, err error) {
	id := requestID(r)
	switch {
	case clientGone(r, err):
		h.logger.Info("client went away before the answer", "request_id", id, "path", r.URL.Path)
	case errors.Is(err, mapserver.ErrNotFound):
		writeException(w, http.StatusNotFound, "NoApplicableCode", "", err.Error())
	case errors.Is(err, mapserver.ErrInvalidArgument):
		writeException(w, http.StatusBadRequest, "InvalidParameterValue", "", err.Error())
	default:
		h.logger.Error("wmts: operation failed", "request_id", id, "err", err)
		writeException(w, http.StatusInternalServerError, "NoApplicableCode", "", "the server failed; the cause is in its log (request id "+id+")")
	}
}

// writeException writes an OWS 1.1 exception report.
func writeException(w http.ResponseWriter, status int, code, locator, text string) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<ExceptionReport xmlns="http://www.opengis.net/ows/1.1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.opengis.net/ows/1.1 http://schemas.opengis.net/ows/1.1.0/owsExceptionReport.xsd" version="1.1.0" xml:lang="en">`)
	b.WriteString(`<Exception exceptionCode="` + code + `"`)
	if locator != "" {
		b.WriteString(` locator="`)
		_ = xml.EscapeText(&b, []byte(locator))
		b.WriteString(`"`)
	}
	b.WriteString(`><ExceptionText>`)
	_ = xml.EscapeText(&b, []byte(text))
	b.WriteString("</ExceptionText></Exception></ExceptionReport>\n")
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// serviceURL is the public URL of a service's WMTS resource.
func (h *Handler) serviceURL(svc *catalog.Service) string {
	return h.publicURL + "/arcgis/rest/services/" + url.PathEscape(svc.Name) + "/MapServer/WMTS"
}
