package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/legislative"
	"github.com/mapfarm/mapfarm/internal/seed"
)

// fullServer is the api with every route: SOAP, the REST API and its tiles, a stored output,
// the legislative API and the admin routes (admin token adminToken), behind a real listener.
// It returns the server's URL and the output's path.
func fullServer(t *testing.T, sec Security) (base, output string) {
	t.Helper()
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const name = "0123456789abcdef0123456789abcdef.png"
	if err := store.Put(context.Background(), OutputPrefix+name, []byte("\x89PNG\r\n\x1a\n"), "image/png"); err != nil {
		t.Fatal(err)
	}
	sec.AdminToken = adminToken
	srv := httptest.NewServer(sampleAPI(t, func(p *sampleParams) {
		p.API.MaxBodyBytes, p.API.Security, p.API.Outputs, p.API.Legislative = 1<<20, sec, store, legislative.New(legislative.Options{})
		p.API.SeedJobs, p.API.Logger = &fakeJobs{jobs: map[string]seed.Status{"j1": {ID: "j1"}}}, slog.New(slog.DiscardHandler)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, "/arcgis/output/" + name
}

// originRequest is a request from a page of origin (none when "") with the headers hdr (name,
// value pairs).
func originRequest(t *testing.T, method, url, body, origin string, hdr ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// corsRequest sends a request from a page of origin (none when "") and returns the answer.
func corsRequest(t *testing.T, method, url, body, origin string, hdr ...string) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(originRequest(t, method, url, body, origin, hdr...))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestCORSDefault: with no origins configured, a web app on any origin can use the read-only
// routes — REST, tiles, WMTS, rendered images, the legislative API and SOAP POSTs — as a browser
// does (preflight, then the request), answered "Access-Control-Allow-Origin: *" without
// credentials, with an Origin or without (so a shared cache may hand the answer to anyone). The
// admin routes answer no origin, to a preflight either, and health and metrics name none.
func TestCORSDefault(t *testing.T) {
	base, output := fullServer(t, Security{})
	const app = "https://app.example.com"
	soapBody := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + testNS + `"><soap:Body><gis:GetMapCount/></soap:Body></soap:Envelope>`
	reads := []struct {
		name, method, path, body, contentType string
		status                                int
	}{
		{"REST service", "GET", "/arcgis/rest/services/world/MapServer?f=json", "", "", 200},
		{"REST services directory", "GET", "/arcgis/rest/services?f=json", "", "", 200},
		{"REST query as a form POST", "POST", "/arcgis/rest/services/world/MapServer/1/query", "where=1%3D1&returnCountOnly=true&f=json", "application/x-www-form-urlencoded", 200},
		{"WMTS capabilities", "GET", "/arcgis/rest/services/world/MapServer/WMTS/1.0.0/WMTSCapabilities.xml", "", "", 0},
		{"REST tile", "GET", "/arcgis/rest/services/world/MapServer/tile/0/0/0", "", "", 0},
		{"rendered image", "GET", output, "", "", 200},
		{"legislative API", "GET", "/api/v2/", "", "", 200},
		{"SOAP POST", "POST", "/arcgis/services/world/MapServer", soapBody, "text/xml; charset=utf-8", 200},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			pre := corsRequest(t, "OPTIONS", base+r.path, "", app, "Access-Control-Request-Method", r.method, "Access-Control-Request-Headers", "content-type")
			if pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), r.method) ||
				!strings.Contains(strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers")), "content-type") {
				t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
			}
			for _, origin := range []string{app, "https://other.example.org", ""} {
				resp := corsRequest(t, r.method, base+r.path, r.body, origin, "Content-Type", r.contentType)
				if r.status != 0 && resp.StatusCode != r.status {
					t.Errorf("from %q: HTTP %d, want %d", origin, resp.StatusCode, r.status)
				}
				if got := resp.Header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != "*" {
					t.Errorf("from %q: Access-Control-Allow-Origin %q, want *", origin, got)
				}
				if resp.Header.Get("Access-Control-Allow-Credentials") != "" {
					t.Errorf("from %q: credentials allowed", origin)
				}
				// A script may read a vector tile's X-Tile-Thinned and the request id.
				if got := strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers")); !strings.Contains(got, "x-tile-thinned") || !strings.Contains(got, "x-request-id") {
					t.Errorf("from %q: Access-Control-Expose-Headers %q", origin, got)
				}
			}
		})
	}

	for _, r := range []struct{ method, path string }{{"POST", "/admin/seed"}, {"GET", "/admin/seed"}, {"GET", "/admin/seed/j1"}, {"DELETE", "/admin/seed/j1"},
		{"GET", "/healthz"}} {
		pre := corsRequest(t, "OPTIONS", base+r.path, "", app, "Access-Control-Request-Method", r.method, "Access-Control-Request-Headers", "authorization, content-type")
		resp := corsRequest(t, r.method, base+r.path, "", app, "Authorization", "Bearer "+adminToken)
		for _, x := range []*http.Response{pre, resp} {
			for _, h := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Allow-Credentials"} {
				if v := x.Header.Values(h); len(v) != 0 {
					t.Errorf("%s %s (%s): %s %q", x.Request.Method, r.path, r.method, h, v)
				}
			}
		}
	}
}

// TestCORSNarrowed: MAPFARM_CORS_ORIGINS narrows the read routes to its origins; the admin
// routes still answer none of them.
func TestCORSNarrowed(t *testing.T) {
	const app, other = "https://app.example.com", "https://other.example.org"
	base, output := fullServer(t, Security{CORSOrigins: []string{app}})
	for _, path := range []string{"/arcgis/rest/services/world/MapServer?f=json", output, "/api/v2/"} {
		resp := corsRequest(t, "GET", base+path, "", app)
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != app {
			t.Errorf("GET %s from %s: Access-Control-Allow-Origin %q", path, app, got)
		}
		if got := resp.Header.Get("Access-Control-Expose-Headers"); !strings.Contains(got, "X-Tile-Thinned") {
			t.Errorf("GET %s from %s: Access-Control-Expose-Headers %q", path, app, got)
		}
		if got := corsRequest(t, "GET", base+path, "", other).Header.Values("Access-Control-Allow-Origin"); len(got) != 0 {
			t.Errorf("GET %s from %s: Access-Control-Allow-Origin %q, want none", path, other, got)
		}
	}
	pre := corsRequest(t, "OPTIONS", base+"/admin/seed", "", app, "Access-Control-Request-Method", "POST")
	resp := corsRequest(t, "GET", base+"/admin/seed", "", app, "Authorization", "Bearer "+adminToken)
	if pre.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("admin answered %s: preflight %d %v, request %d %v", app, pre.StatusCode, pre.Header, resp.StatusCode, resp.Header)
	}
}
