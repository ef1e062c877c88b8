package worker_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/worker"
)

// TestWorkerQueues: a worker configured for the interactive queue takes interactive tasks and
// leaves seeding tasks alone, and one configured for the seed queue does the opposite (real
// Redis). The tasks have types no handler serves and no retries, so a task the worker took
// ends archived at once; a task it did not take stays pending.
func TestWorkerQueues(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	client := asynq.NewClientFromRedisClient(rdb)
	inspector := asynq.NewInspectorFromRedisClient(rdb)
	enqueue := func(queue string) string {
		t.Helper()
		info, err := client.Enqueue(asynq.NewTask("test:probe", nil), asynq.Queue(queue), asynq.MaxRetry(0))
		if err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	state := func(queue, id string) asynq.TaskState {
		t.Helper()
		info, err := inspector.GetTaskInfo(queue, id)
		if err != nil {
			t.Fatal(err)
		}
		return info.State
	}
	for _, tc := range []struct{ takes, leaves string }{
		{task.QueueInteractive, task.QueueSeed},
		{task.QueueSeed, task.QueueInteractive},
	} {
		t.Run(tc.takes, func(t *testing.T) {
			left := enqueue(tc.leaves)
			taken := enqueue(tc.takes)
			ctx, cancel := context.WithCancel(context.Background())
			w := worker.New(worker.Params{Redis: rdb, Queues: []string{tc.takes}, Concurrency: 1, Logger: slog.New(slog.DiscardHandler)})
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			deadline := time.Now().Add(20 * time.Second)
			for state(tc.takes, taken) != asynq.TaskStateArchived {
				if time.Now().After(deadline) {
					t.Fatalf("the %s task was not taken within 20 s", tc.takes)
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The worker polls every millisecond: had it consumed the other queue, that
			// task, enqueued first, would be gone by now.
			time.Sleep(200 * time.Millisecond)
			if s := state(tc.leaves, left); s != asynq.TaskStatePending {
				t.Errorf("the %s task is %v, want pending", tc.leaves, s)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if err := inspector.DeleteTask(tc.leaves, left); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("unknown queue", func(t *testing.T) {
		w := worker.New(worker.Params{Redis: rdb, Queues: []string{"bulk"}})
		err := w.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), `"bulk"`) {
			t.Fatalf("Run with queue bulk: %v", err)
		}
	})
}
