package api

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/legislative"
	"github.com/mapfarm/mapfarm/internal/token"
)

// djangoNotFound is Django's own 404 page (django/views/defaults.py), as the DRF probe recorded it.
const djangoNotFound = "\n<!doctype html>\n<html lang=\"en\">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n"

// legislativeServer is the api serving the legislative API alone, with the dataset in the
// legislative package's testdata/name (the built-in one when name is empty).
func legislativeServer(t *testing.T, sec Security, name string) http.Handler {
	t.Helper()
	noon := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	leg := legislative.New(legislative.Options{Now: func() time.Time { return noon }})
	if name != "" {
		data, err := os.ReadFile("../internal/legislative/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := leg.LoadJSON(data); err != nil {
			t.Fatal(err)
		}
	}
	return New(Params{Legislative: leg, Security: sec}).Handler()
}

// TestLegislativeMethodsAndPathsGinDoesNotRoute: requests gin has no route for (a method outside
// the standard ones, a path outside every pattern) answer under /api/v2 as DRF and Django do, and
// elsewhere as gin does. Every header is compared but the api's own X-Request-Id.
func TestLegislativeMethodsAndPathsGinDoesNotRoute(t *testing.T) {
	h := legislativeServer(t, Security{}, "")
	drf405 := func(method string) want {
		body := `{"detail":"Method \"` + method + `\" not allowed."}`
		return want{405, http.Header{"Content-Type": {"application/json"}, "Vary": {"Accept"}, "Allow": {"GET, HEAD, OPTIONS"},
			"Content-Length": {strconv.Itoa(len(body))}}, body}
	}
	html404 := want{404, http.Header{"Content-Type": {"text/html"}, "Content-Length": {"179"}}, djangoNotFound}
	tests := []struct {
		name, method, target string
		hdr                  []string
		want                 want
	}{
		{"unknown method on the root", "FOO", "/api/v2/", nil, drf405("FOO")},
		{"unknown method on a sub-collection", "PROPFIND", "/api/v2/general_assembly_136/committees/", nil, drf405("PROPFIND")},
		{"lower-case unknown method", "purge", "/api/v2/general_assembly_136/", nil, drf405("PURGE")},
		{"unknown method on an unknown session", "FOO", "/api/v2/general_assembly_999/", nil, drf405("FOO")},
		{"standard method still 405", "POST", "/api/v2/", nil, drf405("POST")},
		{"unknown format before 405", "FOO", "/api/v2/?format=xml", nil, want{404,
			http.Header{"Content-Type": {"application/json"}, "Vary": {"Accept"}, "Allow": {"GET, HEAD, OPTIONS"}, "Content-Length": {"23"}},
			`{"detail":"Not found."}`}},
		{"406 before 405", "FOO", "/api/v2/", []string{"Accept", "application/xml"}, want{406,
			http.Header{"Content-Type": {"application/json"}, "Vary": {"Accept"}, "Allow": {"GET, HEAD, OPTIONS"}, "Content-Length": {"57"}},
			`{"detail":"Could not satisfy the request Accept header."}`}},
		{"unknown method, missing slash", "FOO", "/api/v2/general_assembly_136?format=json", nil, want{301,
			http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Location": {"/api/v2/general_assembly_136/?format=json"}, "Content-Length": {"0"}}, ""}},
		{"unknown method, mount without slash", "FOO", "/api/v2", nil, want{301,
			http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Location": {"/api/v2/"}, "Content-Length": {"0"}}, ""}},
		{"unknown method, unrouted path", "FOO", "/api/v2/general_assembly_136/no_such_collection/", nil, html404},
		{"unrouted path", "GET", "/api/v2/general_assembly_136/no_such_collection/", nil, html404},
		{"unrouted path, HEAD", "HEAD", "/api/v2/general_assembly_136/nowhere", nil, want{404, html404.hdr, ""}},
		{"SOAP path keeps gin's 405", "FOO", "/arcgis/services/world/MapServer", nil, want{405,
			http.Header{"Content-Type": {"text/plain"}, "Allow": {"POST, GET"}}, "405 method not allowed"}},
		{"lower-case GET elsewhere keeps gin's 405", "get", "/healthz", nil, want{405,
			http.Header{"Content-Type": {"text/plain"}, "Allow": {"GET"}}, "405 method not allowed"}},
		{"other paths: Django's 404 too", "GET", "/nowhere", nil, html404},
		{"next to the prefix is not under it", "GET", "/api/v2x", nil, html404},
		{"an unrouted SOAP path", "GET", "/arcgis/services/world/MapServer/nothing", nil, html404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Add(tc.hdr[i], tc.hdr[i+1])
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			tc.want.onReadRoute(req.URL.Path).check(t, rec.Code, rec.Header(), rec.Body.String())
		})
	}
}

// TestLegislativeMethodInAnyCase: Django upper-cases the method, so the legislative API answers
// "get" as GET (the DRF twin: 200, not 405), through the whole api and on every kind of answer.
func TestLegislativeMethodInAnyCase(t *testing.T) {
	h := legislativeServer(t, Security{}, "")
	serve := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		rec.Header().Del("X-Request-Id")
		return rec
	}
	for _, tc := range []struct{ method, target string }{
		{"get", "/api/v2/"},
		{"Get", "/api/v2/general_assembly_136/"},
		{"get", "/api/v2/general_assembly_136/committees/?format=api"},
		{"head", "/api/v2/"},
		{"options", "/api/v2/general_assembly_136/"},
		{"get", "/api/v2/general_assembly_999/"},
		{"get", "/api/v2/general_assembly_136"},
	} {
		upper := strings.ToUpper(tc.method)
		want, got := serve(upper, tc.target), serve(tc.method, tc.target)
		if got.Code != want.Code || !maps.EqualFunc(got.Header(), want.Header(), slices.Equal) || got.Body.String() != want.Body.String() && !strings.Contains(tc.target, "format=api") {
			t.Errorf("%s %s: %d %v %.80q, want as %s: %d %v %.80q", tc.method, tc.target, got.Code, got.Header(), got.Body.String(),
				upper, want.Code, want.Header(), want.Body.String())
		}
		if want.Code == http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d", upper, tc.target, want.Code)
		}
	}
}

// TestLegislativeUnknownMethodNeedsToken: with tokens on, an unknown method is refused like any
// other, in DRF's form and without gin's list of methods.
func TestLegislativeUnknownMethodNeedsToken(t *testing.T) {
	signer, err := token.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	h := legislativeServer(t, Security{Tokens: signer}, "")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("FOO", "/api/v2/", nil))
	body := `{"detail":"Authentication credentials were not provided."}`
	want{401, http.Header{"Content-Type": {"application/json"}, "Vary": {"Accept"}, "Www-Authenticate": {`Bearer realm="api"`}, "Cache-Control": {"private"},
		"Content-Length": {strconv.Itoa(len(body))}}, body}.onReadRoute("/api/v2/").
		check(t, rec.Code, rec.Header(), rec.Body.String())

	tok, err := signer.Issue("tester", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest("FOO", "/api/v2/", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	h.ServeHTTP(rec, req)
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
		t.Errorf("with a token: %d %v", rec.Code, rec.Header())
	}
}

type want struct {
	status int
	hdr    http.Header
	body   string
}

// onReadRoute is w with the header every answer of a read-only route carries beside DRF's own
// (cors_default.go): Access-Control-Allow-Origin "*".
func (w want) onReadRoute(path string) want {
	if _, ok := readOnlyRoute(routeOf(path).family); ok {
		w.hdr = w.hdr.Clone()
		w.hdr.Set("Access-Control-Allow-Origin", "*")
		if routeOf(path).family != familyLegislative {
			w.hdr.Set("Access-Control-Expose-Headers", "X-Tile-Thinned, X-Request-Id")
		}
	}
	return w
}

// check compares a response with w: status, every header (but X-Request-Id and the request
// policy's headers on every answer, policyAdds), body.
func (w want) check(t *testing.T, status int, hdr http.Header, body string) {
	t.Helper()
	if status != w.status {
		t.Errorf("status %d, want %d", status, w.status)
	}
	got := hdr.Clone()
	if got.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	got.Del("X-Request-Id")
	for k, v := range policyAdds(got.Get("Content-Type")) {
		if _, wanted := w.hdr[k]; wanted {
			continue
		}
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: %q, want the request policy's %q", k, got[k], v)
		}
		got.Del(k)
	}
	for k, v := range w.hdr {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := w.hdr[k]; !ok {
			t.Errorf("extra header %s: %q", k, v)
		}
	}
	if body != w.body {
		t.Errorf("body %q, want %q", body, w.body)
	}
}

// policyAdds are the headers the request policy (policy.go) adds to every answer of content
// type ct: nosniff, and no framing of HTML.
func policyAdds(ct string) http.Header {
	h := http.Header{"X-Content-Type-Options": {"nosniff"}}
	if strings.HasPrefix(ct, "text/html") {
		h["X-Frame-Options"] = []string{"DENY"}
		h["Content-Security-Policy"] = []string{"frame-ancestors 'none'"}
	}
	return h
}
