package e2e

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// soakSettings are BenchmarkSoak's knobs, from the environment.
type soakSettings struct {
	duration   time.Duration // mixed phase: MAPFARM_SOAK_DURATION, default 20m
	quiet      time.Duration // quiet phase (normal traffic only): MAPFARM_SOAK_QUIET, default duration/4, at least 1m
	sample     time.Duration // MAPFARM_SOAK_SAMPLE, default 5s
	normalRPS  float64       // MAPFARM_SOAK_RPS, default 10
	hostileRPS float64       // MAPFARM_SOAK_HOSTILE_RPS, default 2
}

func soakSettingsFromEnv(b *testing.B) soakSettings {
	b.Helper()
	dur := func(name string, def time.Duration) time.Duration {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			b.Fatalf("%s=%q: want a positive duration such as 3m", name, v)
		}
		return d
	}
	num := func(name string, def float64) float64 {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			b.Fatalf("%s=%q: want a positive number", name, v)
		}
		return f
	}
	s := soakSettings{duration: dur("MAPFARM_SOAK_DURATION", 20*time.Minute), sample: dur("MAPFARM_SOAK_SAMPLE", 5*time.Second),
		normalRPS: num("MAPFARM_SOAK_RPS", 10), hostileRPS: num("MAPFARM_SOAK_HOSTILE_RPS", 2)}
	s.quiet = dur("MAPFARM_SOAK_QUIET", max(s.duration/4, time.Minute))
	return s
}

// soakProcess is one process of the soaked farm.
type soakProcess struct {
	role    string
	cmd     *exec.Cmd
	metrics string // its /metrics URL
}

// soakSample is what one process looked like at one moment.
type soakSample struct {
	at                  time.Duration
	phase               string
	rssMB               float64
	heapMB              float64 // Go heap in use (go_memstats_heap_inuse_bytes), -1 unknown
	goroutines, openFDs int
}

func (p soakProcess) sample(at time.Duration, phase string) soakSample {
	s := soakSample{at: at, phase: phase, rssMB: -1, heapMB: -1, goroutines: -1, openFDs: -1}
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if b, err := os.ReadFile("/proc/" + pid + "/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				s.rssMB = kb / 1024
			}
		}
	}
	if fds, err := os.ReadDir("/proc/" + pid + "/fd"); err == nil {
		s.openFDs = len(fds)
	}
	if resp, err := http.Get(p.metrics); err == nil {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.goroutines = int(f)
			}
			if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.heapMB = f / 1e6
			}
		}
		resp.Body.Close()
	}
	return s
}

// normalRequest is one request of the normal traffic: a 256×256 ExportMapImage of a random
// extent (30%), a GetMapTile of levels 0–3 of the seeded world cache (40%), or a
// QueryFeatureCount of a random envelope (30%).
func normalRequest(rng *rand.Rand) (op, body string) {
	size := 2e6 + rng.Float64()*6e6
	x := -2e7 + rng.Float64()*(4e7-size)
	y := -8.5e6 + rng.Float64()*(2e7-size)
	xs := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	switch k := rng.IntN(10); {
	case k < 3:
		return "ExportMapImage", exportBody(256, 256, "96", extent(xs(x), xs(y), xs(x+size), xs(y+size)))
	case k < 7:
		level := rng.IntN(4)
		return "GetMapTile", tileBody(level, rng.IntN(1<<level), rng.IntN(1<<level))
	default:
		return "QueryFeatureCount", queryBody("QueryFeatureCount", `<QueryFilter xsi:type="gis:SpatialFilter"><WhereClause></WhereClause><SpatialRel>gisSpatialRelIntersects</SpatialRel>`+
			`<FilterGeometry xsi:type="gis:EnvelopeN"><XMin>`+xs(x)+`</XMin><YMin>`+xs(y)+`</YMin><XMax>`+xs(x+size)+`</XMax><YMax>`+xs(y+size)+`</YMax></FilterGeometry></QueryFilter>`)
	}
}

// latencies collects the normal requests' latencies of one phase.
type latencies struct {
	mu     sync.Mutex
	all    []float64 // ms
	byOp   map[string][]float64
	errors int
}

func (l *latencies) add(op string, d time.Duration, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if failed {
		l.errors++
		return
	}
	ms := float64(d) / float64(time.Millisecond)
	l.all = append(l.all, ms)
	if l.byOp == nil {
		l.byOp = map[string][]float64{}
	}
	l.byOp[op] = append(l.byOp[op], ms)
}

// percentile returns the p-th percentile (0–100) of ms, or -1 for none.
func percentile(ms []float64, p float64) float64 {
	if len(ms) == 0 {
		return -1
	}
	s := slices.Clone(ms)
	sort.Float64s(s)
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

func (l *latencies) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d errors=%d p50=%.1fms p99=%.1fms", len(l.all), l.errors, percentile(l.all, 50), percentile(l.all, 99))
	ops := make([]string, 0, len(l.byOp))
	for op := range l.byOp {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	for _, op := range ops {
		fmt.Fprintf(&b, " | %s p50/p99 %.1f/%.1f", op, percentile(l.byOp[op], 50), percentile(l.byOp[op], 99))
	}
	return b.String()
}

// openLoop starts one request every 1/rps until stop is closed, each in its own goroutine (at
// most 64 in flight; one that finds them all busy is counted in dropped and not sent), and waits
// for those in flight.
func openLoop(rps float64, stop <-chan struct{}, dropped *atomic.Int64, send func(i int)) {
	slots := make(chan struct{}, 64)
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rps))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			wg.Wait()
			return
		case <-tick.C:
		}
		select {
		case slots <- struct{}{}:
		default:
			dropped.Add(1)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			send(i)
		}()
	}
}

// BenchmarkSoak sends mixed normal and hostile traffic to a farm of separate processes (api,
// coordinator, one worker with 2 render slots) on real Redis and MinIO, and shows whether it
// stays flat: every few seconds it prints each process's RSS, goroutines and open files; at the
// end, the normal requests' p50 and p99 with hostile traffic beside them against a quiet run of
// the same normal traffic first (the target: p99 within 20%), how each process grew, and how
// the hostile requests were answered (each row of TestHostile's table, as the table says,
// within 2 s). Open-loop traffic: normal requests at MAPFARM_SOAK_RPS (10/s), hostile ones at
// MAPFARM_SOAK_HOSTILE_RPS (2/s), the rows in turn.
//
//	MAPFARM_SOAK_DURATION=20m go test ./e2e -run '^$' -bench Soak -benchtime 1x -timeout 0
//
// (bench/farm.sh soak starts Redis and MinIO and runs it.) MAPFARM_SOAK_QUIET sets the quiet
// phase (default a quarter of the duration, at least 1 min), MAPFARM_SOAK_SAMPLE the sampling
// interval (5 s).
func BenchmarkSoak(b *testing.B) {
	set := soakSettingsFromEnv(b)
	bin := buildBinary(b, "github.com/mapfarm/mapfarm")
	addr := freePort(b)
	env := append(farmEnv(b, addr), "MAPFARM_WORKER_CONCURRENCY=2")
	workerMetrics, coordMetrics := freePort(b), freePort(b)
	procs := []soakProcess{
		{role: "worker", cmd: startProcess(b, bin, "worker", append(env, "MAPFARM_METRICS_LISTEN="+workerMetrics)), metrics: "http://" + workerMetrics + "/metrics"},
		{role: "coordinator", cmd: startProcess(b, bin, "coordinator", append(env, "MAPFARM_METRICS_LISTEN="+coordMetrics)), metrics: "http://" + coordMetrics + "/metrics"},
		{role: "api", cmd: startProcess(b, bin, "api", env), metrics: "http://" + addr + "/metrics"},
	}
	base := "http://" + addr
	waitReady(b, base+"/readyz", 60*time.Second)
	no := false
	job := submitSeed(b, base, seed.Request{Service: "world", Levels: []int{0, 1, 2, 3}, SkipEmpty: &no,
		Extent: []float64{-20037508.342789244, -20037508.342789244, 20037508.342789244, 20037508.342789244}})
	if st := waitJob(b, base, job, 5*time.Minute, nil); st.State != seed.StateDone {
		b.Fatalf("seeding levels 0–3 of the world cache: %+v", st)
	}
	endpoint := base + "/arcgis/services/world/MapServer"
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	normal := func(lat *latencies, rng *rand.Rand, mu *sync.Mutex) func(int) {
		return func(int) {
			mu.Lock()
			op, body := normalRequest(rng)
			mu.Unlock()
			start := time.Now()
			resp, err := client.Post(endpoint, "text/xml", strings.NewReader(body))
			failed := err != nil
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				failed = err != nil || resp.StatusCode != 200
			}
			lat.add(op, time.Since(start), failed)
		}
	}

	// Sampling, from the start of the quiet phase to the end.
	start := time.Now()
	var phase atomic.Value
	phase.Store("quiet")
	var samplesMu sync.Mutex
	samples := map[string][]soakSample{}
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	takeSamples := func() {
		at, ph := time.Since(start).Round(time.Second), phase.Load().(string)
		line := fmt.Sprintf("soak %6s %-7s", at, ph)
		samplesMu.Lock()
		for _, p := range procs {
			s := p.sample(at, ph)
			samples[p.role] = append(samples[p.role], s)
			line += fmt.Sprintf(" | %s rss %6.1f MB heap %6.1f gor %4d fds %3d", p.role, s.rssMB, s.heapMB, s.goroutines, s.openFDs)
		}
		samplesMu.Unlock()
		fmt.Println(line)
	}
	go func() {
		defer close(sampled)
		tick := time.NewTicker(set.sample)
		defer tick.Stop()
		for {
			takeSamples()
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
		}
	}()
	rows := hostileRows()
	fmt.Printf("soak: quiet %v of normal traffic (%g req/s), then %v of normal + hostile (%g req/s, %d rows of TestHostile in turn)\n",
		set.quiet, set.normalRPS, set.duration, set.hostileRPS, len(rows))

	b.ResetTimer()
	var dropped atomic.Int64
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	// Quiet phase (its first 10 s warm up and are not counted).
	warm, quiet, mixed := &latencies{}, &latencies{}, &latencies{}
	stop := make(chan struct{})
	go func() { time.Sleep(10 * time.Second); close(stop) }()
	openLoop(set.normalRPS, stop, &dropped, normal(warm, rng, &rngMu))
	stop = make(chan struct{})
	go func() { time.Sleep(set.quiet); close(stop) }()
	openLoop(set.normalRPS, stop, &dropped, normal(quiet, rng, &rngMu))
	fmt.Printf("soak: quiet phase done: %s\n", quiet.summary())

	// Mixed phase.
	phase.Store("mixed")
	takeSamples()
	type rowResult struct{ sent, bad int }
	var hostileMu sync.Mutex
	hostile := make([]rowResult, len(rows))
	var firstBad []string
	hostileClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	stop = make(chan struct{})
	go func() { time.Sleep(set.duration); close(stop) }()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); openLoop(set.normalRPS, stop, &dropped, normal(mixed, rng, &rngMu)) }()
	go func() {
		defer wg.Done()
		openLoop(set.hostileRPS, stop, &dropped, func(i int) {
			k := i % len(rows)
			r := rows[k]
			a := r.send(hostileClient, base, fmt.Sprintf("soak-%07d", i))
			bad := r.check(a)
			hostileMu.Lock()
			defer hostileMu.Unlock()
			hostile[k].sent++
			if len(bad) > 0 {
				hostile[k].bad++
				if hostile[k].bad == 1 {
					firstBad = append(firstBad, r.name+": "+strings.Join(bad, "; "))
				}
			}
		})
	}()
	wg.Wait()
	b.StopTimer()
	phase.Store("after")
	time.Sleep(30 * time.Second) // past the workers' idle sleep; Go returns freed memory to the OS over minutes
	close(stopSampling)
	<-sampled
	takeSamples()

	// Report.
	fmt.Printf("soak: normal requests, quiet: %s\n", quiet.summary())
	fmt.Printf("soak: normal requests, mixed: %s\n", mixed.summary())
	q99, m99 := percentile(quiet.all, 99), percentile(mixed.all, 99)
	q50, m50 := percentile(quiet.all, 50), percentile(mixed.all, 50)
	fmt.Printf("soak: p50 mixed/quiet %.2f, p99 mixed/quiet %.2f (target ≤ 1.2); %d requests not sent (64 in flight)\n", m50/q50, m99/q99, dropped.Load())
	b.ReportMetric(m99/q99, "p99-ratio")
	b.ReportMetric(m50/q50, "p50-ratio")
	b.ReportMetric(float64(mixed.errors+quiet.errors), "normal-errors")
	samplesMu.Lock()
	for _, p := range procs {
		ss := samples[p.role]
		var from soakSample
		for _, s := range ss {
			if s.phase == "mixed" {
				from = s
				break
			}
		}
		last := ss[len(ss)-1]
		peak := from
		for _, s := range ss {
			if s.rssMB > peak.rssMB {
				peak = s
			}
		}
		growth := 100 * (last.rssMB - from.rssMB) / from.rssMB
		fmt.Printf("soak: %-11s RSS %.1f MB at the start of the mixed phase, peak %.1f MB at %v, %.1f MB 30 s after (%+.1f%%); goroutines %d → %d; open files %d → %d\n",
			p.role, from.rssMB, peak.rssMB, peak.at, last.rssMB, growth, from.goroutines, last.goroutines, from.openFDs, last.openFDs)
		b.ReportMetric(growth, p.role+"-rss-growth-%")
		b.ReportMetric(peak.rssMB, p.role+"-rss-peak-MB")
		b.ReportMetric(float64(last.goroutines-from.goroutines), p.role+"-goroutine-growth")
		b.ReportMetric(float64(last.openFDs-from.openFDs), p.role+"-fd-growth")
	}
	samplesMu.Unlock()
	sent, badTotal := 0, 0
	for k, r := range hostile {
		sent += r.sent
		badTotal += r.bad
		if r.bad > 0 {
			fmt.Printf("soak: hostile row %q: %d of %d not answered as the table says\n", rows[k].name, r.bad, r.sent)
		}
	}
	fmt.Printf("soak: hostile requests %d, %d not answered as the table says (within 2 s, the row's answer)\n", sent, badTotal)
	for _, s := range firstBad {
		fmt.Printf("soak:   first miss: %.400s\n", s)
	}
	b.ReportMetric(float64(sent), "hostile-requests")
	b.ReportMetric(float64(badTotal), "hostile-misses")
	for _, p := range procs {
		if f, ok := p.cmd.Stdout.(*os.File); ok {
			if logs, err := os.ReadFile(f.Name()); err == nil {
				n := strings.Count(string(logs), `"level":"ERROR"`)
				fmt.Printf("soak: %s logged %d lines at ERROR\n", p.role, n)
				b.ReportMetric(float64(n), p.role+"-error-lines")
			}
		}
	}
}
