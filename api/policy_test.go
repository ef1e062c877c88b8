package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/ogcapi"
	"github.com/mapfarm/mapfarm/internal/token"
	"github.com/mapfarm/mapfarm/internal/wms"
)

// policyBodyLimit is the body limit of policyServer, small so that tests can pass it.
const policyBodyLimit = 64 << 10

// policyServer is the api with every read route of a map service: SOAP, REST (JSON, HTML,
// attachments), REST tiles and WMTS, WMS, and the virtual cache directory of the world map, whose
// cache holds one tile (returned too). Bodies are limited to policyBodyLimit.
func policyServer(t *testing.T, sec Security) (http.Handler, []byte) {
	t.Helper()
	store, tile := worldTileStore(t)
	logger := slog.New(slog.DiscardHandler)
	h := sampleAPI(t, func(p *sampleParams) {
		p.Ops.Logger, p.Ops.Tiles = logger, store
		p.API.MaxBodyBytes, p.API.PublicURL, p.API.Tiles, p.API.Logger, p.API.Security = policyBodyLimit, "http://farm.test", store, logger, sec
		p.WMS = &wms.Params{PublicURL: "http://farm.test", Logger: logger}
		p.OGC = &ogcapi.Params{PublicURL: "http://farm.test", Logger: logger}
		p.REST.Logger = logger
	})
	return h, tile
}

// routeCase is one request of a read route's policy test and what it must answer.
type routeCase struct {
	name    string
	h       http.Handler
	target  string
	header  string // Authorization
	status  int
	private bool
}

// routePolicy is the api twice, with tokens on and off, and the requests by which a read route
// shows that it follows the request policy of the services.
type routePolicy struct {
	tokens, open http.Handler // policyServer with tokens on, and off
	tile         []byte       // the tile the world map's cache holds
	usa          string       // a token scoped to the usa service
	// cases: on tokens, no token or usa's is refused with 401 or 403, and the world's token, as
	// a parameter or a bearer header, opens target, private; on open, target is public.
	cases []routeCase
}

// newRoutePolicy builds the routePolicy of target; sep joins a parameter to target.
func newRoutePolicy(t *testing.T, target, sep string) routePolicy {
	t.Helper()
	signer := testSigner(t)
	world := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	usa := issue(t, signer, token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"usa"}})
	h, tile := policyServer(t, Security{Tokens: signer})
	open, _ := policyServer(t, Security{})
	return routePolicy{tokens: h, open: open, tile: tile, usa: usa, cases: []routeCase{
		{"no token", h, target, "", 401, false},
		{"another service's token", h, target + sep + "token=" + usa, "", 403, false},
		{"token parameter", h, target + sep + "token=" + world, "", 200, true},
		{"bearer", h, target, "Bearer " + world, 200, true},
		{"tokens off", open, target, "", 200, false},
	}}
}

// serveGet answers a GET of target by h, with auth as its Authorization header when not empty.
func serveGet(h http.Handler, target, auth string) (*httptest.ResponseRecorder, []byte) {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec, b
}

// checkReadHeaders fails t when the answer rec to c is not private as c says, lacks nosniff, or
// does not let any origin read it (as every read route does).
func checkReadHeaders(t *testing.T, c routeCase, rec *httptest.ResponseRecorder) {
	t.Helper()
	cc := rec.Header().Get("Cache-Control")
	if c.private != strings.HasPrefix(cc, "private") || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: Cache-Control %q, nosniff %q", c.name, cc, rec.Header().Get("X-Content-Type-Options"))
	}
	if rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%s: Access-Control-Allow-Origin %q", c.name, rec.Header().Get("Access-Control-Allow-Origin"))
	}
}

const directoryTile = CachePath + "/world/Layers/_alllayers/L00/R00000000/C00000000.png"

// The virtual cache directory checks tokens and their scopes as the tile route does (issue
// 25, 1): without a token, with a forged one or one scoped to another service it answers no
// tile; with the world's token, as a parameter or a bearer header in any letter case, the tile,
// private. Without tokens configured it stays public.
func TestDirectoryRouteNeedsTokens(t *testing.T) {
	signer := testSigner(t)
	world := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	usa := issue(t, signer, token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"usa"}})
	h, tile := policyServer(t, Security{Tokens: signer})
	for _, c := range []struct {
		name, path string
		header     []string
		status     int
		code       int // the ArcGIS error code of a refusal
	}{
		{"no token", directoryTile, nil, 401, 499},
		{"forged token", directoryTile + "?token=" + url.QueryEscape(forge(world)), nil, 401, 498},
		{"token of another service", directoryTile + "?token=" + url.QueryEscape(usa), nil, 403, 403},
		{"bearer of another service", directoryTile, []string{"Authorization", "Bearer " + usa}, 403, 403},
		{"token parameter", directoryTile + "?token=" + url.QueryEscape(world), nil, 200, 0},
		{"bearer header", directoryTile, []string{"Authorization", "Bearer " + world}, 200, 0},
		{"lower-case bearer", directoryTile, []string{"Authorization", "bearer " + world}, 200, 0},
		{"upper-case bearer", directoryTile, []string{"Authorization", "BEARER " + world}, 200, 0},
	} {
		resp, body := tileGet(h, c.path, c.header...)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s %.200q; want HTTP %d", c.name, resp.Status, body, c.status)
			continue
		}
		if c.status != 200 {
			if code := tileErrorCode(t, body); code != c.code {
				t.Errorf("%s: error code %d, want %d", c.name, code, c.code)
			}
			if bytes.Equal(body, tile) {
				t.Errorf("%s: the tile was served", c.name)
			}
			continue
		}
		if !bytes.Equal(body, tile) || resp.Header.Get("Cache-Control") != "private, max-age=3600" {
			t.Errorf("%s: %d bytes, Cache-Control %q; want the tile, private, max-age=3600", c.name, len(body), resp.Header.Get("Cache-Control"))
		}
	}

	open, tile := policyServer(t, Security{})
	resp, body := tileGet(open, directoryTile)
	if resp.StatusCode != 200 || !bytes.Equal(body, tile) || resp.Header.Get("Cache-Control") != "public, max-age=3600" {
		t.Errorf("tokens off: %s, Cache-Control %q, %d bytes; want the tile, public", resp.Status, resp.Header.Get("Cache-Control"), len(body))
	}
}

// bodyProbe is a request body that counts the bytes read from it; its length is unknown
// (chunked), and it has n bytes of filler after head.
type bodyProbe struct {
	head []byte
	n    int
	read int
}

func (b *bodyProbe) Read(p []byte) (int, error) {
	if b.read >= len(b.head)+b.n {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && b.read < len(b.head)+b.n {
		if b.read < len(b.head) {
			p[k] = b.head[b.read]
		} else {
			p[k] = 'a'
		}
		k++
		b.read++
	}
	return k, nil
}

// A REST POST's token is checked before its body is read, REST bodies are limited as SOAP
// bodies are (413), and a multipart body is refused unread (415): nothing is spooled to disk
// (issue 25, 4). A form within the limit still carries its token among the fields.
func TestRESTBodyAfterToken(t *testing.T) {
	signer := testSigner(t)
	good := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	h, _ := policyServer(t, Security{Tokens: signer})
	const query = "/arcgis/rest/services/world/MapServer/1/query"
	form := "where=1%3D1&returnCountOnly=true&f=json&filler="
	multipart := "multipart/form-data; boundary=xyz"
	for _, c := range []struct {
		name, target, contentType string
		header                    []string
		head                      string
		filler                    int
		declared                  bool // Content-Length set, else chunked
		status, code              int  // HTTP status and ArcGIS code (0: a count)
		maxRead                   int  // most body bytes the api may read
	}{
		{"invalid token parameter, 200 MB multipart", query + "?f=json&token=bad", multipart, nil, "--xyz\r\n", 200 << 20, false, 200, 498, 0},
		{"invalid bearer, 200 MB form", query + "?f=json", "application/x-www-form-urlencoded", []string{"Authorization", "Bearer bad"}, form, 200 << 20, false, 200, 498, 0},
		{"valid token, multipart", query + "?token=" + url.QueryEscape(good), multipart, nil, "--xyz\r\n", 1 << 20, false, 415, 415, 0},
		{"no token, multipart", query, multipart, nil, "--xyz\r\n", 1 << 20, false, 415, 415, 0},
		{"valid token, 200 MB chunked form", query + "?token=" + url.QueryEscape(good), "application/x-www-form-urlencoded", nil, form, 200 << 20, false, 413, 413, policyBodyLimit + 64<<10},
		{"token only in a 200 MB chunked form", query, "application/x-www-form-urlencoded", nil, form, 200 << 20, false, 413, 413, policyBodyLimit + 64<<10},
		{"valid token, declared length over the limit", query + "?token=" + url.QueryEscape(good), "application/x-www-form-urlencoded", nil, form, 1 << 20, true, 413, 413, 0},
		{"token field in a small form", query, "application/x-www-form-urlencoded", nil, form + "&token=" + url.QueryEscape(good), 0, false, 200, 0, 1 << 20},
		{"token parameter, small form", query + "?token=" + url.QueryEscape(good), "application/x-www-form-urlencoded", nil, form, 100, true, 200, 0, 1 << 20},
		{"open info, 200 MB chunked form", "/arcgis/rest/info", "application/x-www-form-urlencoded", nil, "f=json&filler=", 200 << 20, false, 413, 413, policyBodyLimit + 64<<10},
		{"open info, multipart", "/arcgis/rest/info?f=json", multipart, nil, "--xyz\r\n", 1 << 20, false, 415, 415, 0},
	} {
		probe := &bodyProbe{head: []byte(c.head), n: c.filler}
		req := httptest.NewRequest(http.MethodPost, c.target, probe)
		req.ContentLength = -1
		if c.declared {
			req.ContentLength = int64(len(c.head) + c.filler)
		}
		req.Header.Set("Content-Type", c.contentType)
		for i := 0; i+1 < len(c.header); i += 2 {
			req.Header.Set(c.header[i], c.header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Errorf("%s: HTTP %d, not JSON: %.200s", c.name, rec.Code, rec.Body)
			continue
		}
		if rec.Code != c.status || errorCode(v) != c.code || (c.code == 0 && v["count"] == nil) {
			t.Errorf("%s: HTTP %d %.300v; want HTTP %d, code %d", c.name, rec.Code, v, c.status, c.code)
		}
		if probe.read > c.maxRead {
			t.Errorf("%s: the api read %d bytes of the body, more than %d", c.name, probe.read, c.maxRead)
		}
	}
}

// The REST catalog lists only the services the caller's token opens, in JSON and on its HTML
// page, as the SOAP Catalog does (issue 25, 6).
func TestRESTCatalogScoped(t *testing.T) {
	signer := testSigner(t)
	all := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	usa := issue(t, signer, token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"usa"}})
	h, _ := policyServer(t, Security{Tokens: signer})
	names := func(tok string) []string {
		_, v := restGet(t, h, "/arcgis/rest/services?f=json", "Authorization", "Bearer "+tok)
		var out []string
		for _, s := range v["services"].([]any) {
			out = append(out, s.(map[string]any)["name"].(string))
		}
		return out
	}
	everything := names(all)
	if len(everything) < 2 || !slices.Contains(everything, "usa") {
		t.Fatalf("unscoped token: services %v, want all the samples", everything)
	}
	if got := names(usa); !slices.Equal(got, []string{"usa"}) {
		t.Errorf("token scoped to usa: services %v, want [usa]", got)
	}
	resp, page := tileGet(h, "/arcgis/rest/services?token="+url.QueryEscape(usa))
	links := regexp.MustCompile(`href="/arcgis/rest/services/([^/"?]+)/MapServer`).FindAllStringSubmatch(string(page), -1)
	if resp.StatusCode != 200 || len(links) == 0 {
		t.Fatalf("HTML catalog: %s %.300s", resp.Status, page)
	}
	for _, l := range links {
		if l[1] != "usa" {
			t.Errorf("HTML catalog for a usa token links %s", l[0])
		}
	}
}

// Token-gated content is private to shared caches whichever way the token came, tiles,
// capabilities, JSON, HTML and attachments alike; every answer says nosniff, and HTML pages may
// not be framed (issue 25, 7 and the smaller items).
func TestTokenGatedAnswersArePrivate(t *testing.T) {
	signer := testSigner(t)
	tok := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	h, _ := policyServer(t, Security{Tokens: signer})
	paths := []string{
		"/arcgis/rest/services/world/MapServer/tile/0/0/0",
		"/arcgis/rest/services/world/MapServer/WMTS/1.0.0/WMTSCapabilities.xml",
		"/arcgis/rest/services/world/MapServer/WMTS?SERVICE=WMTS&REQUEST=GetCapabilities",
		"/arcgis/rest/services/world/MapServer?f=json",
		"/arcgis/rest/services?f=json",
		"/arcgis/rest/services/world/MapServer?f=html",
		"/arcgis/rest/services/world/MapServer/viewer",
		"/arcgis/rest/services/usa/MapServer/3/1/attachments?f=json",
		directoryTile,
	}
	for _, p := range paths {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		for _, way := range []struct {
			name   string
			target string
			header []string
		}{
			{"token parameter", p + sep + "token=" + url.QueryEscape(tok), nil},
			{"bearer header", p, []string{"Authorization", "Bearer " + tok}},
		} {
			resp, body := tileGet(h, way.target, way.header...)
			cc := resp.Header.Get("Cache-Control")
			if resp.StatusCode != 200 || !strings.HasPrefix(cc, "private") || strings.Contains(cc, "public") {
				t.Errorf("%s, %s: %s, Cache-Control %q (%.100q); want 200, private", p, way.name, resp.Status, cc, body)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s, %s: X-Content-Type-Options %q", p, way.name, resp.Header.Get("X-Content-Type-Options"))
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") &&
				(resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")) {
				t.Errorf("%s, %s: an HTML page that may be framed: X-Frame-Options %q, Content-Security-Policy %q", p, way.name,
					resp.Header.Get("X-Frame-Options"), resp.Header.Get("Content-Security-Policy"))
			}
		}
	}
	// Refusals and open routes say nosniff too.
	for _, p := range []string{"/arcgis/rest/services?f=json", directoryTile, "/healthz", "/arcgis/rest/info?f=json"} {
		if resp, _ := tileGet(h, p); resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %s without X-Content-Type-Options: nosniff", p, resp.Status)
		}
	}
}

// The Bearer scheme is case-insensitive (RFC 9110 §11.1) on every route that takes tokens.
func TestBearerSchemeAnyCase(t *testing.T) {
	signer := testSigner(t)
	tok := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	h, _ := policyServer(t, Security{Tokens: signer})
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		resp, v := restGet(t, h, "/arcgis/rest/services/world/MapServer?f=json", "Authorization", scheme+" "+tok)
		if resp.StatusCode != 200 || errorCode(v) != 0 {
			t.Errorf("REST with %q: HTTP %d %v", scheme, resp.StatusCode, v)
		}
		if resp, body := tileGet(h, "/arcgis/rest/services/world/MapServer/tile/0/0/0", "Authorization", scheme+" "+tok); resp.StatusCode != 200 {
			t.Errorf("tile with %q: %s %.200s", scheme, resp.Status, body)
		}
	}
	if _, v := restGet(t, h, "/arcgis/rest/services/world/MapServer?f=json", "Authorization", "Basic "+tok); errorCode(v) != 499 {
		t.Errorf("Basic scheme: %v; want 499 Token Required", v)
	}
}

// The policy's header hook runs at each write until gin sends the header. On a cached tile's
// answer it finds eight headers, a full small map: assigning even a key it already holds grows
// such a map to a table (three allocations, and a slower clone and sort when net/http writes
// it). The hook sets nosniff once, and a second run leaves the map as it is.
func TestPolicyHookKeepsATilesHeaderSmall(t *testing.T) {
	tileHeader := func() http.Header {
		h := make(http.Header)
		for _, k := range []string{"X-Request-Id", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Etag", "Cache-Control", "Content-Type", "Content-Length"} {
			h[k] = []string{"v"}
		}
		return h
	}
	var p policyHeaders
	once := testing.AllocsPerRun(200, func() { p.beforeHeader(tileHeader()) })
	twice := testing.AllocsPerRun(200, func() {
		h := tileHeader()
		p.beforeHeader(h)
		p.beforeHeader(h)
	})
	if twice != once {
		t.Errorf("the hook run twice costs %.0f allocations, once %.0f: the second run grew the header's map", twice, once)
	}
	h := tileHeader()
	h["X-Content-Type-Options"] = []string{"sniff-away"}
	p.beforeHeader(h)
	if got := h.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
		t.Errorf("a handler's X-Content-Type-Options %q stayed; the policy sets nosniff over it", got)
	}
}
