package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// startSleeper runs a worker that sleeps after 100 ms without work and, asleep, looks at its
// queues every check, and waits until it sleeps.
func startSleeper(t *testing.T, rdb redis.UniversalClient, check time.Duration) *Worker {
	t.Helper()
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	w := New(Params{Redis: rdb, Queues: []string{task.QueueInteractive}, Renderer: r, Store: &memStore{objs: map[string][]byte{}},
		IdleAfter: 100 * time.Millisecond, SleepCheck: check, Logger: slog.New(slog.DiscardHandler)})
	runWorker(t, w)
	for deadline := time.Now().Add(10 * time.Second); !w.Asleep(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle worker never went to sleep")
		}
	}
	return w
}

func bar(id string) task.ExportScaleBar {
	return task.ExportScaleBar{ID: id, Width: 300, Height: 40, DPI: 96, Format: "png32", Key: "outputs/" + id + ".png",
		Bar: task.ScaleBar{Kind: string(render.ScaleBarAlternating), PixelsPerUnit: 2, Divisions: 4, UnitLabel: "km", Resize: string(render.ResizeFixed)}}
}

// A sleeping worker is woken by the announcement of an enqueue and draws the task at once.
func TestSleepingWorkerWakesOnEnqueue(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	w := startSleeper(t, rdb, time.Hour) // only the announcement can wake it
	c := farm.NewClient(rdb, 10*time.Second)
	start := time.Now()
	res, err := c.ExportScaleBar(context.Background(), bar("wake-"+t.Name()))
	if err != nil || res.Error != "" || len(res.Data) == 0 {
		t.Fatalf("a scale bar through a sleeping worker: %+v, %v", res, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the sleeping worker took %v to answer", took)
	}
	// It goes back to sleep once the queue is empty again.
	for deadline := time.Now().Add(5 * time.Second); !w.Asleep(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not sleep again")
		}
	}
}

// A task enqueued without an announcement (an older api, a lost message) is found by the
// sleeping worker's look at its queues.
func TestSleepingWorkerLooksAtItsQueues(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	startSleeper(t, rdb, 200*time.Millisecond)
	tk, err := task.NewExportScaleBar(bar("silent-"+t.Name()), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	client := asynq.NewClientFromRedisClient(rdb) // enqueues without announcing
	defer client.Close()
	if _, err := client.Enqueue(tk); err != nil {
		t.Fatal(err)
	}
	vals, err := rdb.BLPop(context.Background(), 5*time.Second, task.DoneKey("silent-"+t.Name())).Result()
	if err != nil || len(vals) != 2 {
		t.Fatalf("no result within 5 s from the sleeping worker: %v", err)
	}
}

// An image asked as MIME data comes back in the result and is not written to the store; one
// asked by URL is written.
func TestInlineImagesSkipTheStore(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	store := &memStore{objs: map[string][]byte{}}
	w := New(Params{Redis: rdb, Queues: []string{task.QueueInteractive}, Renderer: r, Store: store, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c := farm.NewClient(rdb, 10*time.Second)
	inline := bar("inline-" + t.Name())
	inline.Inline = true
	res, err := c.ExportScaleBar(context.Background(), inline)
	if err != nil || len(res.Data) == 0 {
		t.Fatalf("inline scale bar: %+v, %v", res, err)
	}
	byURL := bar("url-" + t.Name())
	if res, err := c.ExportScaleBar(context.Background(), byURL); err != nil || res.Error != "" {
		t.Fatalf("scale bar by URL: %+v, %v", res, err)
	}
	time.Sleep(200 * time.Millisecond) // the store write follows the report
	store.mu.Lock()
	defer store.mu.Unlock()
	if _, ok := store.objs[inline.Key]; ok {
		t.Error("an image asked as MIME data was written to the store")
	}
	if _, ok := store.objs[byURL.Key]; !ok {
		t.Error("an image asked by URL was not written to the store")
	}
}
