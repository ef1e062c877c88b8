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
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%s %s = %d %.300s, want %d with %q", tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.want)
			}
			if rec.Body.Len() > 400 {
				t.Errorf("%s %s: body of %d bytes, want the id quoted short", tc.method, tc.path, rec.Body.Len())
			}
		})
	}
}
