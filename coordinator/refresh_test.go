package coordinator

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// A refresh job (a spec with dirty envelopes, stored in Redis like any job) is planned by the
// runner into exactly DirtyPlan's render parts, metatiles and all, and ends when they are merged.
func TestSeedRunnerPlansARefreshJob(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	envs := []orb.Bound{{Min: orb.Point{1e5, 5e6}, Max: orb.Point{1.1e5, 5.01e6}}, {Min: orb.Point{-1e6, 4e6}, Max: orb.Point{-1e6, 4e6}}}
	sp := &seed.Spec{ID: "refresh-" + testenv.BucketName("j"), Service: "world", Map: "Layers", Layers: []seed.Layer{{ID: -1, Folder: tilecache.FusedLayer}},
		Scheme: tilecache.WebMercator(), Storage: tilecache.CompactV2, Extent: envs[0].Union(envs[1]), Dirty: envs, Reach: 64,
		Levels: []int{0, 2, 4, 6, 8}, Mode: seed.RecreateAll, MetatileSize: 4, Buffer: 64, PartTiles: 16, MaxFailures: 10}
	sp.Root = "arcgiscache/" + sp.ID
	if err := f.jobs.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	for passes := 0; f.status(t, sp.ID).State == seed.StatePlanning; passes++ {
		if passes > 20 {
			t.Fatal("planning did not end in 20 passes")
		}
		f.runner.exec(ctx)
	}
	units, err := seed.DirtyPlan(sp, envs, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	var bundles, tiles int64
	for u := range units {
		bundles++
		tiles += u.Tiles
		for i, p := range u.Parts {
			var metas [][4]int
			for _, m := range u.Metatiles[p[0]:p[1]] {
				metas = append(metas, [4]int{m.TopLeft.Row, m.TopLeft.Col, m.Rows, m.Cols})
			}
			want[fmt.Sprint(u.Bundle.TopLeft, i, metas)] = true
		}
	}
	got := map[string]bool{}
	for _, tk := range f.queue.ids {
		p, err := task.DecodeSeedRender(tk.Payload())
		if err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprint(p.Bundle, p.Part, p.Metatiles)] = true
	}
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Fatalf("enqueued parts:\n%v\nwant DirtyPlan's:\n%v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	st := f.status(t, sp.ID)
	if st.State != seed.StateRunning || st.Bundles != bundles || st.Total != tiles {
		t.Fatalf("planned: %+v, want running with %d bundles and %d tiles", st, bundles, tiles)
	}
	for _, tk := range f.queue.ids {
		p, _ := task.DecodeSeedRender(tk.Payload())
		bid := seed.BundleID(p.Layer, tilecache.Bundle{TopLeft: p.Bundle})
		if _, err := f.jobs.PartDone(ctx, sp.ID, bid, p.Part, seed.PartCounts{Done: int64(p.Tiles())}); err != nil {
			t.Fatal(err)
		}
		if err := f.jobs.MergeDone(ctx, sp.ID, bid, false, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	f.runner.exec(ctx)
	if st := f.status(t, sp.ID); st.State != seed.StateDone || st.Done != st.Total {
		t.Fatalf("after every merge: %+v", st)
	}
}

// refreshFixture is a PostGIS table with change capture, drawn by two cached maps (one fused
// cache refreshed at once, one per-layer cache refreshed by hand), and a refresher on real Redis.
type refreshFixture struct {
	dsn     string
	svc     string
	r       *refresher
	jobs    *seed.Jobs
	backlog *refresh.Backlog
	rdb     *redis.Client
}

const refreshDefinition = `connections:
  gis:
    dsnEnv: MAPFARM_TEST_REFRESH_DSN
services:
  - name: SERVICE
    maps:
      - name: Fused
        spatialReference: 3857
        cache: {maxLevel: 5, metatileSize: 2, buffer: 32}
        layers:
          - name: Parcels
            geometryType: polygon
            source: {postgis: gis, table: public.parcels, geometryColumn: geom, idColumn: id}
      - name: PerLayer
        spatialReference: 3857
        cache: {maxLevel: 5, layerCaches: true, refresh: manual}
        layers:
          - name: Parcels
            geometryType: polygon
            source: {postgis: gis, table: parcels, geometryColumn: geom, idColumn: id}
`

func newRefreshFixture(t *testing.T) *refreshFixture {
	t.Helper()
	dsn := testenv.PostgresDB(t)
	install, err := changes.InstallSQL(changes.Capture{Layer: "parcels", Table: "public.parcels", Geometry: "geom", Cap: 1000})
	if err != nil {
		t.Fatal(err)
	}
	testenv.PostgresExec(t, dsn,
		`CREATE TABLE parcels (id int PRIMARY KEY, name text, geom geometry(Polygon, 3857))`,
		`INSERT INTO parcels VALUES (1, 'a', ST_MakeEnvelope(100000, 100000, 110000, 110000, 3857)),
		                            (2, 'b', ST_MakeEnvelope(-2000000, 3000000, -1990000, 3010000, 3857))`,
		install)
	t.Setenv("MAPFARM_TEST_REFRESH_DSN", dsn)
	path := filepath.Join(t.TempDir(), "services.yaml")
	// A service of the test's own: the test binary's tests share one Redis database.
	svc := "parcels" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	if err := os.WriteFile(path, []byte(strings.Replace(refreshDefinition, "SERVICE", svc, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	def, err := servicedef.Load(path, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(context.Background(), def, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	f := &refreshFixture{dsn: dsn, svc: svc, jobs: seed.NewJobs(rdb), backlog: refresh.NewBacklog(rdb), rdb: rdb}
	endJobsOf(t, f.jobs, svc)
	f.r = newRefresher(refresherParams{catalog: cat, connections: def.Connections, jobs: f.jobs, backlog: f.backlog,
		logger: slog.Default(), retry: 50 * time.Millisecond, poll: 200 * time.Millisecond}, "test")
	return f
}

// endJobsOf ends, when the test ends, the jobs it left active on the service: the package's
// tests share one Redis database, and other tests' runners work on every active job.
func endJobsOf(t *testing.T, jobs *seed.Jobs, service string) {
	t.Cleanup(func() {
		ctx := context.Background()
		ids, _ := jobs.Active(ctx)
		for _, id := range ids {
			if sp, err := jobs.Spec(ctx, id); err == nil && sp.Service == service {
				jobs.SetState(ctx, id, seed.StateCancelled, "test over")
			}
		}
	})
}

// consume runs the refresher's consumer until the test ends.
func (f *refreshFixture) consume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.r.consume(ctx, f.r.p.connections["gis"])
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// waitBacklog waits (10 s at most) until the cache's backlog holds n entries.
func (f *refreshFixture) waitBacklog(t *testing.T, cache string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ws, err := f.backlog.Pending(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.Cache == cache && w.Entries >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("backlog of %s did not reach %d entries: %+v", cache, n, ws)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pending returns the backlog of this test's caches.
func (f *refreshFixture) pending(t *testing.T) []refresh.Waiting {
	t.Helper()
	ws, err := f.backlog.Pending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []refresh.Waiting
	for _, w := range ws {
		if strings.HasPrefix(w.Cache, f.svc+"/") {
			out = append(out, w)
		}
	}
	return out
}

// refreshJobs returns the specs of the active refresh jobs, by map ("<map>#vector" for a vector
// cache's).
func (f *refreshFixture) refreshJobs(t *testing.T) map[string]*seed.Spec {
	t.Helper()
	ids, err := f.jobs.Active(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*seed.Spec{}
	for _, id := range ids {
		sp, err := f.jobs.Spec(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Service == f.svc && sp.Vector() {
			out[sp.Map+"#vector"] = sp
		} else if sp.Service == f.svc {
			out[sp.Map] = sp
		}
	}
	return out
}

func sortedBounds(bs []orb.Bound) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprint(b))
	}
	slices.Sort(out)
	return out
}

// A committed move of a feature becomes, through the changelog, the consumer and the backlog,
// one refresh job of the fused cache (policy immediate) holding the feature's envelopes before
// and after, widened by the cache's buffer; the per-layer cache (policy manual) keeps its
// backlog until an expire makes it due. The changes are acknowledged only once in the backlog.
func TestRefresherTurnsChangesIntoRefreshJobs(t *testing.T) {
	f := newRefreshFixture(t)
	f.consume(t)
	testenv.PostgresExec(t, f.dsn, `UPDATE parcels SET geom = ST_MakeEnvelope(200000, 200000, 205000, 205000, 3857) WHERE id = 1`)
	f.waitBacklog(t, f.svc+"/Fused", 1)
	f.waitBacklog(t, f.svc+"/PerLayer", 1)
	// The acknowledgement follows the backlog's write (at once, but not atomically with it).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := testenv.PostgresCount(t, f.dsn, "mapfarm_changes.changelog")
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d changelog rows left 10 s after the backlog holds the change: want them acknowledged", n)
		}
	}
	ctx := context.Background()
	f.r.exec(ctx)
	jobs := f.refreshJobs(t)
	sp := jobs["Fused"]
	if sp == nil || len(jobs) != 1 {
		t.Fatalf("refresh jobs: %v, want one of map Fused", jobs)
	}
	want := []orb.Bound{{Min: orb.Point{100000, 100000}, Max: orb.Point{110000, 110000}}, {Min: orb.Point{200000, 200000}, Max: orb.Point{205000, 205000}}}
	if got := sortedBounds(sp.Dirty); !slices.Equal(got, sortedBounds(want)) || sp.Reach != 32 || sp.Mode != seed.RecreateAll ||
		len(sp.Layers) != 1 || sp.Layers[0].Folder != tilecache.FusedLayer || sp.Root != seed.CacheRoot(f.svc, "Fused") {
		t.Fatalf("refresh job: dirty %v reach %d mode %s layers %v root %s; want dirty %v, reach 32, the fused folder",
			sp.Dirty, sp.Reach, sp.Mode, sp.Layers, sp.Root, sortedBounds(want))
	}
	ws := f.pending(t)
	if len(ws) != 1 || ws[0].Cache != f.svc+"/PerLayer" {
		t.Fatalf("backlog after the pass: %+v, want the manual cache's only", ws)
	}
	// A second change while the fused cache's job runs waits for it: one job per cache.
	testenv.PostgresExec(t, f.dsn, `DELETE FROM parcels WHERE id = 2`)
	f.waitBacklog(t, f.svc+"/Fused", 1)
	f.r.exec(ctx)
	if jobs := f.refreshJobs(t); len(jobs) != 1 {
		t.Fatalf("a second job was submitted while the first runs: %v", jobs)
	}
	if err := f.jobs.SetState(ctx, sp.ID, seed.StateDone, ""); err != nil {
		t.Fatal(err)
	}
	f.r.exec(ctx)
	jobs = f.refreshJobs(t)
	if sp2 := jobs["Fused"]; sp2 == nil || !slices.Equal(sortedBounds(sp2.Dirty), sortedBounds([]orb.Bound{{Min: orb.Point{-2000000, 3000000}, Max: orb.Point{-1990000, 3010000}}})) {
		t.Fatalf("after the first job ended: %v, want a job of the deleted feature's envelope", jobs)
	}
	// An expire makes the manual cache due: its job takes the two changes (three envelopes) and
	// the expired tile, in the layer's folder.
	adm := &refresh.Admin{Backlog: f.backlog, Catalog: f.r.p.catalog}
	if _, err := adm.Expire(ctx, refresh.ExpireRequest{Service: f.svc, Map: "PerLayer", Tiles: [][3]int{{5, 16, 15}}}); err != nil {
		t.Fatal(err)
	}
	f.r.exec(ctx)
	pl := f.refreshJobs(t)["PerLayer"]
	if pl == nil || len(pl.Dirty) != 4 || len(pl.Layers) != 1 || pl.Layers[0].Folder != "Parcels" {
		t.Fatalf("per-layer refresh job after an expire: %+v", pl)
	}
}

// A map whose vector cache was seeded (a conf.xml in its vector cache root, on real MinIO) gets,
// for a committed change, a refresh job of its vector cache beside the raster one: the same
// envelopes, at the vector cache's levels, in its fused folder, widened by the vector tile
// buffer (seed.VectorReach); and every api is told at once to drop the vector tiles of the
// areas it keeps, at every zoom. While the vector job runs, the next change waits for it. An
// expire by polygon gives both jobs the polygon (its tile cover), not its envelope.
func TestRefresherRefreshesTheVectorCache(t *testing.T) {
	f := newRefreshFixture(t)
	ctx := context.Background()
	mi := testenv.MinIO(t)
	store, err := blob.NewMinIO(ctx, blob.MinIOConfig{Endpoint: mi.Endpoint, AccessKey: mi.AccessKey, SecretKey: mi.SecretKey, Bucket: testenv.Bucket(t), CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, seed.VectorCacheRoot(f.svc, "Fused")+"/"+tilecache.ConfXML, []byte("<CacheInfo/>"), "text/xml"); err != nil {
		t.Fatal(err)
	}
	var sent []refresh.Invalidation
	f.r.p.store = store
	f.r.p.invalidate = func(_ context.Context, v refresh.Invalidation) error { sent = append(sent, v); return nil }
	f.consume(t)
	testenv.PostgresExec(t, f.dsn, `UPDATE parcels SET geom = ST_MakeEnvelope(200000, 200000, 205000, 205000, 3857) WHERE id = 1`)
	f.waitBacklog(t, f.svc+"/Fused", 1)
	f.r.exec(ctx)
	jobs := f.refreshJobs(t)
	want := []orb.Bound{{Min: orb.Point{100000, 100000}, Max: orb.Point{110000, 110000}}, {Min: orb.Point{200000, 200000}, Max: orb.Point{205000, 205000}}}
	vsp := jobs["Fused#vector"]
	if jobs["Fused"] == nil || vsp == nil || len(jobs) != 2 {
		t.Fatalf("refresh jobs: %v, want the raster and the vector job of map Fused", slices.Sorted(maps.Keys(jobs)))
	}
	if got := sortedBounds(vsp.Dirty); !slices.Equal(got, sortedBounds(want)) || vsp.Reach != seed.VectorReach || seed.VectorReach != 9 ||
		vsp.Root != seed.VectorCacheRoot(f.svc, "Fused") || !vsp.Vector() || vsp.Mode != seed.RecreateAll ||
		len(vsp.Layers) != 1 || vsp.Layers[0].Folder != tilecache.FusedLayer || !slices.Equal(vsp.Levels, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("vector refresh job: dirty %v reach %d root %s format %q mode %s layers %v levels %v; want dirty %v, reach 9, levels 0–4 of %s",
			vsp.Dirty, vsp.Reach, vsp.Root, vsp.Format, vsp.Mode, vsp.Layers, vsp.Levels, sortedBounds(want), seed.VectorCacheRoot(f.svc, "Fused"))
	}
	// The apis drop the vector tiles of both places, at zooms past the cache's levels too, and
	// not those of the other feature.
	vs := seed.VectorScheme()
	tileAt := func(z int, x, y float64) tilecache.Tile {
		r, err := vs.TilesCovering(z, orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x, y}})
		if err != nil {
			t.Fatal(err)
		}
		return tilecache.Tile{Level: z, Row: r.MinRow, Col: r.MinCol}
	}
	var fused []refresh.Invalidation
	for _, v := range sent {
		if v.Root == seed.VectorCacheRoot(f.svc, "Fused") {
			fused = append(fused, v)
		}
	}
	if len(fused) != 1 {
		t.Fatalf("invalidations of the vector tiles of map Fused: %+v, want one", fused)
	}
	for _, tc := range []struct {
		tile tilecache.Tile
		want bool
	}{
		{tileAt(14, 105000, 105000), true}, {tileAt(14, 202000, 202000), true}, {tileAt(3, 202000, 202000), true},
		{tileAt(14, 150000, 150000), false}, {tileAt(14, -1995000, 3005000), false},
	} {
		if got := fused[0].Covers(tilecache.FusedLayer, tc.tile); got != tc.want {
			t.Errorf("invalidation covers vector tile %v: %v, want %v", tc.tile, got, tc.want)
		}
	}
	// A change while the vector job runs waits for it, though the raster job has ended.
	if err := f.jobs.SetState(ctx, jobs["Fused"].ID, seed.StateDone, ""); err != nil {
		t.Fatal(err)
	}
	testenv.PostgresExec(t, f.dsn, `DELETE FROM parcels WHERE id = 2`)
	f.waitBacklog(t, f.svc+"/Fused", 1)
	f.r.exec(ctx)
	if jobs := f.refreshJobs(t); len(jobs) != 1 {
		t.Fatalf("jobs submitted while the vector job runs: %v", slices.Sorted(maps.Keys(jobs)))
	}
	if err := f.jobs.SetState(ctx, vsp.ID, seed.StateDone, ""); err != nil {
		t.Fatal(err)
	}
	f.r.exec(ctx)
	jobs = f.refreshJobs(t)
	if len(jobs) != 2 || jobs["Fused#vector"] == nil || len(jobs["Fused#vector"].Dirty) != 1 {
		t.Fatalf("after the vector job ended: %v, want both jobs of the deleted feature", jobs)
	}
	for _, sp := range jobs {
		if err := f.jobs.SetState(ctx, sp.ID, seed.StateDone, ""); err != nil {
			t.Fatal(err)
		}
	}
	// An expire by polygon: both jobs carry the polygon itself.
	adm := &refresh.Admin{Backlog: f.backlog, Catalog: f.r.p.catalog}
	tri := [][][2]float64{{{0, 0}, {400000, 0}, {0, 400000}}}
	if _, err := adm.Expire(ctx, refresh.ExpireRequest{Service: f.svc, Map: "Fused", Polygon: tri}); err != nil {
		t.Fatal(err)
	}
	f.r.exec(ctx)
	jobs = f.refreshJobs(t)
	wantPoly := orb.Polygon{{{0, 0}, {400000, 0}, {0, 400000}, {0, 0}}}
	for _, k := range []string{"Fused", "Fused#vector"} {
		sp := jobs[k]
		if sp == nil {
			t.Fatalf("no %s job after an expire by polygon: %v", k, slices.Sorted(maps.Keys(jobs)))
		}
		if len(sp.Dirty) != 0 || len(sp.DirtyPolygons) != 1 || !orb.Equal(sp.DirtyPolygons[0], wantPoly) {
			t.Fatalf("%s job after an expire by polygon: dirty %v, polygons %v; want the polygon %v alone", k, sp.Dirty, sp.DirtyPolygons, wantPoly)
		}
	}
}

// A coordinator killed after storing a refresh job but before removing what it took from the
// backlog submits the same areas again: nothing is lost, and rendering twice is harmless.
func TestRefresherKilledBeforeDoneLosesNothing(t *testing.T) {
	f := newRefreshFixture(t)
	ctx := context.Background()
	cache := f.svc + "/Fused"
	e := refresh.Entry{Source: "parcels", Envelopes: []orb.Bound{{Min: orb.Point{0, 0}, Max: orb.Point{1000, 1000}}}, Folders: []string{tilecache.FusedLayer}}
	if err := f.backlog.Add(ctx, cache, e); err != nil {
		t.Fatal(err)
	}
	// What submit does, stopped before Done.
	taken, err := f.backlog.Take(ctx, cache, 10)
	if err != nil {
		t.Fatal(err)
	}
	m := f.r.mapOf(f.svc, "Fused")
	sp, err := refreshSpec(f.r.p.catalog, f.svc, m, taken, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.jobs.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	// The next coordinator waits for that job, then submits the areas again.
	f.r.exec(ctx)
	if jobs := f.refreshJobs(t); len(jobs) != 1 {
		t.Fatalf("jobs while the first runs: %v", jobs)
	}
	if err := f.jobs.SetState(ctx, sp.ID, seed.StateDone, ""); err != nil {
		t.Fatal(err)
	}
	f.r.exec(ctx)
	again := f.refreshJobs(t)["Fused"]
	if again == nil || !slices.Equal(sortedBounds(again.Dirty), sortedBounds(e.Envelopes)) {
		t.Fatalf("after the restart: %+v, want the same areas again", again)
	}
	if ws := f.pending(t); len(ws) != 0 {
		t.Fatalf("backlog after the second job: %+v", ws)
	}
}

// The policies: immediate at once, every <d> once the oldest change is d old, manual never,
// and maxStaleness or an expire whatever the policy.
func TestRefreshDue(t *testing.T) {
	now := time.Now()
	w := func(age time.Duration, forced bool) refresh.Waiting {
		return refresh.Waiting{Oldest: now.Add(-age), Forced: forced}
	}
	every := &servicedef.Cache{Refresh: servicedef.RefreshPolicy{Mode: servicedef.RefreshEvery, Every: time.Minute}}
	manual := &servicedef.Cache{Refresh: servicedef.RefreshPolicy{Mode: servicedef.RefreshManual}, MaxStaleness: time.Hour}
	for _, tc := range []struct {
		c    *servicedef.Cache
		w    refresh.Waiting
		want bool
	}{
		{&servicedef.Cache{Refresh: servicedef.RefreshPolicy{Mode: servicedef.RefreshImmediate}}, w(0, false), true},
		{every, w(30*time.Second, false), false},
		{every, w(time.Minute, false), true},
		{every, w(0, true), true},
		{manual, w(59*time.Minute, false), false},
		{manual, w(time.Hour, false), true},
		{manual, w(0, true), true},
	} {
		if got := due(tc.c, tc.w, now); got != tc.want {
			t.Errorf("due(%v, maxStaleness %v, age %v, forced %v) = %v", tc.c.Refresh, tc.c.MaxStaleness, now.Sub(tc.w.Oldest), tc.w.Forced, got)
		}
	}
}

// A GeoPackage layer drawn by a cached map: the first look records a baseline, a few rows
// changed in place give exactly their envelopes (before and after) in the cache's backlog,
// never the whole layer, and the pass makes them one refresh job.
func TestRefresherFollowsAGeoPackage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "parcels.gpkg")
	w, err := gpkg.Create(path, "parcels", 3857, "POLYGON", []feature.Field{{Name: "fid", Type: feature.FieldOID}, {Name: "name", Type: feature.FieldString}})
	if err != nil {
		t.Fatal(err)
	}
	sq := func(x float64) orb.Bound { return orb.Bound{Min: orb.Point{x, 0}, Max: orb.Point{x + 5000, 5000}} }
	for i := 1; i <= 20; i++ {
		if err := w.Add([]any{int64(i), fmt.Sprint("p", i)}, sq(float64(10000*i)).ToPolygon()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	svc := "files" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	def := `services:
  - name: ` + svc + `
    maps:
      - name: Fused
        spatialReference: 3857
        cache: {maxLevel: 5}
        layers:
          - name: Parcels
            source: {geopackage: parcels.gpkg, table: parcels}
`
	defPath := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(defPath, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	cat := catalogtest.Open(t, defPath)
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	jobs, backlog := seed.NewJobs(rdb), refresh.NewBacklog(rdb)
	endJobsOf(t, jobs, svc)
	r := newRefresher(refresherParams{catalog: cat, jobs: jobs, backlog: backlog, logger: slog.Default(), stateFile: filepath.Join(dir, "state.sqlite")}, "test")
	st, err := changes.OpenFileState(r.p.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	cache := svc + "/Fused"
	waiting := func() []refresh.Waiting {
		ws, err := backlog.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []refresh.Waiting
		for _, w := range ws {
			if w.Cache == cache {
				out = append(out, w)
			}
		}
		return out
	}
	r.scanFiles(ctx, st) // the baseline
	if ws := waiting(); len(ws) != 0 {
		t.Fatalf("the baseline made the cache dirty: %+v", ws)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	moved, _ := geomblob.Encode(sq(900000).ToPolygon(), 3857)
	for _, q := range []string{`UPDATE parcels SET geom = ? WHERE fid = 3`, `DELETE FROM parcels WHERE fid = 7`} {
		var args []any
		if strings.Contains(q, "?") {
			args = []any{moved}
		}
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(path, future, future)
	r.scanFiles(ctx, st)
	if ws := waiting(); len(ws) != 1 || ws[0].Entries != 1 || ws[0].Whole {
		t.Fatalf("backlog after 2 rows changed: %+v, want one entry, not the whole cache", ws)
	}
	r.exec(ctx)
	var sp *seed.Spec
	ids, _ := jobs.Active(ctx)
	for _, id := range ids {
		if s, err := jobs.Spec(ctx, id); err == nil && s.Service == svc {
			sp = s
		}
	}
	want := []orb.Bound{sq(30000), sq(900000), sq(70000)}
	if sp == nil || !slices.Equal(sortedBounds(sp.Dirty), sortedBounds(want)) {
		t.Fatalf("refresh job: %+v, want the dirty envelopes %v", sp, sortedBounds(want))
	}
	r.scanFiles(ctx, st) // acknowledged: nothing new
	if ws := waiting(); len(ws) != 0 {
		t.Fatalf("backlog after the job was submitted: %+v", ws)
	}
}
