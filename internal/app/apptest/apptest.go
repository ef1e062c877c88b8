// Package apptest runs a whole farm (api, coordinator and worker: the serve role) inside a
// test's process, as `mapfarm serve` runs it, and stops it when the test ends. The tests of
// internal/app and the end-to-end tests start their farms through it.
package apptest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/config"
)

// Serve starts the serve role with cfg, waits up to a minute until its api accepts connections
// and returns the api's public URL. When the test ends it stops the farm and fails the test if
// the farm does not stop cleanly within 40 s. hooks.Listening is Serve's own.
func Serve(t testing.TB, cfg *config.Config, logger *slog.Logger, hooks app.Hooks) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urlc := make(chan string, 1)
	errc := make(chan error, 1)
	hooks.Listening = func(u string, _ *catalog.Catalog) { urlc <- u }
	go func() { errc <- app.Run(ctx, app.RoleServe, cfg, logger, hooks) }()
	var url string
	select {
	case url = <-urlc:
	case err := <-errc:
		cancel()
		t.Fatalf("farm did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("farm did not start within 60s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("farm stopped with %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("farm did not stop within 40s")
		}
	})
	return url
}

// Config loads the configuration `mapfarm serve` runs with when nothing is configured: embedded
// Redis, a disk store in a directory of the test's own, the sample services, the api on a free
// loopback port, and no public URL, admin token or CORS origins taken from the environment the
// tests run in. env (name, value pairs) is set on top; every variable is set with t.Setenv.
func Config(t testing.TB, env ...string) *config.Config {
	t.Helper()
	base := []string{
		"MAPFARM_LISTEN", "127.0.0.1:0",
		"MAPFARM_SERVICES", catalogtest.SamplesPath(t),
		"MAPFARM_REDIS_ADDR", "",
		"MAPFARM_STORE", "disk",
		"MAPFARM_STORE_DIR", t.TempDir(),
		"MAPFARM_PUBLIC_URL", "",
		"MAPFARM_ADMIN_TOKEN", "",
		"MAPFARM_CORS_ORIGINS", "",
	}
	env = append(base, env...)
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
