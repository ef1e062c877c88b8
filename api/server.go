// Package api is the farm's HTTP front end (gin). It serves:
//
//	POST /arcgis/services/<service>/MapServer        SOAP 1.1 MapServer endpoint (soap.go)
//	GET  /arcgis/services/<service>/MapServer?wsdl   the WSDL, generated from the message types (soap.go)
//	POST /arcgis/services, GET ?wsdl                  the SOAP Catalog of the services (soapcatalog.go)
//	GET  /arcgis/output/<id>.<ext>                    rendered images, until they expire (output.go)
//	GET  /api/v2/…                                    the legislative-data API (mounted handler)
//	GET  /healthz, /readyz                            liveness and readiness (health.go)
//	GET  /arcgis/rest/directories/arcgiscache/…        cached tiles, exploded paths (cache.go)
//	GET/POST /arcgis/rest/info, /arcgis/rest/services/… the ArcGIS REST API (internal/rest)
//	GET  /arcgis/rest/services/<service>/MapServer/tile/…  REST tiles and WMTS (…/WMTS…): tiles.go, internal/wmts
//	POST/GET/DELETE /admin/seed[/<job>]               seeding jobs (admin.go)
//
// The api answers information operations itself and sends renders to the farm through the
// operations in internal/mapserver; it knows nothing of maps beyond that.
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
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/soapcatalog"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/wmts"
)

// Outputs reads rendered images back for serving.
type Outputs interface {
	Open(ctx context.Context, key string) (io.ReadCloser, blob.Info, error)
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
	// are checked before the operation runs. Zero fields mean the defaults.
	Limits limits.Request
	// HeavyLane bounds how many heavy requests (large bodies, many vertices, ids or points)
	// the api answers at once (heavylane.go); zero: its defaults (1 slot).
	HeavyLane HeavyLane
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
	// Tiles, when set, serves the virtual cache directories (cache.go) from this store,
	// reading bundles through TileIndex (nil: a private index cache).
	Tiles     tilecache.Store
	TileIndex *tilecache.IndexCache
	// REST serves the ArcGIS REST API (internal/rest) at its rest.Routes; nil leaves it out.
	REST http.Handler
	// Ready reports whether the dependencies (Redis, the store) answer.
	Ready  func(ctx context.Context) error
	Logger *slog.Logger
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
	lane   *heavyLane // the SOAP endpoint's heavy lane; nil: none
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
	s := &Server{p: p, engine: e, recent: p.Recent}
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
	s.lane = newHeavyLane(p.HeavyLane, reg)
	soapH := &soapHandler{p: p, lane: s.lane}
	e.POST("/arcgis/services/:service/MapServer", soapH.serveSOAP)
	e.GET("/arcgis/services/:service/MapServer", soapH.serveGet)
	if p.Catalog != nil {
		e.Match([]string{http.MethodGet, http.MethodPost}, "/arcgis/services", catalogRoute(p, soapH))
	}
	e.GET("/arcgis/output/:name", s.serveOutput)
	e.HEAD("/arcgis/output/:name", s.serveOutput)
	if p.REST != nil {
		for _, path := range rest.Routes {
			e.GET(path, gin.WrapH(p.REST))
			e.POST(path, gin.WrapH(p.REST))
		}
	}
	e.GET("/healthz", s.healthz)
	if p.Metrics != nil {
		e.GET("/metrics", gin.WrapH(p.Metrics.Handler()))
	}
	e.GET("/readyz", s.readyz)
	if p.SeedJobs != nil {
		ah := &adminHandler{jobs: p.SeedJobs, metrics: p.Metrics}
		e.POST("/admin/seed", ah.submit)
		e.GET("/admin/seed", ah.list)
		e.GET("/admin/seed/:job", ah.status)
		e.DELETE("/admin/seed/:job", ah.cancel)
	}
	if p.Tiles != nil {
		ch := &cacheHandler{store: p.Tiles, index: p.TileIndex, logger: p.Logger, caches: memcache.New[string, openCache]("opened caches", openCachesBytes)}
		p.Metrics.RegisterCaches(ch.caches)
		e.GET(CachePath+"/:service/:map/:folder/*tile", ch.serveTile)
	}
	if p.Ops != nil {
		routeTiles(e, wmts.New(wmts.Params{Ops: p.Ops, PublicURL: p.PublicURL, Timeout: p.OperationTimeout, Logger: p.Logger}))
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
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	s.p.Logger.Info("api listening", append([]any{"addr", ln.Addr().String(), "public_url", s.p.PublicURL}, s.p.StartAttrs...)...)
	select {
	case err := <-errc:
		return fmt.Errorf("api: %w", err)
	case <-ctx.Done():
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

const requestIDKey = "request_id"

// requestLog gives each request an id (or keeps a sane X-Request-Id) and logs it when done.
func (s *Server) requestLog(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if len(id) < 8 || len(id) > 64 || !isToken(id) {
		id = NewID()
	}
	c.Set(requestIDKey, id)
	c.Header("X-Request-Id", id)
	start := time.Now()
	c.Next()
	s.p.Logger.Info("request", "request_id", id, "method", c.Request.Method, "path", c.Request.URL.Path, "client", c.GetString(clientKey),
		"status", c.Writer.Status(), "op", c.GetString("soap_op"), "worker", c.GetString("worker"), "ms", float64(time.Since(start).Microseconds())/1000,
		"remote", c.ClientIP())
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
			s.p.Logger.Error("panic serving request", "request_id", c.GetString(requestIDKey), "panic", fmt.Sprint(r))
			c.AbortWithStatus(http.StatusInternalServerError)
		}
	}()
	c.Next()
}
