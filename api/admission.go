package api

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/priority"
)

// Admission is the request policy every front end's operations run under (docs/limits.md,
// "The api's heavy lane"): the request limits, checked on the decoded request before its work,
// and the heavy lane with its CPU priority. A request's admission is one value, its ticket,
// decided from what is known before the work (the body's declared length) and raised once the
// request is decoded and measured (limits.Request.Measure, the one walk of the request); this
// file is the one place that acts on it: it takes and gives back the lane's slot and puts the
// work on a thread of lower priority (internal/priority). The SOAP endpoint runs its requests
// through Serve with their declared body length; REST runs each operation through Operation.
type Admission struct {
	limits limits.Request
	lane   *heavyLane // nil: no lane
}

// NewAdmission returns the policy of the request limits lim and the heavy lane cfg, whose
// metrics it registers in reg (nil: none). One api process has one, shared by its front ends.
func NewAdmission(lim limits.Request, cfg HeavyLane, reg prometheus.Registerer) *Admission {
	return &Admission{limits: lim, lane: newHeavyLane(cfg, reg)}
}

// ticket is the admission of one request: whether it holds a slot of the heavy lane, and the
// CPU priority its thread runs at.
type ticket struct {
	a *Admission
	// release gives back the lane's slot the request holds; nil while it holds none.
	release func()
	// low says the thread already runs at the lower priority; lower, when set, lowers it in
	// place (priority.Later) for a request whose body turns out large while it is read.
	low   bool
	lower func()
}

// serve runs work, the whole of one request whose body declares declared bytes (-1: unknown,
// chunked), under its first admission, and gives back the lane's slot it took when work
// returns. A body declared large is heavy before it is decoded, its decoding being itself the
// work the lane bounds: it waits for a slot (an error wrapping limits.ErrBusy when none frees
// before ctx's deadline, ctx's error when the client left) and then decodes and runs at the
// lower priority. A body of unknown length is read on a thread that can drop to it once
// HeavyLane.BodyBytes of it have been read (ticket.bodyLimit).
func (a *Admission) serve(ctx context.Context, declared int64, work func(t *ticket)) error {
	t := &ticket{a: a}
	defer func() {
		if t.release != nil {
			t.release()
		}
	}()
	switch {
	case a.lane != nil && declared >= a.lane.cfg.BodyBytes:
		release, err := a.lane.acquire(ctx)
		if err != nil {
			return err
		}
		t.release = release
		priority.Low(func() {
			t.low = true
			work(t)
		})
	case a.lane != nil && declared < 0:
		priority.Later(func(lower func()) {
			t.lower = lower
			work(t)
		})
	default:
		work(t)
	}
	return nil
}

// Operation runs one operation's request req (a pointer to the gisxml request struct of op)
// through the policy: it checks req against the request limits (a *limits.Error), takes a slot
// of the heavy lane when req is heavy (an error wrapping limits.ErrBusy, or ctx's error), and
// calls run, at the lower priority for a heavy request. It is what the REST front end calls
// each operation through (rest.Params.Admit).
func (a *Admission) Operation(ctx context.Context, op string, req any, run func()) error {
	var err error
	_ = a.serve(ctx, 0, func(t *ticket) {
		if err = t.admit(ctx, op, req, 0); err == nil {
			t.run(run)
		}
	})
	return err
}

// bodyLimit is when a body of unknown length turns the request heavy: after large bytes, at
// which atLarge lowers the thread; atLarge is nil when the thread cannot be lowered in place.
func (t *ticket) bodyLimit() (large int64, atLarge func()) {
	if t.lower == nil || t.a.lane == nil {
		return 0, nil
	}
	return t.a.lane.cfg.BodyBytes, func() {
		if !t.low {
			t.lower()
			t.low = true
		}
	}
}

// admit raises the ticket for the decoded request req of op, of which bodyRead bytes were read:
// it measures req once, refusing it over a limit (a *limits.Error), and takes a slot of the
// heavy lane for a request that turned out heavy by its Size or its body, unless it holds one.
func (t *ticket) admit(ctx context.Context, op string, req any, bodyRead int64) error {
	size, err := t.a.limits.Measure(op, req)
	if err != nil {
		return err
	}
	l := t.a.lane
	if l == nil || t.release != nil || !(l.cfg.heavy(size) || bodyRead >= l.cfg.BodyBytes) {
		return nil
	}
	release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	t.release = release
	return nil
}

// run runs the operation: a request that holds a slot of the heavy lane runs at the lower CPU
// priority, so that the short requests beside it get the api's cores first — on its own
// thread, lowered in place when it can be, else on a thread of priority.Low.
func (t *ticket) run(fn func()) {
	switch {
	case t.release == nil || t.low:
		fn()
	case t.lower != nil:
		t.lower()
		t.low = true
		fn()
	default:
		priority.Low(fn)
	}
}

// TileBuild runs build, the building of a vector tile on demand (internal/vectortileserver), at
// the lower CPU priority of heavy work, so that the short requests beside it (cached tiles, JSON)
// get the api's cores first. It takes no slot of the heavy lane: one slot would serialise every
// on-demand tile of the farm, and each build is bounded by the encoder's own limits (features,
// bytes, time; docs/vector-tiles.md).
func (a *Admission) TileBuild(build func()) {
	priority.Low(build)
}
