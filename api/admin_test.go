package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/token"
)

// fakeJobs is an in-memory SeedJobs.
type fakeJobs struct{ jobs map[string]seed.Status }

func (f *fakeJobs) Submit(_ context.Context, r seed.Request) (seed.Status, error) {
	if r.Service != "world" {
		return seed.Status{}, fmt.Errorf("%w: no service %q", seed.ErrBadRequest, r.Service)
	}
	if _, ok := f.jobs[r.ID]; ok {
		return seed.Status{}, seed.ErrJobExists
	}
	st := seed.Status{ID: r.ID, State: seed.StatePlanning}
	f.jobs[r.ID] = st
	return st, nil
}

func (f *fakeJobs) Status(_ context.Context, id string) (seed.Status, error) {
	st, ok := f.jobs[id]
	if !ok {
		return st, seed.ErrNoJob
	}
	return st, nil
}

func (f *fakeJobs) Cancel(ctx context.Context, id string) (seed.Status, error) {
	st, err := f.Status(ctx, id)
	if err == nil {
		st.Cancelled = true
		f.jobs[id] = st
	}
	return st, err
}

func (f *fakeJobs) List(context.Context, int) ([]seed.Status, error) {
	var out []seed.Status
	for _, st := range f.jobs {
		out = append(out, st)
	}
	return out, nil
}

const adminToken = "admin-token-of-at-least-32-bytes-0123456789"

func TestAdminSeed(t *testing.T) {
	h := New(Params{SeedJobs: &fakeJobs{jobs: map[string]seed.Status{}}, Security: Security{AdminToken: adminToken}}).Handler()
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"create", "POST", "/admin/seed", `{"id":"j1","service":"world","levels":[0,1]}`, 201, `"id":"j1"`},
		{"duplicate", "POST", "/admin/seed", `{"id":"j1","service":"world"}`, 409, "exists"},
		{"bad service", "POST", "/admin/seed", `{"id":"j2","service":"nope"}`, 400, `no service`},
		{"unknown field", "POST", "/admin/seed", `{"id":"j3","service":"world","colour":1}`, 400, "unknown field"},
		{"status", "GET", "/admin/seed/j1", "", 200, `"state":"planning"`},
		{"missing", "GET", "/admin/seed/zz", "", 404, "no such job"},
		{"list", "GET", "/admin/seed", "", 200, `"jobs":[`},
		{"cancel", "DELETE", "/admin/seed/j1", "", 200, `"cancelled":true`},
		{"id of 100,000 characters", "POST", "/admin/seed", `{"id":"` + strings.Repeat("x", 100_000) + `","service":"world"}`, 400, `is 100000 characters long: the limit is 128"`},
		{"id of 128 characters", "POST", "/admin/seed", `{"id":"` + strings.Repeat("y", 128) + `","service":"world"}`, 201, `"state":"planning"`},
		{"id of 129 characters", "POST", "/admin/seed", `{"id":"` + strings.Repeat("y", 129) + `","service":"world"}`, 400, `the limit is 128`},
		{"id with a slash", "POST", "/admin/seed", `{"id":"a/b","service":"world"}`, 400, `letters, digits`},
		{"id ..", "POST", "/admin/seed", `{"id":"..","service":"world"}`, 400, `start with a letter or digit`},
		{"id with a NUL", "POST", "/admin/seed", `{"id":"a\u0000b","service":"world"}`, 400, `letters, digits`},
		{"status of a malformed id", "GET", "/admin/seed/" + strings.Repeat("z", 129), "", 404, "no such job"},
		{"cancel of a malformed id", "DELETE", "/admin/seed/a%20b", "", 404, "no such job"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := adminRequest(tc.method, tc.path, tc.body)
			req.Header.Set("Authorization", "Bearer "+adminToken)
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s %s = %d %.300s, want %d with %q", tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.want)
			}
			if rec.Body.Len() > 400 {
				t.Errorf("%s %s: body of %d bytes, want the id quoted short", tc.method, tc.path, rec.Body.Len())
			}
		})
	}
}

// Admin routes are never anonymous: every admin route refuses a request without an admin
// credential — none, a read token, a wrong token, an admin token scoped to another service —
// from loopback as from anywhere, and the job store sees none of them. The admin token and a
// token of role admin get through.
func TestAdminNeverAnonymous(t *testing.T) {
	signer := testSigner(t)
	read := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	admin := issue(t, signer, token.Grant{Client: "ops", Role: token.RoleAdmin})
	usaAdmin := issue(t, signer, token.Grant{Client: "ops-usa", Role: token.RoleAdmin, Services: []string{"usa"}})
	routes := []struct{ method, path, body string }{
		{"POST", "/admin/seed", `{"id":"j9","service":"world","levels":[0],"mode":"delete"}`},
		{"GET", "/admin/seed", ""},
		{"GET", "/admin/seed/j1", ""},
		{"DELETE", "/admin/seed/j1", ""},
	}
	type setup struct {
		name     string
		sec      Security
		remote   string
		bearer   string
		code     int
		reaching bool // the request reaches the job store
	}
	setups := []setup{
		{"nothing configured, remote client", Security{}, "203.0.113.9:5555", "", 401, false},
		{"nothing configured, remote client with a made-up token", Security{}, "203.0.113.9:5555", adminToken, 401, false},
		{"nothing configured, loopback client", Security{}, "127.0.0.1:5555", "", 401, false},
		{"nothing configured, IPv6 loopback client", Security{}, "[::1]:5555", "", 401, false},
		{"admin token configured, none sent from loopback", Security{AdminToken: adminToken}, "127.0.0.1:5555", "", 401, false},
		{"admin token configured, a wrong one sent", Security{AdminToken: adminToken}, "127.0.0.1:5555", adminToken + "x", 401, false},
		{"tokens on, none sent", Security{Tokens: signer}, "127.0.0.1:5555", "", 401, false},
		{"tokens on, a read token", Security{Tokens: signer}, "127.0.0.1:5555", read, 403, false},
		{"tokens on, a forged token", Security{Tokens: signer}, "127.0.0.1:5555", admin[:len(admin)-2] + "xx", 401, false},
		{"admin token", Security{AdminToken: adminToken}, "203.0.113.9:5555", adminToken, 0, true},
		{"admin token from loopback", Security{AdminToken: adminToken}, "127.0.0.1:5555", adminToken, 0, true},
		{"tokens on, an admin token", Security{Tokens: signer}, "203.0.113.9:5555", admin, 0, true},
	}
	for _, su := range setups {
		for _, r := range routes {
			jobs := &countingJobs{fakeJobs: fakeJobs{jobs: map[string]seed.Status{"j1": {ID: "j1"}}}}
			h := New(Params{SeedJobs: jobs, Security: su.sec}).Handler()
			req := adminRequest(r.method, r.path, r.body)
			req.RemoteAddr = su.remote
			if su.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+su.bearer)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch {
			case !su.reaching && (rec.Code != su.code || jobs.calls != 0):
				t.Errorf("%s: %s %s = %d (%d job store calls), want %d and none", su.name, r.method, r.path, rec.Code, jobs.calls, su.code)
			case su.reaching && (rec.Code >= 400 || jobs.calls != 1):
				t.Errorf("%s: %s %s = %d %s (%d job store calls), want it through", su.name, r.method, r.path, rec.Code, rec.Body, jobs.calls)
			}
		}
	}
	// A token scoped to one service may not seed another.
	jobs := &countingJobs{fakeJobs: fakeJobs{jobs: map[string]seed.Status{}}}
	h := New(Params{SeedJobs: jobs, Security: Security{Tokens: signer}}).Handler()
	req := adminRequest("POST", "/admin/seed", `{"id":"j9","service":"world","mode":"delete"}`)
	req.Header.Set("Authorization", "Bearer "+usaAdmin)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 403 || jobs.calls != 0 {
		t.Errorf("an admin token for usa seeding world: %d (%d job store calls), want 403 and none", rec.Code, jobs.calls)
	}
}

// countingJobs counts the calls that reach the job store.
type countingJobs struct {
	fakeJobs
	calls int
}

func (c *countingJobs) Submit(ctx context.Context, r seed.Request) (seed.Status, error) {
	c.calls++
	return c.fakeJobs.Submit(ctx, r)
}

func (c *countingJobs) Status(ctx context.Context, id string) (seed.Status, error) {
	c.calls++
	return c.fakeJobs.Status(ctx, id)
}

func (c *countingJobs) Cancel(ctx context.Context, id string) (seed.Status, error) {
	c.calls++
	return c.fakeJobs.Cancel(ctx, id)
}

func (c *countingJobs) List(ctx context.Context, n int) ([]seed.Status, error) {
	c.calls++
	return c.fakeJobs.List(ctx, n)
}
