package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/admincred"
)

// TestCredentialOfTheLocalAPI: with no MAPFARM_ADMIN_TOKEN, cachetool sends the credential the
// api on this machine keeps in the state directory, for that api's port; an api named by another
// host gets none, and its refusal says what to set.
func TestCredentialOfTheLocalAPI(t *testing.T) {
	state := t.TempDir()
	t.Setenv("MAPFARM_STATE_DIR", state)
	t.Setenv("MAPFARM_ADMIN_TOKEN", "")
	cred := admincred.New()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer "+cred {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"the admin routes need an admin credential"}`))
			return
		}
		w.Write([]byte(`{"jobs":[{"id":"j1","state":"done","total":1,"done":1}]}`))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	if err := admincred.Write(admincred.Path(state, port), cred); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(t.Context(), []string{"status", "-server", srv.URL}, &out, &out); err != nil || !strings.Contains(out.String(), "j1  done") {
		t.Errorf("status on the local api: %v\n%s", err, out.String())
	}
	localhost := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if err := run(t.Context(), []string{"status", "-server", localhost}, &out, &out); err != nil {
		t.Errorf("status on localhost: %v", err)
	}

	// The same port under a name that is not loopback: the credential stays home.
	remote := strings.Replace(srv.URL, "127.0.0.1", "127.0.0.1.nip.example", 1)
	cl := newAdminClient(remote, 0)
	if cl.token != "" || !strings.Contains(cl.missing, "MAPFARM_ADMIN_TOKEN") {
		t.Errorf("a remote api's client: token %q, missing %q", cl.token, cl.missing)
	}
	// No file for this port: the refusal says where to look.
	if err := os.Remove(filepath.Join(state, "admin-token-"+port)); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"status", "-server", srv.URL}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "MAPFARM_ADMIN_TOKEN") {
		t.Errorf("without the file: %v", err)
	}
	for i, a := range got[:2] {
		if a != "Bearer "+cred {
			t.Errorf("request %d: Authorization %q", i, a)
		}
	}
}

// TestSeedLocalFarmNoFlags: `cachetool seed -service world -levels 0` with nothing configured
// runs its local farm and seeds through its admin routes, with a credential that never leaves
// the process (the state directory stays empty).
func TestSeedLocalFarmNoFlags(t *testing.T) {
	store, state := t.TempDir(), t.TempDir()
	t.Setenv("MAPFARM_REDIS_ADDR", "")
	t.Setenv("MAPFARM_STORE", "disk")
	t.Setenv("MAPFARM_STORE_DIR", store)
	t.Setenv("MAPFARM_SERVICES", "../services/services.yaml")
	t.Setenv("MAPFARM_STATE_DIR", state)
	t.Setenv("MAPFARM_ADMIN_TOKEN", "")
	t.Setenv("MAPFARM_TOKEN_SECRET", "")
	var out, stderr bytes.Buffer
	if err := run(t.Context(), []string{"seed", "-service", "world", "-levels", "0"}, &out, &stderr); err != nil {
		t.Fatalf("cachetool seed: %v\n%s\n%s", err, out.String(), stderr.String())
	}
	if !strings.Contains(out.String(), "submitted") || !strings.Contains(out.String(), "done") {
		t.Errorf("cachetool seed printed:\n%s", out.String())
	}
	var bundles int
	filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".bundle") {
			bundles++
		}
		return nil
	})
	if bundles == 0 {
		t.Error("no bundle in the store after the seed")
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("the local farm wrote %d files to the state directory", len(entries))
	}
}
