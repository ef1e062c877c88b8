package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
)

// fakeRefresh is an in-memory RefreshAdmin.
type fakeRefresh struct{ expired []refresh.ExpireRequest }

func (f *fakeRefresh) Expire(_ context.Context, r refresh.ExpireRequest) (refresh.ExpireResult, error) {
	if r.Service != "world" {
		return refresh.ExpireResult{}, fmt.Errorf("%w: no service %q", seed.ErrBadRequest, r.Service)
	}
	f.expired = append(f.expired, r)
	return refresh.ExpireResult{Cache: "world/Layers", Envelopes: len(r.Tiles)}, nil
}

func (f *fakeRefresh) Pending(context.Context) ([]refresh.Waiting, error) {
	return []refresh.Waiting{{Cache: "world/Layers", Entries: int64(len(f.expired))}}, nil
}

// The refresh admin routes take the admin credential as the seeding routes do: without it
// nothing reaches the backlog; with it an expire is recorded (202) and the backlog listed.
func TestAdminExpire(t *testing.T) {
	fr := &fakeRefresh{}
	h := New(Params{Refresh: fr, Security: Security{AdminToken: adminToken}}).Handler()
	for _, tc := range []struct {
		name, method, path, body, auth string
		code                           int
		want                           string
	}{
		{"anonymous", "POST", "/admin/expire", `{"service":"world","tiles":[[3,1,2]]}`, "", 401, ""},
		{"wrong token", "GET", "/admin/refresh", "", "Bearer nope", 401, ""},
		{"expire", "POST", "/admin/expire", `{"service":"world","tiles":[[3,1,2],[3,1,3]]}`, "Bearer " + adminToken, 202, `"envelopes":2`},
		{"bad service", "POST", "/admin/expire", `{"service":"nope"}`, "Bearer " + adminToken, 400, "no service"},
		{"unknown field", "POST", "/admin/expire", `{"service":"world","zoom":3}`, "Bearer " + adminToken, 400, "unknown field"},
		{"backlog", "GET", "/admin/refresh", "", "Bearer " + adminToken, 200, `"entries":1`},
	} {
		rec := httptest.NewRecorder()
		req := adminRequest(tc.method, tc.path, tc.body)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %s %s = %d %.300s, want %d with %q", tc.name, tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.want)
		}
	}
	if len(fr.expired) != 1 || fr.expired[0].Tiles[1] != [3]int{3, 1, 3} {
		t.Errorf("expires recorded: %+v, want the one with a credential", fr.expired)
	}
}
