// Package vectortileserver is the ArcGIS VectorTileServer REST resource of every map service, at
// /arcgis/rest/services/<service>/VectorTileServer, as ArcGIS Enterprise answers it, with a
// TileJSON 3.0.0 document beside it for clients that are not ArcGIS (MapLibre GL, OpenLayers):
//
//	(root), ?f=json|pjson                 the service's JSON (root.go): tiles, tileInfo, extents
//	tile/<z>/<y>/<x>.pbf                   one Mapbox vector tile of the default map (tiles.go)
//	tilemap, tilemap/<z>/<y>/<x>           which tiles hold data, as a quadtree (root.go)
//	resources/styles, …/styles/root.json   the Mapbox GL style (internal/vectorstyle)
//	resources/fonts/<stack>/<range>.pbf    SDF glyph ranges (internal/vectorfonts)
//	resources/sprites/sprite[@2x].json|png the marker sprites (internal/vectorsprite)
//	tiles.json                             TileJSON 3.0.0 (root.go)
//
// The tiles are Web Mercator (GoogleMapsCompatible) z/y/x, 512 pixels wide as ArcGIS's vector
// tile levels, from 0 to the Builder's MaxZoom; clients overzoom the last. A tile is read from a
// seeded vector cache when Params.Stored has it, else built on demand from the providers
// (internal/vectortile), gzip-compressed once, kept in a byte-bounded memory and sent with
// Content-Encoding: gzip (inflated for the rare client that does not accept it), an ETag and
// 304s. A tile thinned at the feature limit says so in its X-Tile-Thinned header.
//
// The handler is net/http, reading the path values "service" and "path" (what follows
// VectorTileServer). Tokens, CORS, rate limits and cache headers are the api's request policy.
package vectortileserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// Defaults of Params.
const (
	// DefaultMemoryBytes bounds the memory of served tiles when Params.MemoryBytes is 0.
	DefaultMemoryBytes = 16 << 20
	// DefaultMemoryMaxAge is how long a tile built on demand is served from memory when
	// Params.MemoryMaxAge is 0: data edited in a database shows in tiles within it.
	DefaultMemoryMaxAge = time.Minute
)

// Services finds the map services; *catalog.Catalog is one.
type Services interface {
	Service(name string) (*catalog.Service, bool)
}

// Stored reads the tiles of seeded vector caches. VectorTile returns the bytes (gzip-compressed
// or not) of tile z/y/x of a service's map as a seeded cache holds them; ok is false when there
// is no such cache or the cache has no such tile, and the tile is then built on demand.
type Stored interface {
	VectorTile(ctx context.Context, service, mapName string, z, y, x int) (data []byte, ok bool, err error)
}

// Params configure a Handler.
type Params struct {
	// Services are the map services; each has a VectorTileServer of its default map.
	Services Services
	// Builder builds the tiles (its MaxZoom is the service's last level). Its options should
	// gzip: a plain tile is compressed here, once, before it is kept.
	Builder *vectortile.Builder
	// Stored, when set, reads seeded vector caches first.
	Stored Stored
	// Glyphs draws the glyph ranges; Renderer draws the sprites.
	Glyphs   *vectorfonts.Glyphs
	Renderer *render.Renderer
	// PublicURL is the base URL clients use, no trailing slash: the style and TileJSON name
	// their tiles, glyphs and sprites with absolute URLs under it.
	PublicURL string
	// MemoryBytes bounds the memory of served tiles (DefaultMemoryBytes when 0, none when
	// negative); MemoryMaxAge is how long a tile stays in it (DefaultMemoryMaxAge when 0).
	MemoryBytes  int64
	MemoryMaxAge time.Duration
	// Timeout bounds the building of one tile, on top of the encoder's own limit; 0: none.
	Timeout time.Duration
	// Run runs a tile build under the api's request policy (api.Admission.TileBuild: at a lower
	// CPU priority); nil: in the calling goroutine.
	Run    func(build func())
	Logger *slog.Logger
}

// Handler serves the VectorTileServer resources. It is safe for concurrent use.
type Handler struct {
	p      Params
	memory *memcache.Cache[tileKey, *servedTile]
	flight singleflight.Group
	// forgets counts the ForgetTiles calls that dropped tiles, so that a tile loaded across
	// one is not kept.
	forgets atomic.Uint64

	// cacheControl lets clients and shared caches keep a tile as long as the memory does.
	cacheControl []string

	mu        sync.Mutex
	resources map[resourceKey]*resource // styles and sprites, made once per service
}

// New returns a Handler.
func New(p Params) *Handler {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.MemoryBytes == 0 {
		p.MemoryBytes = DefaultMemoryBytes
	}
	if p.MemoryMaxAge <= 0 {
		p.MemoryMaxAge = DefaultMemoryMaxAge
	}
	h := &Handler{p: p, resources: map[resourceKey]*resource{},
		cacheControl: []string{"public, max-age=" + strconv.Itoa(int(p.MemoryMaxAge/time.Second))}}
	if p.MemoryBytes > 0 {
		h.memory = memcache.New[tileKey, *servedTile]("vector tiles", p.MemoryBytes)
	}
	return h
}

// Caches returns the handler's in-memory caches, for metrics.
func (h *Handler) Caches() []memcache.Statser {
	if h.memory == nil {
		return nil
	}
	return []memcache.Statser{h.memory}
}

// ServeHTTP routes a request by its path value "path".
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	svc, ok := h.p.Services.Service(r.PathValue("service"))
	if !ok {
		writeError(w, http.StatusNotFound, "Service not found", "service "+quoted(r.PathValue("service"))+" does not exist")
		return
	}
	path := strings.Trim(r.PathValue("path"), "/")
	parts := strings.Split(path, "/")
	switch {
	case path == "":
		h.serveRoot(w, r, svc)
	case path == "tiles.json":
		h.serveTileJSON(w, r, svc)
	case parts[0] == "tile" && len(parts) == 4:
		h.serveTile(w, r, svc, parts[1], parts[2], strings.TrimSuffix(parts[3], ".pbf"))
	case parts[0] == "tilemap" && (len(parts) == 1 || len(parts) == 4):
		h.serveTilemap(w, r, svc, parts[1:])
	case path == "resources/styles" || path == "resources/styles/root.json":
		h.serveStyle(w, r, svc)
	case len(parts) == 4 && parts[0] == "resources" && parts[1] == "fonts":
		h.serveGlyphs(w, r, parts[2], strings.TrimSuffix(parts[3], ".pbf"))
	case len(parts) == 3 && parts[0] == "resources" && parts[1] == "sprites":
		h.serveSprite(w, r, svc, parts[2])
	default:
		writeError(w, http.StatusNotFound, "Requested path was not found", "not a VectorTileServer resource: "+quoted(path))
	}
}

// serviceURL is the public URL of a service's VectorTileServer.
func (h *Handler) serviceURL(svc *catalog.Service) string {
	return h.p.PublicURL + "/arcgis/rest/services/" + url.PathEscape(svc.Name) + "/VectorTileServer"
}

// restError is ArcGIS REST's error body.
type restError struct {
	Error struct {
		Code    int      `json:"code"`
		Message string   `json:"message"`
		Details []string `json:"details"`
	} `json:"error"`
}

// writeError answers an error as ArcGIS REST does, with its HTTP status.
func writeError(w http.ResponseWriter, status int, msg string, details ...string) {
	var e restError
	e.Error.Code, e.Error.Message, e.Error.Details = status, msg, details
	if e.Error.Details == nil {
		e.Error.Details = []string{}
	}
	b, _ := json.Marshal(e) // a struct of strings and an int always encodes
	hd := w.Header()
	hd.Del("Content-Encoding")
	hd.Del("Etag")
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// failed answers an error of building or reading: nothing when the client went away, 404 for
// what does not exist, 500 with the request id otherwise (its cause goes to the log).
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, what string, err error) {
	id := r.Header.Get("X-Request-Id")
	switch {
	case r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		h.p.Logger.Info("client went away before the answer", "request_id", id, "path", r.URL.Path)
	case errors.Is(err, vectortile.ErrNotFound):
		writeError(w, http.StatusNotFound, "Not found", err.Error())
	case isLimit(err):
		h.p.Logger.Warn("vector tile server: "+what+" failed at a limit", "request_id", id, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "Unable to complete operation.", what+" failed at a limit of a tile (docs/limits.md): "+err.Error())
	default:
		h.p.Logger.Error("vector tile server: "+what+" failed", "request_id", id, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "Unable to complete operation.", what+" failed; the cause is in the server's log (request id "+id+")")
	}
}

// writeJSON answers v as JSON: compact, or indented for f=pjson.
func writeJSON(w http.ResponseWriter, r *http.Request, v any, cacheControl string) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "Unable to complete operation.", err.Error())
		return
	}
	if strings.EqualFold(r.URL.Query().Get("f"), "pjson") {
		var out bytes.Buffer
		_ = json.Indent(&out, b, "", "  ")
		b = out.Bytes()
	}
	writeOK(w, r, "application/json; charset=utf-8", cacheControl, b)
}

// writeOK answers body with 200: its Content-Type, Cache-Control and Content-Length, then the
// bytes unless r is a HEAD request.
func writeOK(w http.ResponseWriter, r *http.Request, contentType, cacheControl string, body []byte) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Cache-Control", cacheControl)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// quoted is a request's value quoted for an error message, cut to quote.MaxLen characters.
func quoted(s string) string { return strconv.Quote(quote.Clip(s, quote.MaxLen)) }
