package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// exchange is one request and the response it got.
type exchange struct {
	req  *http.Request
	resp *http.Response
	body []byte
}

// varyNames lists the field names in a response's Vary, in order.
func varyNames(h http.Header) []string {
	var names []string
	for _, v := range h.Values("Vary") {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	return names
}

// cacheMayReuse reports whether a shared cache following RFC 9111 section 4.1 may answer req
// with the response stored for stored.req (same method and target assumed): "Vary: *" never
// matches, and every field Vary names must have the same (combined) value in both requests,
// absent matching only absent.
func cacheMayReuse(stored exchange, req *http.Request) bool {
	for _, name := range varyNames(stored.resp.Header) {
		if name == "*" {
			return false
		}
		a, aok := stored.req.Header[http.CanonicalHeaderKey(name)]
		b, bok := req.Header[http.CanonicalHeaderKey(name)]
		if aok != bok || strings.Join(a, ", ") != strings.Join(b, ", ") {
			return false
		}
	}
	return true
}

// TestCORSVaryForSharedCaches sends the same requests from two allowed origins, a foreign one
// and none, over HTTP through the whole api, and checks what a shared cache would do with the
// answers: each names Origin in Vary (after the handler's own names, once each), no stored
// answer may be reused for a request from another origin, and Access-Control-Allow-Origin is
// the request's origin when that is allowed and absent otherwise.
func TestCORSVaryForSharedCaches(t *testing.T) {
	const a, b, foreign = "https://a.example.org", "https://b.example.org", "https://evil.example.com"
	srv := httptest.NewServer(legislativeServer(t, Security{CORSOrigins: []string{a, b}}, "full_dataset.json"))
	defer srv.Close()
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true}, // Accept-Encoding is the test's
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	send := func(method, target, origin string, hdr ...string) exchange {
		t.Helper()
		req := originRequest(t, method, srv.URL+target, "", origin, hdr...)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return exchange{req, resp, body}
	}
	etag := send("GET", "/api/v2/", "").resp.Header.Get("ETag")
	bigEtag := send("GET", "/api/v2/general_assembly_140/legislation/", "", "Accept-Encoding", "gzip").resp.Header.Get("ETag")
	tests := []struct {
		name, method, target string
		hdr                  []string
		status               int
		vary                 string
	}{
		{"session list", "GET", "/api/v2/", nil, 200, "Accept, Origin"},
		{"session list as a page", "GET", "/api/v2/", []string{"Accept", "text/html"}, 200, "Accept, Origin"},
		{"compressed list", "GET", "/api/v2/general_assembly_140/legislation/", []string{"Accept-Encoding", "gzip"}, 200, "Accept, Accept-Encoding, Origin"},
		{"not modified", "GET", "/api/v2/", []string{"If-None-Match", etag}, 304, "Accept, Origin"},
		{"compressed, not modified", "GET", "/api/v2/general_assembly_140/legislation/", []string{"Accept-Encoding", "gzip", "If-None-Match", bigEtag}, 304, "Accept, Accept-Encoding, Origin"},
		{"unknown session", "GET", "/api/v2/general_assembly_999/", nil, 404, "Accept, Origin"},
		{"not acceptable", "GET", "/api/v2/", []string{"Accept", "application/xml"}, 406, "Accept, Origin"},
		{"unknown method", "FOO", "/api/v2/", nil, 405, "Accept, Origin"},
		{"options", "OPTIONS", "/api/v2/", nil, 200, "Accept, Origin"},
		{"unrouted", "GET", "/api/v2/general_assembly_136/nowhere/", nil, 404, "Origin"},
		{"health", "GET", "/healthz", nil, 200, "Origin"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen []exchange
			for _, origin := range []string{a, b, foreign, ""} {
				x := send(tc.method, tc.target, origin, tc.hdr...)
				if x.resp.StatusCode != tc.status {
					t.Fatalf("from %q: status %d, want %d", origin, x.resp.StatusCode, tc.status)
				}
				if got := x.resp.Header.Values("Vary"); len(got) != 1 || got[0] != tc.vary {
					t.Errorf("from %q: Vary %q, want %q", origin, got, tc.vary)
				}
				wantACAO := origin
				if origin == foreign {
					wantACAO = ""
				}
				if got := x.resp.Header.Values("Access-Control-Allow-Origin"); wantACAO == "" && len(got) != 0 || wantACAO != "" && !slices.Equal(got, []string{wantACAO}) {
					t.Errorf("from %q: Access-Control-Allow-Origin %q, want %q", origin, got, wantACAO)
				}
				for _, prev := range seen {
					if cacheMayReuse(prev, x.req) {
						t.Errorf("a cache may serve the answer to Origin %q to Origin %q", prev.req.Header.Get("Origin"), origin)
					}
					if cacheMayReuse(x, prev.req) {
						t.Errorf("a cache may serve the answer to Origin %q to Origin %q", origin, prev.req.Header.Get("Origin"))
					}
				}
				seen = append(seen, x)
			}
			// The same request again may be served from the cache: Vary names nothing that differs.
			again := send(tc.method, tc.target, a, tc.hdr...)
			if !cacheMayReuse(seen[0], again.req) {
				t.Errorf("a repeated request cannot reuse its answer: Vary %q", seen[0].resp.Header.Values("Vary"))
			}
		})
	}

	// A preflight names Origin too.
	x := send("OPTIONS", "/api/v2/", a, "Access-Control-Request-Method", "GET")
	if x.resp.StatusCode != 204 || x.resp.Header.Get("Access-Control-Allow-Origin") != a || !slices.Equal(x.resp.Header.Values("Vary"), []string{"Origin"}) {
		t.Errorf("preflight: %d %v", x.resp.StatusCode, x.resp.Header)
	}
}

func TestAddVary(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"none", nil, []string{"Origin"}},
		{"after the handler's", []string{"Accept"}, []string{"Accept, Origin"}},
		{"two of the handler's", []string{"Accept, Accept-Encoding"}, []string{"Accept, Accept-Encoding, Origin"}},
		{"already there", []string{"Origin"}, []string{"Origin"}},
		{"already there, other case", []string{"accept, origin"}, []string{"accept, origin"}},
		{"duplicates across lines", []string{"Accept", "Origin", "accept"}, []string{"Accept, Origin"}},
		{"empty names", []string{" , Accept,,"}, []string{"Accept, Origin"}},
		{"star", []string{"Accept, *"}, []string{"*"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			shared := slices.Clone(tc.in)
			if tc.in != nil {
				h["Vary"] = shared
			}
			addVary(h, "Origin")
			if !slices.Equal(h["Vary"], tc.want) {
				t.Errorf("Vary %q, want %q", h["Vary"], tc.want)
			}
			if !slices.Equal(shared, tc.in) {
				t.Errorf("the handler's slice was edited: %q", shared)
			}
		})
	}
}
