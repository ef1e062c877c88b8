package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// cpuTime is the CPU (user + system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is the CPU a Redis server has used (INFO cpu).
func redisCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, l := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// idleWindow is how long BenchmarkIdleCPU watches each idle process: 60 s, or
// MAPFARM_BENCH_IDLE_SECONDS.
func idleWindow() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("MAPFARM_BENCH_IDLE_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Minute
}

// runRole runs one role of the farm in this process until the benchmark ends and returns the
// api's URL when the role has one.
func runRole(b *testing.B, role string, env map[string]string) string {
	for k, v := range env {
		b.Setenv(k, v)
	}
	cfg, err := config.Load("")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	urlc := make(chan string, 1)
	go func() {
		done <- app.Run(ctx, role, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
			app.Hooks{Listening: func(u string, _ *catalog.Catalog) { urlc <- u }})
	}()
	url := ""
	if role != app.RoleWorker {
		select {
		case url = <-urlc:
		case err := <-done:
			b.Fatalf("the farm did not start: %v", err)
		}
	}
	b.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			b.Error("the farm did not stop within 40 s")
		}
	})
	return url
}

// BenchmarkIdleCPU measures what an idle farm costs: the CPU used over a minute by
//
//   - serve: `mapfarm serve` as the README's first command runs it (api, coordinator and
//     worker in one process, embedded Redis, disk store), no requests;
//   - farm: api, coordinator and worker on real Redis and MinIO (as BenchmarkFarmOverhead runs
//     them), with the Redis server's own CPU beside it;
//   - worker: a worker process alone on real Redis, with the Redis server's CPU.
//
// Workers sleep once their queues have been empty for 2 s (worker.Params.IdleAfter). Reported
// as percent of one core. Then, in the same run, serve and farm answer 300 ExportMapImage
// requests one after another (the first wakes its worker), and the farm's overhead per request
// is reported as BenchmarkFarmOverhead reports it, to show that latency did not pay for the
// sleep:
//
//	go test ./e2e -run '^$' -bench IdleCPU -benchtime 1x
func BenchmarkIdleCPU(b *testing.B) {
	b.Run("serve", func(b *testing.B) {
		for b.Loop() {
			url := runRole(b, app.RoleServe, map[string]string{
				"MAPFARM_LISTEN": "127.0.0.1:0", "MAPFARM_SERVICES": "../services/services.yaml",
				"MAPFARM_STORE": "disk", "MAPFARM_STORE_DIR": b.TempDir(), "MAPFARM_REDIS_ADDR": "",
			})
			reportIdleCPU(b, nil)
			reportOverheads(b, farmOverhead(b, url, 300, func() {}))
		}
	})
	b.Run("farm", func(b *testing.B) {
		rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(b)})
		defer rdb.Close()
		for b.Loop() {
			f := startFarm(b) // api, coordinator and worker on real Redis and MinIO
			reportIdleCPU(b, rdb)
			reportOverheads(b, farmOverhead(b, f.url, 300, func() {}))
		}
	})
	b.Run("worker", func(b *testing.B) {
		addr := testenv.Redis(b)
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		for b.Loop() {
			runRole(b, app.RoleWorker, map[string]string{
				"MAPFARM_SERVICES": "../services/services.yaml", "MAPFARM_STORE": "disk", "MAPFARM_STORE_DIR": b.TempDir(),
				"MAPFARM_REDIS_ADDR": addr, "MAPFARM_REDIS_DB": strconv.Itoa(testenv.RedisDB(b)), "MAPFARM_METRICS_LISTEN": "",
			})
			reportIdleCPU(b, rdb)
		}
	})
}

// reportIdleCPU waits for the farm just started to settle (past worker.Params.IdleAfter, and
// past start-up), then reports the CPU this process used over idleWindow, and with rdb the
// Redis server's, as percent of one core.
func reportIdleCPU(b *testing.B, rdb *redis.Client) {
	time.Sleep(5 * time.Second)
	c0, t0 := cpuTime(b), time.Now()
	var r0 time.Duration
	if rdb != nil {
		r0 = redisCPU(b, rdb)
	}
	time.Sleep(idleWindow())
	took := float64(time.Since(t0))
	b.ReportMetric(100*float64(cpuTime(b)-c0)/took, "%core-process")
	if rdb != nil {
		b.ReportMetric(100*float64(redisCPU(b, rdb)-r0)/took, "%core-redis")
	}
}
