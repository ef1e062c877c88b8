package farm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

func redisClient(t *testing.T) redis.UniversalClient {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func job(id string) task.ExportMap {
	return task.ExportMap{ID: id, Service: "world", Map: "Layers", Width: 10, Height: 10, DPI: 96, Format: "png", Key: "outputs/" + id + ".png"}
}

// A client that goes away while its task is queued takes the task off the queue: no worker
// will ever draw it.
func TestQueuedTaskOfAGoneClientIsDeleted(t *testing.T) {
	rdb := redisClient(t)
	c := farm.NewClient(rdb, 30*time.Second)
	ins := asynq.NewInspectorFromRedisClient(rdb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Export(ctx, job("gone-queued"))
		done <- err
	}()
	// The task is queued (no worker runs here).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := ins.GetTaskInfo(task.QueueInteractive, "gone-queued"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task never showed up in the queue")
		}
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Export after the client left: %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Export still waits after its client left")
	}
	if info, err := ins.GetTaskInfo(task.QueueInteractive, "gone-queued"); !errors.Is(err, asynq.ErrTaskNotFound) {
		t.Errorf("the abandoned task is still queued: %+v, %v", info, err)
	}
}

// A task's deadline is its client's, not the farm's longer render timeout, so a worker that
// picks it up after the client gave up does not draw it.
func TestTaskDeadlineIsTheClients(t *testing.T) {
	rdb := redisClient(t)
	c := farm.NewClient(rdb, 30*time.Second)
	ins := asynq.NewInspectorFromRedisClient(rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	clientDeadline, _ := ctx.Deadline()
	seen := make(chan time.Time, 1)
	go func() {
		for range 100 {
			if info, err := ins.GetTaskInfo(task.QueueInteractive, "short-deadline"); err == nil {
				seen <- info.Deadline
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		close(seen)
	}()
	if _, err := c.Export(ctx, job("short-deadline")); !errors.Is(err, farm.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Export past its deadline: %v", err)
	}
	d, ok := <-seen
	if !ok {
		t.Fatal("the task was never seen in the queue")
	}
	if d.After(clientDeadline.Add(time.Second)) { // asynq keeps deadlines to the second
		t.Errorf("task deadline %v, the client's is %v", d, clientDeadline)
	}
}

// A client that goes away while a worker draws its task cancels the draw: the handler's
// context ends.
func TestRunningTaskOfAGoneClientIsCancelled(t *testing.T) {
	rdb := redisClient(t)
	started, stopped := make(chan struct{}), make(chan error, 1)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 1, Queues: map[string]int{task.QueueInteractive: 1}, TaskCheckInterval: 5 * time.Millisecond,
		LogLevel: asynq.FatalLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(task.TypeExportMap, func(ctx context.Context, _ *asynq.Task) error {
		close(started)
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
		case <-time.After(10 * time.Second):
			stopped <- errors.New("never cancelled")
		}
		return ctx.Err()
	})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	c := farm.NewClient(rdb, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = c.Export(ctx, job("gone-running")) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no worker picked the task up")
	}
	cancel()
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the draw ended with %v, want its context cancelled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the draw went on after its client left")
	}
}
