package worker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// BenchmarkNormalBesideHeavy measures ordinary renders (256×256 ExportMapImage, one after another)
// on a 2-slot worker whose queue always holds 4096×4096 renders (three clients sending them back to
// back), with the heavy lane (lanes=on, the default threshold) and without it (lanes=off: every
// render on the interactive queue, as before), and with no heavy renders at all (alone), and
// reports the ordinary renders' p50 and p99 and the heavy renders done. Real Redis; the worker
// stores in memory.
//
//	go test ./worker -run '^$' -bench NormalBesideHeavy -benchtime 100x
func BenchmarkNormalBesideHeavy(b *testing.B) {
	cat := catalogtest.Samples(b)
	job := func(id string, size int) task.ExportMap {
		return task.ExportMap{ID: id, Service: "world", Map: "Layers", Extent: [4]float64{-2e7, -2e7, 2e7, 2e7},
			Width: size, Height: size, DPI: 96, Format: "png", Key: "outputs/" + id + ".png", Inline: true,
			Layers: []task.LayerOverride{{ID: 0, Visible: true, ShowLabels: true}, {ID: 1, Visible: true, ShowLabels: true}}}
	}
	for _, tc := range []struct {
		name    string
		lanes   bool
		heavy   int           // clients sending heavy renders
		release time.Duration // Params.ReleaseMemoryEvery
	}{{"alone", true, 0, 0}, {"lanes=on", true, 3, 0}, {"lanes=on/release=10s", true, 3, 10 * time.Second}, {"lanes=off", false, 3, 0}} {
		lanes := tc.lanes
		b.Run(tc.name, func(b *testing.B) {
			rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(b), DB: testenv.RedisDB(b)})
			defer rdb.Close()
			r, err := render.NewRenderer()
			if err != nil {
				b.Fatal(err)
			}
			w := New(Params{Redis: rdb, Catalog: cat, Concurrency: 2, Renderer: r, Store: &memStore{objs: map[string][]byte{}},
				ReleaseMemoryEvery: tc.release, Logger: slog.New(slog.DiscardHandler)})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			defer func() { cancel(); <-done }()
			threshold := int64(task.DefaultHeavyPixels)
			if !lanes {
				threshold = -1
			}
			c := farm.NewClient(rdb, 60*time.Second, farm.HeavyPixels(threshold))
			// The heavy clients stop first, which cancels their renders; the worker after them.
			heavyCtx, stopHeavy := context.WithCancel(context.Background())
			defer stopHeavy()
			var heavyDone sync.WaitGroup
			var heavyMu sync.Mutex
			heavyN := 0
			for k := range tc.heavy {
				heavyDone.Add(1)
				go func() {
					defer heavyDone.Done()
					for i := 0; heavyCtx.Err() == nil; i++ {
						if res, err := c.Export(heavyCtx, job(fmt.Sprintf("heavy-%v-%d-%d", lanes, k, i), 4096)); err == nil && res.Error == "" {
							heavyMu.Lock()
							heavyN++
							heavyMu.Unlock()
						}
					}
				}()
			}
			time.Sleep(500 * time.Millisecond) // the heavy renders are under way
			var ms []float64
			i := 0
			for b.Loop() {
				start := time.Now()
				res, err := c.Export(context.Background(), job(fmt.Sprintf("normal-%v-%d", lanes, i), 256))
				if err != nil || res.Error != "" {
					b.Fatalf("ordinary render: %+v, %v", res, err)
				}
				ms = append(ms, float64(time.Since(start))/float64(time.Millisecond))
				i++
			}
			b.StopTimer()
			stopHeavy()
			heavyDone.Wait()
			for deadline := time.Now().Add(30 * time.Second); w.active.Load() > 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond) // the cancelled renders end
			}
			slices.Sort(ms)
			b.ReportMetric(ms[len(ms)/2], "p50-ms")
			b.ReportMetric(ms[min(len(ms)-1, len(ms)*99/100)], "p99-ms")
			b.ReportMetric(float64(heavyN), "heavy-done")
		})
	}
}
