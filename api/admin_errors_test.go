package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// downJobs is a job store whose Redis is gone, as during a failover.
type downJobs struct{}

var errRedisDown = fmt.Errorf("seed: job j1: %w", fmt.Errorf("dial tcp 10.0.0.5:6379: connect: connection refused"))

func (downJobs) Submit(context.Context, seed.Request) (seed.Status, error) {
	return seed.Status{}, errRedisDown
}
func (downJobs) Status(context.Context, string) (seed.Status, error) {
	return seed.Status{}, errRedisDown
}
func (downJobs) Cancel(context.Context, string) (seed.Status, error) {
	return seed.Status{}, errRedisDown
}
func (downJobs) List(context.Context, int) ([]seed.Status, error) { return nil, errRedisDown }

// TestAdminServerErrorNamesNoAddress: when the job store fails, every admin route answers 500
// with the request id and no part of the cause (the Redis address), and the cause is logged at
// ERROR with that request id (issue 26, item 6).
func TestAdminServerErrorNamesNoAddress(t *testing.T) {
	logs := &testenv.LogBuffer{}
	h := New(Params{SeedJobs: downJobs{}, Security: Security{AdminToken: adminToken},
		Logger: slog.New(slog.NewTextHandler(logs, nil))}).Handler()
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/admin/seed/j1", ""}, {"GET", "/admin/seed", ""}, {"DELETE", "/admin/seed/j1", ""},
		{"POST", "/admin/seed", `{"service":"world","levels":[0]}`},
	} {
		req := adminRequest(r.method, r.path, r.body)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		rid := rec.Header().Get("X-Request-Id")
		var body struct{ Error string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 500 {
			t.Fatalf("%s %s: HTTP %d %s (%v), want 500 JSON", r.method, r.path, rec.Code, rec.Body, err)
		}
		if strings.Contains(body.Error, "10.0.0.5") || strings.Contains(body.Error, "dial") || !strings.Contains(body.Error, rid) {
			t.Errorf("%s %s: error %q: want the request id %s and nothing of the cause", r.method, r.path, body.Error, rid)
		}
		var logged bool
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "request_id="+rid) && strings.Contains(line, "10.0.0.5:6379") {
				logged = true
			}
		}
		if !logged {
			t.Errorf("%s %s: no ERROR line with request id %s and the cause:\n%s", r.method, r.path, rid, logs)
		}
	}
}
