package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
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

func TestAdminSeed(t *testing.T) {
	h := New(Params{SeedJobs: &fakeJobs{jobs: map[string]seed.Status{}}}).Handler()
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s %s = %d %s, want %d with %q", tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.want)
			}
		})
	}
}
