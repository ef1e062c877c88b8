package api

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mapfarm/mapfarm/internal/limits"
)

// The heavy lane (docs/limits.md, "The api's heavy lane"): requests that are legal but costly to
// answer in the api itself — large bodies to decode, geometries of many vertices to test
// against every feature, many ids or screen points — run under a small semaphore, so that on
// an api of two cores at most HeavyLane.Slots goroutines do heavy work and normal requests
// always find a core free. A request is classified before its work starts: by its declared
// body size before decoding, by its decoded Size (limits.Request.Measure) before the
// operation runs; the classification, and what is done about it, is the request's admission
// (admission.go), the same for SOAP and REST. A heavy request waits for a slot no longer than
// its own deadline (the operation timeout, or the client leaving) and gives the slot back when
// its answer is done.

// Defaults of HeavyLane.
const (
	DefaultHeavySlots     = 1
	DefaultHeavyBodyBytes = 1 << 20
	DefaultHeavyVertices  = 500
	DefaultHeavyIDs       = 10_000
	DefaultHeavyPoints    = 10_000
)

// HeavyLane configures the heavy lane. The zero value of a field means its default.
type HeavyLane struct {
	// Slots is how many heavy requests run at once; the others wait. Negative: no lane (every
	// request runs at once, as before the lane).
	Slots int
	// BodyBytes: a SOAP body whose Content-Length is at least this is heavy before it is decoded.
	BodyBytes int64
	// Vertices, IDs, Points: a decoded request with at least this many (limits.Size) is heavy.
	Vertices, IDs, Points int
}

func (l HeavyLane) withDefaults() HeavyLane {
	if l.Slots == 0 {
		l.Slots = DefaultHeavySlots
	}
	if l.BodyBytes <= 0 {
		l.BodyBytes = DefaultHeavyBodyBytes
	}
	if l.Vertices <= 0 {
		l.Vertices = DefaultHeavyVertices
	}
	if l.IDs <= 0 {
		l.IDs = DefaultHeavyIDs
	}
	if l.Points <= 0 {
		l.Points = DefaultHeavyPoints
	}
	return l
}

// heavy reports whether a decoded request of size s is heavy.
func (l HeavyLane) heavy(s limits.Size) bool {
	return s.Vertices >= l.Vertices || s.IDs >= l.IDs || s.Points >= l.Points
}

// heavyLane is the semaphore of the heavy lane and its metrics. A nil *heavyLane admits every
// request at once.
type heavyLane struct {
	cfg   HeavyLane
	slots chan struct{}
	// running and waiting are mapfarm_api_heavy_lane_requests{state}; waited is
	// mapfarm_api_heavy_lane_wait_seconds; refused counts heavy requests whose deadline passed
	// while they waited. All nil without metrics.
	running, waiting prometheus.Gauge
	refused          prometheus.Counter
	waited           prometheus.Observer
}

// newHeavyLane makes the lane of cfg and registers its metrics in reg (nil: none).
func newHeavyLane(cfg HeavyLane, reg prometheus.Registerer) *heavyLane {
	cfg = cfg.withDefaults()
	if cfg.Slots < 0 {
		return nil
	}
	l := &heavyLane{cfg: cfg, slots: make(chan struct{}, cfg.Slots)}
	if reg != nil {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mapfarm_api_heavy_lane_requests",
			Help: "Heavy requests in the api's heavy lane (docs/limits.md), by state: running (holding a slot) or waiting."}, []string{"state"})
		refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "mapfarm_api_heavy_lane_timeouts_total",
			Help: "Heavy requests whose deadline passed, or whose client left, while they waited for a slot of the heavy lane."})
		waited := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mapfarm_api_heavy_lane_wait_seconds",
			Help: "How long heavy requests waited for a slot of the heavy lane.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)})
		slots := prometheus.NewGauge(prometheus.GaugeOpts{Name: "mapfarm_api_heavy_lane_slots", Help: "Slots of the api's heavy lane: heavy requests that run at once."})
		slots.Set(float64(cfg.Slots))
		reg.MustRegister(g, refused, waited, slots)
		l.running, l.waiting, l.refused, l.waited = g.WithLabelValues("running"), g.WithLabelValues("waiting"), refused, waited
	}
	return l
}

// acquire waits for a slot of the lane until ctx is done and returns the function that gives
// it back, or an error wrapping limits.ErrBusy (ctx's deadline: the api was too busy) or ctx's
// error (the client left). A nil lane returns at once.
func (l *heavyLane) acquire(ctx context.Context) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
	default:
		if err := l.wait(ctx); err != nil {
			return nil, err
		}
	}
	if l.running != nil {
		l.running.Inc()
	}
	return func() {
		if l.running != nil {
			l.running.Dec()
		}
		<-l.slots
	}, nil
}

// wait blocks for a slot until ctx is done.
func (l *heavyLane) wait(ctx context.Context) error {
	start := time.Now()
	if l.waiting != nil {
		l.waiting.Inc()
		defer l.waiting.Dec()
	}
	select {
	case l.slots <- struct{}{}:
		if l.waited != nil {
			l.waited.Observe(time.Since(start).Seconds())
		}
		return nil
	case <-ctx.Done():
		if l.refused != nil {
			l.refused.Inc()
		}
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("waiting for a slot of the heavy lane: %w (%w)", limits.ErrBusy, ctx.Err())
		}
		return ctx.Err()
	}
}
