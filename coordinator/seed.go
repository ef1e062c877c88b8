package coordinator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/hibiken/asynq"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Enqueuer puts tasks on the queue (an *asynq.Client).
type Enqueuer interface {
	EnqueueContext(ctx context.Context, t *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// Archive is what the seed runner needs of asynq's archive of dead tasks (an *asynq.Inspector).
type Archive interface {
	ListArchivedTasks(queue string, opts ...asynq.ListOption) ([]*asynq.TaskInfo, error)
	DeleteTask(queue, id string) error
}

// seedRunnerParams configure a seedRunner.
type seedRunnerParams struct {
	jobs   *seed.Jobs
	queue  Enqueuer
	store  tilecache.Store
	logger *slog.Logger
	// archive, when set, is swept for lost units every sweepEvery (default 30 s; sweepLost).
	archive    Archive
	sweepEvery time.Duration
	// batch is the most bundle units one pass enqueues per job; default 512.
	batch int
	// maxOutstanding bounds the tiles enqueued but not yet finished per job, so a huge job
	// does not fill Redis with tasks; default 200,000.
	maxOutstanding int64
	// invalidate, when set, tells every api which tiles a job that ended may have changed.
	invalidate func(context.Context, refresh.Invalidation) error
}

// seedRunner plans, watches and finishes seeding jobs. One pass (exec) looks at every active
// job once:
//
//   - planning: enqueue the next units from the checkpoint (the number of units enqueued,
//     kept in Redis), at most batch of them and no more than maxOutstanding tiles ahead of
//     the workers; when the plan is exhausted the job is running. A coordinator restarted
//     mid-plan resumes from the checkpoint; a unit enqueued twice is refused by its task id.
//   - running: when every bundle is written (or given up), write conf.xml and conf.cdi and
//     end the job as done.
//   - cancelled, or over its failure budget: end the job and delete its staging objects.
//
// Each step holds the job's lock in Redis (seed.Jobs.Lock), so two coordinators (during a
// rolling update) never work on the same job at once. While jobs are active, the runner also
// sweeps asynq's archive of the seed queue for units no handler recorded (sweepLost).
type seedRunner struct {
	p         seedRunnerParams
	owner     string    // lock owner: host, pid and a random suffix
	lastSweep time.Time // of the archive
}

func newSeedRunner(p seedRunnerParams) *seedRunner {
	if p.batch <= 0 {
		p.batch = 512
	}
	if p.maxOutstanding <= 0 {
		p.maxOutstanding = 200_000
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	if p.sweepEvery <= 0 {
		p.sweepEvery = 30 * time.Second
	}
	host, _ := os.Hostname()
	var r [4]byte
	_, _ = rand.Read(r[:])
	return &seedRunner{p: p, owner: fmt.Sprintf("%s:%d:%x", host, os.Getpid(), r)}
}

// exec runs one pass over the active jobs.
func (r *seedRunner) exec(ctx context.Context) {
	ids, err := r.p.jobs.Active(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.p.logger.Warn("seed: list active jobs", "err", err)
		}
		return
	}
	if len(ids) > 0 && r.p.archive != nil && time.Since(r.lastSweep) >= r.p.sweepEvery {
		r.lastSweep = time.Now()
		r.sweepLost(ctx, ids)
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return // stopping: the job stays active for the next pass, of this or another coordinator
		}
		if err := seed.ValidID(id); err != nil {
			// A job stored before ids were checked: its id does not fit in store keys or
			// URLs, so it could never finish. End it without touching the store.
			r.p.logger.Warn("seed: ending a job whose id is not well formed", "err", err)
			if err := r.p.jobs.SetState(ctx, id, seed.StateFailed, err.Error()); err != nil {
				r.p.logger.Warn("seed: end job", "err", err)
			}
			continue
		}
		ok, err := r.p.jobs.Lock(ctx, id, r.owner, 30*time.Second)
		if err != nil || !ok {
			continue // another coordinator works on it (or Redis is away: next pass)
		}
		if err := r.step(ctx, id); err != nil && ctx.Err() == nil {
			r.p.logger.Warn("seed: job step", "job", id, "err", err)
		}
		if err := r.p.jobs.Unlock(context.WithoutCancel(ctx), id, r.owner); err != nil {
			r.p.logger.Warn("seed: unlock job", "job", id, "err", err)
		}
	}
}

// step advances one job by one pass.
func (r *seedRunner) step(ctx context.Context, id string) error {
	st, err := r.p.jobs.Status(ctx, id)
	if errors.Is(err, seed.ErrNoJob) {
		return r.p.jobs.SetState(ctx, id, seed.StateFailed, "job record vanished")
	}
	if err != nil {
		return err
	}
	if seed.Terminal(st.State) {
		return nil
	}
	sp := st.Spec
	if sp == nil {
		return r.end(ctx, id, seed.StateFailed, "job spec unreadable")
	}
	switch {
	case st.Cancelled:
		return r.end(ctx, id, seed.StateCancelled, "")
	case st.Failed > sp.MaxFailures:
		return r.end(ctx, id, seed.StateFailed, fmt.Sprintf("failure budget exceeded: %d tiles failed (limit %d)", st.Failed, sp.MaxFailures))
	case st.State == seed.StatePlanning:
		return r.plan(ctx, sp, st)
	case st.State == seed.StateRunning && st.Merged+st.MergeFailed >= st.Bundles:
		if sp.Mode != seed.Delete {
			if err := r.writeMetadata(ctx, sp); err != nil {
				return err
			}
		}
		return r.end(ctx, id, seed.StateDone, "")
	}
	return nil
}

// plan enqueues the job's next units.
func (r *seedRunner) plan(ctx context.Context, sp *seed.Spec, st seed.Status) error {
	units, err := seed.Plan(sp, st.Checkpoint)
	if err != nil {
		return r.end(ctx, sp.ID, seed.StateFailed, err.Error())
	}
	if err := r.p.jobs.Started(ctx, sp.ID); err != nil {
		return err
	}
	outstanding := st.PlannedTiles - st.Done - st.Failed - st.Empty - st.Kept
	n := 0
	for u := range units {
		if n >= r.p.batch || outstanding > r.p.maxOutstanding {
			return nil
		}
		if err := r.enqueue(ctx, sp, u); err != nil {
			return err
		}
		if err := r.p.jobs.Planned(ctx, sp.ID, u.Seq+1, u.Tiles, seed.BundleID(u.Layer, u.Bundle)); err != nil {
			return err
		}
		outstanding += u.Tiles
		n++
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return r.p.jobs.SetState(ctx, sp.ID, seed.StateRunning, "")
}

// enqueue puts one bundle unit's tasks on the seed queue; tasks already queued are skipped.
func (r *seedRunner) enqueue(ctx context.Context, sp *seed.Spec, u seed.BundleUnit) error {
	put := func(t *asynq.Task, err error) error {
		if err != nil {
			return err
		}
		if _, err := r.p.queue.EnqueueContext(ctx, t); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return fmt.Errorf("seed: enqueue %s: %w", t.Type(), err)
		}
		return nil
	}
	if len(u.Parts) == 0 {
		return put(task.NewSeedMerge(task.SeedMerge{Job: sp.ID, Layer: u.Layer, Bundle: u.Bundle.TopLeft, Metatiles: task.MetatileList(u.Metatiles)}))
	}
	for i, pr := range u.Parts {
		err := put(task.NewSeedRender(task.SeedRender{Job: sp.ID, Layer: u.Layer, Bundle: u.Bundle.TopLeft, Part: i, Parts: len(u.Parts),
			Metatiles: task.MetatileList(u.Metatiles[pr[0]:pr[1]])}))
		if err != nil {
			return err
		}
	}
	return nil
}

// writeMetadata writes conf.xml and conf.cdi beside the job's tiles; the extent grows to hold
// what was cached before.
func (r *seedRunner) writeMetadata(ctx context.Context, sp *seed.Spec) error {
	c, err := sp.Cache(r.p.store, 0, nil)
	if err != nil {
		return err
	}
	extent := sp.AOI().Bound()
	_, old, err := tilecache.ReadMetadata(ctx, r.p.store, sp.Root)
	if err == nil && sp.Refresh() {
		// A refresh re-renders tiles of a stored cache: its extent (what the cache claims to
		// hold whole, and verify checks) is what was seeded, not grown by the dirty metatiles.
		return nil
	}
	if err == nil && old != (orb.Bound{}) {
		extent = extent.Union(old)
	}
	if err := c.WriteMetadata(ctx, sp.Info(), extent); err != nil {
		return fmt.Errorf("seed: write metadata of job %s: %w", sp.ID, err)
	}
	return nil
}

// end finishes a job: deletes its staging objects and its unit bookkeeping, and sets state.
func (r *seedRunner) end(ctx context.Context, id, state, msg string) error {
	var keys []string
	err := r.p.store.List(ctx, seed.StagingPrefix(id), func(info blob.Info) error {
		keys = append(keys, info.Key)
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("seed: list staging of job %s: %w", id, err)
	}
	for _, k := range keys {
		if err := r.p.store.Delete(ctx, k); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("seed: delete staging of job %s: %w", id, err)
		}
	}
	if r.p.invalidate != nil {
		// Before the state is set: a client told the job ended and reading again finds no api
		// serving what it remembered (the store holds the job's tiles already). A lost message
		// leaves the apis' own trust windows (10 s).
		if sp, err := r.p.jobs.Spec(ctx, id); err == nil {
			if err := r.p.invalidate(ctx, jobInvalidation(sp)); err != nil {
				r.p.logger.Warn("seed: tell the apis of the job's tiles", "job", id, "err", err)
			}
		}
	}
	if err := r.p.jobs.SetState(ctx, id, state, msg); err != nil {
		return err
	}
	if err := r.p.jobs.Forget(ctx, id); err != nil {
		return err
	}
	r.p.logger.Info("seed job ended", "job", id, "state", state, "msg", msg)
	return nil
}

// sweepLost records as failed the seed tasks that asynq archived with no handler recording them,
// so that their jobs can end: a unit whose worker died on its last try (asynq's recoverer archives
// it once the lease has run out; no handler runs) or whose handler could not reach Redis to
// record it on its last try. A part counts its tiles as failed and, if it was its bundle's last,
// enqueues the bundle's merge, as the worker's handler does on a last failed try; a merge counts
// its bundle as given up. Each unit so recorded leaves the archive (once its merge, if due, is
// enqueued); the tasks a handler recorded before they were archived stay there for operators
// (asynqmon), and a sweep enqueues their bundle's merge if it is due and missing (its enqueue
// failed on the last try). Recording is idempotent and a merge's task id is unique, so two
// coordinators sweeping at once count a unit once and merge a bundle once.
func (r *seedRunner) sweepLost(ctx context.Context, active []string) {
	const pageSize = 500
	live := make(map[string]bool, len(active))
	for _, id := range active {
		live[id] = true
	}
	var lost []string
	for page := 1; ctx.Err() == nil; page++ {
		infos, err := r.p.archive.ListArchivedTasks(task.QueueSeed, asynq.Page(page), asynq.PageSize(pageSize))
		if err != nil {
			if !errors.Is(err, asynq.ErrQueueNotFound) {
				r.p.logger.Warn("seed: list archived tasks", "err", err)
			}
			break
		}
		for _, ti := range infos {
			recorded, err := r.recordLost(ctx, ti, live)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				r.p.logger.Warn("seed: record a lost unit", "task", ti.ID, "err", err)
				continue
			}
			if recorded {
				lost = append(lost, ti.ID)
			}
		}
		if len(infos) < pageSize {
			break
		}
	}
	for _, id := range lost {
		if err := r.p.archive.DeleteTask(task.QueueSeed, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
			r.p.logger.Warn("seed: delete a recorded archived task", "task", id, "err", err)
		}
	}
}

// recordLost records one archived task's unit as failed unless it is recorded already or its job
// is not among the live ones; it reports whether it recorded it.
func (r *seedRunner) recordLost(ctx context.Context, ti *asynq.TaskInfo, live map[string]bool) (bool, error) {
	switch ti.Type {
	case task.TypeSeedRender:
		job, err := task.DecodeSeedRender(ti.Payload)
		if err != nil {
			return false, nil // refused by its handler (asynq.SkipRetry): nothing to count
		}
		if !live[job.Job] {
			return false, nil
		}
		bid := seed.BundleID(job.Layer, tilecache.Bundle{TopLeft: job.Bundle})
		done, err := r.p.jobs.PartRecorded(ctx, job.Job, bid, job.Part)
		if err != nil {
			return false, err
		}
		var n int
		if done {
			// Recorded by its handler (or by an earlier sweep): only the bundle's merge may be
			// missing, if enqueueing it failed on the last try.
			if merged, err := r.p.jobs.MergeRecorded(ctx, job.Job, bid); err != nil || merged {
				return false, err
			}
			if n, err = r.p.jobs.PartDone(ctx, job.Job, bid, job.Part, seed.PartCounts{}); err != nil {
				return false, err
			}
		} else {
			if n, err = r.p.jobs.PartDone(ctx, job.Job, bid, job.Part, seed.PartCounts{Failed: int64(job.Tiles())}); err != nil {
				return false, err
			}
			r.p.logger.Warn("seed part lost: its worker died on the last try, or could not record it; its tiles count as failed",
				"job", job.Job, "bundle", bid, "part", job.Part, "last_err", ti.LastErr)
		}
		if n >= job.Parts {
			// A merge queued, running or archived already has this id: asynq refuses a second.
			mt, err := job.Merge()
			if err != nil {
				return false, err
			}
			if _, err := r.p.queue.EnqueueContext(ctx, mt); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
				return false, fmt.Errorf("seed: enqueue merge: %w", err)
			}
		}
		return !done, nil
	case task.TypeSeedMerge:
		job, err := task.DecodeSeedMerge(ti.Payload)
		if err != nil {
			return false, nil
		}
		if !live[job.Job] {
			return false, nil
		}
		bid := seed.BundleID(job.Layer, tilecache.Bundle{TopLeft: job.Bundle})
		if done, err := r.p.jobs.MergeRecorded(ctx, job.Job, bid); err != nil || done {
			return false, err
		}
		if err := r.p.jobs.MergeDone(ctx, job.Job, bid, true, 0, 0); err != nil {
			return false, err
		}
		r.p.logger.Warn("seed merge lost: its worker died on the last try, or could not record it; the bundle is given up",
			"job", job.Job, "bundle", bid, "last_err", ti.LastErr)
		return true, nil
	}
	return false, nil
}

// jobInvalidation names the tiles a job may have changed: at each of its levels, the tiles of
// its area of interest's envelope, or of each dirty envelope widened by its reach and each
// dirty polygon's envelope, in its cache folders.
func jobInvalidation(sp *seed.Spec) refresh.Invalidation {
	v := refresh.Invalidation{Root: sp.Root}
	for _, l := range sp.Layers {
		v.Folders = append(v.Folders, l.Folder)
	}
	levels := sp.Levels
	if len(levels) == 0 {
		levels = sp.Scheme.Levels()
	}
	areas, reach := []orb.Bound{sp.AOI().Bound()}, 0
	var exact []orb.Bound // not widened
	if sp.Refresh() {
		areas, reach = sp.Dirty, sp.Reach
		for _, p := range sp.DirtyPolygons {
			exact = append(exact, p.Bound())
		}
	}
	for _, level := range levels {
		lod, ok := sp.Scheme.LOD(level)
		if !ok {
			continue
		}
		d := float64(reach) * lod.Resolution
		for i, a := range slices.Concat(areas, exact) {
			if i < len(areas) {
				a = orb.Bound{Min: orb.Point{a.Min[0] - d, a.Min[1] - d}, Max: orb.Point{a.Max[0] + d, a.Max[1] + d}}
			}
			r, err := sp.Scheme.TilesCovering(level, a)
			if err == nil && !r.Empty() {
				v.Ranges = append(v.Ranges, r)
			}
		}
	}
	if len(v.Ranges) == 0 || len(v.Ranges) > refresh.MaxRanges {
		v.Ranges = nil // every tile of the folders: a superset
	}
	return v
}

// seedInterval is the default pause between seed passes.
const seedInterval = time.Second
