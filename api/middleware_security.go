package api

import (
	"bytes"
	"crypto/subtle"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/token"
)

// Security configures the api's access controls. The zero value turns them all off.
type Security struct {
	// Tokens, when set, makes the SOAP endpoints, their WSDLs, the JSON API and the seeding
	// admin API require a token, given ArcGIS-style as ?token=… or as "Authorization: Bearer
	// …". Image URLs stay open: their names are unguessable and short-lived.
	Tokens *token.Signer
	// AdminToken, when not empty, is a bearer credential for the admin routes (config
	// Security.AdminToken, or the one internal/app makes at start). Admin routes are never
	// anonymous: they take AdminToken, or a token of role admin from Tokens; with neither they
	// refuse every request.
	AdminToken string
	// AdminHosts are the Host names the admin routes answer for besides the public URL's host
	// and the loopback names and addresses (admin_trust.go).
	AdminHosts []string
	// RateLimit is the sustained requests per second allowed to one client (its token's
	// client name, else its address), with bursts of RateBurst. Zero: no limit.
	RateLimit float64
	RateBurst int
	// CORSOrigins lists the browser origins allowed to call the read-only routes ("*" for
	// any). Empty: any origin, answered with "Access-Control-Allow-Origin: *" on the
	// read-only routes (cors_default.go). The admin routes never answer another origin.
	CORSOrigins []string
	// TrustedProxies are the addresses or CIDR ranges of the proxies (load balancers) whose
	// X-Forwarded-For and X-Real-IP name the client. Empty (the default): none, the client is the
	// peer address, so no client picks the address rate limits count and logs record.
	TrustedProxies []string
}

const clientKey = "client"

// protected reports whether a path needs a token: the SOAP endpoints and WSDLs, the Catalog's
// among them, the JSON API and the seeding admin API. Health, metrics, rendered images
// (unguessable, short-lived) and cached tiles stay open.
func protected(path string) bool {
	return path == "/arcgis/services" || strings.HasPrefix(path, "/arcgis/services/") || isREST(path) || path == "/api/v2" || strings.HasPrefix(path, "/api/v2/") ||
		path == "/admin" || strings.HasPrefix(path, "/admin/")
}

// isREST reports whether a path is the ArcGIS REST API's services (its catalog and map
// services; /arcgis/rest/info stays open, as ArcGIS's does, so clients can find the token URL).
func isREST(path string) bool {
	return path == "/arcgis/rest/services" || strings.HasPrefix(path, "/arcgis/rest/services/")
}

// isTileRoute reports whether a REST path is a map service's tiles or WMTS (api/tiles.go).
func isTileRoute(path string) bool {
	return strings.Contains(path, "/MapServer/tile/") || strings.Contains(path, "/MapServer/WMTS")
}

func isJSONAPI(path string) bool { return path == "/api/v2" || strings.HasPrefix(path, "/api/v2/") }

const grantKey = "grant"

// noTokenKey marks a Catalog request that came without a token while tokens are on.
const noTokenKey = "no_token"

func isAdmin(path string) bool { return path == "/admin" || strings.HasPrefix(path, "/admin/") }

// paramFold is the first value of the parameter named name in any letter case: ArcGIS reads
// its parameters so (esri-leaflet sends token, older clients TOKEN).
func paramFold(v url.Values, name string) string {
	if s := v.Get(name); s != "" {
		return s
	}
	for k, vs := range v {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// bearer is the request's token: the token parameter or an Authorization bearer.
func bearer(c *gin.Context) string {
	tok := paramFold(c.Request.URL.Query(), "token")
	if tok == "" && c.Request.Method == http.MethodPost && isREST(c.Request.URL.Path) {
		// ArcGIS clients POST long REST requests as forms, the token among the fields.
		// ParseForm reads at most 10 MiB of a form; the REST handler uses the parsed form.
		if err := c.Request.ParseForm(); err == nil {
			tok = paramFold(c.Request.PostForm, "token")
		}
	}
	if h := c.GetHeader("Authorization"); tok == "" && strings.HasPrefix(h, "Bearer ") {
		tok = strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	return tok
}

// authenticate checks the credentials of protected requests and names the client. Map
// services and the JSON API need a token when tokens are on; admin routes always need an admin
// credential (see Security.AdminToken); a token scoped to some services opens only those.
func (s *Server) authenticate(c *gin.Context) {
	c.Set(clientKey, c.ClientIP())
	path := c.Request.URL.Path
	if c.Request.Method == http.MethodOptions || !protected(path) {
		c.Next()
		return
	}
	if isAdmin(path) {
		s.authenticateAdmin(c)
		return
	}
	signer := s.p.Security.Tokens
	if signer == nil {
		c.Next()
		return
	}
	tok := bearer(c)
	if tok == "" && path == "/arcgis/services" && c.Request.Method == http.MethodPost {
		// The Catalog answers RequiresTokens and GetTokenServiceURL without a token, as
		// ArcGIS does, and refuses the rest itself (it reads the operation): catalogRoute.
		c.Set(noTokenKey, true)
		c.Next()
		return
	}
	if tok == "" {
		s.deny(c, http.StatusUnauthorized, "Token Required", "Authentication credentials were not provided.")
		return
	}
	g, err := signer.CheckGrant(tok, time.Now())
	if err != nil {
		s.p.Logger.Info("token refused", "request_id", c.GetString(requestIDKey), "reason", err.Error(), "remote", c.ClientIP())
		s.deny(c, http.StatusUnauthorized, "Invalid Token", "Invalid token.")
		return
	}
	if svc := serviceOf(path); svc != "" && !g.Allows(svc) {
		s.deny(c, http.StatusForbidden, "Token Not Valid For This Service", "You do not have permission to perform this action.")
		return
	}
	c.Set(clientKey, "token:"+g.Client)
	c.Set(grantKey, g)
	c.Next()
}

// authenticateAdmin lets through an admin route's request that comes from where the operator's
// tools send theirs (adminTrust: same site, not forwarded by an untrusted proxy, a known Host)
// and carries the admin token or a token of role admin. There is no anonymous access, from
// loopback either: an api with no admin token configured makes one at start (internal/app).
func (s *Server) authenticateAdmin(c *gin.Context) {
	if reason := s.trust.refusal(c.Request); reason != "" {
		s.p.Logger.Warn("admin request refused", "request_id", c.GetString(requestIDKey), "reason", reason, "remote", c.Request.RemoteAddr)
		s.deny(c, http.StatusForbidden, reason, "")
		return
	}
	sec := s.p.Security
	tok := bearer(c)
	switch {
	case tok == "":
		s.deny(c, http.StatusUnauthorized, "the admin routes need an admin credential: Authorization: Bearer <token>", "")
		return
	case sec.AdminToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(sec.AdminToken)) == 1:
		c.Set(clientKey, "admin-token")
		c.Next()
		return
	case sec.Tokens != nil:
		g, err := sec.Tokens.CheckGrant(tok, time.Now())
		if err != nil {
			s.p.Logger.Info("admin token refused", "request_id", c.GetString(requestIDKey), "reason", err.Error(), "remote", c.ClientIP())
			s.deny(c, http.StatusUnauthorized, "Invalid Token", "")
			return
		}
		if !g.Admin() {
			s.deny(c, http.StatusForbidden, "this token's role is read; the admin routes need role admin", "")
			return
		}
		c.Set(clientKey, "token:"+g.Client)
		c.Set(grantKey, g)
		c.Next()
		return
	}
	s.deny(c, http.StatusUnauthorized, "Invalid Token", "")
}

// serviceOf is the map service a SOAP or REST path names (/arcgis/services/<service>/MapServer…,
// /arcgis/rest/services/<service>/MapServer…), or "".
func serviceOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/arcgis/services/")
	if !ok {
		if rest, ok = strings.CutPrefix(path, "/arcgis/rest/services/"); !ok {
			return ""
		}
	}
	svc, _, _ := strings.Cut(rest, "/")
	return svc
}

// deny answers in the protocol of the path: a SOAP fault, Django REST Framework's JSON for the
// legislative API, or the admin API's {"error": …}.
func (s *Server) deny(c *gin.Context, status int, soapMsg, drfMsg string) {
	if p := c.Request.URL.Path; p == "/admin" || strings.HasPrefix(p, "/admin/") {
		c.AbortWithStatusJSON(status, gin.H{"error": soapMsg})
		return
	}
	if isREST(c.Request.URL.Path) {
		e := rest.NewError(restCode(status, soapMsg), soapMsg)
		if isTileRoute(c.Request.URL.Path) {
			// Tile and WMTS clients read images, not JSON: the refusal is in the HTTP status
			// (401, 403), with ArcGIS's error body beside it.
			c.AbortWithStatusJSON(status, gin.H{"error": gin.H{"code": e.Code, "message": e.Message, "details": []string{}}})
			return
		}
		rest.WriteError(c.Writer, c.Request, e)
		c.Abort()
		return
	}
	if isJSONAPI(c.Request.URL.Path) {
		if status == http.StatusUnauthorized {
			c.Header("WWW-Authenticate", `Bearer realm="api"`)
		}
		c.Header("Vary", "Accept")
		c.Writer.Header().Del("Allow") // gin's, for a method it has no route for
		c.Data(status, "application/json", []byte(`{"detail":"`+drfMsg+`"}`))
		c.Abort()
		return
	}
	var buf bytes.Buffer
	s.p.Codec.WriteFault(&buf, soap.ClientFault("%s", soapMsg))
	c.Data(status, "text/xml; charset=utf-8", buf.Bytes())
	c.Abort()
}

// restCode is the code ArcGIS puts in a REST error for a refused request: 499 Token Required,
// 498 Invalid Token, 403 for a service the token does not open, 429 over the rate limit.
func restCode(status int, msg string) int {
	switch {
	case msg == "Token Required":
		return 499
	case msg == "Invalid Token":
		return 498
	}
	return status
}

// limiters holds one token bucket per client, forgetting clients idle for ten minutes.
type limiters struct {
	mu      sync.Mutex
	limit   rate.Limit
	burst   int
	clients map[string]*clientLimiter
	swept   time.Time
}

type clientLimiter struct {
	l    *rate.Limiter
	seen time.Time
}

// maxClients bounds the memory the limiter may use; past it the idlest clients go first.
const maxClients = 100_000

func newLimiters(perSecond float64, burst int) *limiters {
	if burst <= 0 {
		burst = int(math.Max(1, math.Ceil(perSecond)))
	}
	return &limiters{limit: rate.Limit(perSecond), burst: burst, clients: map[string]*clientLimiter{}}
}

// reserve takes one request's token for client, or says how long to wait for it.
func (l *limiters) reserve(client string, now time.Time) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute || len(l.clients) >= maxClients {
		for k, c := range l.clients {
			if now.Sub(c.seen) > 10*time.Minute || len(l.clients) >= maxClients {
				delete(l.clients, k)
			}
		}
		l.swept = now
	}
	c, found := l.clients[client]
	if !found {
		c = &clientLimiter{l: rate.NewLimiter(l.limit, l.burst)}
		l.clients[client] = c
	}
	c.seen = now
	r := c.l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// rateLimit refuses a client's requests beyond its rate with 429 and Retry-After.
func (s *Server) rateLimit(c *gin.Context) {
	if s.limits == nil || !protected(c.Request.URL.Path) {
		c.Next()
		return
	}
	ok, wait := s.limits.reserve(c.GetString(clientKey), time.Now())
	if ok {
		c.Next()
		return
	}
	secs := int(math.Ceil(wait.Seconds()))
	s.p.Metrics.Refused(&limits.Error{Limit: limits.RateLimit, Msg: "rate limit exceeded"})
	c.Header("Retry-After", strconv.Itoa(secs))
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	s.deny(c, http.StatusTooManyRequests, "Rate limit exceeded: try again in "+strconv.Itoa(secs)+" s",
		"Request was throttled. Expected available in "+strconv.Itoa(secs)+" "+unit+".")
}

// cors answers browsers. The admin routes never answer another origin. With no origins
// configured, the read-only routes answer any (anyOrigin). With origins configured, only
// those: every response then names Origin in Vary (even one without
// Access-Control-Allow-Origin), merged after what the handler puts there, so a shared cache
// never hands one origin's answer to another.
func (s *Server) cors(c *gin.Context) {
	if isAdmin(c.Request.URL.Path) {
		c.Next()
		return
	}
	origins := s.p.Security.CORSOrigins
	if len(origins) == 0 {
		anyOrigin(c)
		return
	}
	w := &varyOriginWriter{ResponseWriter: c.Writer}
	c.Writer = w
	defer w.addOrigin() // for a handler that returns without writing
	origin := c.GetHeader("Origin")
	if origin == "" || !slices.Contains(origins, "*") && !slices.Contains(origins, origin) {
		c.Next()
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, SOAPAction")
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// varyOriginWriter adds Origin to the response's Vary just before the header goes out,
// whatever the handlers set there (the legislative API replaces Vary with its own).
type varyOriginWriter struct {
	gin.ResponseWriter
}

func (w *varyOriginWriter) addOrigin() {
	if !w.Written() {
		addVary(w.Header(), "Origin")
	}
}

func (w *varyOriginWriter) WriteHeader(code int) {
	w.addOrigin()
	w.ResponseWriter.WriteHeader(code)
}

func (w *varyOriginWriter) WriteHeaderNow() {
	w.addOrigin()
	w.ResponseWriter.WriteHeaderNow()
}

func (w *varyOriginWriter) Write(b []byte) (int, error) {
	w.addOrigin()
	return w.ResponseWriter.Write(b)
}

func (w *varyOriginWriter) WriteString(s string) (int, error) {
	w.addOrigin()
	return w.ResponseWriter.WriteString(s)
}

func (w *varyOriginWriter) Flush() {
	w.addOrigin()
	w.ResponseWriter.Flush()
}

func (w *varyOriginWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// addVary adds name to h's Vary as Django's patch_vary_headers does: the names already there
// keep their order, each once (compared without case), name comes last unless present, and
// "*" stands alone. It replaces the header's slice rather than editing it, since handlers may
// share theirs between responses.
func addVary(h http.Header, name string) {
	vals := h.Values("Vary")
	if len(vals) == 1 && !strings.Contains(vals[0], ",") && strings.EqualFold(strings.TrimSpace(vals[0]), name) {
		return // the common "Vary: Origin"; nothing to tidy
	}
	var names []string
	for _, v := range vals {
		for _, n := range strings.Split(v, ",") {
			n = strings.TrimSpace(n)
			if n == "*" {
				h["Vary"] = []string{"*"}
				return
			}
			if n != "" && !slices.ContainsFunc(names, func(m string) bool { return strings.EqualFold(m, n) }) {
				names = append(names, n)
			}
		}
	}
	if !slices.ContainsFunc(names, func(m string) bool { return strings.EqualFold(m, name) }) {
		names = append(names, name)
	}
	h["Vary"] = []string{strings.Join(names, ", ")}
}
