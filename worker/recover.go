package worker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/task"
)

// errPanic marks the error of a task whose handler panicked.
var errPanic = errors.New("task handler panicked")

// recoverPanics turns a handler's panic into a failed task that asynq never retries (the same
// payload would panic again, holding a render slot each time) and, for an interactive task, a
// server-error Result on the task's done list, so the waiting api answers with a soap:Server
// fault at once instead of waiting out its render timeout. The panic and its stack go to the log.
func recoverPanics(rdb redis.UniversalClient, workerID string, log logger) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) (err error) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				id, _ := asynq.GetTaskID(ctx)
				log.Error("task handler panicked", "type", t.Type(), "task_id", id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if q, _ := asynq.GetQueueName(ctx); task.IsInteractive(q) && id != "" {
					res := task.Result{Error: fmt.Sprintf("internal error: the worker failed on this %s task (task id %s)", t.Type(), id)}
					if rerr := reportResult(ctx, rdb, workerID, id, res); rerr != nil {
						log.Error("report result", "task_id", id, "err", rerr)
					}
				}
				err = fmt.Errorf("%s: %w: %v: %w", t.Type(), errPanic, v, asynq.SkipRetry)
			}()
			return next.ProcessTask(ctx, t)
		})
	}
}

// logger is the part of slog.Logger the worker's helpers log with.
type logger interface {
	Error(msg string, args ...any)
}

// reportResult pushes an interactive task's result to its done list, for the waiting api; a result
// nobody collects expires.
func reportResult(ctx context.Context, rdb redis.UniversalClient, workerID, id string, r task.Result) error {
	r.Worker = workerID
	b, err := task.EncodeResult(r)
	if err != nil {
		return err
	}
	key := task.DoneKey(id)
	pipe := rdb.TxPipeline()
	pipe.RPush(ctx, key, b)
	pipe.Expire(ctx, key, task.ResultTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("report result: %w", err)
	}
	return nil
}
