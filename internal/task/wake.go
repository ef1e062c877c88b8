package task

import (
	"context"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// WakeChannel is the Redis Pub/Sub channel an enqueue is announced on. A worker whose queues
// have been empty for a while stops polling them and sleeps on this channel (worker.Run), so an
// idle farm costs next to nothing, and the next task wakes it at once.
const WakeChannel = "mapfarm:wake"

// Queue puts tasks on the queues and wakes the sleeping workers. Every process that enqueues
// uses it: the api (renders), the coordinator (seeding) and the workers (bundle merges).
type Queue struct {
	client *asynq.Client
	rdb    redis.UniversalClient
}

// NewQueue returns a Queue over a Redis connection the caller owns.
func NewQueue(rdb redis.UniversalClient) *Queue {
	return &Queue{client: asynq.NewClientFromRedisClient(rdb), rdb: rdb}
}

// EnqueueContext enqueues t as asynq.Client does, then announces it on WakeChannel. The
// announcement is best effort: a sleeping worker also looks at the queues every few seconds.
func (q *Queue) EnqueueContext(ctx context.Context, t *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error) {
	info, err := q.client.EnqueueContext(ctx, t, opts...)
	if err == nil {
		_ = q.rdb.Publish(ctx, WakeChannel, t.Type()).Err()
	}
	return info, err
}
