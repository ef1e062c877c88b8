// Package worker is the render worker: an asynq server that takes render tasks off the
// queues, draws them with the renderer and writes the bytes to object storage. Workers are
// stateless; run as many as the queues need. Each task type has one handler, registered on an
// asynq.ServeMux by its type name (see internal/task):
//
//	map:export       exportMapHandler        ExportMapImage renders
//	scalebar:export  exportScaleBarHandler   ExportScaleBar renders
//	seed:render  seedRenderHandler  one part of a bundle of a seeding job (seed.go)
//	seed:merge   seedMergeHandler   writes one bundle of a seeding job (seed.go)
//	cache:metatile  cacheMetatileHandler  draws a cache tile's metatile on demand (seed.go)
//
// Retries: a handler returns asynq.SkipRetry for a request that can never succeed (bad
// definition expression, unknown map, numbers the renderer refuses), and a plain error for a
// transient failure (store unreachable), which asynq retries. A handler that panics is a bug the
// same payload would hit again: recoverPanics (recover.go) reports a server error to the waiting
// api and fails the task with asynq.SkipRetry. The object store client does its own HTTP retries; the
// worker adds none.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Store is where rendered bytes go.
type Store interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Params configure a Worker.
type Params struct {
	Redis   redis.UniversalClient // queue and result lists
	Catalog *catalog.Catalog
	Store   Store
	// Tiles is the store tile caches live in (seeding); nil disables the seed handlers.
	Tiles        tilecache.Store
	Renderer     *render.Renderer
	Concurrency  int           // tasks rendered at once; default 1
	PollInterval time.Duration // how often an idle worker checks the queues; default 1ms
	Logger       *slog.Logger
	// ID names this worker in results and logs; default host:pid.
	ID string
	// Metrics, when set, records every task's duration and result.
	Metrics *metrics.Metrics
	// Queues are the queues to take tasks from (task.QueueInteractive, task.QueueSeed), with
	// their usual weights; empty means all of them. A worker for only one queue lets seeding
	// and interactive renders run on separate workers.
	Queues []string
	// StartAttrs are added to the start log line: the Redis and the store this process uses
	// ("redis", "10.0.0.5:6379 db 0", "store", "minio http://minio:9000 bucket mapfarm"), so that
	// processes on different stores show in the logs. internal/app sets them.
	StartAttrs []any
}

// Worker runs render tasks.
type Worker struct {
	p      Params
	srv    *asynq.Server
	mux    *asynq.ServeMux
	queues map[string]int
	err    error // a bad Params.Queues, returned by Run
}

// queueWeights returns the asynq weights of the named queues; no names: every queue.
func queueWeights(names []string) (map[string]int, error) {
	all := task.QueuePriorities()
	if len(names) == 0 {
		return all, nil
	}
	out := map[string]int{}
	for _, n := range names {
		w, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("worker: no queue %q (the queues are %s and %s)", n, task.QueueInteractive, task.QueueSeed)
		}
		out[n] = w
	}
	return out, nil
}

// New returns a Worker; Run starts it.
func New(p Params) *Worker {
	if p.Concurrency <= 0 {
		p.Concurrency = 1
	}
	if p.PollInterval <= 0 {
		p.PollInterval = time.Millisecond
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.ID == "" {
		host, _ := os.Hostname()
		p.ID = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	queues, qerr := queueWeights(p.Queues)
	if qerr != nil {
		queues = map[string]int{} // Run refuses to start
	}
	srv := asynq.NewServerFromRedisClient(p.Redis, asynq.Config{
		Concurrency:       p.Concurrency,
		Queues:            queues,
		TaskCheckInterval: p.PollInterval,
		ShutdownTimeout:   30 * time.Second,
		Logger:            asynqLogger{p.Logger},
		LogLevel:          asynq.WarnLevel,
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			id, _ := asynq.GetTaskID(ctx)
			p.Logger.Warn("task failed", "type", t.Type(), "task_id", id, "err", err)
		}),
	})
	mux := asynq.NewServeMux()
	if p.Metrics != nil {
		mux.Use(instrument(p.Metrics))
	}
	mux.Use(recoverPanics(p.Redis, p.ID, p.Logger))
	mux.Use(skipAbandoned(p.Redis))
	mux.Handle(task.TypeExportMap, &exportMapHandler{p: p})
	mux.Handle(task.TypeExportScaleBar, &exportScaleBarHandler{p: p})
	if p.Metrics != nil && p.Renderer != nil {
		p.Metrics.RegisterCaches(p.Renderer.Fonts().Caches()...)
	}
	if p.Tiles != nil {
		sd := newSeeder(p)
		p.Metrics.RegisterCaches(sd.specs)
		mux.Handle(task.TypeSeedRender, &seedRenderHandler{s: sd})
		mux.Handle(task.TypeSeedMerge, &seedMergeHandler{s: sd})
		mux.Handle(task.TypeCacheMetatile, &cacheMetatileHandler{s: sd})
	}
	return &Worker{p: p, srv: srv, mux: mux, queues: queues, err: qerr}
}

// Run processes tasks until ctx is done, then stops taking new tasks and waits (up to 30s) for
// the ones in flight; unfinished tasks go back to the queue.
func (w *Worker) Run(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	if err := w.srv.Start(w.mux); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	w.p.Logger.Info("worker started", append([]any{"id", w.p.ID, "concurrency", w.p.Concurrency, "queues", w.queues}, w.p.StartAttrs...)...)
	<-ctx.Done()
	w.srv.Shutdown()
	w.p.Logger.Info("worker stopped")
	return nil
}

// skipAbandoned drops, undrawn and for good, a retry of an interactive task whose client has
// stopped waiting (internal/farm marks it; asynq retries a task cancelled on its worker). First
// tries are not looked up: a task nobody waits for any more was deleted from the queue or is
// past its deadline, which asynq checks itself.
func skipAbandoned(rdb redis.UniversalClient) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			if n, _ := asynq.GetRetryCount(ctx); n > 0 {
				if q, _ := asynq.GetQueueName(ctx); q == task.QueueInteractive {
					id, _ := asynq.GetTaskID(ctx)
					if left, err := rdb.Exists(ctx, task.AbandonedKey(id)).Result(); err == nil && left > 0 {
						return fmt.Errorf("task %s: its client stopped waiting: %w", id, asynq.SkipRetry)
					}
				}
			}
			return next.ProcessTask(ctx, t)
		})
	}
}

// instrument records each task's duration and result: ok, client_error (a task that can never
// succeed, returned with asynq.SkipRetry) or error (a panic included).
func instrument(m *metrics.Metrics) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			start := time.Now()
			err := next.ProcessTask(ctx, t)
			result := "ok"
			switch {
			case errors.Is(err, errPanic):
				result = "error"
			case errors.Is(err, asynq.SkipRetry):
				result = "client_error"
			case err != nil:
				result = "error"
			}
			m.TaskDuration.WithLabelValues(t.Type()).Observe(time.Since(start).Seconds())
			m.Tasks.WithLabelValues(t.Type(), result).Inc()
			return err
		})
	}
}

// asynqLogger routes asynq's own logs to slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...), "component", "asynq") }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...), "component", "asynq") }
