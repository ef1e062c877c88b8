package api

import (
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/ogcapi"
	"github.com/mapfarm/mapfarm/internal/rest"
)

// The request policy of every front end, in one place: which family of routes a path is in,
// whether the family needs a token while tokens are on, which map service a path names (a token
// scoped to services opens only those), how a REST body may be read, and what the answer's
// headers must say (X-Content-Type-Options: nosniff everywhere, no framing of HTML pages,
// Cache-Control private on token-gated content, whichever way the token came). authenticate
// (middleware_security.go) applies it to every request before any handler runs; the handlers of
// internal/rest, internal/wmts and cache.go set their own headers and never see a token.

// family is a class of routes the policy treats alike.
type family uint8

const (
	familyOpen        family = iota // health, readiness, metrics, unknown paths
	familyRESTInfo                  // /arcgis/rest/info: REST, open so that clients learn that tokens are needed
	familySOAP                      // /arcgis/services/<service>/MapServer: the endpoint and its WSDL
	familyWMS                       // /arcgis/services/<service>/MapServer/WMSServer: WMS (images, capabilities, XML)
	familyCatalog                   // /arcgis/services: the SOAP Catalog
	familyREST                      // /arcgis/rest/services…: JSON, HTML pages, attachments, the viewer
	familyTiles                     // …/MapServer/tile/…, …/MapServer/WMTS…, …/VectorTileServer/tile/…, fonts and sprites
	familyDirectory                 // /arcgis/rest/directories/arcgiscache/<service>/…: cached tiles
	familyOutput                    // /arcgis/output/<id>.<ext>: rendered images, unguessable and short-lived
	familyLegislative               // /api/v2/…
	familyAdmin                     // /admin/…: always an admin credential (authenticateAdmin)
	familyOGC                       // /ogc/<service>/…: the OGC APIs (JSON, HTML, GeoJSON, images)
)

// route is what the policy reads from a request's path.
type route struct {
	family  family
	service string // the map service the path names, "" for none
}

// routeOf classifies a path.
func routeOf(path string) route {
	switch {
	case path == "/arcgis/services":
		return route{family: familyCatalog}
	case strings.HasPrefix(path, "/arcgis/services/"):
		r := route{family: familySOAP, service: firstSegment(path, "/arcgis/services/")}
		if strings.HasSuffix(path, "/MapServer/WMSServer") {
			r.family = familyWMS
		}
		return r
	case path == "/arcgis/rest/info":
		return route{family: familyRESTInfo}
	case path == "/arcgis/rest/services":
		return route{family: familyREST}
	case strings.HasPrefix(path, "/arcgis/rest/services/"):
		r := route{family: familyREST, service: firstSegment(path, "/arcgis/rest/services/")}
		if strings.Contains(path, "/MapServer/tile/") || strings.Contains(path, "/MapServer/WMTS") || vectorTileResource(path) {
			r.family = familyTiles
		}
		return r
	case path == CachePath || strings.HasPrefix(path, CachePath+"/"):
		// The service segment is checked as the route reads it (cache.go): gin's path is
		// the decoded one, and so is this.
		return route{family: familyDirectory, service: firstSegment(path, CachePath+"/")}
	case strings.HasPrefix(path, "/arcgis/output/"):
		return route{family: familyOutput}
	case path == "/api/v2" || strings.HasPrefix(path, "/api/v2/"):
		return route{family: familyLegislative}
	case path == "/admin" || strings.HasPrefix(path, "/admin/"):
		return route{family: familyAdmin}
	case path == ogcapi.Prefix || strings.HasPrefix(path, ogcapi.Prefix+"/"):
		return route{family: familyOGC, service: firstSegment(path, ogcapi.Prefix+"/")}
	}
	return route{family: familyOpen}
}

// vectorTileResource reports whether a path is a VectorTileServer's tile, glyph range or
// sprite: binary resources answered as tiles are (its JSON documents are REST's).
func vectorTileResource(path string) bool {
	_, rest, ok := strings.Cut(path, "/VectorTileServer/")
	return ok && (strings.HasPrefix(rest, "tile/") || strings.HasPrefix(rest, "resources/fonts/") || strings.HasPrefix(rest, "resources/sprites/"))
}

// firstSegment is the path segment after prefix ("" when there is none).
func firstSegment(path, prefix string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, prefix), "/")
	return seg
}

// needsToken reports whether the family's requests need a token while tokens are on. Admin
// routes need an admin credential whether tokens are on or not (authenticateAdmin); rendered
// images, health, metrics and /arcgis/rest/info (where clients learn that tokens are needed)
// stay open.
func (f family) needsToken() bool {
	switch f {
	case familySOAP, familyWMS, familyCatalog, familyREST, familyTiles, familyDirectory, familyLegislative, familyOGC:
		return true
	}
	return false
}

// protectedFamily reports whether the family's requests carry credentials the api checks (and
// so count against the rate limit).
func (f family) protectedFamily() bool { return f.needsToken() || f == familyAdmin }

// bearerToken is the token an Authorization header carries: the Bearer scheme in any letter
// case (RFC 9110 §11.1), "" for none or another scheme.
func bearerToken(h string) string {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// restBody reports whether the family's POST bodies are REST forms (restForm).
func (f family) restBody() bool { return f == familyREST || f == familyRESTInfo }

// restForm reads a REST POST's form body under the body limit (Params.MaxBodyBytes, the limit
// of SOAP bodies), so that the token among its fields can be checked and the REST handler finds
// the form parsed (http.Request.ParseForm then reads nothing more). A body over the limit is
// refused with 413 (a declared length at once; a chunked one once the limit is read), a
// multipart body with 415 without reading it: no REST resource here takes an upload, and
// multipart forms are not spooled to disk. Bodies of other types are not read. It reports
// whether the request may go on; if not, it has answered.
func (s *Server) restForm(c *gin.Context) bool {
	r := c.Request
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody || r.PostForm != nil {
		return true
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if strings.HasPrefix(ct, "multipart/") {
		s.refuseBody(c, http.StatusUnsupportedMediaType, "multipart bodies are not accepted: POST the parameters as application/x-www-form-urlencoded")
		return false
	}
	max := s.p.MaxBodyBytes
	if max <= 0 {
		return true
	}
	if r.ContentLength > max {
		s.refuseBody(c, http.StatusRequestEntityTooLarge, tooLargeMsg(max))
		return false
	}
	r.Body = http.MaxBytesReader(c.Writer, r.Body, max)
	if ct != "application/x-www-form-urlencoded" {
		return true // not read here, nor by the REST handler; the server discards it
	}
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.refuseBody(c, http.StatusRequestEntityTooLarge, tooLargeMsg(max))
			return false
		}
		s.refuseBody(c, http.StatusBadRequest, "the form body could not be read: "+err.Error())
		return false
	}
	return true
}

func tooLargeMsg(max int64) string {
	return limits.Refuse(limits.BodyBytes, "request body is larger than the limit of %d bytes (%s)", max, limits.BodyBytes).Error()
}

// refuseBody answers a REST request whose body is refused, with the HTTP status as the code
// (rest.WriteError answers 413 and 415 with their status whatever f asks, as it does 429).
func (s *Server) refuseBody(c *gin.Context, status int, msg string) {
	if status == http.StatusRequestEntityTooLarge {
		s.p.Metrics.Refused(limits.Refuse(limits.BodyBytes, "%s", msg))
	}
	rest.WriteError(c.Writer, c.Request, rest.NewError(status, msg))
	c.Abort()
}

// policyHeaders are the policy's headers, set just before the response's header goes out, over
// whatever the handler set: X-Content-Type-Options: nosniff on every answer; on HTML, no
// framing by other sites (X-Frame-Options DENY, and frame-ancestors 'none' added to the page's
// Content-Security-Policy); and, when private is set (token-gated content), a Cache-Control
// that shared caches may not keep (privateCacheControl).
type policyHeaders struct {
	private bool
}

// policyWriter is the writer of a request's answer under the policy (authenticate).
type policyWriter = headerWriter[policyHeaders]

func (p policyHeaders) beforeHeader(h http.Header) {
	// The hook runs again at each write until gin sends the header (gin's WriteHeader only
	// records the status), so the value is set only when missing or changed: assigning even an
	// existing key of a full small map (8 headers, a cached tile's) grows it to a table.
	if v := h["X-Content-Type-Options"]; len(v) != 1 || v[0] != nosniff[0] {
		h["X-Content-Type-Options"] = nosniff
	}
	// Header.Get canonicalises the name it is given; this one is canonical already.
	if ct := h["Content-Type"]; len(ct) > 0 && isHTML(ct[0]) {
		h.Set("X-Frame-Options", "DENY")
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors") {
			if csp != "" {
				csp += "; "
			}
			h.Set("Content-Security-Policy", csp+"frame-ancestors 'none'")
		}
	}
	if p.private {
		h.Set("Cache-Control", privateCacheControl(h.Get("Cache-Control")))
	}
}

// nosniff is the value of X-Content-Type-Options, shared by every answer: its capacity of one
// makes an Add copy it, and nothing writes an element of a header's slice in place.
var nosniff = []string{"nosniff"}

// isHTML reports whether a Content-Type is text/html, parameters aside (as mime.ParseMediaType
// reads it, without its allocations on every answer).
func isHTML(ct string) bool {
	ct = strings.TrimLeft(ct, " \t")
	const html = "text/html"
	if len(ct) < len(html) || !strings.EqualFold(ct[:len(html)], html) {
		return false
	}
	rest := strings.TrimLeft(ct[len(html):], " \t")
	return rest == "" || rest[0] == ';'
}

// privateCacheControl turns a Cache-Control into one for token-gated content: "public" becomes
// "private" and shared-cache directives (s-maxage, proxy-revalidate) go, other directives
// (max-age, no-cache, no-store) stay; none at all is "private".
func privateCacheControl(cc string) string {
	out := []string{"private"}
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(d)
		name, _, _ := strings.Cut(d, "=")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "", "public", "private", "s-maxage", "proxy-revalidate":
			continue
		case "no-store":
			return d // kept by no one: private adds nothing
		}
		out = append(out, d)
	}
	return strings.Join(out, ", ")
}
