package wmts

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// ServeTile serves the REST tile resource of a service's fused cache, for GET and HEAD:
//
//	/arcgis/rest/services/<service>/MapServer/tile/<level>/<row>/<col>
//
// with path values "service", "level", "row" and "col". The tile is GetMapTile's of the
// service's default map. As in ArcGIS Server, a tile that is not in the cache (not stored, or
// outside the tiling scheme) answers HTTP 404; the body is ArcGIS's JSON error. The blankTile
// parameter changes nothing: these caches never hold blank stand-in tiles.
func (h *Handler) ServeTile(w http.ResponseWriter, r *http.Request) {
	h.ServeTileAt(w, r, r.PathValue("service"), r.PathValue("level"), r.PathValue("row"), r.PathValue("col"))
}

// ServeTileAt is ServeTile with the path's values given, for a router that has them already
// (setting them as the request's path values costs a map per request: api's tile route).
func (h *Handler) ServeTileAt(w http.ResponseWriter, r *http.Request, service, level, row, col string) {
	svc, ok := h.services.Service(service)
	if !ok {
		writeRESTError(w, http.StatusNotFound, "Service not found", "service "+quoted(service)+" does not exist")
		return
	}
	var at [3]int
	for i, v := range [3]string{level, row, col} {
		n, ok := tilecache.ParseIndex(v)
		if !ok {
			name := [3]string{"level", "row", "col"}[i]
			writeRESTError(w, http.StatusBadRequest, "Invalid URL", "the tile's "+name+" must be a whole number ≥ 0 written in digits alone, not "+quoted(v))
			return
		}
		at[i] = n
	}
	resp, err := call(r, h, svc, h.caches.GetMapTile, gisxml.GetMapTile{MapName: svc.Maps[0].Name, Level: at[0], Row: at[1], Column: at[2]})
	if err != nil {
		h.restFailed(w, r, err)
		return
	}
	h.writeTile(w, r, tileKey{service: svc.Name, layer: -1, level: at[0], row: at[1], col: at[2]}, resp.Result)
}

// restFailed answers an operation's error as ArcGIS REST does for tiles: 404 for a tile the
// cache does not have (missing, outside the scheme, or no cache at all), 500 with only the
// request id for a failure of the server, whose cause goes to the log.
func (h *Handler) restFailed(w http.ResponseWriter, r *http.Request, err error) {
	id := requestID(r)
	switch {
	case clientGone(r, err):
		h.logger.Info("client went away before the tile was read", "request_id", id, "path", r.URL.Path)
	case errors.Is(err, mapserver.ErrNotFound), errors.Is(err, mapserver.ErrInvalidArgument):
		writeRESTError(w, http.StatusNotFound, "Tile not found", err.Error())
	default:
		h.logger.Error("tile: operation failed", "request_id", id, "err", err)
		writeRESTError(w, http.StatusInternalServerError, "Unable to complete operation.", "the server failed; the cause is in its log (request id "+id+")")
	}
}

// restError is ArcGIS REST's error body.
type restError struct {
	Error struct {
		Code    int      `json:"code"`
		Message string   `json:"message"`
		Details []string `json:"details"`
	} `json:"error"`
}

func writeRESTError(w http.ResponseWriter, status int, msg string, details ...string) {
	var e restError
	e.Error.Code, e.Error.Message, e.Error.Details = status, msg, details
	if e.Error.Details == nil {
		e.Error.Details = []string{}
	}
	b, _ := json.Marshal(e) // a struct of strings and an int always encodes
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// quoted is a request's value quoted for an error message, cut to quote.MaxLen characters.
func quoted(s string) string { return strconv.Quote(quote.Clip(s, quote.MaxLen)) }
