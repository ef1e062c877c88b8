// Package api is the farm's HTTP front end (gin). It serves:
//
//	POST /arcgis/services/<service>/MapServer        SOAP 1.1 MapServer endpoint (soap.go)
//	GET  /arcgis/services/<service>/MapServer?wsdl   the WSDL, generated from the message types (soap.go)
//	GET  /arcgis/services/<service>/MapServer/WMSServer  WMS 1.1.1 and 1.3.0 (internal/wms, wms.go)
//	GET  /ogc, /ogc/<service>/…                        the OGC APIs: Features, Maps, Tiles (internal/ogcapi)
//	POST /arcgis/services, GET ?wsdl                  the SOAP Catalog of the services (soapcatalog.go)
//	GET  /arcgis/output/<id>.<ext>                    rendered images, until they expire (output.go)
//	GET  /api/v2/…                                    the legislative-data API (mounted handler)
//	GET  /healthz, /readyz                            liveness and readiness (output.go)
//	GET  /arcgis/rest/directories/arcgiscache/…        cached tiles, exploded paths, read from the store (cache.go)
//	GET/HEAD/POST /arcgis/rest/info, /arcgis/rest/services/… the ArcGIS REST API (internal/rest)
//	GET  /arcgis/rest/services/<service>/MapServer/tile/…  REST tiles and WMTS (…/WMTS…): tiles.go, internal/wmts
//	GET  /arcgis/rest/services/<service>/VectorTileServer[/…]  vector tiles, style, glyphs, sprites,
//	                                                  TileJSON (tiles.go, internal/vectortileserver)
//	POST/GET/DELETE /admin/seed[/<job>]               seeding jobs (admin.go)
//	POST /admin/expire, GET /admin/refresh            expire areas of caches, refresh backlog (admin.go)
//
// The api answers information operations itself and sends renders to the farm through the
// operations in internal/mapserver; it knows nothing of maps beyond that. SOAP runs them by name
// (mapserver.Server.Do); REST, the tiles and WMTS call the typed operations
// (mapserver.Families). SOAP and REST run under the one Admission (admission.go); tile reads,
// never heavy, do not (docs/render-lanes.md, "Tile reads").
package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/onewrite"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/soapcatalog"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/wmts"
)

// Outputs reads rendered images back for serving.
type Outputs interface {
	Open(ctx context.Context, key string) (io.ReadCloser, blob.Info, error)
	// List calls fn for the keys under prefix: an issued id asked for with another extension
	// is found stored under its own name and answered 404 without the wait (output.go).
	List(ctx context.Context, prefix string, fn func(blob.Info) error) error
}

// Params configure a Server.
type Params struct {
	PublicURL    string        // base URL clients use, no trailing slash
	MaxBodyBytes int64         // largest SOAP request body
	OutputTTL    time.Duration // how long rendered images stay reachable
	// OperationTimeout bounds every SOAP operation: queries, identify and find stop at it (their
	// scans and geometry tests check their context), renders wait no longer. 0: none.
	OperationTimeout time.Duration
	Ops              *mapserver.Server
	Codec            *soap.Codec
	// Limits bound each decoded SOAP request (vertices, ids, strings, image size and DPI); they
	// are checked before the operation runs. Zero fields mean the defaults. Unused when
	// Admission is set (it holds its own).
	Limits limits.Request
	// HeavyLane bounds how many heavy requests (large bodies, many vertices, ids or points)
	// the api answers at once (heavylane.go); zero: its defaults (1 slot). Unused when
	// Admission is set.
	HeavyLane HeavyLane
	// Admission, when set, is the request policy (admission.go) shared with the other front
	// ends (REST's rest.Params.Admit); nil: one of Limits and HeavyLane, for SOAP alone.
	Admission *Admission
	Outputs   Outputs
	// Legislative serves /api/v2/…; nil leaves it out.
	Legislative http.Handler
	// Recent holds freshly rendered images (see NewRecentOutputs); the mapserver operations
	// fill it, the output route reads it. Nil: a private, empty one.
	Recent *RecentOutputs
	// OutputIDs, when set, checks output ids before the store is asked for them: an id this farm
	// did not issue gets 404 at once (mapserver must make its output ids with OutputIDs.NewID).
	OutputIDs *OutputIDs
	// Security holds the access controls (tokens, rate limits, CORS); zero: none.
	Security Security
	// Metrics, when set, is served at /metrics and records every SOAP request.
	Metrics *metrics.Metrics
	// SeedJobs serves the admin API for seeding jobs (admin.go); nil leaves it out.
	SeedJobs SeedJobs
	// Refresh serves the admin API of cache refresh (expire, backlog; admin.go); nil leaves it
	// out.
	Refresh RefreshAdmin
	// Tiles, when set, serves the virtual cache directories (cache.go) from this store,
	// reading bundles through TileIndex (nil: a private index cache).
	Tiles     tilecache.Store
	TileIndex *tilecache.IndexCache
	// REST serves the ArcGIS REST API (internal/rest) at its rest.Routes; nil leaves it out.
	REST http.Handler
	// VectorTiles serves each service's VectorTileServer (internal/vectortileserver) at
	// /arcgis/rest/services/<service>/VectorTileServer[/<path>], reading the path values
	// "service" and "path"; nil leaves it out.
	VectorTiles http.Handler
	// WMS serves WMS 1.1.1 and 1.3.0 (internal/wms) at /arcgis/services/<service>/MapServer/
	// WMSServer, reading the path value "service"; nil leaves it out.
	WMS http.Handler
	// OGC serves the OGC APIs (internal/ogcapi) under /ogc; nil leaves them out.
	OGC http.Handler
	// Ready reports whether the dependencies (Redis, the store) answer.
	Ready  func(ctx context.Context) error
	Logger *slog.Logger
	// TileLogSample is how many tile hits (200 and 304 answers of the tile, WMTS and cache
	// directory routes) go by for one full request line of a hit; the others are counted in a
	// "tile hits" line a second (accesslog.go). 0: DefaultTileLogSample; 1: every hit has its line.
	TileLogSample int
	// StartAttrs are added to the start log line: the Redis and the store this process uses
	// ("redis", "10.0.0.5:6379 db 0", "store", "minio http://minio:9000 bucket mapfarm"), so that
	// processes on different stores show in the logs. internal/app sets them.
	StartAttrs []any
	// Catalog lists the services for the SOAP Catalog at /arcgis/services; nil leaves it out.
	Catalog soapcatalog.Services
}

// Server is the HTTP front end.
type Server struct {
	p      Params
	engine *gin.Engine
	recent *RecentOutputs
	limits *limiters  // nil: no rate limit
	lane   *heavyLane // the heavy lane of the api's Admission; nil: none
	trust  *adminTrust
	ids    *requestIDs
	// writers hold the policyWriters of requests (authenticate), reused rather than made for each.
	writers sync.Pool
	hits    *tileHits     // the tile hits of the request log (accesslog.go)
	dir     *cacheHandler // the cache directory route; nil without Tiles
}

// ForgetTiles drops what the cache directory route keeps of the tiles v names (served tiles,
// opened caches). internal/app calls it for every message of the invalidation channel, beside
// mapserver.Server.ForgetTiles and tilecache.IndexCache.InvalidateWhere.
func (s *Server) ForgetTiles(v refresh.Invalidation) {
	if s.dir != nil {
		s.dir.forget(v)
	}
}

// New builds the server and its routes.
func New(p Params) *Server {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	// Forwarded headers name the client only when a trusted proxy sent them (Security.
	// TrustedProxies, checked at config load); gin trusts every proxy unless told otherwise.
	if err := e.SetTrustedProxies(p.Security.TrustedProxies); err != nil {
		p.Logger.Error("trusted proxies refused; trusting none", "err", err)
		_ = e.SetTrustedProxies(nil)
	}
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = true
	s := &Server{p: p, engine: e, recent: p.Recent, trust: newAdminTrust(p.PublicURL, p.Security),
		ids: newRequestIDs(), hits: newTileHits(p.Logger, p.TileLogSample)}
	s.writers.New = func() any { return new(policyWriter) }
	if s.recent == nil {
		s.recent = NewRecentOutputs(DefaultRecentOutputBytes)
	}
	if p.Security.RateLimit > 0 {
		s.limits = newLimiters(p.Security.RateLimit, p.Security.RateBurst)
	}
	e.Use(newMemoryRelease(p.Logger).track, s.requestLog, s.recoverPanics, s.cors, s.authenticate, s.rateLimit) // memory.go

	var reg prometheus.Registerer
	if p.Metrics != nil {
		reg = p.Metrics.Registry
	}
	adm := p.Admission
	if adm == nil {
		adm = NewAdmission(p.Limits, p.HeavyLane, reg)
	}
	s.lane = adm.lane
	soapH := &soapHandler{p: p, adm: adm}
	e.POST("/arcgis/services/:service/MapServer", soapH.serveSOAP)
	e.GET("/arcgis/services/:service/MapServer", soapH.serveGet)
	if p.WMS != nil {
		routeWMS(e, p.WMS)
	}
	if p.OGC != nil {
		routeOGC(e, p.OGC)
	}
	if p.Catalog != nil {
		e.Match([]string{http.MethodGet, http.MethodPost}, "/arcgis/services", catalogRoute(p, soapH))
	}
	e.GET("/arcgis/output/:name", s.serveOutput)
	e.HEAD("/arcgis/output/:name", s.serveOutput)
	if p.REST != nil {
		for _, path := range rest.Routes {
			e.GET(path, gin.WrapH(p.REST))
			e.HEAD(path, gin.WrapH(p.REST)) // GET's headers; net/http drops the body
			e.POST(path, gin.WrapH(p.REST))
		}
	}
	e.GET("/healthz", s.healthz)
	if p.Metrics != nil {
		e.GET("/metrics", gin.WrapH(p.Metrics.Handler()))
	}
	e.GET("/readyz", s.readyz)
	if p.SeedJobs != nil {
		ah := &adminHandler{jobs: p.SeedJobs, metrics: p.Metrics, logger: p.Logger}
		e.POST("/admin/seed", ah.submit)
		e.GET("/admin/seed", ah.list)
		e.GET("/admin/seed/:job", ah.status)
		e.DELETE("/admin/seed/:job", ah.cancel)
	}
	if p.Refresh != nil {
		rh := &refreshHandler{admin: p.Refresh, jobs: &adminHandler{metrics: p.Metrics, logger: p.Logger}}
		e.POST("/admin/expire", rh.expire)
		e.GET("/admin/refresh", rh.pending)
	}
	if p.Tiles != nil {
		ch := newCacheHandler(p.Tiles, p.TileIndex, p.Logger)
		s.dir = ch
		p.Metrics.RegisterCaches(ch.caches, ch.tiles)
		e.GET(CachePath+"/:service/:map/:folder/*tile", ch.serveTile)
	}
	if p.Ops != nil {
		th := wmts.New(wmts.Params{Services: p.Ops, Caches: p.Ops.Families().Caches, PublicURL: p.PublicURL, Timeout: p.OperationTimeout, Logger: p.Logger})
		p.Metrics.RegisterCaches(th.TagMemory())
		routeTiles(e, th)
	}
	if p.VectorTiles != nil {
		routeVectorTiles(e, p.VectorTiles)
	}
	if p.Legislative != nil {
		h := gin.WrapH(p.Legislative)
		e.Any("/api/v2", h)
		e.Any("/api/v2/*path", h)
		// Any covers the standard methods only: gin answers others (FOO, or "get": Go keeps the
		// method's case as sent, Django upper-cases it) itself, with its plain-text 405 and an
		// Allow of every method it has a route for. Under /api/v2 the legislative handler
		// answers them instead, as DRF and Django would.
		e.NoMethod(legislativeFallback(h))
		// A path no route matches, under /api/v2 or not, answers as the DRF twin's Django does:
		// its HTML 404 page (or APPEND_SLASH's 301 for a routable URL without its slash).
		e.NoRoute(h)
	}
	return s
}

// legislativeFallback hands requests with a method gin has no route for to the legislative
// handler when their path is the legislative API's, without gin's Allow; other paths keep gin's
// 405.
func legislativeFallback(legislative gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !isJSONAPI(c.Request.URL.Path) {
			return
		}
		c.Writer.Header().Del("Allow")
		legislative(c)
	}
}

// Handler returns the HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.engine }

// Run serves until ctx is done, then finishes in-flight requests (up to 30s).
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.engine,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		// The tile routes send a tile's header and bytes in one write (internal/onewrite).
		ConnContext: onewrite.ConnContext,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(onewrite.Listener(ln)) }()
	s.p.Logger.Info("api listening", append([]any{"addr", ln.Addr().String(), "public_url", s.p.PublicURL}, s.p.StartAttrs...)...)
	// The "tile hits" line of a window goes out with the next hit after it, or at the latest
	// with this tick, and the last one when the server stops.
	tick := time.NewTicker(tileLogWindow)
	defer tick.Stop()
	defer func() { s.hits.flush(time.Now(), true) }()
wait:
	for {
		select {
		case err := <-errc:
			return fmt.Errorf("api: %w", err)
		case now := <-tick.C:
			s.hits.flush(now, false)
		case <-ctx.Done():
			break wait
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("api: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api: %w", err)
	}
	return nil
}

// NewID returns a random 128-bit hex id: request ids and output names, unguessable.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("api: crypto/rand failed: %v", err)) // the platform's CSPRNG never fails
	}
	return hex.EncodeToString(b[:])
}

// requestIDOf is the request's id, which requestLog has put in its X-Request-Id header.
func requestIDOf(c *gin.Context) string {
	if v := c.Request.Header["X-Request-Id"]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// requestLog gives each request an id (or keeps a sane X-Request-Id) and logs it when done:
// a "request" line each, but for tile hits, which are counted in a "tile hits" line a second
// and sampled (accesslog.go).
func (s *Server) requestLog(c *gin.Context) {
	req := c.Request
	ids := req.Header["X-Request-Id"]
	if len(ids) == 0 || len(ids[0]) < 8 || len(ids[0]) > 64 || !isToken(ids[0]) {
		// Handlers that read the id from the request (the REST handler, internal/rest) log and
		// pass on the one the answer carries, not a missing or refused one the client sent.
		ids = []string{s.ids.next()}
		req.Header["X-Request-Id"] = ids
	} else if len(ids) > 1 {
		ids = ids[:1:1]
		req.Header["X-Request-Id"] = ids
	}
	id := ids[0]
	// The request's and the answer's headers share the one-element slice; neither is edited
	// in place (Header.Set replaces the slice).
	c.Writer.Header()["X-Request-Id"] = ids
	start := time.Now()
	c.Next()
	now := time.Now()
	took := now.Sub(start)
	status := c.Writer.Status()
	sampled := false
	if f := routeOf(req.URL.Path).family; isTileHit(f, req.Method, status) {
		if sampled = s.hits.add(f, status, c.Writer.Size(), took, now); !sampled {
			return
		}
	}
	attrs := []slog.Attr{slog.String("request_id", id), slog.String("method", req.Method), slog.String("path", req.URL.Path),
		slog.String("client", clientOf(c)), slog.Int("status", status), slog.String("op", c.GetString("soap_op")),
		slog.String("worker", c.GetString("worker")), slog.Float64("ms", roundMs(took)), slog.String("remote", c.ClientIP())}
	if sampled {
		attrs = append(attrs, slog.Uint64("sampled", s.hits.sample))
	}
	s.p.Logger.LogAttrs(req.Context(), slog.LevelInfo, "request", attrs...)
}

// statusClientClosed is logged for a request whose client went away before the answer
// (nginx's 499): nothing is sent, and it is not a server error.
const statusClientClosed = 499

// clientGone reports whether err comes from the client closing its request: the request's
// context is cancelled (the server's own shutdown does not cancel it; see Run) and err says so.
func clientGone(c *gin.Context, err error) bool {
	return errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil
}

func isToken(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (s *Server) recoverPanics(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			s.p.Logger.Error("panic serving request", "request_id", requestIDOf(c), "panic", fmt.Sprint(r))
			c.AbortWithStatus(http.StatusInternalServerError)
		}
	}()
	c.Next()
}
