// Package wmts serves the tiles of the farm's caches over HTTP GET: the ArcGIS REST tile
// resource (…/MapServer/tile/{level}/{row}/{col}) and OGC WMTS 1.0.0 (GetCapabilities and
// GetTile, in KVP and RESTful encodings, as ArcGIS Server 10.7 publishes them under
// …/MapServer/WMTS).
//
// It is a codec only: every tile and every tiling scheme comes from the cache operations of
// internal/mapserver (GetMapTile, GetLayerTile, GetCacheDescriptionInfo), called as typed
// methods of the caches family (mapserver.Families().Caches), the very functions SOAP's name
// table dispatches to, so the REST, WMTS and SOAP answers cannot differ. The operations are not
// run through the api's Admission: a tile read is never heavy and has no input the request
// limits measure (docs/render-lanes.md, "Tile reads"). The handlers are
// net/http handlers; the router names the path parameters with (*http.Request).SetPathValue
// (see each handler for the names) and puts the request id in the context (mapserver.WithRequestID).
package wmts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// Services finds the service a URL names; *mapserver.Server implements it.
type Services interface {
	Service(name string) (*catalog.Service, bool)
}

// Caches are the typed cache operations the handlers call; the caches family of the map
// server (mapserver.Families().Caches) implements it.
type Caches interface {
	GetMapTile(ctx context.Context, c *mapserver.Call, req *gisxml.GetMapTile) (*gisxml.GetMapTileResponse, error)
	GetLayerTile(ctx context.Context, c *mapserver.Call, req *gisxml.GetLayerTile) (*gisxml.GetLayerTileResponse, error)
	GetCacheDescriptionInfo(ctx context.Context, c *mapserver.Call, req *gisxml.GetCacheDescriptionInfo) (*gisxml.GetCacheDescriptionInfoResponse, error)
}

// Handler serves the REST tile resource and WMTS of every service.
type Handler struct {
	services  Services
	caches    Caches
	publicURL string
	timeout   time.Duration
	logger    *slog.Logger
	cache     contentsCache
}

// Params configure a Handler.
type Params struct {
	Services Services
	Caches   Caches
	// PublicURL is the base URL clients use, no trailing slash; the capabilities name their
	// resource URLs under it.
	PublicURL string
	// Timeout bounds each operation (0: none).
	Timeout time.Duration
	Logger  *slog.Logger
}

// New returns a Handler.
func New(p Params) *Handler {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	return &Handler{services: p.Services, caches: p.Caches, publicURL: p.PublicURL, timeout: p.Timeout, logger: p.Logger}
}

// call runs the typed cache operation f (a method of h.caches) for a service, bounded by the
// handler's timeout.
func call[Req, Resp any](ctx context.Context, h *Handler, svc *catalog.Service, f func(context.Context, *mapserver.Call, *Req) (*Resp, error), req *Req) (*Resp, error) {
	if h.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.timeout)
		defer cancel()
	}
	return f(ctx, &mapserver.Call{Service: svc, RequestID: mapserver.RequestID(ctx)}, req)
}

// writeTile answers tile bytes: the content type read from the bytes (a MIXED cache holds PNG
// and JPEG tiles), a strong ETag of the content, Cache-Control, and 304 Not Modified when the
// client's If-None-Match names the ETag. Tiles are public here; the front end makes the
// answers to token-gated requests private (api/policy.go), however the token came.
func writeTile(w http.ResponseWriter, r *http.Request, data []byte) {
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", "public, max-age=3600")
	if etagMatch(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", http.DetectContentType(data))
	hd.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

// etagMatch reports whether If-None-Match header values name etag (weak comparison, as RFC
// 9110 prescribes for If-None-Match), or are "*".
func etagMatch(values []string, etag string) bool {
	for _, v := range values {
		for len(v) > 0 {
			v = trimSpaceComma(v)
			if v == "" {
				break
			}
			if v[0] == '*' {
				return true
			}
			tag := v
			if len(tag) > 2 && tag[:2] == "W/" {
				tag = tag[2:]
			}
			if tag == "" || tag[0] != '"' {
				break
			}
			end := 1
			for end < len(tag) && tag[end] != '"' {
				end++
			}
			if end == len(tag) {
				break
			}
			if tag[:end+1] == etag {
				return true
			}
			v = tag[end+1:]
		}
	}
	return false
}

func trimSpaceComma(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == ',') {
		s = s[1:]
	}
	return s
}

// clientGone reports whether err comes from the client hanging up (or the operation timing
// out because of it), which is no server failure.
func clientGone(r *http.Request, err error) bool {
	return r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
