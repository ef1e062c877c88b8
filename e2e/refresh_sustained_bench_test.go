package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// BenchmarkRefreshSustained holds issue 30's sustained target: edits at a steady rate (1,000 a
// minute by default, MAPFARM_BENCH_EDITS_PER_MIN) for a bounded time (3 minutes,
// MAPFARM_BENCH_SUSTAIN) over the region of BenchmarkRefreshSingleEdit (400 parcels 20 km
// apart, a compact-V2 cache of levels 0–14), each a 100 m move of a parcel drawn in turn and
// committed on its own. An edit is fresh when a refresh job whose dirty envelopes hold its new
// envelope has ended (seen by a poll every 200 ms). It reports the COMMIT → fresh latency
// (median, p95, max), the refresh backlog (most entries waiting, and its age; an entry is one
// batch of the change consumer, many edits) and the edits committed but not yet fresh, sampled
// every second, the refresh jobs and the tiles they rendered per edit, against a full re-seed
// of the region (docs/freshness.md). Run once:
//
//	go test -tags proj,nomsgpack -run '^$' -bench RefreshSustained -benchtime 1x -timeout 30m ./e2e/
func BenchmarkRefreshSustained(b *testing.B) {
	rate, sustain := 1000, 3*time.Minute
	if v := os.Getenv("MAPFARM_BENCH_EDITS_PER_MIN"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("MAPFARM_BENCH_EDITS_PER_MIN=%q", v)
		}
		rate = n
	}
	if v := os.Getenv("MAPFARM_BENCH_SUSTAIN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 30*time.Minute {
			b.Fatalf("MAPFARM_BENCH_SUSTAIN=%q (at most 30m)", v)
		}
		sustain = d
	}
	const parcels = 400
	dsn, base := startRegionFarm(b, parcels)
	skip := map[string]bool{}
	for _, st := range listJobs(b, base) {
		skip[st.ID] = true
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)

	// The editor: one edit every minute/rate; edit k moves parcel k%400+1 by 100 m east, so
	// each edit's new envelope is its own.
	type edit struct {
		commit, fresh time.Time
	}
	edits := map[string]*edit{} // by the new envelope
	var order []*edit
	var editErr error
	var mu sync.Mutex
	done := make(chan struct{})
	b.ResetTimer()
	go func() {
		defer close(done)
		every := time.Minute / time.Duration(rate)
		moves := make([]int, parcels)
		began := time.Now()
		for k := 0; time.Since(began) < sustain; k++ {
			if wait := time.Until(began.Add(time.Duration(k) * every)); wait > 0 {
				time.Sleep(wait)
			}
			i := k % parcels
			moves[i]++
			x, y := 250_000+float64(i%20)*20_000+100*float64(moves[i]), 6_250_000+float64(i/20)*20_000
			_, nb := square(x, y, 100)
			if _, err := conn.Exec(ctx, `UPDATE parcels SET geom = ST_Translate(geom, 100, 0) WHERE id = $1`, i+1); err != nil {
				editErr = err
				return
			}
			e := &edit{commit: time.Now()}
			mu.Lock()
			edits[fmt.Sprint(nb)] = e
			order = append(order, e)
			mu.Unlock()
		}
	}()

	// The watcher: the refresh jobs, the edits they made fresh, and the backlog.
	type sample struct {
		at      time.Duration
		entries int64
		age     time.Duration
		stale   int
	}
	var samples []sample
	seen := map[string]bool{}
	var jobs int
	var tiles int64
	start := time.Now()
	lastSample := time.Time{}
	loadEnded := false
	deadline := time.Time{}
	for {
		select {
		case <-done:
			if !loadEnded {
				loadEnded, deadline = true, time.Now().Add(10*time.Minute)
			}
		default:
		}
		now := time.Now()
		for _, st := range listJobs(b, base) {
			if !strings.HasPrefix(st.ID, "refresh-parcels-") || skip[st.ID] || seen[st.ID] || !seed.Terminal(st.State) {
				continue
			}
			seen[st.ID] = true
			var full seed.Status
			getAdminJSON(b, base+"/admin/seed/"+st.ID, &full)
			if full.State != seed.StateDone || full.Failed != 0 {
				b.Errorf("refresh job %s: %s, %d failed", st.ID, full.State, full.Failed)
			}
			jobs++
			tiles += full.Total
			mu.Lock()
			for _, d := range full.Spec.Dirty {
				if e := edits[fmt.Sprint(d)]; e != nil && e.fresh.IsZero() {
					e.fresh = now
				}
			}
			mu.Unlock()
		}
		stale := 0
		mu.Lock()
		for _, e := range order {
			if e.fresh.IsZero() {
				stale++
			}
		}
		mu.Unlock()
		if now.Sub(lastSample) >= time.Second {
			lastSample = now
			var backlog struct {
				Backlog []refresh.Waiting `json:"backlog"`
			}
			getAdminJSON(b, base+"/admin/refresh", &backlog)
			s := sample{at: now.Sub(start), stale: stale}
			for _, w := range backlog.Backlog {
				if w.Cache == "parcels/Parcels" {
					s.entries, s.age = w.Entries, now.Sub(w.Oldest)
				}
			}
			samples = append(samples, s)
		}
		if loadEnded && stale == 0 {
			break
		}
		if loadEnded && now.After(deadline) {
			b.Errorf("%d edits still not fresh 10 minutes after the load ended", stale)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.StopTimer()
	if editErr != nil {
		b.Fatal(editErr)
	}

	var lat []time.Duration
	for _, e := range order {
		if !e.fresh.IsZero() {
			lat = append(lat, e.fresh.Sub(e.commit))
		}
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatal("no edit was made fresh")
	}
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	var maxEntries int64
	var maxAge time.Duration
	maxStale := 0
	for i, s := range samples {
		maxEntries, maxAge, maxStale = max(maxEntries, s.entries), max(maxAge, s.age), max(maxStale, s.stale)
		if i%15 == 0 || i == len(samples)-1 {
			b.Logf("at %4.0fs: backlog %5d entries, oldest %5.1fs; %5d edits not yet fresh", s.at.Seconds(), s.entries, s.age.Seconds(), s.stale)
		}
	}
	sp := &seed.Spec{Scheme: tilecache.WebMercator(), Levels: seq(0, 14),
		Extent: orb.Bound{Min: orb.Point{250_000, 6_250_000}, Max: orb.Point{630_100, 6_630_100}}, Layers: []seed.Layer{{ID: -1}}}
	full, err := seed.Count(sp)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d edits in %v (%d a minute), %d refresh jobs, %d tiles rendered (%.1f per edit; a full re-seed: %d)",
		len(order), sustain, rate, jobs, tiles, float64(tiles)/float64(len(order)), full)
	b.Logf("COMMIT → fresh: median %.1fs, p95 %.1fs, max %.1fs; backlog at most %d entries, oldest %.1fs; at most %d edits not yet fresh",
		q(0.5).Seconds(), q(0.95).Seconds(), lat[len(lat)-1].Seconds(), maxEntries, maxAge.Seconds(), maxStale)
	b.ReportMetric(q(0.5).Seconds(), "s/edit-median")
	b.ReportMetric(q(0.95).Seconds(), "s/edit-p95")
	b.ReportMetric(lat[len(lat)-1].Seconds(), "s/edit-max")
	b.ReportMetric(float64(maxEntries), "backlog-max")
	b.ReportMetric(float64(maxStale), "unfresh-edits-max")
	b.ReportMetric(float64(tiles)/float64(len(order)), "tiles/edit")
	b.ReportMetric(float64(full), "tiles/full-seed")
}
