// Package coordinator owns the farm's long-running and periodic work. Each loop has the janitor
// shape (a struct, a params struct, exec for one pass, a ticker in Run), so a test runs one pass
// by calling exec instead of sleeping:
//
//	outputReaper   deletes rendered images older than their time to live (outputs.go)
//
// Seeding jobs (planning, progress, resume, cancel) and queue metrics for autoscaling arrive with
// the tile-cache work.
package coordinator

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// Store is what the coordinator needs of the object store.
type Store interface {
	List(ctx context.Context, prefix string, fn func(blob.Info) error) error
	Delete(ctx context.Context, key string) error
}

// Params configure a Coordinator.
type Params struct {
	Store        Store
	OutputPrefix string        // where rendered images live, e.g. "outputs/"
	OutputTTL    time.Duration // how long they live; default 10m
	Interval     time.Duration // how often the reaper runs; default 1m
	Logger       *slog.Logger
}

// Coordinator runs the periodic loops.
type Coordinator struct {
	p      Params
	reaper *outputReaper
}

// New returns a Coordinator.
func New(p Params) *Coordinator {
	if p.OutputTTL <= 0 {
		p.OutputTTL = 10 * time.Minute
	}
	if p.Interval <= 0 {
		p.Interval = time.Minute
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	return &Coordinator{p: p, reaper: &outputReaper{store: p.Store, prefix: p.OutputPrefix, ttl: p.OutputTTL, logger: p.Logger}}
}

// Run runs the loops until ctx is done.
func (c *Coordinator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every(ctx, c.p.Interval, func() { c.reaper.exec(ctx, time.Now()) })
	}()
	c.p.Logger.Info("coordinator started", "output_ttl", c.p.OutputTTL.String())
	wg.Wait()
	c.p.Logger.Info("coordinator stopped")
	return nil
}

func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
