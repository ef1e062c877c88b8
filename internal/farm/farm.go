// Package farm is the client side of the render farm: it puts a task on the queue and waits,
// bounded, for the worker's result. The api uses it for interactive renders.
package farm

import (
	"context"
	"encoding/json"
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
	queue   *asynq.Client
	rdb     redis.UniversalClient
	timeout time.Duration
}

// NewClient returns a client over a Redis connection. rdb must allow as many connections as
// there are concurrent waits (each wait holds one for a blocking pop).
func NewClient(rdb redis.UniversalClient, timeout time.Duration) *Client {
	return &Client{queue: asynq.NewClientFromRedisClient(rdb), rdb: rdb, timeout: timeout}
}

// Export queues an ExportMap task and waits for its result.
func (c *Client) Export(ctx context.Context, job task.ExportMap) (task.Result, error) {
	t, err := task.NewExportMap(job, c.timeout)
	if err != nil {
		return task.Result{}, err
	}
	return c.run(ctx, job.ID, t)
}

// ExportScaleBar queues an ExportScaleBar task and waits for its result.
func (c *Client) ExportScaleBar(ctx context.Context, job task.ExportScaleBar) (task.Result, error) {
	t, err := task.NewExportScaleBar(job, c.timeout)
	if err != nil {
		return task.Result{}, err
	}
	return c.run(ctx, job.ID, t)
}

// RenderMetatile queues a CacheMetatile task (an on-demand cache tile) and waits for its result.
func (c *Client) RenderMetatile(ctx context.Context, job task.CacheMetatile) (task.Result, error) {
	t, err := task.NewCacheMetatile(job, c.timeout)
	if err != nil {
		return task.Result{}, err
	}
	return c.run(ctx, job.ID, t)
}

func (c *Client) run(ctx context.Context, id string, t *asynq.Task) (task.Result, error) {
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if _, err := c.queue.EnqueueContext(ctx, t); err != nil {
		return task.Result{}, fmt.Errorf("farm: enqueue %s: %w", t.Type(), err)
	}
	wait := time.Until(deadline)
	if wait < time.Millisecond {
		return task.Result{}, ErrTimeout
	}
	vals, err := c.rdb.BLPop(ctx, wait, task.DoneKey(id)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return task.Result{}, fmt.Errorf("%w (waited %s for task %s)", ErrTimeout, wait.Round(time.Millisecond), id)
	case err != nil:
		return task.Result{}, fmt.Errorf("farm: wait for task %s: %w", id, err)
	}
	var r task.Result
	if err := json.Unmarshal([]byte(vals[1]), &r); err != nil {
		return task.Result{}, fmt.Errorf("farm: decode result of task %s: %w", id, err)
	}
	return r, nil
}

// Close releases the queue client (not the Redis client, which the caller owns).
func (c *Client) Close() error { return nil }
