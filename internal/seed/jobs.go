package seed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoJob is returned for a job id Redis does not know.
var ErrNoJob = errors.New("seed: no such job")

// ErrJobExists is returned when creating a job whose id is taken.
var ErrJobExists = errors.New("seed: job exists already")

// Redis keys; see the package documentation.
const (
	keyJobs   = "mapfarm:seed:jobs"
	keyActive = "mapfarm:seed:active"
)

func keyJob(id string) string   { return "mapfarm:seed:job:" + id }
func keyUnits(id string) string { return "mapfarm:seed:job:" + id + ":units" }
func keyParts(id string) string { return "mapfarm:seed:job:" + id + ":parts" }

// Fields of a job's hash.
const (
	fSpec      = "spec"
	fState     = "state"
	fCancelled = "cancelled"
	fError     = "error"
	fAOITiles  = "aoiTiles"  // tiles of the area of interest (estimate of total while planning)
	fTotal     = "total"     // tiles of the planned metatiles
	fBundles   = "bundles"   // bundle units planned
	fPlanned   = "planned"   // 1 once every unit is enqueued
	fCheckSeq  = "checkSeq"  // units enqueued: the planning checkpoint
	fCheckName = "checkName" // the last bundle enqueued, for humans
	fDone      = "done"      // tiles rendered (or deleted)
	fFailed    = "failed"    // tiles that failed
	fEmpty     = "empty"     // tiles skipped as empty
	fKept      = "kept"      // tiles kept because they were stored (recreateEmpty)
	fMerged    = "merged"    // bundles written
	fMergeFail = "mergeFailed"
	fCreated   = "created"
	fStarted   = "started"
	fFinished  = "finished"
)

// Status is a job's state and progress, as the admin API reports it.
type Status struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// Total is the number of tiles the job renders: the planned metatiles' tiles once planning
	// is over, before that the larger of that and the area of interest's tiles.
	Total        int64   `json:"total"`
	PlannedTiles int64   `json:"plannedTiles"`
	Done         int64   `json:"done"`
	Failed       int64   `json:"failed"`
	Empty        int64   `json:"empty"`
	Kept         int64   `json:"kept"`
	Bundles      int64   `json:"bundles"`
	Merged       int64   `json:"merged"`
	MergeFailed  int64   `json:"mergeFailed"`
	Planned      bool    `json:"planned"`
	Checkpoint   int64   `json:"checkpoint"`
	CheckName    string  `json:"checkpointBundle,omitempty"`
	Cancelled    bool    `json:"cancelled"`
	RatePerSec   float64 `json:"rate"`
	ETASeconds   float64 `json:"eta"`
	ElapsedSecs  float64 `json:"elapsed"`
	Created      string  `json:"created,omitempty"`
	Started      string  `json:"started,omitempty"`
	Finished     string  `json:"finished,omitempty"`
	Spec         *Spec   `json:"spec,omitempty"`
	FailureLimit int64   `json:"failureLimit"`
}

// Jobs reads and writes jobs in Redis. It is safe for concurrent use.
type Jobs struct {
	rdb redis.UniversalClient
	now func() time.Time
}

// NewJobs returns the jobs stored in rdb.
func NewJobs(rdb redis.UniversalClient) *Jobs { return &Jobs{rdb: rdb, now: time.Now} }

// Create stores a new job and marks it active; the coordinator plans it on its next pass.
func (j *Jobs) Create(ctx context.Context, s *Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	aoi, err := Count(s)
	if err != nil {
		return err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("seed: encode job: %w", err)
	}
	now := j.now()
	ok, err := j.rdb.HSetNX(ctx, keyJob(s.ID), fSpec, b).Result()
	if err != nil {
		return fmt.Errorf("seed: create job %s: %w", s.ID, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s", ErrJobExists, s.ID)
	}
	pipe := j.rdb.TxPipeline()
	pipe.HSet(ctx, keyJob(s.ID), fState, StatePlanning, fAOITiles, aoi, fCreated, now.UnixMilli(), fCheckSeq, 0)
	pipe.ZAdd(ctx, keyJobs, redis.Z{Score: float64(now.UnixMilli()), Member: s.ID})
	pipe.SAdd(ctx, keyActive, s.ID)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("seed: create job %s: %w", s.ID, err)
	}
	return nil
}

// Spec reads a job's spec.
func (j *Jobs) Spec(ctx context.Context, id string) (*Spec, error) {
	b, err := j.rdb.HGet(ctx, keyJob(id), fSpec).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if err != nil {
		return nil, fmt.Errorf("seed: read job %s: %w", id, err)
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("seed: decode job %s: %w", id, err)
	}
	return &s, nil
}

// Status reads a job's state and progress.
func (j *Jobs) Status(ctx context.Context, id string) (Status, error) {
	h, err := j.rdb.HGetAll(ctx, keyJob(id)).Result()
	if err != nil {
		return Status{}, fmt.Errorf("seed: read job %s: %w", id, err)
	}
	if len(h) == 0 {
		return Status{}, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(h[f], 10, 64); return v }
	st := Status{
		ID: id, State: h[fState], Error: h[fError],
		Done: n(fDone), Failed: n(fFailed), Empty: n(fEmpty), Kept: n(fKept),
		Bundles: n(fBundles), Merged: n(fMerged), MergeFailed: n(fMergeFail),
		Planned: h[fPlanned] == "1", Checkpoint: n(fCheckSeq), CheckName: h[fCheckName], Cancelled: h[fCancelled] == "1",
	}
	st.Total = n(fTotal)
	st.PlannedTiles = st.Total
	if !st.Planned {
		st.Total = max(st.Total, n(fAOITiles))
	}
	var s Spec
	if json.Unmarshal([]byte(h[fSpec]), &s) == nil {
		st.Spec = &s
		st.FailureLimit = s.MaxFailures
	}
	ms := func(f string) (time.Time, bool) {
		v := n(f)
		return time.UnixMilli(v), v > 0
	}
	if t, ok := ms(fCreated); ok {
		st.Created = t.UTC().Format(time.RFC3339)
	}
	end := j.now()
	if t, ok := ms(fFinished); ok {
		st.Finished = t.UTC().Format(time.RFC3339)
		end = t
	}
	if t, ok := ms(fStarted); ok {
		st.Started = t.UTC().Format(time.RFC3339)
		st.ElapsedSecs = end.Sub(t).Seconds()
		if st.ElapsedSecs > 0 {
			st.RatePerSec = float64(st.Done+st.Kept+st.Empty) / st.ElapsedSecs
		}
		left := st.Total - st.Done - st.Failed - st.Kept - st.Empty
		if st.RatePerSec > 0 && left > 0 && !Terminal(st.State) {
			st.ETASeconds = float64(left) / st.RatePerSec
		}
	}
	return st, nil
}

// List returns the ids of the most recent jobs, newest first, at most limit.
func (j *Jobs) List(ctx context.Context, limit int) ([]string, error) {
	ids, err := j.rdb.ZRevRange(ctx, keyJobs, 0, int64(max(limit, 1))-1).Result()
	if err != nil {
		return nil, fmt.Errorf("seed: list jobs: %w", err)
	}
	return ids, nil
}

// Active returns the ids of the jobs the coordinator still works on.
func (j *Jobs) Active(ctx context.Context) ([]string, error) {
	ids, err := j.rdb.SMembers(ctx, keyActive).Result()
	if err != nil {
		return nil, fmt.Errorf("seed: list active jobs: %w", err)
	}
	return ids, nil
}

// Cancel stops a job: workers skip its remaining units, the coordinator stops planning it and
// ends it as cancelled on its next pass. Cancelling a finished job does nothing.
func (j *Jobs) Cancel(ctx context.Context, id string) error {
	n, err := j.rdb.Exists(ctx, keyJob(id)).Result()
	if err != nil {
		return fmt.Errorf("seed: cancel job %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if err := j.rdb.HSet(ctx, keyJob(id), fCancelled, 1).Err(); err != nil {
		return fmt.Errorf("seed: cancel job %s: %w", id, err)
	}
	return nil
}

// Cancelled reports whether a job was cancelled or stopped (workers check it before each
// unit). A job Redis does not know counts as cancelled.
func (j *Jobs) Cancelled(ctx context.Context, id string) (bool, error) {
	v, err := j.rdb.HGet(ctx, keyJob(id), fCancelled).Result()
	if errors.Is(err, redis.Nil) {
		n, err := j.rdb.Exists(ctx, keyJob(id)).Result()
		return n == 0, err
	}
	if err != nil {
		return false, fmt.Errorf("seed: read job %s: %w", id, err)
	}
	return v == "1", nil
}

// Planned records that units up to (not including) seq are enqueued, that the unit just
// enqueued has tiles tiles, and names its bundle.
func (j *Jobs) Planned(ctx context.Context, id string, seq int64, tiles int64, bundle string) error {
	pipe := j.rdb.TxPipeline()
	pipe.HSet(ctx, keyJob(id), fCheckSeq, seq, fCheckName, bundle)
	pipe.HIncrBy(ctx, keyJob(id), fTotal, tiles)
	pipe.HIncrBy(ctx, keyJob(id), fBundles, 1)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("seed: checkpoint job %s: %w", id, err)
	}
	return nil
}

// Checkpoint returns the number of units enqueued so far.
func (j *Jobs) Checkpoint(ctx context.Context, id string) (int64, error) {
	v, err := j.rdb.HGet(ctx, keyJob(id), fCheckSeq).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("seed: read checkpoint of job %s: %w", id, err)
	}
	return v, nil
}

// SetState sets a job's state (and its start or finish time); a terminal state takes the job
// off the active set. msg, when not empty, is recorded as the job's error.
func (j *Jobs) SetState(ctx context.Context, id, state, msg string) error {
	pipe := j.rdb.TxPipeline()
	pipe.HSet(ctx, keyJob(id), fState, state)
	if msg != "" {
		pipe.HSet(ctx, keyJob(id), fError, msg)
	}
	switch {
	case state == StateRunning:
		pipe.HSet(ctx, keyJob(id), fPlanned, 1)
	case Terminal(state):
		pipe.HSet(ctx, keyJob(id), fFinished, j.now().UnixMilli())
		pipe.SRem(ctx, keyActive, id)
		if state != StateDone {
			pipe.HSet(ctx, keyJob(id), fCancelled, 1)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("seed: set state of job %s: %w", id, err)
	}
	return nil
}

// Started records when the first unit was enqueued (rate and ETA count from it); later calls
// keep the first time.
func (j *Jobs) Started(ctx context.Context, id string) error {
	if err := j.rdb.HSetNX(ctx, keyJob(id), fStarted, j.now().UnixMilli()).Err(); err != nil {
		return fmt.Errorf("seed: start job %s: %w", id, err)
	}
	return nil
}

// PartCounts is what one render part did.
type PartCounts struct {
	Done, Failed, Empty, Kept int64
}

// partScript records a finished part once: it adds the unit to the job's set, and only if it
// was not there yet adds the counts and counts the part for its bundle. It returns the
// number of parts of the bundle done.
var partScript = redis.NewScript(`
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'done', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'failed', ARGV[4])
  redis.call('HINCRBY', KEYS[1], 'empty', ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'kept', ARGV[6])
  return redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
end
return tonumber(redis.call('HGET', KEYS[3], ARGV[2]) or '0')
`)

// PartDone records a finished render part of a bundle (once, however often it is delivered)
// and returns how many of the bundle's parts are done.
func (j *Jobs) PartDone(ctx context.Context, id, bundleID string, part int, c PartCounts) (int, error) {
	unit := fmt.Sprintf("p:%s/%d", bundleID, part)
	n, err := partScript.Run(ctx, j.rdb, []string{keyJob(id), keyUnits(id), keyParts(id)},
		unit, bundleID, c.Done, c.Failed, c.Empty, c.Kept).Int()
	if err != nil {
		return 0, fmt.Errorf("seed: record part %s of job %s: %w", unit, id, err)
	}
	return n, nil
}

// PartRecorded reports whether a part was recorded as done already.
func (j *Jobs) PartRecorded(ctx context.Context, id, bundleID string, part int) (bool, error) {
	ok, err := j.rdb.SIsMember(ctx, keyUnits(id), fmt.Sprintf("p:%s/%d", bundleID, part)).Result()
	if err != nil {
		return false, fmt.Errorf("seed: read units of job %s: %w", id, err)
	}
	return ok, nil
}

// mergeScript records a written (or failed) bundle once.
var mergeScript = redis.NewScript(`
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('HINCRBY', KEYS[1], 'done', ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'failed', ARGV[4])
  return 1
end
return 0
`)

// MergeDone records a bundle as written (failed false) or given up (failed true), once;
// done and failedTiles add to the tile counters (delete jobs count their tiles here).
func (j *Jobs) MergeDone(ctx context.Context, id, bundleID string, failed bool, done, failedTiles int64) error {
	field := fMerged
	if failed {
		field = fMergeFail
	}
	if err := mergeScript.Run(ctx, j.rdb, []string{keyJob(id), keyUnits(id)}, "m:"+bundleID, field, done, failedTiles).Err(); err != nil {
		return fmt.Errorf("seed: record bundle %s of job %s: %w", bundleID, id, err)
	}
	return nil
}

// MergeRecorded reports whether a bundle was recorded as written or failed.
func (j *Jobs) MergeRecorded(ctx context.Context, id, bundleID string) (bool, error) {
	ok, err := j.rdb.SIsMember(ctx, keyUnits(id), "m:"+bundleID).Result()
	if err != nil {
		return false, fmt.Errorf("seed: read units of job %s: %w", id, err)
	}
	return ok, nil
}

// Forget deletes a finished job's unit bookkeeping (its hash and listing stay).
func (j *Jobs) Forget(ctx context.Context, id string) error {
	if err := j.rdb.Del(ctx, keyUnits(id), keyParts(id)).Err(); err != nil {
		return fmt.Errorf("seed: forget units of job %s: %w", id, err)
	}
	return nil
}

func keyLock(id string) string { return "mapfarm:seed:job:" + id + ":lock" }

// Lock takes a job's coordinator lock for at most ttl, so that two coordinators (a rolling
// update) never plan or finish the same job at once. It reports false when another owner holds
// it.
func (j *Jobs) Lock(ctx context.Context, id, owner string, ttl time.Duration) (bool, error) {
	ok, err := j.rdb.SetNX(ctx, keyLock(id), owner, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("seed: lock job %s: %w", id, err)
	}
	return ok, nil
}

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// Unlock releases a job's lock if owner still holds it.
func (j *Jobs) Unlock(ctx context.Context, id, owner string) error {
	if err := unlockScript.Run(ctx, j.rdb, []string{keyLock(id)}, owner).Err(); err != nil {
		return fmt.Errorf("seed: unlock job %s: %w", id, err)
	}
	return nil
}
