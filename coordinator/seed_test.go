package coordinator

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/paulmach/orb"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// fakeQueue records enqueued tasks and refuses a repeated id, as asynq does.
type fakeQueue struct {
	mu  sync.Mutex
	ids map[string]*asynq.Task
}

func (q *fakeQueue) EnqueueContext(_ context.Context, t *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	// The id is not readable from a Task; the payload identifies a unit as well.
	id := t.Type() + string(t.Payload())
	if _, ok := q.ids[id]; ok {
		return nil, asynq.ErrTaskIDConflict
	}
	q.ids[id] = t
	return &asynq.TaskInfo{}, nil
}

type seedFixture struct {
	rdb    *redis.Client
	jobs   *seed.Jobs
	queue  *fakeQueue
	store  *blob.Disk
	runner *seedRunner
}

func newSeedFixture(t *testing.T) *seedFixture {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &seedFixture{rdb: rdb, jobs: seed.NewJobs(rdb), queue: &fakeQueue{ids: map[string]*asynq.Task{}}, store: store}
	f.runner = newSeedRunner(seedRunnerParams{jobs: f.jobs, queue: f.queue, store: store, logger: slog.Default(), batch: 2})
	return f
}

func (f *seedFixture) job(t *testing.T, id string) *seed.Spec {
	t.Helper()
	sp := &seed.Spec{ID: id, Service: "world", Map: "Layers", Root: "arcgiscache/" + id, Layers: []seed.Layer{{ID: -1, Folder: tilecache.FusedLayer}},
		Scheme: tilecache.WebMercator(), Storage: tilecache.CompactV2, Extent: orb.Bound{Min: orb.Point{-1.5e6, 3e6}, Max: orb.Point{2.5e6, 7e6}},
		Levels: []int{0, 1, 2, 3, 4, 5}, Mode: seed.RecreateAll, MetatileSize: 4, Buffer: 64, PartTiles: 16, MaxFailures: 10}
	sp.Scheme.LODs = sp.Scheme.LODs[:8]
	if err := f.jobs.Create(context.Background(), sp); err != nil {
		t.Fatal(err)
	}
	return sp
}

func (f *seedFixture) status(t *testing.T, id string) seed.Status {
	t.Helper()
	st, err := f.jobs.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A job is planned a batch per pass from its checkpoint, every bundle once; when every bundle is
// merged the job is done and conf.xml is written.
func TestSeedRunnerPlansAndFinishes(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	sp := f.job(t, "plan-"+testenv.BucketName("j"))
	passes := 0
	for f.status(t, sp.ID).State == seed.StatePlanning {
		if passes++; passes > 10 {
			t.Fatal("planning did not end in 10 passes")
		}
		f.runner.exec(ctx)
		if st := f.status(t, sp.ID); st.State == seed.StatePlanning && st.Checkpoint != int64(2*passes) {
			t.Fatalf("after pass %d checkpoint %d, want %d", passes, st.Checkpoint, 2*passes)
		}
	}
	st := f.status(t, sp.ID)
	if st.State != seed.StateRunning || st.Bundles != 6 || passes != 3 {
		t.Fatalf("after %d passes: %+v", passes, st)
	}
	// Planning again from the start (a coordinator that lost its checkpoint) enqueues nothing new.
	n := len(f.queue.ids)
	units, _ := seed.Plan(sp, 0)
	for u := range units {
		if err := f.runner.enqueue(ctx, sp, u); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.queue.ids) != n {
		t.Fatalf("re-planning enqueued %d new tasks", len(f.queue.ids)-n)
	}
	// Workers report every part and merge (twice: delivery is at least once).
	for _, tk := range f.queue.ids {
		p, err := task.DecodeSeedRender(tk.Payload())
		if err != nil {
			t.Fatal(err)
		}
		bid := seed.BundleID(p.Layer, tilecache.Bundle{TopLeft: p.Bundle})
		for range 2 {
			if _, err := f.jobs.PartDone(ctx, sp.ID, bid, p.Part, seed.PartCounts{Done: int64(p.Tiles())}); err != nil {
				t.Fatal(err)
			}
			if err := f.jobs.MergeDone(ctx, sp.ID, bid, false, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.runner.exec(ctx)
	st = f.status(t, sp.ID)
	if st.State != seed.StateDone || st.Done != st.Total || st.Merged != 6 {
		t.Fatalf("after every merge: %+v", st)
	}
	info, extent, err := tilecache.ReadMetadata(ctx, f.store, sp.Root)
	if err != nil {
		t.Fatal(err)
	}
	if info.Storage != tilecache.CompactV2 || len(info.Scheme.LODs) != 8 || !extent.Contains(orb.Point{0, 5e6}) {
		t.Errorf("metadata: %v, %d LODs, extent %v", info.Storage, len(info.Scheme.LODs), extent)
	}
}

// A unit asynq archived with no handler recording it (its worker died on the last try) is
// recorded as failed by the sweep, once, and leaves the archive; a part that completes its bundle
// enqueues the merge. Units a handler recorded, and those of jobs that are over, stay as they are.
func TestSeedRunnerRecordsLostUnits(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	sp := f.job(t, "lost-"+testenv.BucketName("j"))
	client := asynq.NewClientFromRedisClient(f.rdb)
	inspector := asynq.NewInspectorFromRedisClient(f.rdb)
	f.runner.p.archive = inspector

	bundle := tilecache.Tile{Level: 3, Row: 0, Col: 0}
	bid := seed.BundleID(-1, tilecache.Bundle{TopLeft: bundle})
	part := func(job string, n int) task.SeedRender {
		return task.SeedRender{Job: job, Layer: -1, Bundle: bundle, Part: n, Parts: 2, Metatiles: [][4]int{{0, 4 * n, 4, 4}}}
	}
	archive := func(p task.SeedRender) string {
		t.Helper()
		tk, err := task.NewSeedRender(p)
		if err != nil {
			t.Fatal(err)
		}
		info, err := client.EnqueueContext(ctx, tk)
		if err != nil {
			t.Fatal(err)
		}
		if err := inspector.ArchiveTask(task.QueueSeed, info.ID); err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	lost := archive(part(sp.ID, 0))
	// Part 1 failed its last try in a handler, which recorded it before asynq archived it.
	if _, err := f.jobs.PartDone(ctx, sp.ID, bid, 1, seed.PartCounts{Failed: 16}); err != nil {
		t.Fatal(err)
	}
	recorded := archive(part(sp.ID, 1))
	gone := archive(part("gone-"+testenv.BucketName("j"), 0))

	for pass := range 2 {
		f.runner.sweepLost(ctx, []string{sp.ID})
		st := f.status(t, sp.ID)
		if st.Failed != 32 {
			t.Fatalf("pass %d: %d tiles failed, want 32 (16 of the lost part, 16 of the recorded one)", pass, st.Failed)
		}
		var merges []task.SeedMerge
		for _, tk := range f.queue.ids {
			if tk.Type() == task.TypeSeedMerge {
				m, err := task.DecodeSeedMerge(tk.Payload())
				if err != nil {
					t.Fatal(err)
				}
				merges = append(merges, m)
			}
		}
		if len(merges) != 1 || merges[0].Job != sp.ID || merges[0].Bundle != bundle || merges[0].Parts != 2 {
			t.Fatalf("pass %d: merges enqueued %+v, want the bundle's, once", pass, merges)
		}
		infos, err := inspector.ListArchivedTasks(task.QueueSeed)
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, ti := range infos {
			left = append(left, ti.ID)
		}
		slices.Sort(left)
		want := []string{recorded, gone}
		slices.Sort(want)
		if !slices.Equal(left, want) {
			t.Fatalf("pass %d: archive holds %q, want %q (the lost part %q recorded and deleted)", pass, left, want, lost)
		}
	}

	// A bundle whose parts both failed their last tries in handlers that recorded them but could
	// not enqueue the merge: the sweep enqueues it and leaves the archive as it is.
	bundle = tilecache.Tile{Level: 3, Row: 0, Col: 8}
	bid = seed.BundleID(-1, tilecache.Bundle{TopLeft: bundle})
	for n := range 2 {
		if _, err := f.jobs.PartDone(ctx, sp.ID, bid, n, seed.PartCounts{Failed: 16}); err != nil {
			t.Fatal(err)
		}
		archive(part(sp.ID, n))
	}
	f.runner.sweepLost(ctx, []string{sp.ID})
	if st := f.status(t, sp.ID); st.Failed != 64 {
		t.Errorf("after the second bundle: %d tiles failed, want 64 (each part counted once)", st.Failed)
	}
	merged := 0
	for _, tk := range f.queue.ids {
		if m, err := task.DecodeSeedMerge(tk.Payload()); err == nil && tk.Type() == task.TypeSeedMerge && m.Bundle == bundle {
			merged++
		}
	}
	if merged != 1 {
		t.Errorf("the second bundle's merge enqueued %d times, want once", merged)
	}
	if infos, err := inspector.ListArchivedTasks(task.QueueSeed); err != nil || len(infos) != 4 {
		t.Errorf("archive holds %d tasks (%v), want 4: the handlers' records stay", len(infos), err)
	}
}

// Cancelling a job, or a job over its failure budget, ends it and deletes its staging.
func TestSeedRunnerStops(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		stop  func(sp *seed.Spec)
		state string
	}{
		{"cancel", func(sp *seed.Spec) {
			if err := f.jobs.Cancel(ctx, sp.ID); err != nil {
				t.Fatal(err)
			}
		}, seed.StateCancelled},
		{"failure budget", func(sp *seed.Spec) {
			if _, err := f.jobs.PartDone(ctx, sp.ID, "0/5/R0000C0000", 0, seed.PartCounts{Failed: 11}); err != nil {
				t.Fatal(err)
			}
		}, seed.StateFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := f.job(t, "stop-"+testenv.BucketName(tc.name))
			f.runner.exec(ctx)
			staged := seed.StagingKey(sp.ID, 0, tilecache.Bundle{}, 0)
			if err := f.store.Put(ctx, staged, []byte("x"), ""); err != nil {
				t.Fatal(err)
			}
			tc.stop(sp)
			if stop, _ := f.jobs.Cancelled(ctx, sp.ID); tc.state == seed.StateCancelled && !stop {
				t.Error("workers do not see the job cancelled")
			}
			f.runner.exec(ctx)
			st := f.status(t, sp.ID)
			if st.State != tc.state {
				t.Fatalf("state %s (%s), want %s", st.State, st.Error, tc.state)
			}
			if stop, _ := f.jobs.Cancelled(ctx, sp.ID); !stop {
				t.Error("workers do not see the ended job as stopped")
			}
			if _, err := f.store.Get(ctx, staged); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("staging object left behind: %v", err)
			}
		})
	}
}

// A job whose lock another coordinator holds is left alone.
func TestSeedRunnerRespectsLock(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	sp := f.job(t, "lock-"+testenv.BucketName("j"))
	if ok, err := f.jobs.Lock(ctx, sp.ID, "other", time.Minute); err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	f.runner.exec(ctx)
	if st := f.status(t, sp.ID); st.Checkpoint != 0 || len(f.queue.ids) != 0 {
		t.Fatalf("a locked job was planned: checkpoint %d, %d tasks", st.Checkpoint, len(f.queue.ids))
	}
	if err := f.jobs.Unlock(ctx, sp.ID, "other"); err != nil {
		t.Fatal(err)
	}
	f.runner.exec(ctx)
	if st := f.status(t, sp.ID); st.Checkpoint != 2 {
		t.Fatalf("after unlock: checkpoint %d, want 2", st.Checkpoint)
	}
}

// listCountingStore counts List calls, the first thing ending a job does in the store.
type listCountingStore struct {
	tilecache.Store
	mu    sync.Mutex
	lists int
}

func (s *listCountingStore) List(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	s.mu.Lock()
	s.lists++
	s.mu.Unlock()
	return s.Store.List(ctx, prefix, fn)
}

// A job stored before ids were checked, with an id of 100,000 characters, is ended as failed on
// the first pass, without a store call, and is not looked at again.
func TestSeedRunnerEndsMalformedIDs(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	id := testenv.BucketName("j") + strings.Repeat("x", 100_000)
	if err := rdb.HSet(ctx, "mapfarm:seed:job:"+id, "state", seed.StateRunning, "spec", "{}").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SAdd(ctx, "mapfarm:seed:active", id).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rdb.Del(context.Background(), "mapfarm:seed:job:"+id)
		rdb.SRem(context.Background(), "mapfarm:seed:active", id)
	})
	store := &listCountingStore{Store: f.store}
	var logs strings.Builder
	f.runner = newSeedRunner(seedRunnerParams{jobs: f.jobs, queue: f.queue, store: store, logger: slog.New(slog.NewTextHandler(&logs, nil))})
	f.runner.exec(ctx)
	f.runner.exec(ctx)
	st := f.status(t, id)
	if st.State != seed.StateFailed || !strings.Contains(st.Error, "the limit is 128") {
		t.Errorf("state %s (%.200s), want failed: the limit is 128", st.State, st.Error)
	}
	if store.lists != 0 {
		t.Errorf("%d store List calls, want 0", store.lists)
	}
	if n := strings.Count(logs.String(), "not well formed"); n != 1 || logs.Len() > 2000 {
		t.Errorf("%d warnings in %d bytes of logs, want one short warning:\n%.500s", n, logs.Len(), logs.String())
	}
}
