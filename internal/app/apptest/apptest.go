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
