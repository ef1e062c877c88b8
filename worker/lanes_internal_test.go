package worker

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// holdHandler is a test task that stays in its slot until released.
type holdHandler struct {
	started chan string   // the task's id, once it runs
	release chan struct{} // closed to let every held task end
	running atomic.Int64
}

func (h *holdHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	id, _ := asynq.GetTaskID(ctx)
	h.running.Add(1)
	defer h.running.Add(-1)
	h.started <- id
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A worker with two slots, its heavy lane full (two heavy renders held by a test hook, the second
// waiting for the first), still draws an ordinary render at once: heavy renders take one slot at
// most. Real Redis; the ordinary render is a real scale bar through the farm client.
func TestNormalRenderIsNotBlockedByHeavyOnes(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	w := New(Params{Redis: rdb, Concurrency: 2, Renderer: r, Store: &memStore{objs: map[string][]byte{}},
		ReleaseMemoryEvery: -1, Logger: slog.New(slog.DiscardHandler)})
	if w.p.HeavySlots != 1 {
		t.Fatalf("a 2-slot worker gives heavy renders %d slots, want 1", w.p.HeavySlots)
	}
	hold := &holdHandler{started: make(chan string, 4), release: make(chan struct{})}
	w.mux.Handle("test:hold", hold)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	released := false
	t.Cleanup(func() {
		if !released {
			close(hold.release)
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	q := task.NewQueue(rdb)
	for i := range 2 {
		id := "heavy-" + string(rune('a'+i)) + "-" + t.Name()
		if _, err := q.EnqueueContext(context.Background(), asynq.NewTask("test:hold", nil), asynq.Queue(task.QueueHeavy),
			asynq.TaskID(id), asynq.MaxRetry(0), asynq.Retention(0)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-hold.started:
	case <-time.After(10 * time.Second):
		t.Fatal("no heavy task started within 10 s")
	}
	// The heavy lane is full and one more heavy task is queued. An ordinary render must not
	// wait for either: it is answered while they are still held.
	res, err := farm.NewClient(rdb, 10*time.Second).ExportScaleBar(context.Background(), bar("normal-"+t.Name()))
	if err != nil || res.Error != "" || len(res.Data) == 0 {
		t.Fatalf("an ordinary render beside the held heavy ones: %+v, %v", res, err)
	}
	if n := hold.running.Load(); n != 1 {
		t.Errorf("%d heavy tasks ran at once in a 2-slot worker, want 1 (the heavy lane's slots)", n)
	}
	select {
	case id := <-hold.started:
		t.Errorf("heavy task %s started while the heavy lane was full", id)
	default:
	}
	close(hold.release)
	released = true
	select { // the queued heavy task runs once the first is done
	case <-hold.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the second heavy task did not start after the first ended")
	}
}

// A sleeping worker is woken by an enqueue on the heavy queue, draws the render there, returns
// the freed memory afterwards and goes back to sleep.
func TestSleepingWorkerWakesForHeavyRenders(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	w := startSleeper(t, rdb, time.Hour)                          // only the announcement can wake it
	c := farm.NewClient(rdb, 10*time.Second, farm.HeavyPixels(1)) // every render is heavy
	res, err := c.ExportScaleBar(context.Background(), bar("wake-heavy-"+t.Name()))
	if err != nil || res.Error != "" || len(res.Data) == 0 {
		t.Fatalf("a heavy scale bar through a sleeping worker: %+v, %v", res, err)
	}
	// The heavy render is followed by a release of the freed memory (the first one at once).
	for deadline := time.Now().Add(5 * time.Second); w.memory.releases() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no memory release after a heavy render")
		}
	}
	for deadline := time.Now().Add(5 * time.Second); !w.Asleep(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker did not sleep again")
		}
	}
}

// The lanes of each worker configuration: the heavy queue in a lane of its own, with fewer slots.
func TestPlanLanes(t *testing.T) {
	for _, tc := range []struct {
		queues            []string
		slots, heavy      int
		normal, heavyLane []string // queues of each lane; nil: no such lane
		heavySlots        int
	}{
		{queues: nil, slots: 2, heavy: 1, normal: []string{"interactive", "seed"}, heavyLane: []string{"heavy"}, heavySlots: 1},
		{queues: []string{"interactive"}, slots: 4, heavy: 2, normal: []string{"interactive"}, heavyLane: []string{"heavy"}, heavySlots: 2},
		{queues: []string{"seed"}, slots: 2, heavy: 1, normal: []string{"seed"}},
		{queues: []string{"heavy"}, slots: 3, heavy: 1, heavyLane: []string{"heavy"}, heavySlots: 3},
	} {
		lanes, err := planLanes(tc.queues, tc.slots, tc.heavy)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]lane{}
		for _, l := range lanes {
			got[l.name] = l
		}
		names := func(l lane, ok bool) []string {
			if !ok {
				return nil
			}
			return slices.Sorted(maps.Keys(l.queues))
		}
		n, okN := got[laneNormal]
		h, okH := got[laneHeavy]
		if !slices.Equal(names(n, okN), tc.normal) || !slices.Equal(names(h, okH), tc.heavyLane) {
			t.Errorf("queues %q: lanes normal %q heavy %q, want %q and %q", tc.queues, names(n, okN), names(h, okH), tc.normal, tc.heavyLane)
		}
		if okN && n.concurrency != tc.slots {
			t.Errorf("queues %q: normal lane has %d slots, want all %d", tc.queues, n.concurrency, tc.slots)
		}
		if okH && h.concurrency != tc.heavySlots {
			t.Errorf("queues %q: heavy lane has %d slots, want %d", tc.queues, h.concurrency, tc.heavySlots)
		}
	}
	if _, err := planLanes([]string{"bulk"}, 2, 1); err == nil {
		t.Error("an unknown queue was accepted")
	}
	for _, tc := range []struct{ want, slots, got int }{{0, 1, 1}, {0, 2, 1}, {0, 8, 4}, {5, 4, 3}, {2, 8, 2}, {3, 1, 1}} {
		if g := heavySlots(tc.want, tc.slots); g != tc.got {
			t.Errorf("heavySlots(%d, %d) = %d, want %d", tc.want, tc.slots, g, tc.got)
		}
	}
}
