package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// fakeAdmin is an api's admin routes for one job: it answers the status polls with answers in
// turn (the last one for good). hangUp closes the connection without a response, as an api that
// restarts does; net/http repeats a GET once on a closed kept-alive connection, so it takes two to
// fail a poll.
type fakeAdmin struct {
	mu      sync.Mutex
	answers []func(http.ResponseWriter)
	polls   int
}

func (f *fakeAdmin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/admin/seed":
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(seed.Status{ID: "job1", State: seed.StatePlanning, Total: 21})
	case r.Method == http.MethodGet && r.URL.Path == "/admin/seed/job1":
		f.mu.Lock()
		answer := f.answers[min(f.polls, len(f.answers)-1)]
		f.polls++
		f.mu.Unlock()
		answer(w)
	default:
		http.NotFound(w, r)
	}
}

func status(state string, done int64) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		json.NewEncoder(w).Encode(seed.Status{ID: "job1", State: state, Total: 21, Done: done})
	}
}

func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func failWith(code int, msg string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
}

// `cachetool seed` rides out status polls that fail while the job carries on (issue 26: a
// Redis failover made one poll fail and the command exit 1 on a job that ended done): it retries
// them with backoff and exits 0 when the job ends done. A refusal (404) and polls that keep
// failing past -poll-grace still end it with an error.
func TestSeedSurvivesFailedPolls(t *testing.T) {
	refused := failWith(http.StatusInternalServerError, "seed: status of job1: dial tcp 10.0.0.5:6379: connect: connection refused")
	tests := []struct {
		name    string
		answers []func(http.ResponseWriter)
		grace   string
		wantErr string // empty: success
	}{
		{"failover", []func(http.ResponseWriter){status(seed.StateRunning, 5), hangUp, hangUp, refused, failWith(http.StatusServiceUnavailable, "not ready"),
			status(seed.StateRunning, 15), status(seed.StateDone, 21)}, "1m", ""},
		{"job unknown", []func(http.ResponseWriter){status(seed.StateRunning, 5), failWith(http.StatusNotFound, "no job job1")}, "1m", "no job job1"},
		{"away for good", []func(http.ResponseWriter){status(seed.StateRunning, 5), hangUp}, "1s", "status unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAdmin{answers: tc.answers}
			srv := httptest.NewServer(api)
			defer srv.Close()
			var out, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := run(ctx, []string{"seed", "-server", srv.URL, "-service", "world", "-levels", "0-2", "-poll-grace", tc.grace}, &out, &stderr)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("cachetool seed: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), stderr.String())
			case tc.wantErr == "" && !strings.Contains(out.String(), "job job1: done"):
				t.Errorf("stdout does not report the job done:\n%s", out.String())
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("cachetool seed: %v, want an error with %q", err, tc.wantErr)
			}
			if tc.wantErr == "" && strings.Count(stderr.String(), "status poll failed, retrying") != 3 {
				t.Errorf("stderr does not report the three failed polls:\n%s", stderr.String())
			}
		})
	}
}
