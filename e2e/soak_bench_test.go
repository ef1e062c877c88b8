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
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// soakSettings are BenchmarkSoak's knobs, from the environment.
type soakSettings struct {
	duration   time.Duration // the alternating windows together: MAPFARM_SOAK_DURATION, default 20m
	window     time.Duration // one window: MAPFARM_SOAK_WINDOW, default 1m
	warmup     time.Duration // normal traffic before the baseline: MAPFARM_SOAK_WARMUP, default 1m
	sample     time.Duration // MAPFARM_SOAK_SAMPLE, default 5s
	normalRPS  float64       // MAPFARM_SOAK_RPS, default 10: SOAP's normal requests
	restRPS    float64       // MAPFARM_SOAK_REST_RPS, default 5: REST, WMTS and directory normal requests
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
	return soakSettings{duration: dur("MAPFARM_SOAK_DURATION", 20*time.Minute), window: dur("MAPFARM_SOAK_WINDOW", time.Minute),
		warmup: dur("MAPFARM_SOAK_WARMUP", time.Minute), sample: dur("MAPFARM_SOAK_SAMPLE", 5*time.Second),
		normalRPS: num("MAPFARM_SOAK_RPS", 10), restRPS: num("MAPFARM_SOAK_REST_RPS", 5), hostileRPS: num("MAPFARM_SOAK_HOSTILE_RPS", 2)}
}

// windows is how many windows the soak has: duration/window, rounded to an even number of at
// least 2 (quiet and mixed alternate, quiet first, so the last window is a mixed one).
func (s soakSettings) windows() int {
	n := int(s.duration / s.window)
	return max(2, n-n%2)
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
	cacheMB             float64 // the process's bounded caches (mapfarm_cache_bytes, all caches), -1 unknown
	idleMB              float64 // heap freed but not returned to the OS (heap_idle − heap_released), -1 unknown
	goroutines, openFDs int
}

func (p soakProcess) sample(at time.Duration, phase string) soakSample {
	s := soakSample{at: at, phase: phase, rssMB: -1, heapMB: -1, cacheMB: -1, idleMB: -1, goroutines: -1, openFDs: -1}
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if mb, ok := testenv.ProcStatusMB(p.cmd.Process.Pid, "VmRSS"); ok {
		s.rssMB = mb
	}
	if fds, err := os.ReadDir("/proc/" + pid + "/fd"); err == nil {
		s.openFDs = len(fds)
	}
	if resp, err := http.Get(p.metrics); err == nil {
		var idle, released float64
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_idle_bytes "); ok {
				idle, _ = strconv.ParseFloat(v, 64)
			}
			if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_released_bytes "); ok {
				released, _ = strconv.ParseFloat(v, 64)
			}
			if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.goroutines = int(f)
			}
			if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.heapMB = f / 1e6
			}
			if rest, ok := strings.CutPrefix(sc.Text(), "mapfarm_cache_bytes{"); ok {
				if _, v, ok := strings.Cut(rest, "} "); ok {
					f, _ := strconv.ParseFloat(v, 64)
					s.cacheMB = max(s.cacheMB, 0) + f/1e6
				}
			}
		}
		resp.Body.Close()
		if idle > 0 {
			s.idleMB = (idle - released) / 1e6
		}
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

// traffic is the normal requests of one phase or window, by front end: SOAP (normalRequest)
// and REST with WMTS and the cache directory (normalRESTRequest), each reported on its own.
type traffic struct{ soap, rest *latencies }

func newTraffic() traffic { return traffic{soap: &latencies{}, rest: &latencies{}} }

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
// stays flat.
//
// Traffic, open-loop: normal requests all the time, SOAP's (normalRequest) at MAPFARM_SOAK_RPS
// (10/s) and, beside them, REST, WMTS and cache-directory GETs (normalRESTRequest) at
// MAPFARM_SOAK_REST_RPS (5/s); hostile ones at MAPFARM_SOAK_HOSTILE_RPS (2/s), the rows of
// TestHostile's table in turn, a SOAP row and one of REST, tiles/WMTS, the cache directory or
// another route alternating (hostileOrder), so every mixed window carries both. After a
// warm-up of normal traffic only (MAPFARM_SOAK_WARMUP, 1 min, plus 10 s, and longer until the
// api's caches stop growing: 30 s more at a time while they grew by 0.5 MB or more, at most
// 4 min more), quiet windows (normal traffic only) and mixed windows (normal
// beside hostile) of MAPFARM_SOAK_WINDOW (1 min) alternate for MAPFARM_SOAK_DURATION (20 min: 10
// of each), quiet first, mixed last. The normal requests' p99 of the mixed windows is compared
// with that of the quiet windows (the target: within 20%), for SOAP and for REST apart
// (soap-p99-ratio, rest-p99-ratio) and for both together (p99-ratio); the hostile requests are
// counted by front end (hostileSurface). Since the two kinds alternate minute
// by minute, load from other work on the machine falls on both alike, where one quiet phase
// before a long mixed one compared two different stretches of the machine's day.
//
// Memory: every MAPFARM_SOAK_SAMPLE (5 s) it prints each process's RSS, Go heap in use, bytes
// in its bounded caches (mapfarm_cache_bytes), goroutines and open files. The baseline is the
// sample at the end of the warm-up: the caches that normal traffic fills (the api's tiles,
// bundle indexes and pages, recent outputs; a worker's fonts) have reached what that traffic
// keeps in them by then (their bounds, for the recent outputs), so they belong to the baseline, and what
// hostile traffic adds on top does not. Growth is RSS 30 s after the last (mixed) window against
// that baseline (the target: within ±10%); the start (after readiness), the baseline, the end of
// the windows and 30 s after are printed for every process.
//
//	go test ./e2e -run '^$' -bench Soak -benchtime 1x -timeout 0
//
// (bench/farm.sh soak starts Redis and MinIO and runs it; MAPFARM_SOAK_DURATION=2m
// MAPFARM_SOAK_WINDOW=30s MAPFARM_SOAK_WARMUP=30s for a short run: bench/README.md.)
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
	seedAndWait(b, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1, 2, 3}, SkipEmpty: &no})
	endpoint := base + "/arcgis/services/world/MapServer"
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	normal := func(record func(op string, d time.Duration, failed bool), rng *rand.Rand, mu *sync.Mutex) func(int) {
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
			record(op, time.Since(start), failed)
		}
	}
	// normalREST sends one request of normalRESTRequest: a success is HTTP 200 with an image,
	// or ArcGIS JSON holding no error.
	normalREST := func(record func(op string, d time.Duration, failed bool), rng *rand.Rand, mu *sync.Mutex) func(int) {
		return func(int) {
			mu.Lock()
			op, path, isJSON := normalRESTRequest(rng)
			mu.Unlock()
			start := time.Now()
			resp, err := client.Get(base + path)
			failed := err != nil
			if err == nil {
				var body []byte
				body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
				ct := resp.Header.Get("Content-Type")
				ok := resp.StatusCode == 200 && (isJSON && strings.HasPrefix(ct, "application/json") && !strings.Contains(string(body), `"error"`) ||
					!isJSON && strings.HasPrefix(ct, "image/"))
				failed = err != nil || !ok
			}
			record(op, time.Since(start), failed)
		}
	}

	// Sampling, from readiness to the end.
	start := time.Now()
	var phase atomic.Value
	phase.Store("warmup")
	var samplesMu sync.Mutex
	samples := map[string][]soakSample{}
	marks := map[string]map[string]soakSample{} // role → start, baseline, end, after
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	takeSamples := func(mark string) {
		at, ph := time.Since(start).Round(time.Second), phase.Load().(string)
		line := fmt.Sprintf("soak %6s %-7s", at, ph)
		samplesMu.Lock()
		for _, p := range procs {
			s := p.sample(at, ph)
			samples[p.role] = append(samples[p.role], s)
			if mark != "" {
				if marks[p.role] == nil {
					marks[p.role] = map[string]soakSample{}
				}
				marks[p.role][mark] = s
			}
			line += fmt.Sprintf(" | %s rss %6.1f MB heap %6.1f cache %5.1f unreturned %5.1f gor %4d fds %3d", p.role, s.rssMB, s.heapMB, s.cacheMB, s.idleMB, s.goroutines, s.openFDs)
		}
		samplesMu.Unlock()
		if mark != "" {
			line += " (" + mark + ")"
		}
		fmt.Println(line)
	}
	takeSamples("start")
	go func() {
		defer close(sampled)
		tick := time.NewTicker(set.sample)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
			}
			takeSamples("")
		}
	}()
	rows := hostileRows()
	order := hostileOrder(rows)
	rowsBySurface := map[string]int{}
	for _, r := range rows {
		rowsBySurface[hostileSurface(r)]++
	}
	nw := set.windows()
	fmt.Printf("soak: warm-up %v of normal traffic (SOAP %g req/s, REST/WMTS/directory %g req/s), then %d windows of %v, quiet (normal only) and mixed (normal + hostile at %g req/s, %d rows of TestHostile in turn, SOAP and the other front ends alternating: %v) alternating\n",
		set.warmup, set.normalRPS, set.restRPS, nw, set.window, set.hostileRPS, len(rows), rowsBySurface)

	b.ResetTimer()
	var dropped atomic.Int64
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	after := func(d time.Duration) chan struct{} {
		stop := make(chan struct{})
		time.AfterFunc(d, func() { close(stop) })
		return stop
	}
	// load runs the normal traffic, SOAP's and REST's side by side, until stop is closed.
	load := func(stop <-chan struct{}, soapRec, restRec func(op string, d time.Duration, failed bool)) {
		var wg sync.WaitGroup
		wg.Go(func() { openLoop(set.normalRPS, stop, &dropped, normal(soapRec, rng, &rngMu)) })
		wg.Go(func() { openLoop(set.restRPS, stop, &dropped, normalREST(restRec, rng, &rngMu)) })
		wg.Wait()
	}
	// Warm-up, then the baseline.
	// The warm-up goes on, 30 s at a time (at most 8 more), until the api's caches have stopped
	// growing: normal traffic fills them to their bounds (recent outputs expire only when read),
	// which took about 4 min at 10 req/s.
	warm := newTraffic()
	load(after(10*time.Second+set.warmup), warm.soap.add, warm.rest.add)
	apiCaches := func() float64 { return procs[len(procs)-1].sample(0, "").cacheMB }
	for range 8 {
		before := apiCaches()
		load(after(30*time.Second), warm.soap.add, warm.rest.add)
		if now := apiCaches(); now-before < 0.5 {
			break
		}
	}
	fmt.Printf("soak: warm-up done after %v: SOAP %s\n", time.Since(start).Round(time.Second), warm.soap.summary())
	fmt.Printf("soak: warm-up REST/WMTS/directory %s\n", warm.rest.summary())
	takeSamples("baseline")

	type rowResult struct{ sent, bad int }
	var hostileMu sync.Mutex
	hostile := make([]rowResult, len(rows))
	var firstBad []string
	hostileClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	sendHostile := func(i int) {
		k := order[i%len(order)]
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
	}
	quiet, mixed := newTraffic(), newTraffic()
	var soapP99, restP99 [2][]float64 // quiet, mixed: each window's normal p99, by front end
	var hostileN atomic.Int64         // hostile requests sent, across windows: the next row
	for w := range nw {
		kind, lat := "quiet", quiet
		if w%2 == 1 {
			kind, lat = "mixed", mixed
		}
		phase.Store(kind)
		this := newTraffic()
		soapRec := func(op string, d time.Duration, failed bool) {
			this.soap.add(op, d, failed)
			lat.soap.add(op, d, failed)
		}
		restRec := func(op string, d time.Duration, failed bool) {
			this.rest.add(op, d, failed)
			lat.rest.add(op, d, failed)
		}
		stop := after(set.window)
		var wg sync.WaitGroup
		wg.Go(func() { load(stop, soapRec, restRec) })
		if kind == "mixed" {
			wg.Go(func() {
				openLoop(set.hostileRPS, stop, &dropped, func(int) { sendHostile(int(hostileN.Add(1) - 1)) })
			})
		}
		wg.Wait()
		soapP99[w%2] = append(soapP99[w%2], percentile(this.soap.all, 99))
		restP99[w%2] = append(restP99[w%2], percentile(this.rest.all, 99))
		fmt.Printf("soak: window %d/%d %s: SOAP %s\n", w+1, nw, kind, this.soap.summary())
		fmt.Printf("soak: window %d/%d %s: REST/WMTS/directory %s\n", w+1, nw, kind, this.rest.summary())
	}
	b.StopTimer()
	takeSamples("end")
	phase.Store("after")
	time.Sleep(30 * time.Second) // past the workers' idle sleep and the api's release after large bodies
	close(stopSampling)
	<-sampled
	takeSamples("after")

	// Report.
	for _, f := range []struct {
		name, metric string
		quiet, mixed *latencies
		perWindow    [2][]float64
	}{
		{"SOAP", "soap-", quiet.soap, mixed.soap, soapP99},
		{"REST/WMTS/directory", "rest-", quiet.rest, mixed.rest, restP99},
	} {
		fmt.Printf("soak: %s normal requests, quiet windows: %s\n", f.name, f.quiet.summary())
		fmt.Printf("soak: %s normal requests, mixed windows: %s\n", f.name, f.mixed.summary())
		fmt.Printf("soak: %s p99 of each quiet window (ms): %.1f\n", f.name, f.perWindow[0])
		fmt.Printf("soak: %s p99 of each mixed window (ms): %.1f\n", f.name, f.perWindow[1])
		q99, m99 := percentile(f.quiet.all, 99), percentile(f.mixed.all, 99)
		q50, m50 := percentile(f.quiet.all, 50), percentile(f.mixed.all, 50)
		fmt.Printf("soak: %s p50 mixed/quiet %.2f, p99 mixed/quiet %.2f (target ≤ 1.2); %d failed\n", f.name, m50/q50, m99/q99, f.quiet.errors+f.mixed.errors)
		b.ReportMetric(m99/q99, f.metric+"p99-ratio")
		b.ReportMetric(m50/q50, f.metric+"p50-ratio")
		b.ReportMetric(float64(f.quiet.errors+f.mixed.errors), f.metric+"normal-errors")
	}
	allQuiet, allMixed := slices.Concat(quiet.soap.all, quiet.rest.all), slices.Concat(mixed.soap.all, mixed.rest.all)
	q99, m99 := percentile(allQuiet, 99), percentile(allMixed, 99)
	q50, m50 := percentile(allQuiet, 50), percentile(allMixed, 50)
	fmt.Printf("soak: all normal requests p50 mixed/quiet %.2f, p99 mixed/quiet %.2f (target ≤ 1.2); %d requests not sent (64 in flight)\n", m50/q50, m99/q99, dropped.Load())
	b.ReportMetric(m99/q99, "p99-ratio")
	b.ReportMetric(m50/q50, "p50-ratio")
	b.ReportMetric(float64(mixed.soap.errors+quiet.soap.errors+mixed.rest.errors+quiet.rest.errors), "normal-errors")
	samplesMu.Lock()
	for _, p := range procs {
		m := marks[p.role]
		base, last := m["baseline"], m["after"]
		peak := base
		for _, s := range samples[p.role] {
			if s.rssMB > peak.rssMB {
				peak = s
			}
		}
		growth := 100 * (last.rssMB - base.rssMB) / base.rssMB
		row := func(k string) string {
			s := m[k]
			return fmt.Sprintf("%s %.1f MB (heap %.1f, caches %.1f, freed not returned %.1f), %d goroutines, %d files", k, s.rssMB, s.heapMB, s.cacheMB, s.idleMB, s.goroutines, s.openFDs)
		}
		fmt.Printf("soak: %-11s %s; %s; %s; %s; peak %.1f MB at %v; RSS after/baseline %+.1f%% (target ±10%%)\n",
			p.role, row("start"), row("baseline"), row("end"), row("after"), peak.rssMB, peak.at, growth)
		b.ReportMetric(growth, p.role+"-rss-growth-%")
		if base.idleMB >= 0 && last.idleMB >= 0 {
			// RSS less the freed heap the runtime has not returned yet: the baseline's own
			// unreturned heap (normal traffic leaves some, and calls for no release) is not
			// memory the process needs.
			held := 100 * ((last.rssMB - last.idleMB) - (base.rssMB - base.idleMB)) / (base.rssMB - base.idleMB)
			fmt.Printf("soak: %-11s RSS less freed heap not yet returned: %.1f MB baseline, %.1f MB after (%+.1f%%)\n",
				p.role, base.rssMB-base.idleMB, last.rssMB-last.idleMB, held)
			b.ReportMetric(held, p.role+"-held-growth-%")
		}
		b.ReportMetric(peak.rssMB, p.role+"-rss-peak-MB")
		b.ReportMetric(float64(last.goroutines-base.goroutines), p.role+"-goroutine-growth")
		b.ReportMetric(float64(last.openFDs-base.openFDs), p.role+"-fd-growth")
	}
	samplesMu.Unlock()
	sent, badTotal := 0, 0
	surfaceSent, surfaceBad := map[string]int{}, map[string]int{}
	for k, r := range hostile {
		sent += r.sent
		badTotal += r.bad
		surfaceSent[hostileSurface(rows[k])] += r.sent
		surfaceBad[hostileSurface(rows[k])] += r.bad
		if r.bad > 0 {
			fmt.Printf("soak: hostile row %q: %d of %d not answered as the table says\n", rows[k].name, r.bad, r.sent)
		}
	}
	fmt.Printf("soak: hostile requests %d, %d not answered as the table says (within 2 s, the row's answer)\n", sent, badTotal)
	for _, sf := range []string{"SOAP", "REST", "tiles/WMTS", "directory", "other HTTP"} {
		fmt.Printf("soak: hostile %-10s %d sent, %d not answered as the table says\n", sf, surfaceSent[sf], surfaceBad[sf])
	}
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
