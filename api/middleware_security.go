package api

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
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

	"github.com/mapfarm/mapfarm/internal/kvp"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/ogcapi"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/token"
	"github.com/mapfarm/mapfarm/internal/wms"
)

// Security configures the api's access controls. The zero value turns them all off.
type Security struct {
	// Tokens, when set, makes the SOAP endpoints, their WSDLs, the Catalog, the REST services
	// (tiles and WMTS among them), the virtual cache directories, the JSON API and the seeding
	// admin API require a token, given ArcGIS-style as ?token=…, as "Authorization: Bearer …"
	// or in a REST form's token field (policy.go). Image URLs stay open: their names are
	// unguessable and short-lived.
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

// clientKey holds the client of a request that names itself with a credential ("token:<client>",
// "admin-token"); clientOf falls back to the address.
const clientKey = "client"

// clientOf is the client rate limits count and logs record: a token's client, else the
// address (gin's ClientIP, which believes forwarded headers only from trusted proxies).
func clientOf(c *gin.Context) string {
	if v := c.GetString(clientKey); v != "" {
		return v
	}
	return c.ClientIP()
}

// protected reports whether a path's requests carry credentials the api checks (policy.go):
// the SOAP endpoints and WSDLs, the Catalog's among them, the REST services with their tiles
// and WMTS, the virtual cache directories, the JSON API and the admin API. Health, metrics,
// /arcgis/rest/info and rendered images (unguessable, short-lived) stay open.
func protected(path string) bool { return routeOf(path).family.protectedFamily() }

func isJSONAPI(path string) bool { return routeOf(path).family == familyLegislative }

const grantKey = "grant"

// noTokenKey marks a Catalog request that came without a token while tokens are on.
const noTokenKey = "no_token"

// errTokenTwice refuses a request that gives the token parameter more than once, in any letter
// case, with different values (token=a&TOKEN=b): which one a reader takes would be a choice,
// and the same request must always get the same answer.
var errTokenTwice = errors.New("the token parameter is given more than once with different values; give it once")

// tokenParam is the value of the token parameter of v in any letter case, as ArcGIS reads its
// parameters (esri-leaflet sends token, older clients TOKEN), read by internal/kvp: given twice
// with different values it is errTokenTwice. Only the token's spellings are read here; the
// other parameters are their handler's.
func tokenParam(v url.Values) (string, error) {
	var spellings url.Values
	for k, vs := range v {
		if strings.EqualFold(k, "token") {
			if spellings == nil {
				spellings = url.Values{}
			}
			spellings[k] = vs
		}
	}
	if spellings == nil {
		return "", nil
	}
	p, err := kvp.Read(spellings)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errTokenTwice, err)
	}
	return p.Get("token"), nil
}

// bearer is the token the request carries before its body: the token parameter of the query
// string, else an Authorization header's Bearer token (the scheme in any letter case). It never
// reads the body; a REST form's token field is read by authenticate, under the body limit.
// A token parameter given twice with different values is an error (errTokenTwice).
func bearer(c *gin.Context) (string, error) {
	tok, err := tokenParam(c.Request.URL.Query())
	if tok != "" || err != nil {
		return tok, err
	}
	return bearerToken(c.GetHeader("Authorization")), nil
}

// denyTokenTwice refuses a request whose token parameter is ambiguous (errTokenTwice), 400.
func (s *Server) denyTokenTwice(c *gin.Context, err error) {
	s.p.Logger.Info("token refused", "request_id", requestIDOf(c), "reason", err.Error(), "remote", c.ClientIP())
	s.deny(c, http.StatusBadRequest, errTokenTwice.Error(), errTokenTwice.Error())
}

// authenticate applies the request policy (policy.go) to every request: it sets the answer's
// policy headers, checks the credentials of protected requests and names the client. Map
// services, their tiles and cache directories, and the JSON API need a token when tokens are
// on, and a token scoped to some services opens only those; admin routes always need an admin
// credential (see Security.AdminToken). The token is checked before any body is read: from the
// query string or the Authorization header, else (REST POSTs) from the form body, read under
// the body limit (restForm).
func (s *Server) authenticate(c *gin.Context) {
	req := c.Request
	rt := routeOf(req.URL.Path)
	signer := s.p.Security.Tokens
	gated := signer != nil && rt.family.needsToken()
	w := s.writers.Get().(*policyWriter)
	*w = policyWriter{ResponseWriter: c.Writer, hook: policyHeaders{private: gated}}
	c.Writer = w
	defer s.putWriter(c, w)
	if req.Method == http.MethodOptions {
		c.Next()
		return
	}
	if rt.family == familyAdmin {
		s.authenticateAdmin(c)
		return
	}
	restPost := rt.family.restBody() && req.Method == http.MethodPost
	if !gated {
		if !restPost || s.restForm(c) {
			c.Next()
		}
		return
	}
	tok, err := bearer(c)
	if err != nil {
		s.denyTokenTwice(c, err)
		return
	}
	if tok == "" && restPost {
		// ArcGIS clients POST long REST requests as forms, the token among the fields.
		if !s.restForm(c) {
			return
		}
		if tok, err = tokenParam(req.PostForm); err != nil {
			s.denyTokenTwice(c, err)
			return
		}
	}
	if tok == "" && rt.family == familyCatalog && req.Method == http.MethodPost {
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
		s.p.Logger.Info("token refused", "request_id", requestIDOf(c), "reason", err.Error(), "remote", c.ClientIP())
		s.deny(c, http.StatusUnauthorized, "Invalid Token", "Invalid token.")
		return
	}
	if rt.service != "" && !g.Allows(rt.service) {
		s.deny(c, http.StatusForbidden, "Token Not Valid For This Service", "You do not have permission to perform this action.")
		return
	}
	c.Set(clientKey, "token:"+g.Client)
	c.Set(grantKey, g)
	switch rt.family {
	case familyREST:
		// The REST catalog lists only the services the token opens.
		c.Request = req.WithContext(rest.WithVisible(req.Context(), g.Allows))
	case familyOGC:
		// So does /ogc, the list of the services' OGC APIs.
		c.Request = req.WithContext(ogcapi.WithVisible(req.Context(), g.Allows))
	}
	if restPost && !s.restForm(c) {
		return
	}
	c.Next()
}

// putWriter takes the request's policyWriter back for the next request once the request is
// answered, unless a handler kept it under a writer of its own, or nothing is written yet: gin
// writes its own 404 and 405 after the middleware returns, through the policyWriter.
func (s *Server) putWriter(c *gin.Context, w *policyWriter) {
	if c.Writer != w || !w.Written() {
		return
	}
	c.Writer = w.ResponseWriter // the request log reads the status and size after this
	*w = policyWriter{}
	s.writers.Put(w)
}

// authenticateAdmin lets through an admin route's request that comes from where the operator's
// tools send theirs (adminTrust: same site, not forwarded by an untrusted proxy, a known Host)
// and carries the admin token or a token of role admin. There is no anonymous access, from
// loopback either: an api with no admin token configured makes one at start (internal/app).
func (s *Server) authenticateAdmin(c *gin.Context) {
	if reason := s.trust.refusal(c.Request); reason != "" {
		s.p.Logger.Warn("admin request refused", "request_id", requestIDOf(c), "reason", reason, "remote", c.Request.RemoteAddr)
		s.deny(c, http.StatusForbidden, reason, "")
		return
	}
	sec := s.p.Security
	tok, err := bearer(c)
	if err != nil {
		s.denyTokenTwice(c, err)
		return
	}
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
			s.p.Logger.Info("admin token refused", "request_id", requestIDOf(c), "reason", err.Error(), "remote", c.ClientIP())
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

// deny answers in the protocol of the path's family (policy.go): a SOAP fault, ArcGIS's REST
// error, Django REST Framework's JSON for the legislative API, or the admin API's {"error": …}.
func (s *Server) deny(c *gin.Context, status int, soapMsg, drfMsg string) {
	switch routeOf(c.Request.URL.Path).family {
	case familyAdmin:
		c.AbortWithStatusJSON(status, gin.H{"error": soapMsg})
		return
	case familyTiles, familyDirectory:
		// Tile and WMTS clients read images, not JSON: the refusal is in the HTTP status
		// (401, 403), with ArcGIS's error body beside it.
		c.AbortWithStatusJSON(status, gin.H{"error": gin.H{"code": restCode(status, soapMsg), "message": soapMsg, "details": []string{}}})
		return
	case familyREST, familyRESTInfo:
		rest.WriteError(c.Writer, c.Request, rest.NewError(restCode(status, soapMsg), soapMsg))
		c.Abort()
		return
	case familyWMS:
		// WMS clients read a ServiceExceptionReport; the HTTP status says why.
		wms.WriteRefusal(c.Writer, c.Request, status, soapMsg)
		c.Abort()
		return
	case familyOGC:
		// OGC API clients read its JSON exception; the HTTP status says why.
		ogcapi.WriteRefusal(c.Writer, c.Request, status, soapMsg)
		c.Abort()
		return
	case familyLegislative:
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
	ok, wait := s.limits.reserve(clientOf(c), time.Now())
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
	f := routeOf(c.Request.URL.Path).family
	if f == familyAdmin {
		c.Next()
		return
	}
	origins := s.p.Security.CORSOrigins
	if len(origins) == 0 {
		anyOrigin(c, f)
		return
	}
	w := &headerWriter[varyOrigin]{ResponseWriter: c.Writer}
	c.Writer = w
	defer w.before() // for a handler that returns without writing
	origin := c.GetHeader("Origin")
	if origin == "" || !slices.Contains(origins, "*") && !slices.Contains(origins, origin) {
		c.Next()
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	expose(h, f)
	if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, SOAPAction")
		h.Set("Access-Control-Max-Age", "600")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// varyOrigin adds Origin to the response's Vary just before the header goes out, whatever the
// handlers set there (the legislative API replaces Vary with its own).
type varyOrigin struct{}

func (varyOrigin) beforeHeader(h http.Header) { addVary(h, "Origin") }

// headerWriter is a gin.ResponseWriter that lets its hook set headers just before the
// response's header goes out, over whatever the handlers set; once the header is written it
// does nothing more. H is a value type, so a writer costs no allocation beyond its own.
type headerWriter[H interface{ beforeHeader(http.Header) }] struct {
	gin.ResponseWriter
	hook H
}

func (w *headerWriter[H]) before() {
	if !w.Written() {
		w.hook.beforeHeader(w.Header())
	}
}

func (w *headerWriter[H]) WriteHeader(code int) {
	w.before()
	w.ResponseWriter.WriteHeader(code)
}

func (w *headerWriter[H]) WriteHeaderNow() {
	w.before()
	w.ResponseWriter.WriteHeaderNow()
}

func (w *headerWriter[H]) Write(b []byte) (int, error) {
	w.before()
	return w.ResponseWriter.Write(b)
}

func (w *headerWriter[H]) WriteString(s string) (int, error) {
	w.before()
	return w.ResponseWriter.WriteString(s)
}

func (w *headerWriter[H]) Flush() {
	w.before()
	w.ResponseWriter.Flush()
}

func (w *headerWriter[H]) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
