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
// (see each handler for the names); the request id is the one in the request's context
// (mapserver.WithRequestID), else its X-Request-Id.
package wmts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/onewrite"
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
	tags      *memcache.Cache[tileKey, taggedTile] // ETags of the tiles served lately
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
	return &Handler{services: p.Services, caches: p.Caches, publicURL: p.PublicURL, timeout: p.Timeout, logger: p.Logger,
		tags: memcache.New[tileKey, taggedTile]("tile etags", tagMemoryBytes)}
}

// requestID is the request's id: the one in its context (mapserver.WithRequestID), else its
// X-Request-Id header, which the farm's front end sets on every request (api/server.go).
func requestID(r *http.Request) string {
	if id := mapserver.RequestID(r.Context()); id != "" {
		return id
	}
	return r.Header.Get("X-Request-Id")
}

// call runs the typed cache operation f (a method of h.caches) for a service, bounded by the
// handler's timeout (a lazyDeadline).
func call[Req, Resp any](r *http.Request, h *Handler, svc *catalog.Service, f func(context.Context, *mapserver.Call, *Req) (*Resp, error), req Req) (*Resp, error) {
	// The operation's context, Call and request are one allocation: a tile from the
	// served-tile memory costs little more than they do.
	oc := &opCall[Req]{call: mapserver.Call{Service: svc, RequestID: requestID(r)}, req: req}
	ctx := r.Context()
	if h.timeout > 0 {
		oc.deadline.Context, oc.deadline.deadline = ctx, time.Now().Add(h.timeout)
		defer oc.deadline.stop()
		ctx = &oc.deadline
	}
	return f(ctx, &oc.call, &oc.req)
}

// opCall is what one operation call is given, kept together.
type opCall[Req any] struct {
	deadline lazyDeadline // unused without a timeout
	call     mapserver.Call
	req      Req
}

// lazyDeadline is the request's context with a deadline, as context.WithDeadline makes it, but
// whose timer (and its registration with the request's context) is only made when something
// asks for its Done channel: a tile from the served-tile memory never does, and the timer was
// a tenth of such a tile's answer. Err is right before that too: the request's error, else
// DeadlineExceeded once the deadline is past; Canceled once stop is called.
type lazyDeadline struct {
	context.Context // the request's
	deadline        time.Time

	mu      sync.Mutex
	ctx     context.Context // made by the first Done; nil before
	cancel  context.CancelFunc
	stopped bool
}

func (l *lazyDeadline) Deadline() (time.Time, bool) {
	if d, ok := l.Context.Deadline(); ok && d.Before(l.deadline) {
		return d, true
	}
	return l.deadline, true
}

func (l *lazyDeadline) Done() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx == nil {
		l.ctx, l.cancel = context.WithDeadline(l.Context, l.deadline)
		if l.stopped {
			l.cancel()
		}
	}
	return l.ctx.Done()
}

func (l *lazyDeadline) Err() error {
	l.mu.Lock()
	ctx, stopped := l.ctx, l.stopped
	l.mu.Unlock()
	switch {
	case ctx != nil:
		return ctx.Err()
	case l.Context.Err() != nil:
		return l.Context.Err()
	case !time.Now().Before(l.deadline):
		return context.DeadlineExceeded
	case stopped:
		return context.Canceled
	}
	return nil
}

// stop is the CancelFunc: it ends the context.
func (l *lazyDeadline) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.cancel != nil {
		l.cancel()
	}
}

// writeTile answers tile bytes: the content type read from the bytes (a MIXED cache holds PNG
// and JPEG tiles), a strong ETag of the content, Cache-Control, and 304 Not Modified when the
// client's If-None-Match names the ETag. Tiles are public here; the front end makes the
// answers to token-gated requests private (api/policy.go), however the token came.
func (h *Handler) writeTile(w http.ResponseWriter, r *http.Request, k tileKey, data []byte) {
	// A tile hit is the farm's commonest answer: its header values come from the tag memory,
	// made once per tile (canonical keys, so no Set; nothing edits a value slice in place).
	th := h.tileHeader(k, data)
	hd := w.Header()
	hd["Etag"] = th.etag
	hd["Cache-Control"] = tileCacheControl
	if etagMatch(r.Header["If-None-Match"], th.etag[0]) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd["Content-Type"] = th.contentType
	hd["Content-Length"] = th.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_ = onewrite.Write(w, r, data) // header and tile in one write system call
	}
}

// tileKey names a tile of a service for the tag memory: layer -1 is the fused cache.
type tileKey struct {
	service                string
	layer, level, row, col int
}

// tileHeaderValues are a tile's header values, each a slice of one element with capacity one
// (so an Add to the header copies it rather than writing into the shared array).
type tileHeaderValues struct {
	etag, contentType, length []string
}

// taggedTile is a tile's bytes with its header values.
type taggedTile struct {
	data []byte
	tileHeaderValues
}

// tagMemoryBytes bounds the tag memory by the bytes of the tiles it refers to; they are most
// often the very arrays the served-tile memory of the cache operations holds, so the memory
// costs little more than its own entries. Tiles over an eighth of it are not kept.
const tagMemoryBytes = 16 << 20

// taggedTileBytes is what an entry counts for beside its tile's bytes: its header values.
const taggedTileBytes = 160

// tileHeader returns the header values of a tile's bytes: its ETag, content type and length.
// Hashing a 20 KB tile takes longer than the rest of its answer, so the values of the tiles
// served lately are kept, by tile, with the bytes they were computed from: the same bytes (most
// often the same array, which compares at once) take the kept values; other bytes, new ones.
func (h *Handler) tileHeader(k tileKey, data []byte) tileHeaderValues {
	if e, ok := h.tags.Get(k); ok && bytes.Equal(e.data, data) {
		if len(data) > 0 && &e.data[0] != &data[0] {
			// The same bytes in another array (the served-tile memory read the tile again):
			// kept with it, so that the next answers compare the arrays, not their bytes.
			h.tags.Add(k, taggedTile{data: data, tileHeaderValues: e.tileHeaderValues}, int64(len(data)+taggedTileBytes))
		}
		return e.tileHeaderValues
	}
	v := tileHeaderValues{etag: []string{TileETag(data)}, contentType: []string{http.DetectContentType(data)},
		length: []string{strconv.Itoa(len(data))}}
	if len(data) <= tagMemoryBytes/8 {
		h.tags.Add(k, taggedTile{data: data, tileHeaderValues: v}, int64(len(data)+taggedTileBytes))
	}
	return v
}

// TileETag is the strong ETag of tile bytes as the tile routes send it: the first 32 hex digits
// of their SHA-256, quoted. It changes only when the bytes do, so a re-rendered tile whose
// bytes did not change keeps its ETag. The api's cache directory route sends it too.
func TileETag(data []byte) string {
	sum := sha256.Sum256(data)
	var buf [etagLen]byte
	buf[0] = '"'
	hex.Encode(buf[1:etagLen-1], sum[:16])
	buf[etagLen-1] = '"'
	return string(buf[:])
}

// ETagMatches reports whether If-None-Match header values name etag, or are "*" (the weak
// comparison RFC 9110 prescribes for If-None-Match).
func ETagMatches(values []string, etag string) bool { return etagMatch(values, etag) }

// TagMemory is the tag memory's cache, for metrics.
func (h *Handler) TagMemory() memcache.Statser { return h.tags }

// etagLen is the length of a tile's ETag: 32 hex digits of its SHA-256, quoted.
const etagLen = 34

// tileCacheControl is the Cache-Control of every tile, shared: its capacity of one makes an Add
// copy it, and nothing writes an element of a header's slice in place.
var tileCacheControl = []string{"public, max-age=3600"}

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
