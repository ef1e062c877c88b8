package worker

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// rssMB is this process's resident set, in MiB.
func rssMB(b *testing.B) float64 {
	mb, ok := testenv.ProcStatusMB(0, "VmRSS")
	if !ok {
		b.Skip("no VmRSS in /proc/self/status")
	}
	return mb
}

// BenchmarkHeavyRenderRSS draws 30 ExportMapImage renders of 4096×4096 (the soak's heavy rows:
// plain, and with a selection buffer, which draws on a second full-size surface), two at a time
// as a 2-slot worker does, after 50 ordinary 256×256 ones, and reports the RSS: at the start
// (after the ordinary renders), at its peak, after two garbage collections, 15 s later (the
// runtime's background scavenger at work), and after the worker's release (debug.FreeOSMemory,
// as a worker does when it goes to sleep after heavy renders); then 50 ordinary renders again
// and the RSS after them.
//
//	go test ./worker -run '^$' -bench HeavyRenderRSS -benchtime 1x
func BenchmarkHeavyRenderRSS(b *testing.B) {
	cat := catalogtest.Samples(b)
	r, err := render.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	job := func(size int, buffer bool) task.ExportMap {
		j := task.ExportMap{ID: "rss", Service: "world", Map: "Layers", Extent: [4]float64{-2e7, -2e7, 2e7, 2e7},
			Width: size, Height: size, DPI: 96, Format: "png", Key: "outputs/rss.png",
			Layers: []task.LayerOverride{{ID: 0, Visible: true, ShowLabels: true}, {ID: 1, Visible: true, ShowLabels: true}}}
		if buffer {
			j.Layers[1].Drawing = &task.Drawing{Selection: []int64{1, 2, 3}, ShowBuffer: true, BufferDistance: 1e6}
		}
		return j
	}
	draw := func(jobs []task.ExportMap, slots int) {
		var wg sync.WaitGroup
		next := make(chan task.ExportMap)
		for range slots {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					if _, _, err := DrawExportMap(context.Background(), cat, r, j); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for _, j := range jobs {
			next <- j
		}
		close(next)
		wg.Wait()
	}
	ordinary := make([]task.ExportMap, 50)
	for i := range ordinary {
		ordinary[i] = job(256, false)
	}
	heavy := make([]task.ExportMap, 30)
	for i := range heavy {
		heavy[i] = job(4096, i%2 == 1)
	}
	for b.Loop() {
		draw(ordinary, 2)
		runtime.GC()
		debug.FreeOSMemory()
		base := rssMB(b)
		peak := base
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				peak = max(peak, rssMB(b))
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		draw(heavy, 2)
		close(stop)
		<-sampled
		time.Sleep(time.Second)
		runtime.GC()
		runtime.GC()
		afterGC := rssMB(b)
		time.Sleep(15 * time.Second) // the runtime's background scavenger at work
		afterScavenger := rssMB(b)
		debug.FreeOSMemory()
		released := rssMB(b)
		draw(ordinary, 2)
		again := rssMB(b)
		b.ReportMetric(base, "rss-base-MB")
		b.ReportMetric(peak, "rss-peak-MB")
		b.ReportMetric(afterGC, "rss-after-gc-MB")
		b.ReportMetric(afterScavenger, "rss-gc-15s-MB")
		b.ReportMetric(released, "rss-released-MB")
		b.ReportMetric(again, "rss-ordinary-again-MB")
	}
}
