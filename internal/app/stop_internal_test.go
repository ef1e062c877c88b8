package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// A farm stopped before or while it starts stops cleanly: Run returns nil, not the cancelled
// ping, dial or subscribe of whichever part was still connecting (issue 26: "farm stopped with
// worker: subscribe to mapfarm:wake: dial tcp …: operation was canceled").
func TestRunStoppedWhileStarting(t *testing.T) {
	cfg := embeddedDefault(t, t.TempDir(), "MAPFARM_REDIS_ADDR", testenv.Redis(t), "MAPFARM_REDIS_DB", "0", "MAPFARM_METRICS_LISTEN", "")
	cfg.Redis.DB = testenv.RedisDB(t)
	logger := slog.New(slog.DiscardHandler)

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Run(ctx, RoleServe, cfg, logger, Hooks{}); err != nil {
			t.Errorf("a farm stopped before it started: %v, want a clean stop (nil)", err)
		}
	})
	t.Run("as the api listens", func(t *testing.T) {
		// Stopped the moment the api listens, as a short test's cleanup does: the worker and
		// the coordinator may still be connecting.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, RoleServe, cfg, logger, Hooks{Listening: func(string, *catalog.Catalog) { cancel() }})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("a farm stopped as it started: %v, want a clean stop (nil)", err)
			}
		case <-time.After(40 * time.Second):
			cancel()
			t.Fatal("the farm did not stop within 40s")
		}
	})
}
