package coordinator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Enqueuer puts tasks on the queue (an *asynq.Client).
type Enqueuer interface {
	EnqueueContext(ctx context.Context, t *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// seedRunnerParams configure a seedRunner.
type seedRunnerParams struct {
	jobs   *seed.Jobs
	queue  Enqueuer
	store  tilecache.Store
	logger *slog.Logger
	// batch is the most bundle units one pass enqueues per job; default 512.
	batch int
	// maxOutstanding bounds the tiles enqueued but not yet finished per job, so a huge job
	// does not fill Redis with tasks; default 200,000.
	maxOutstanding int64
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
// rolling update) never work on the same job at once.
type seedRunner struct {
	p     seedRunnerParams
	owner string // lock owner: host, pid and a random suffix
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
	host, _ := os.Hostname()
	var r [4]byte
	_, _ = rand.Read(r[:])
	return &seedRunner{p: p, owner: fmt.Sprintf("%s:%d:%x", host, os.Getpid(), r)}
}

// exec runs one pass over the active jobs.
func (r *seedRunner) exec(ctx context.Context) {
	ids, err := r.p.jobs.Active(ctx)
	if err != nil {
		r.p.logger.Warn("seed: list active jobs", "err", err)
		return
	}
	for _, id := range ids {
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
		if err := r.step(ctx, id); err != nil {
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
	if _, old, err := tilecache.ReadMetadata(ctx, r.p.store, sp.Root); err == nil && old != (orb.Bound{}) {
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
	if err := r.p.jobs.SetState(ctx, id, state, msg); err != nil {
		return err
	}
	if err := r.p.jobs.Forget(ctx, id); err != nil {
		return err
	}
	r.p.logger.Info("seed job ended", "job", id, "state", state, "msg", msg)
	return nil
}

// seedInterval is the default pause between seed passes.
const seedInterval = time.Second
