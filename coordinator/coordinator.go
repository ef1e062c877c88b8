// Package coordinator owns the farm's long-running and periodic work. Each loop has the janitor
// shape (a struct, a params struct, exec for one pass, a ticker in Run), so a test runs one pass
// by calling exec instead of sleeping:
//
//	outputReaper   deletes rendered images older than their time to live (outputs.go)
//	queueStats     publishes queue sizes and latencies for autoscaling, and seeding progress (queues.go)
//	seedRunner     plans, watches, finishes and cancels tile-cache seeding jobs, records the
//	               units asynq archived with no handler recording them, and tells every api
//	               which tiles a job that ended changed (seed.go)
//	refresher      reads the data's changes (PostGIS changelogs) into the refresh backlog and
//	               submits the refresh jobs due under each cache's policy (refresh.go)
//
// Seeding jobs (planning, progress, resume, cancel) and queue metrics for autoscaling arrive with
// the tile-cache work.
package coordinator

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/provider"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/task"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
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
	// Redis and Metrics, when both set, make the coordinator publish queue sizes and latencies
	// every QueueStatsInterval (default 5s).
	Redis              redis.UniversalClient
	Metrics            *metrics.Metrics
	QueueStatsInterval time.Duration
	// Tiles is the store tile caches live in; with Redis and Tiles set the coordinator runs
	// seeding jobs (seed.go) every SeedInterval (default 1s).
	Tiles        tilecache.Store
	SeedInterval time.Duration
	// Catalog and Connections, with Redis and Tiles, make the coordinator refresh the caches of
	// the catalog's maps when their data changes (refresh.go): the raster caches, and the
	// vector caches seeded in Tiles.
	Catalog     *catalog.Catalog
	Connections map[string]*provider.Connection
	// NoRefresh leaves the refresh of caches out (coordinator/refresh.go): no change is
	// followed and no refresh job submitted. cachetool's local farm, which only seeds, sets it,
	// so that it never competes with the farm's own coordinator for the changes of shared data.
	NoRefresh bool
	// RefreshState, when set, is the file that keeps what the GeoPackage and GeoJSON layers
	// looked like (row digests; internal/changes), so their changes refresh the caches too.
	RefreshState string
	// RefreshFilePoll is how often the GeoPackage and GeoJSON layers are looked at (with
	// RefreshState); default 10 s.
	RefreshFilePoll time.Duration
	// StartAttrs are added to the start log line: the Redis and the store this process uses
	// ("redis", "10.0.0.5:6379 db 0", "store", "minio http://minio:9000 bucket mapfarm"), so that
	// processes on different stores show in the logs. internal/app sets them.
	StartAttrs []any
}

// Coordinator runs the periodic loops.
type Coordinator struct {
	p      Params
	reaper *outputReaper
	queues *queueStats // nil without Redis and Metrics
	seeder *seedRunner // nil without Redis and Tiles
	fresh  *refresher  // nil without Redis, Tiles and Catalog
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
	if p.QueueStatsInterval <= 0 {
		p.QueueStatsInterval = 5 * time.Second
	}
	if p.SeedInterval <= 0 {
		p.SeedInterval = seedInterval
	}
	c := &Coordinator{p: p, reaper: &outputReaper{store: p.Store, prefix: p.OutputPrefix, ttl: p.OutputTTL, logger: p.Logger}}
	if p.Redis == nil {
		return c
	}
	// One inspector and one job store serve both loops that need Redis.
	inspector, jobs := asynq.NewInspectorFromRedisClient(p.Redis), seed.NewJobs(p.Redis)
	if p.Tiles != nil {
		rdb := p.Redis
		invalidate := func(ctx context.Context, v refresh.Invalidation) error { return refresh.Publish(ctx, rdb, v) }
		c.seeder = newSeedRunner(seedRunnerParams{jobs: jobs, queue: task.NewQueue(p.Redis), store: p.Tiles, logger: p.Logger, archive: inspector,
			invalidate: invalidate})
		if p.Catalog != nil && !p.NoRefresh {
			c.fresh = newRefresher(refresherParams{catalog: p.Catalog, connections: p.Connections, jobs: jobs, backlog: refresh.NewBacklog(p.Redis),
				logger: p.Logger, metrics: p.Metrics, store: p.Tiles, invalidate: invalidate, stateFile: p.RefreshState, filePoll: p.RefreshFilePoll}, c.seeder.owner)
		}
	}
	if p.Metrics != nil {
		var names []string
		for q := range task.QueuePriorities() {
			names = append(names, q)
		}
		sort.Strings(names)
		c.queues = &queueStats{inspector: inspector, queues: names, jobs: jobs, m: p.Metrics, logger: p.Logger}
	}
	return c
}

// Run runs the loops until ctx is done, and returns nil then: a stop is never a failure, and a
// pass that ctx cuts short logs nothing (each loop checks ctx before it warns).
func (c *Coordinator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		every(ctx, c.p.Interval, func() { c.reaper.exec(ctx, time.Now()) })
	}()
	if c.seeder != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			every(ctx, c.p.SeedInterval, func() { c.seeder.exec(ctx) })
		}()
	}
	if c.fresh != nil {
		wg.Add(2 + len(c.fresh.layers))
		c.fresh.watch(ctx, wg.Done)
		go func() {
			defer wg.Done()
			c.fresh.watchFiles(ctx)
		}()
		go func() {
			defer wg.Done()
			t := time.NewTicker(c.p.SeedInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				case <-c.fresh.wake:
				}
				if ctx.Err() != nil {
					return
				}
				c.fresh.exec(ctx)
			}
		}()
	}
	if c.queues != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.queues.exec()
			every(ctx, c.p.QueueStatsInterval, c.queues.exec)
		}()
	}
	c.p.Logger.Info("coordinator started", append([]any{"output_ttl", c.p.OutputTTL.String()}, c.p.StartAttrs...)...)
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
			if ctx.Err() != nil {
				return // both were ready: stopping wins
			}
			f()
		}
	}
}
