package api

import (
	"net/http/httptest"
	"testing"
)

// Forwarded headers choose the client (what rate limits count) only when a trusted proxy sent
// them: by default no proxy is trusted, so a client cannot escape its rate limit by making up an
// X-Forwarded-For; behind a configured load balancer, each forwarded client has its own.
func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies []string
		want    []int // statuses of two requests from one peer with two X-Forwarded-For
	}{
		{"no proxy trusted", nil, []int{404, 429}},
		{"the peer is a trusted proxy", []string{"192.0.2.0/24"}, []int{404, 404}},
		{"another proxy trusted", []string{"10.0.0.1"}, []int{404, 429}},
	} {
		h := New(Params{Security: Security{RateLimit: 0.001, RateBurst: 1, TrustedProxies: tc.proxies}}).Handler()
		for i, xff := range []string{"203.0.113.1", "203.0.113.2"} {
			req := httptest.NewRequest("GET", "/api/v2/nowhere", nil)
			req.RemoteAddr = "192.0.2.10:4000"
			req.Header.Set("X-Forwarded-For", xff)
			req.Header.Set("X-Real-IP", xff)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want[i] {
				t.Errorf("%s: request %d (X-Forwarded-For %s): %d, want %d", tc.name, i+1, xff, rec.Code, tc.want[i])
			}
		}
	}
}
