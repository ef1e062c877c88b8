package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/admincred"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// embeddedDefault loads the configuration of `mapfarm serve` with nothing set: embedded Redis,
// a disk store, the sample services, and the state directory state; then env (name, value
// pairs) on top. (apptest.Config is the same for the other packages' tests: this package's
// cannot import apptest, which imports it.)
func embeddedDefault(t *testing.T, state string, env ...string) *config.Config {
	t.Helper()
	env = append([]string{
		"MAPFARM_REDIS_ADDR", "",
		"MAPFARM_STORE", "disk",
		"MAPFARM_STORE_DIR", t.TempDir(),
		"MAPFARM_LISTEN", "127.0.0.1:0",
		"MAPFARM_PUBLIC_URL", "",
		"MAPFARM_SERVICES", "../../services/services.yaml",
		"MAPFARM_ADMIN_TOKEN", "",
		"MAPFARM_STATE_DIR", state,
	}, env...)
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAdminCredentialMadeAtStart: the embedded default makes an admin credential at start,
// keeps it in a file of the state directory that only its user can read, says where (never
// what) through the hook the banner uses, and removes the file when it stops. The admin routes
// refuse a loopback client without it and take it.
func TestAdminCredentialMadeAtStart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := embeddedDefault(t, state)
	var logs testenv.LogBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	urlc := make(chan string, 1)
	var credFile string
	go func() {
		done <- Run(ctx, RoleServe, cfg, slog.New(slog.NewTextHandler(&logs, nil)), Hooks{
			AdminCredential: func(f string) { credFile = f },
			Listening:       func(u string, _ *catalog.Catalog) { urlc <- u }})
	}()
	var base string
	select {
	case base = <-urlc:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("no api within 60 s")
	}

	cred, path, err := admincred.Find(state, base)
	if err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	if path != credFile {
		t.Errorf("hook names %q, the credential is in %q", credFile, path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("credential file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if strings.Contains(logs.String(), cred) {
		t.Error("the credential is in the log")
	}
	get := func(bearer string) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/admin/seed", nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Errorf("loopback client without the credential: %d, want 401", code)
	}
	if code := get(cred); code != http.StatusOK {
		t.Errorf("with the credential: %d, want 200", code)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("credential file left after the stop: %v", err)
	}
}

// TestAdminCredentialConfiguredOrUnkept: a configured admin token writes no file; a state
// directory that cannot be written stops the start with an error that says what to set.
func TestAdminCredentialConfiguredOrUnkept(t *testing.T) {
	state := t.TempDir()
	cfg := embeddedDefault(t, state)
	cfg.Security.AdminToken = strings.Repeat("k", 40)
	tok, file, err := adminCredential(cfg, &fixedAddr{"127.0.0.1:8080"})
	if err != nil || tok != cfg.Security.AdminToken || file != "" {
		t.Errorf("configured token: %q %q %v", tok, file, err)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("state directory holds %d files, want none", len(entries))
	}

	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = embeddedDefault(t, filepath.Join(blocker, "state"))
	err = Run(context.Background(), RoleServe, cfg, slog.New(slog.DiscardHandler), Hooks{})
	if err == nil || !strings.Contains(err.Error(), "MAPFARM_STATE_DIR") || !strings.Contains(err.Error(), "MAPFARM_ADMIN_TOKEN") {
		t.Errorf("unwritable state directory: %v, want an error naming MAPFARM_STATE_DIR and MAPFARM_ADMIN_TOKEN", err)
	}
}

// fixedAddr is a net.Addr of a fixed address.
type fixedAddr struct{ s string }

func (a *fixedAddr) Network() string { return "tcp" }
func (a *fixedAddr) String() string  { return a.s }
