package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/token"
)

const testSecret = "e2e-secret-e2e-secret-e2e-secret-e2e"

// TestTokens: with a token secret, SOAP endpoints, WSDLs and the JSON API need a token (query
// parameter or Bearer header); health checks do not.
func TestTokens(t *testing.T) {
	t.Setenv("MAPFARM_TOKEN_SECRET", testSecret)
	f := startFarm(t)
	signer, _ := token.NewSigner([]byte(testSecret))
	good, _ := signer.Issue("e2e", time.Now().Add(time.Hour))
	expired, _ := signer.Issue("e2e", time.Now().Add(-time.Minute))
	admin, _ := signer.IssueGrant(token.Grant{Client: "ops", Role: token.RoleAdmin}, time.Now().Add(time.Hour))
	endpoint := f.url + "/arcgis/services/world/MapServer"
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:GetMapCount/></soap:Body></soap:Envelope>`

	cases := []struct {
		name, method, url, body string
		header                  []string
		status                  int
		want                    string
	}{
		{"SOAP without token", "POST", endpoint, body, nil, 401, "<faultstring>Token Required</faultstring>"},
		{"SOAP with a bad token", "POST", endpoint + "?token=nonsense", body, nil, 401, "<faultstring>Invalid Token</faultstring>"},
		{"SOAP with an expired token", "POST", endpoint + "?token=" + expired, body, nil, 401, "<faultstring>Invalid Token</faultstring>"},
		{"SOAP with ?token", "POST", endpoint + "?token=" + good, body, nil, 200, "<Result>1</Result>"},
		{"SOAP with Bearer", "POST", endpoint, body, []string{"Authorization", "Bearer " + good}, 200, "<Result>1</Result>"},
		{"WSDL without token", "GET", endpoint + "?wsdl", "", nil, 401, "Token Required"},
		{"WSDL with token", "GET", endpoint + "?wsdl&token=" + good, "", nil, 200, "<definitions"},
		{"JSON API without token", "GET", f.url + "/api/v2/", "", nil, 401, `{"detail":"Authentication credentials were not provided."}`},
		{"JSON API with a bad token", "GET", f.url + "/api/v2/", "", []string{"Authorization", "Bearer x.y"}, 401, `{"detail":"Invalid token."}`},
		{"JSON API with token", "GET", f.url + "/api/v2/", "", []string{"Authorization", "Bearer " + good}, 200, `"general_assembly_136"`},
		{"admin API without token", "GET", f.url + "/admin/seed", "", nil, 401, `admin credential`},
		{"admin API with a read token", "GET", f.url + "/admin/seed", "", []string{"Authorization", "Bearer " + good}, 403, `role admin`},
		{"admin API with an admin token", "GET", f.url + "/admin/seed", "", []string{"Authorization", "Bearer " + admin}, 200, `"jobs"`},
		{"health needs none", "GET", f.url + "/healthz", "", nil, 200, "ok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := do(t, tc.method, tc.url, tc.body, append([]string{"Content-Type", "text/xml"}, tc.header...)...)
			if resp.StatusCode != tc.status || !strings.Contains(string(got), tc.want) {
				t.Errorf("HTTP %d %.300s; want HTTP %d containing %s", resp.StatusCode, got, tc.status, tc.want)
			}
		})
	}
}

// TestRateLimitAndCORS: past its rate a client gets 429 with Retry-After, in SOAP or DRF
// form; allowed browser origins get CORS headers, others none.
func TestRateLimitAndCORS(t *testing.T) {
	t.Setenv("MAPFARM_RATE_LIMIT", "1")
	t.Setenv("MAPFARM_CORS_ORIGINS", "https://maps.example.org")
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/world/MapServer"
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:GetMapCount/></soap:Body></soap:Envelope>`
	if resp, got := do(t, "POST", endpoint, body); resp.StatusCode != 200 {
		t.Fatalf("first request: %d %s", resp.StatusCode, got)
	}
	resp, got := do(t, "POST", endpoint, body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(got), "Rate limit exceeded") {
		t.Errorf("second SOAP request: %d Retry-After %q %.200s", resp.StatusCode, resp.Header.Get("Retry-After"), got)
	}
	resp, got = do(t, "GET", f.url+"/api/v2/", "")
	if resp.StatusCode != 429 || string(got) != `{"detail":"Request was throttled. Expected available in 1 second."}` {
		t.Errorf("throttled JSON request: %d %s", resp.StatusCode, got)
	}
	if resp, _ := do(t, "GET", f.url+"/healthz", ""); resp.StatusCode != 200 {
		t.Errorf("health check throttled: %d", resp.StatusCode)
	}

	resp, _ = do(t, "OPTIONS", endpoint, "", "Origin", "https://maps.example.org", "Access-Control-Request-Method", "POST")
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://maps.example.org" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = do(t, "GET", f.url+"/healthz", "", "Origin", "https://evil.example.com")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a foreign origin got CORS headers: %v", resp.Header)
	}
}

// storeDigest is every object of the store with its size and checksum (MinIO's ETag: the MD5
// of the content).
func storeDigest(t *testing.T, f *farm) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := f.store.List(context.Background(), "", func(in blob.Info) error {
		out[in.Key] = fmt.Sprintf("%d/%s", in.Size, in.ETag)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAdminNeverAnonymous: on a farm with tokens and an admin token, every admin route refuses
// anonymous callers, read tokens, forged tokens and an admin token scoped to another service,
// and not one object in MinIO changes (count and checksums before and after).
func TestAdminNeverAnonymous(t *testing.T) {
	t.Setenv("MAPFARM_TOKEN_SECRET", testSecret)
	t.Setenv("MAPFARM_ADMIN_TOKEN", "e2e-admin-token-e2e-admin-token-e2e-admin")
	f := startFarm(t)
	id := submitSeed(t, f.url, seed.Request{Service: "world", Levels: []int{0, 1, 2}})
	if st := waitJob(t, f.url, id, 2*time.Minute, nil); st.State != seed.StateDone {
		t.Fatalf("seeding the tiles to protect: %+v", st)
	}
	before := storeDigest(t, f)
	if len(before) == 0 {
		t.Fatal("no objects to protect")
	}
	signer, _ := token.NewSigner([]byte(testSecret))
	read, _ := signer.Issue("viewer", time.Now().Add(time.Hour))
	usa, _ := signer.IssueGrant(token.Grant{Client: "ops-usa", Role: token.RoleAdmin, Services: []string{"usa"}}, time.Now().Add(time.Hour))
	forged := read[:strings.LastIndexByte(read, '.')] + ".AAAA"
	routes := []struct{ method, path, body string }{
		{"POST", "/admin/seed", `{"service":"world","levels":[0,1,2],"mode":"delete"}`},
		{"POST", "/admin/seed", `{"service":"world","levels":[0,1,2]}`},
		{"DELETE", "/admin/seed/" + id, ""},
		{"GET", "/admin/seed", ""},
		{"GET", "/admin/seed/" + id, ""},
	}
	callers := []struct {
		name   string
		header []string
	}{
		{"anonymous", nil},
		{"a read token", []string{"Authorization", "Bearer " + read}},
		{"a read token as ?token", nil},
		{"a forged token", []string{"Authorization", "Bearer " + forged}},
		{"a made-up admin token", []string{"Authorization", "Bearer e2e-admin-token-but-not-the-right-one-x"}},
		{"forwarded from loopback", []string{"X-Forwarded-For", "127.0.0.1", "X-Real-IP", "127.0.0.1"}},
	}
	for _, c := range callers {
		for _, r := range routes {
			url := f.url + r.path
			if c.name == "a read token as ?token" {
				url += "?token=" + read
			}
			resp, body := do(t, r.method, url, r.body, append([]string{"Content-Type", "application/json"}, c.header...)...)
			if resp.StatusCode != 401 && resp.StatusCode != 403 {
				t.Errorf("%s: %s %s = %d %.200s, want 401 or 403", c.name, r.method, r.path, resp.StatusCode, body)
			}
		}
	}
	// Scoped to usa, an admin token may not touch world's tiles.
	resp, body := do(t, "POST", f.url+"/admin/seed", `{"service":"world","levels":[0],"mode":"delete"}`, "Authorization", "Bearer "+usa)
	if resp.StatusCode != 403 {
		t.Errorf("an admin token for usa deleting world's tiles: %d %.200s", resp.StatusCode, body)
	}
	time.Sleep(2 * time.Second) // what was accepted would have started by now
	after := storeDigest(t, f)
	if len(after) != len(before) {
		t.Errorf("%d objects before the refused calls, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("object %s changed: %s → %q", k, v, after[k])
		}
	}
}
