package redisconn

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Logger writes go-redis's log lines (its connection pool, Sentinel and Pub/Sub report through
// one Printf) as slog records with component=go-redis, instead of the unstructured
// "redis: pool…" lines go-redis writes to stderr by default. go-redis gives its lines no
// level: a Sentinel's report that is not a failure (the primary it found, a new one after a
// failover) is logged at INFO, everything else (failed dials, closes, lookups,
// re-authentication) at WARN.
type Logger struct{ L *slog.Logger }

// Printf implements go-redis's logging interface.
func (l Logger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimSuffix(fmt.Sprintf(format, v...), "\n")
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "sentinel: ") && !strings.Contains(msg, "failed") {
		level = slog.LevelInfo
	}
	l.L.Log(ctx, level, msg, "component", "go-redis")
}

// RouteLogs sends go-redis's log lines to logger (see Logger). go-redis keeps one logger per
// process (redis.SetLogger sets a package variable; its clients have no logger option), so a
// program calls this once, where it makes its own logger: main for mapfarm, the local farm for
// cachetool. internal/app does not, so that the farms tests start in one process do not take
// the logger from each other.
func RouteLogs(logger *slog.Logger) {
	redis.SetLogger(Logger{L: logger})
}
