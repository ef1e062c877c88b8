// Package farm is the client side of the render farm: it puts a task on the queue and waits,
// bounded, for the worker's result. The api uses it for interactive renders.
//
// Work stops when nobody waits for it: a task's asynq deadline is its client's (the request's
// deadline, or the render timeout when that comes first), so a task still queued when its client
// would have given up is never drawn, and a running one is cancelled at that moment; and when the
// client goes away (its context is cancelled) or stops waiting, the task is deleted from the
// queue, or, when a worker has it already, cancelled there (asynq's cancellation, which ends
// the draw's context).
//
// Expensive renders go on a queue of their own: ExportMap and ExportScaleBar tasks whose cost
// (task.ExportMapCost, task.ExportScaleBarCost) reaches the client's heavy threshold are queued
// on task.QueueHeavy, which workers serve with fewer slots than they have, so that they never
// hold every slot (see internal/task's lanes.go and worker.Params.HeavySlots).
package farm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/task"
)

// ErrTimeout is returned when no worker answered within the render timeout.
var ErrTimeout = errors.New("farm: no worker finished the render in time")

// Client enqueues renders and waits for their results.
type Client struct {
	queue       *task.Queue
	inspect     *asynq.Inspector
	rdb         redis.UniversalClient
	timeout     time.Duration
	heavyPixels int64
}

// Option changes a Client.
type Option func(*Client)

// HeavyPixels sets the cost from which a render goes on task.QueueHeavy (default
// task.DefaultHeavyPixels); not positive: every render goes on task.QueueInteractive.
func HeavyPixels(n int64) Option { return func(c *Client) { c.heavyPixels = n } }

// NewClient returns a client over a Redis connection. rdb must allow as many connections as
// there are concurrent waits (each wait holds one for a blocking pop).
func NewClient(rdb redis.UniversalClient, timeout time.Duration, opts ...Option) *Client {
	c := &Client{queue: task.NewQueue(rdb), inspect: asynq.NewInspectorFromRedisClient(rdb), rdb: rdb, timeout: timeout,
		heavyPixels: task.DefaultHeavyPixels}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Export queues an ExportMap task, on the heavy queue when it is expensive, and waits for its
// result.
func (c *Client) Export(ctx context.Context, job task.ExportMap) (task.Result, error) {
	queue := task.InteractiveQueue(task.ExportMapCost(job), c.heavyPixels)
	return submit(ctx, c, job.ID, job, task.NewExportMap, queue)
}

// ExportScaleBar queues an ExportScaleBar task, on the heavy queue when it is expensive, and
// waits for its result.
func (c *Client) ExportScaleBar(ctx context.Context, job task.ExportScaleBar) (task.Result, error) {
	queue := task.InteractiveQueue(task.ExportScaleBarCost(job), c.heavyPixels)
	return submit(ctx, c, job.ID, job, task.NewExportScaleBar, queue)
}

// RenderMetatile queues a CacheMetatile task (an on-demand cache tile) and waits for its result.
func (c *Client) RenderMetatile(ctx context.Context, job task.CacheMetatile) (task.Result, error) {
	return submit(ctx, c, job.ID, job, task.NewCacheMetatile, task.QueueInteractive)
}

// submit builds the task of job (request id id) with newTask, due by the client's deadline,
// queues it on queue and waits for its result.
func submit[J any](ctx context.Context, c *Client, id string, job J,
	newTask func(J, time.Duration) (*asynq.Task, error), queue string) (task.Result, error) {
	deadline := c.deadline(ctx)
	t, err := newTask(job, time.Until(deadline))
	if err != nil {
		return task.Result{}, err
	}
	return c.run(ctx, id, t, queue, deadline)
}

// deadline is when the client stops waiting: the render timeout from now, or ctx's deadline
// when that comes first.
func (c *Client) deadline(ctx context.Context) time.Time {
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// run puts t on queue (the last option wins over the task's own) and waits for its result.
func (c *Client) run(ctx context.Context, id string, t *asynq.Task, queue string, deadline time.Time) (task.Result, error) {
	if _, err := c.queue.EnqueueContext(ctx, t, asynq.Queue(queue)); err != nil {
		return task.Result{}, fmt.Errorf("farm: enqueue %s: %w", t.Type(), err)
	}
	wait := time.Until(deadline)
	if wait < time.Millisecond {
		c.abandon(queue, id)
		return task.Result{}, ErrTimeout
	}
	// A blocking pop does not end when ctx is cancelled (go-redis checks ctx only between
	// commands), so a cancellation wakes it with a marker of its own.
	stop := context.AfterFunc(ctx, func() { c.wake(id) })
	defer stop()
	vals, err := c.rdb.BLPop(context.WithoutCancel(ctx), wait, task.DoneKey(id)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		c.abandon(queue, id)
		return task.Result{}, fmt.Errorf("%w (waited %s for task %s)", ErrTimeout, wait.Round(time.Millisecond), id)
	case ctx.Err() != nil:
		c.abandon(queue, id)
		return task.Result{}, fmt.Errorf("farm: task %s abandoned: %w", id, context.Cause(ctx))
	case err != nil:
		return task.Result{}, fmt.Errorf("farm: wait for task %s: %w", id, err)
	}
	r, err := task.DecodeResult([]byte(vals[1]))
	if err != nil {
		return task.Result{}, fmt.Errorf("farm: result of task %s: %w", id, err)
	}
	return r, nil
}

// wakeMarker is what wake pushes where a worker pushes a Result.
const wakeMarker = "cancelled"

// wake ends the wait for task id's result.
func (c *Client) wake(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	pipe := c.rdb.TxPipeline()
	pipe.LPush(ctx, task.DoneKey(id), wakeMarker)
	pipe.Expire(ctx, task.DoneKey(id), task.ResultTTL)
	_, _ = pipe.Exec(ctx) // best effort: the wait ends at its deadline anyway
}

// abandon stops a task nobody waits for any more: deleted while it is queued, cancelled on
// its worker once it runs. Best effort: a task that ends meanwhile has nothing left to stop.
func (c *Client) abandon(queue, id string) {
	if err := c.inspect.DeleteTask(queue, id); err == nil {
		return
	}
	// Running (or about to be retried): asynq puts a cancelled task up for retry, so mark it
	// first; the worker drops a retry of an abandoned task (worker.skipAbandoned).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = c.rdb.Set(ctx, task.AbandonedKey(id), 1, task.ResultTTL).Err()
	_ = c.inspect.CancelProcessing(id) // only a publish; a finished task ignores it
}
