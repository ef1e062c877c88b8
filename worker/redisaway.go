package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// How long a task that failed while Redis was unreachable waits for it to answer again, how
// often it asks, and how soon such a task is tried again.
const (
	redisAwayWait  = 15 * time.Second
	redisAwayPoll  = 100 * time.Millisecond
	redisAwayRetry = time.Second
)

// errRedisAway marks the error of a task that failed while Redis was unreachable.
var errRedisAway = errors.New("redis was unreachable")

// redisWatch is a go-redis hook that notes when the client last failed to reach Redis: a dial
// or network error, or a server that is not (yet) the primary (READONLY, LOADING, MASTERDOWN), as
// during a Sentinel failover or a restart.
type redisWatch struct {
	last atomic.Int64 // Unix nanoseconds of the last failure; 0: none
}

func (w *redisWatch) note(err error) {
	if unreachable(err) {
		w.last.Store(time.Now().UnixNano())
	}
}

// failedSince reports whether the client failed to reach Redis at or after t.
func (w *redisWatch) failedSince(t time.Time) bool { return w.last.Load() >= t.UnixNano() }

func (w *redisWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		w.note(err)
		return c, err
	}
}

func (w *redisWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		w.note(err)
		return err
	}
}

func (w *redisWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		w.note(err)
		return err
	}
}

// unreachable reports whether err says that Redis could not be reached, as opposed to an answer
// (redis.Nil, an error reply) or the caller giving up.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	s := err.Error()
	return strings.HasPrefix(s, "READONLY ") || strings.HasPrefix(s, "LOADING ") || strings.HasPrefix(s, "MASTERDOWN ")
}

// awayWatch and pinger are what awaitRedis needs: whether Redis was unreachable since a time,
// and a way to ask whether it answers now.
type (
	awayWatch interface{ failedSince(time.Time) bool }
	pinger    interface {
		Ping(ctx context.Context) *redis.StatusCmd
	}
)

// awaitRedis looks after a task that fails while Redis is unreachable (a Sentinel failover, a
// restart): its failure is handed to asynq only once Redis answers again (up to wait), since
// asynq records the failure in Redis, and the error is marked errRedisAway so that retryDelay
// tries the task again after a second instead of asynq's default backoff (15 to 45 s for a first
// retry): the work itself was fine. Other tasks, failed or not, pass unchanged.
func awaitRedis(watch awayWatch, rdb pinger, wait, poll time.Duration) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			start := time.Now()
			err := next.ProcessTask(ctx, t)
			if err == nil || !watch.failedSince(start) {
				return err
			}
			for deadline := time.Now().Add(wait); ctx.Err() == nil; {
				pctx, cancel := context.WithDeadline(ctx, deadline)
				perr := rdb.Ping(pctx).Err()
				cancel()
				if perr == nil || !time.Now().Add(poll).Before(deadline) {
					break
				}
				select {
				case <-ctx.Done():
				case <-time.After(poll):
				}
			}
			return fmt.Errorf("%w (%w)", err, errRedisAway)
		})
	}
}

// retryDelay is asynq's default backoff (15 s and more), except for a task whose failure was not
// its own, which is tried again after redisAwayRetry: one that failed while Redis was unreachable
// (awaitRedis), or one whose worker died holding it (asynq.ErrLeaseExpired: a recoverer gave it
// back once its lease had run out, 30 to 60 s after the death; backing off further would only
// leave a seeding job's part waiting).
func retryDelay(n int, err error, t *asynq.Task) time.Duration {
	if errors.Is(err, errRedisAway) || errors.Is(err, asynq.ErrLeaseExpired) {
		return redisAwayRetry
	}
	return asynq.DefaultRetryDelayFunc(n, err, t)
}
