package worker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// A task cancelled on its worker because its client left comes back as a retry (asynq retries
// cancelled tasks); skipAbandoned drops that retry undrawn.
func TestRetryOfAnAbandonedTaskIsDropped(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	defer rdb.Close()
	var draws atomic.Int32
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{task.QueueInteractive: 1}, TaskCheckInterval: 5 * time.Millisecond,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 10 * time.Millisecond },
		LogLevel:       asynq.FatalLevel,
	})
	mux := asynq.NewServeMux()
	mux.Use(skipAbandoned(rdb))
	mux.HandleFunc("test:abandon", func(ctx context.Context, _ *asynq.Task) error {
		if draws.Add(1) == 1 {
			// The client leaves during the first draw.
			if err := rdb.Set(ctx, task.AbandonedKey("abandoned-1"), 1, time.Minute).Err(); err != nil {
				t.Error(err)
			}
			return errors.New("cancelled")
		}
		return nil
	})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	q := asynq.NewClientFromRedisClient(rdb)
	defer q.Close()
	if _, err := q.Enqueue(asynq.NewTask("test:abandon", nil), asynq.Queue(task.QueueInteractive), asynq.TaskID("abandoned-1"), asynq.MaxRetry(1)); err != nil {
		t.Fatal(err)
	}
	ins := asynq.NewInspectorFromRedisClient(rdb)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := ins.GetTaskInfo(task.QueueInteractive, "abandoned-1")
		if err == nil && info.State == asynq.TaskStateArchived {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned task did not end: %+v, %v", info, err)
		}
	}
	if n := draws.Load(); n != 1 {
		t.Errorf("the task was drawn %d times; its retry after the client left must not be drawn", n)
	}
}
