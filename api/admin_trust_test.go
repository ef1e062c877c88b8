package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// adminRequest is an admin request as cachetool on the api's machine sends it: to
// 127.0.0.1:8080 from a loopback port, its body (if any) application/json, no Origin.
func adminRequest(method, path, body string) *http.Request {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8080"
	req.RemoteAddr = "127.0.0.1:50000"
	if body != "" || method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// TestAdminTrust sends every hostile form of issue 26 to the admin routes, each with the valid
// admin token (a page or a proxy may have it in a URL; the refusals must not depend on its
// absence): a cross-site request as a browser sends it, a forwarded request from an untrusted
// proxy, and an unknown Host (DNS rebinding). Each is refused with 403 and reaches no job. The
// forms the operator's tools use get through.
func TestAdminTrust(t *testing.T) {
	sec := Security{AdminToken: adminToken, AdminHosts: []string{"ops.internal"}, TrustedProxies: []string{"10.0.0.0/8"}}
	const del = `{"service":"world","levels":[0],"mode":"delete"}`
	hostile := []trustForm{
		{name: "the issue's fetch: text/plain from https://evil.example", method: "POST", path: "/admin/seed", body: del,
			header: []string{"Content-Type", "text/plain;charset=UTF-8", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}},
		{name: "text/plain, no Origin (an older browser)", method: "POST", path: "/admin/seed", body: del, header: []string{"Content-Type", "text/plain"}},
		{name: "a form post", method: "POST", path: "/admin/seed", body: del, header: []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{name: "multipart form", method: "POST", path: "/admin/seed", body: del, header: []string{"Content-Type", "multipart/form-data; boundary=x"}},
		{name: "no Content-Type", method: "POST", path: "/admin/seed", body: del, header: []string{"Content-Type", ""}},
		{name: "JSON from another origin", method: "POST", path: "/admin/seed", body: del, header: []string{"Origin", "https://evil.example"}},
		{name: "JSON from a sandboxed page (Origin null)", method: "POST", path: "/admin/seed", body: del, header: []string{"Origin", "null"}},
		{name: "JSON from another port of loopback", method: "POST", path: "/admin/seed", body: del, header: []string{"Origin", "http://127.0.0.1:3000"}},
		{name: "Sec-Fetch-Site cross-site", method: "POST", path: "/admin/seed", body: del, header: []string{"Sec-Fetch-Site", "cross-site"}},
		{name: "Sec-Fetch-Site same-site", method: "DELETE", path: "/admin/seed/j1", header: []string{"Sec-Fetch-Site", "same-site"}},
		{name: "cancel from another origin", method: "DELETE", path: "/admin/seed/j1", header: []string{"Origin", "https://evil.example"}},
		{name: "X-Forwarded-For from a loopback proxy", method: "POST", path: "/admin/seed", body: del, header: []string{"X-Forwarded-For", "203.0.113.7"}},
		{name: "X-Real-IP from a loopback proxy", method: "GET", path: "/admin/seed", header: []string{"X-Real-IP", "203.0.113.7"}},
		{name: "Forwarded from a loopback proxy", method: "GET", path: "/admin/seed/j1", header: []string{"Forwarded", "for=203.0.113.7"}},
		{name: "X-Forwarded-Host from a loopback proxy", method: "DELETE", path: "/admin/seed/j1", header: []string{"X-Forwarded-Host", "maps.example.org"}},
		{name: "X-Forwarded-For claiming loopback, from elsewhere", method: "POST", path: "/admin/seed", body: del, remote: "203.0.113.9:4000", header: []string{"X-Forwarded-For", "127.0.0.1"}},
		{name: "Host of another domain (DNS rebinding)", method: "POST", path: "/admin/seed", body: del, host: "evil.example:8080"},
		{name: "Host of another domain, listing jobs", method: "GET", path: "/admin/seed", host: "evil.example"},
		{name: "Host that starts like loopback", method: "GET", path: "/admin/seed", host: "127.0.0.1.evil.example:8080"},
		{name: "Host localhost.evil.example", method: "DELETE", path: "/admin/seed/j1", host: "localhost.evil.example"},
		{name: "no Host", method: "GET", path: "/admin/seed", host: "-"},
	}
	// send sends the form to an api of its own and returns the answer and the job store's calls.
	send := func(f trustForm) (*httptest.ResponseRecorder, *countingJobs) {
		jobs := &countingJobs{fakeJobs: fakeJobs{jobs: map[string]seed.Status{"j1": {ID: "j1"}}}}
		h := New(Params{SeedJobs: jobs, Security: sec, PublicURL: "https://maps.example.org", Logger: slog.New(slog.DiscardHandler)}).Handler()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, f.request())
		return rec, jobs
	}
	for _, f := range hostile {
		t.Run("refused/"+f.name, func(t *testing.T) {
			rec, jobs := send(f)
			if rec.Code != http.StatusForbidden || jobs.calls != 0 {
				t.Errorf("%s %s = %d %s (%d job store calls), want 403 and none", f.method, f.path, rec.Code, rec.Body, jobs.calls)
			}
			if len(rec.Header().Values("Access-Control-Allow-Origin")) != 0 {
				t.Errorf("an admin answer names an origin: %v", rec.Header())
			}
		})
	}

	allowed := []trustForm{
		{name: "cachetool on the machine", method: "POST", path: "/admin/seed", body: del},
		{name: "localhost", method: "GET", path: "/admin/seed", host: "localhost:8080"},
		{name: "IPv6 loopback", method: "GET", path: "/admin/seed/j1", host: "[::1]:8080", remote: "[::1]:50000"},
		{name: "the public URL's host, same origin", method: "POST", path: "/admin/seed", body: del, host: "maps.example.org",
			header: []string{"Origin", "https://maps.example.org", "Sec-Fetch-Site", "same-origin"}},
		{name: "a host of MAPFARM_ADMIN_HOSTS", method: "DELETE", path: "/admin/seed/j1", host: "OPS.internal:8080"},
		{name: "JSON with a charset", method: "POST", path: "/admin/seed", body: del, header: []string{"Content-Type", "application/json; charset=utf-8"}},
		{name: "forwarded by a trusted proxy", method: "POST", path: "/admin/seed", body: del, host: "maps.example.org", remote: "10.1.2.3:40000",
			header: []string{"X-Forwarded-For", "203.0.113.7", "X-Forwarded-Host", "maps.example.org"}},
		{name: "typed into the address bar", method: "GET", path: "/admin/seed", header: []string{"Sec-Fetch-Site", "none"}},
	}
	for _, f := range allowed {
		t.Run("allowed/"+f.name, func(t *testing.T) {
			rec, jobs := send(f)
			if rec.Code >= 400 || jobs.calls != 1 {
				t.Errorf("%s %s = %d %s (%d job store calls), want it through", f.method, f.path, rec.Code, rec.Body, jobs.calls)
			}
		})
	}
}

// trustForm is one form of admin request.
type trustForm struct {
	name, method, path, body string
	host, remote             string // "" keeps adminRequest's; host "-" sends none
	header                   []string
}

// request builds the form's request, carrying the admin token.
func (f trustForm) request() *http.Request {
	req := adminRequest(f.method, f.path, f.body)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	switch f.host {
	case "":
	case "-":
		req.Host = ""
	default:
		req.Host = f.host
	}
	if f.remote != "" {
		req.RemoteAddr = f.remote
	}
	for i := 0; i+1 < len(f.header); i += 2 {
		if f.header[i+1] == "" {
			req.Header.Del(f.header[i])
			continue
		}
		req.Header.Set(f.header[i], f.header[i+1])
	}
	return req
}
