package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// runWorker runs w until the test ends, then stops it; an error from Run fails the test.
func runWorker(t *testing.T, w *Worker) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// memStore is a Store in memory.
type memStore struct {
	mu   sync.Mutex
	objs map[string][]byte
}

func (m *memStore) Put(_ context.Context, key string, data []byte, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objs[key] = data
	return nil
}

// TestFailuresNotRetried (issue 17, real Redis): a task whose handler panics, and a scale bar
// whose numbers the renderer refuses, are each reported once to the waiting api — a server error
// for the panic, a client error for the numbers — at once, not after the api's timeout, and
// archived without a retry, though the task allows three.
func TestFailuresNotRetried(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	w := New(Params{Redis: rdb, Queues: []string{task.QueueInteractive}, Renderer: r, Store: &memStore{objs: map[string][]byte{}},
		ID: "test-worker", Logger: slog.New(slog.DiscardHandler)})
	var panics atomic.Int32
	w.mux.HandleFunc("test:panic", func(context.Context, *asynq.Task) error {
		panics.Add(1)
		var zero int
		_ = 1 / zero // a runtime panic, as the rasterizer's divide by zero was
		return nil
	})
	runWorker(t, w)

	client := asynq.NewClientFromRedisClient(rdb)
	inspector := asynq.NewInspectorFromRedisClient(rdb)
	hostileBar := task.ExportScaleBar{ID: "hostile-bar-" + t.Name(), Width: 400, Height: 40, DPI: 96, Format: "png32", Key: "outputs/x.png",
		Bar: task.ScaleBar{Kind: string(render.ScaleBarAlternating), PixelsPerUnit: 2, Division: 1e308, Resize: string(render.ResizeFixed)}}
	barTask, err := task.NewExportScaleBar(hostileBar, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		task       *asynq.Task
		id         string
		wantClient bool
		wantError  string
	}{
		{"panic", asynq.NewTask("test:panic", nil), "panic-" + t.Name(), false, "internal error"},
		{"scale bar division 1e308", barTask, hostileBar.ID, true, "division"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb.Del(context.Background(), task.DoneKey(tc.id))
			start := time.Now()
			if _, err := client.Enqueue(tc.task, asynq.Queue(task.QueueInteractive), asynq.TaskID(tc.id), asynq.MaxRetry(3)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { inspector.DeleteTask(task.QueueInteractive, tc.id) })
			got, err := rdb.BLPop(context.Background(), 10*time.Second, task.DoneKey(tc.id)).Result()
			if err != nil {
				t.Fatalf("no result within 10 s: %v", err)
			}
			var res task.Result
			if err := json.Unmarshal([]byte(got[1]), &res); err != nil {
				t.Fatal(err)
			}
			if res.Error == "" || !strings.Contains(res.Error, tc.wantError) || res.ClientError != tc.wantClient || res.Worker != "test-worker" {
				t.Errorf("result %+v, want an error saying %q, client error %v", res, tc.wantError, tc.wantClient)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the result took %v", took)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				info, err := inspector.GetTaskInfo(task.QueueInteractive, tc.id)
				if err != nil {
					t.Fatal(err)
				}
				if info.State == asynq.TaskStateArchived {
					if info.Retried != 0 {
						t.Errorf("retried %d times", info.Retried)
					}
					break
				}
				if info.State == asynq.TaskStateRetry || time.Now().After(deadline) {
					t.Fatalf("task is %v, want archived at once", info.State)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Reported once: nothing more arrives.
			time.Sleep(200 * time.Millisecond)
			if n := rdb.LLen(context.Background(), task.DoneKey(tc.id)).Val(); n != 0 {
				t.Errorf("%d more results", n)
			}
		})
	}
	if n := panics.Load(); n != 1 {
		t.Errorf("the panicking handler ran %d times, want 1", n)
	}
}
