package coordinator

import (
	"context"
	"log/slog"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// outputReaper deletes rendered images whose time to live has passed. The api refuses expired
// outputs on its own, so a late pass loses nothing but disk space.
type outputReaper struct {
	store  Store
	prefix string
	ttl    time.Duration
	logger *slog.Logger
}

// exec runs one pass and returns how many outputs it deleted.
func (r *outputReaper) exec(ctx context.Context, now time.Time) int {
	var expired []string
	err := r.store.List(ctx, r.prefix, func(info blob.Info) error {
		if now.Sub(info.ModTime) > r.ttl {
			expired = append(expired, info.Key)
		}
		return ctx.Err()
	})
	if err != nil && ctx.Err() == nil {
		r.logger.Warn("list outputs", "err", err)
	}
	n := 0
	for _, key := range expired {
		if ctx.Err() != nil {
			break // stopping: the next coordinator's pass deletes the rest
		}
		if err := r.store.Delete(ctx, key); err != nil {
			r.logger.Warn("delete expired output", "key", key, "err", err)
			continue
		}
		n++
	}
	if n > 0 {
		r.logger.Info("deleted expired outputs", "count", n)
	}
	return n
}
