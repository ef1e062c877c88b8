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
// Lanes: a worker serves its queues in two lanes, each an asynq server of its own. The heavy
// lane takes task.QueueHeavy (renders whose cost reaches the api's threshold: large images,
// selection buffers) with HeavySlots slots, fewer than the worker has; the other lane takes
// QueueInteractive and QueueSeed with all of them. Every task also takes one of the worker's
// Concurrency render slots (a heavy render beside a one-slot worker gets one more), so a worker
// never draws more than its slots at once, and however many heavy renders are queued, at least
// one slot is left for the others: ordinary renders do not wait behind 4096×4096 ones.
//
// Memory: the renderer does not keep large images for reuse (internal/render), and a worker
// that goes to sleep after heavy renders returns the freed memory to the operating system
// (debug.FreeOSMemory), so its RSS comes back to what ordinary renders need instead of staying at
// the peak of the largest ones; ReleaseMemoryEvery adds releases while it works.
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
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/priority"
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
	Tiles    tilecache.Store
	Renderer *render.Renderer
	// VectorTiles are the options of the vector tiles the worker seeds (format pbf): their
	// limits (config limits.vectorTile*). They are always gzipped, stored once as served.
	VectorTiles  mvt.Options
	Concurrency  int           // tasks rendered at once (render slots); default 1
	PollInterval time.Duration // how often an awake worker with nothing to do checks the queues; default 1ms
	// HeavySlots is how many of those slots task.QueueHeavy's renders may take at once; default
	// max(1, Concurrency/2), at most Concurrency-1 so that one is always left for the other
	// queues. A worker that serves only the heavy queue gives it every slot.
	HeavySlots int
	// ReleaseMemoryEvery, when positive, is how often at most the worker also releases memory
	// while it works, once no heavy render is in progress; default 0: only when it goes to
	// sleep (see memoryReleaser: a release costs the renders beside it up to a few hundred
	// milliseconds).
	ReleaseMemoryEvery time.Duration
	// IdleAfter is how long a worker stays awake with its queues empty before it stops polling
	// them and sleeps until an enqueue wakes it (task.WakeChannel); default 2s, negative never
	// sleeps. A sleeping worker also looks at its queues every SleepCheck (default 5s), for
	// tasks enqueued without an announcement and for scheduled and retried tasks coming due.
	IdleAfter  time.Duration
	SleepCheck time.Duration
	Logger     *slog.Logger
	// ID names this worker in results and logs; default host:pid.
	ID string
	// Metrics, when set, records every task's duration and result.
	Metrics *metrics.Metrics
	// Queues are the queues to take tasks from (task.QueueInteractive, which brings
	// task.QueueHeavy with it, task.QueueHeavy alone, task.QueueSeed), with their usual
	// weights; empty means all of them. A worker for only one queue lets seeding and
	// interactive renders run on separate workers.
	Queues []string
	// StartAttrs are added to the start log line: the Redis and the store this process uses
	// ("redis", "10.0.0.5:6379 db 0", "store", "minio http://minio:9000 bucket mapfarm"), so that
	// processes on different stores show in the logs. internal/app sets them.
	StartAttrs []any
}

// Worker runs render tasks.
type Worker struct {
	p       Params
	mux     *asynq.ServeMux
	queues  map[string]int // every queue of every lane
	lanes   []lane
	slots   chan struct{} // render slots, one token per task in progress
	memory  *memoryReleaser
	err     error // a bad Params.Queues, returned by Run
	inspect *asynq.Inspector

	active atomic.Int64 // tasks being processed
	last   atomic.Int64 // when a task last started or ended (unix nanoseconds)
	asleep atomic.Bool
}

// Asleep reports whether the worker has stopped polling its empty queues (see Run).
func (w *Worker) Asleep() bool { return w.asleep.Load() }

// lane is one asynq server of a worker: its queues, with their weights, and its slots.
type lane struct {
	name        string
	queues      map[string]int
	concurrency int
	// poll, when set, is the lane's own poll interval (Params.PollInterval otherwise).
	poll time.Duration
}

// heavyPoll is the heavy lane's poll interval beside a normal lane: renders that take seconds do
// not need the normal lane's millisecond, and an awake worker's polling of Redis does not double.
const heavyPoll = 10 * time.Millisecond

// laneNames are the lanes' names in logs.
const (
	laneNormal = "normal"
	laneHeavy  = "heavy"
)

// planLanes splits the named queues (none: every queue) into the worker's lanes: the heavy
// queue in a lane of heavySlots, the others in one of slots. Naming task.QueueInteractive
// brings task.QueueHeavy with it.
func planLanes(names []string, slots, heavySlots int) ([]lane, error) {
	all := task.QueuePriorities()
	chosen := map[string]int{}
	if len(names) == 0 {
		chosen = all
	}
	for _, n := range names {
		w, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("worker: no queue %q (the queues are %s, %s and %s)", n, task.QueueInteractive, task.QueueHeavy, task.QueueSeed)
		}
		chosen[n] = w
		if n == task.QueueInteractive {
			chosen[task.QueueHeavy] = all[task.QueueHeavy]
		}
	}
	normal := map[string]int{}
	for q, w := range chosen {
		if q != task.QueueHeavy {
			normal[q] = w
		}
	}
	var out []lane
	if len(normal) > 0 {
		out = append(out, lane{name: laneNormal, queues: normal, concurrency: slots})
	}
	if w, ok := chosen[task.QueueHeavy]; ok {
		l := lane{name: laneHeavy, queues: map[string]int{task.QueueHeavy: w}, concurrency: heavySlots, poll: heavyPoll}
		if len(normal) == 0 {
			l.concurrency, l.poll = slots, 0 // nothing else to leave room for
		}
		out = append(out, l)
	}
	return out, nil
}

// heavySlots is the heavy lane's share of slots render slots: want (0: half), at least 1 and,
// with two slots or more, at most all but one.
func heavySlots(want, slots int) int {
	if want <= 0 {
		want = slots / 2
	}
	return max(1, min(want, slots-1))
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
	p.HeavySlots = heavySlots(p.HeavySlots, p.Concurrency)
	lanes, qerr := planLanes(p.Queues, p.Concurrency, p.HeavySlots)
	queues := map[string]int{}
	for _, l := range lanes {
		maps.Copy(queues, l.queues)
	}
	if p.IdleAfter == 0 {
		p.IdleAfter = 2 * time.Second
	}
	if p.SleepCheck <= 0 {
		p.SleepCheck = 5 * time.Second
	}
	w := &Worker{p: p, queues: queues, lanes: lanes, err: qerr, inspect: asynq.NewInspectorFromRedisClient(p.Redis),
		// A one-slot worker's heavy lane gets a slot of its own: the slot is never the heavy one's alone.
		slots: make(chan struct{}, max(p.Concurrency, p.HeavySlots+1)),
	}
	w.memory = newMemoryReleaser(p.ReleaseMemoryEvery, w.freeMemory)
	mux := asynq.NewServeMux()
	mux.Use(w.track)
	mux.Use(w.takeSlot)
	watch := &redisWatch{}
	p.Redis.AddHook(watch)
	mux.Use(awaitRedis(watch, p.Redis, redisAwayWait, redisAwayPoll))
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
	w.mux = mux
	return w
}

// newServer returns the asynq server of lane l, which takes tasks while the worker is awake.
func (w *Worker) newServer(l lane) *asynq.Server {
	p := w.p
	poll := p.PollInterval
	if l.poll > poll {
		poll = l.poll
	}
	return asynq.NewServerFromRedisClient(p.Redis, asynq.Config{
		Concurrency:       l.concurrency,
		Queues:            l.queues,
		TaskCheckInterval: poll,
		ShutdownTimeout:   30 * time.Second,
		Logger:            asynqLogger{p.Logger},
		LogLevel:          asynq.WarnLevel,
		RetryDelayFunc:    retryDelay,
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			id, _ := asynq.GetTaskID(ctx)
			q, _ := asynq.GetQueueName(ctx)
			p.Logger.Warn("task failed", "type", t.Type(), "queue", q, "task_id", id, "err", err)
		}),
	})
}

// takeSlot holds one of the worker's render slots while a task runs; a task of the heavy queue
// also counts for the memory release that follows heavy renders, and runs at a lower CPU
// priority.
func (w *Worker) takeSlot(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		select {
		case w.slots <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for a render slot: %w", t.Type(), context.Cause(ctx))
		}
		defer func() { <-w.slots }()
		if q, _ := asynq.GetQueueName(ctx); q == task.QueueHeavy {
			w.memory.start()
			defer w.memory.done()
			// At a lower CPU priority: on a machine with few cores an ordinary render beside
			// it gets the CPU first (internal/priority).
			var err error
			priority.Low(func() { err = next.ProcessTask(ctx, t) })
			return err
		}
		return next.ProcessTask(ctx, t)
	})
}

// track counts the tasks in progress and notes when the last one started or ended.
func (w *Worker) track(next asynq.Handler) asynq.Handler {
	return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		w.active.Add(1)
		w.touch()
		defer func() {
			w.active.Add(-1)
			w.touch()
		}()
		return next.ProcessTask(ctx, t)
	})
}

func (w *Worker) touch() { w.last.Store(time.Now().UnixNano()) }

func (w *Worker) idleFor() time.Duration { return time.Duration(time.Now().UnixNano() - w.last.Load()) }

// Run processes tasks until ctx is done, then stops taking new tasks and waits (up to 30s) for
// the ones in flight; unfinished tasks go back to the queue. A ctx that ends is a clean stop: Run
// then returns nil, also when it ends while the worker is still connecting to Redis.
//
// While tasks come, the worker polls its queues every PollInterval (1 ms: a task waits for a
// worker at most that long). Once its queues have been empty for IdleAfter it stops polling and
// sleeps on task.WakeChannel, where every enqueue is announced (task.Queue), so an idle worker
// costs next to no CPU, in itself or in Redis; the next task wakes it in about a millisecond.
func (w *Worker) Run(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	var wake <-chan *redis.Message
	if w.p.IdleAfter > 0 {
		sub := w.p.Redis.Subscribe(ctx, task.WakeChannel)
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil {
			if ctx.Err() != nil {
				// Stopped while it was still connecting: a clean stop, whatever the
				// cancelled dial or read says ("operation was canceled").
				w.p.Logger.Info("worker stopped before it started")
				return nil
			}
			return fmt.Errorf("worker: subscribe to %s: %w", task.WakeChannel, err)
		}
		wake = sub.Channel()
	}
	defer w.memory.stop()
	for started := false; ; started = true {
		servers := make([]*asynq.Server, 0, len(w.lanes))
		for _, l := range w.lanes {
			srv := w.newServer(l)
			if err := srv.Start(w.mux); err != nil {
				shutdown(servers)
				return fmt.Errorf("worker: start lane %s: %w", l.name, err)
			}
			servers = append(servers, srv)
		}
		if !started {
			lanes := make([]any, 0, len(w.lanes))
			for _, l := range w.lanes {
				lanes = append(lanes, slog.Group("lane_"+l.name, "queues", l.queues, "slots", l.concurrency))
			}
			w.p.Logger.Info("worker started", append(append([]any{"worker_id", w.p.ID, "concurrency", w.p.Concurrency, "queues", w.queues,
				"idle_after", w.p.IdleAfter.String()}, lanes...), w.p.StartAttrs...)...)
		} else {
			w.p.Logger.Debug("worker awake")
		}
		w.touch()
		w.awake(ctx, wake)
		shutdown(servers)
		if ctx.Err() == nil {
			w.p.Logger.Debug("worker asleep: its queues are empty", "idle_for", w.idleFor().String())
			w.memory.idle()
			w.asleep.Store(true)
			w.sleep(ctx, wake)
			w.asleep.Store(false)
		}
		if ctx.Err() != nil {
			w.p.Logger.Info("worker stopped")
			return nil
		}
	}
}

// freeMemory collects twice (the first collection moves what sync.Pools hold, the renderer's,
// the encoders', the store client's buffers, to their victim caches, the second frees them),
// and when no task at all is in progress returns every free page to the operating system at
// once (debug.FreeOSMemory). That last step holds the runtime's heap lock while it returns the
// pages, tens of milliseconds after a few 4096×4096 renders, and would stall the renders beside
// it; with renders in progress the runtime's background scavenger returns the freed pages
// instead, over seconds (about 30 MB/s here). It logs, at debug level, what the heap kept.
func (w *Worker) freeMemory() (all bool) {
	runtime.GC()
	if all = w.active.Load() == 0; all {
		debug.FreeOSMemory()
	} else {
		runtime.GC()
	}
	if log := w.p.Logger; log.Enabled(context.Background(), slog.LevelDebug) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		log.Debug("released memory after heavy renders", "returned_to_os", all, "heap_inuse_mb", ms.HeapInuse>>20, "heap_released_mb", ms.HeapReleased>>20, "sys_mb", ms.Sys>>20)
	}
	return all
}

// shutdown stops the lanes' servers at once, each waiting for its tasks in flight.
func shutdown(servers []*asynq.Server) {
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.Shutdown()
		}()
	}
	wg.Wait()
}

// awake returns when ctx is done or, when the worker may sleep, once it has had nothing to do
// for IdleAfter and its queues hold nothing for it.
func (w *Worker) awake(ctx context.Context, wake <-chan *redis.Message) {
	if w.p.IdleAfter <= 0 {
		<-ctx.Done()
		return
	}
	tick := time.NewTicker(max(w.p.IdleAfter/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			w.touch() // more is coming
		case <-tick.C:
			if w.active.Load() == 0 && w.idleFor() >= w.p.IdleAfter && !w.workWaiting() {
				return
			}
		}
	}
}

// sleep returns when an enqueue is announced, when a look at the queues (every SleepCheck)
// finds work, or when ctx is done.
func (w *Worker) sleep(ctx context.Context, wake <-chan *redis.Message) {
	tick := time.NewTicker(w.p.SleepCheck)
	defer tick.Stop()
	for !w.workWaiting() {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			return
		case <-tick.C:
		}
	}
}

// workWaiting reports whether one of the worker's queues holds a pending or an active task, or a
// scheduled or retried one that is due. In doubt (Redis does not answer), it says yes: the worker stays
// awake, as it always did.
func (w *Worker) workWaiting() bool {
	now := time.Now()
	for q := range w.queues {
		pending, err := w.inspect.ListPendingTasks(q, asynq.PageSize(1))
		if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			return true
		}
		if len(pending) > 0 {
			return true
		}
		// Tasks under way (on other workers, or orphaned by a worker that died, which only a
		// running server's recoverer puts back in the queue once their lease runs out): stay awake.
		active, err := w.inspect.ListActiveTasks(q, asynq.PageSize(1))
		if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			return true
		}
		if len(active) > 0 {
			return true
		}
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){w.inspect.ListScheduledTasks, w.inspect.ListRetryTasks} {
			ts, err := list(q, asynq.PageSize(1))
			if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
				return true
			}
			if len(ts) > 0 && !ts[0].NextProcessAt.After(now) {
				return true
			}
		}
	}
	return false
}

// skipAbandoned drops, undrawn and for good, a retry of an interactive task whose client has
// stopped waiting (internal/farm marks it; asynq retries a task cancelled on its worker). First
// tries are not looked up: a task nobody waits for any more was deleted from the queue or is
// past its deadline, which asynq checks itself.
func skipAbandoned(rdb redis.UniversalClient) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			if n, _ := asynq.GetRetryCount(ctx); n > 0 {
				if q, _ := asynq.GetQueueName(ctx); task.IsInteractive(q) {
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
