package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg/geomblob"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// killDefinition has two small exploded caches (levels 0–6, 2×2 metatiles, every tile stored,
// so that each tile's write shows in the store): one of a PostGIS table with change capture,
// one of a GeoPackage that is edited in place. The services are named apart from
// TestRefreshFollowsPostGIS's, which tells its refresh jobs by their ids in the package's Redis.
const killDefinition = `connections:
  gis:
    dsnEnv: MAPFARM_TEST_PARCELS_DSN
services:
  - name: lots
    maps:
      - name: Lots
        spatialReference: 3857
        backgroundColor: [255, 255, 255]
        cache: {maxLevel: 6, storage: exploded, metatileSize: 2, buffer: 16, skipEmpty: false}
        layers:
          - name: Parcels
            geometryType: polygon
            source: {postgis: gis, table: public.parcels, geometryColumn: geom, idColumn: id}
            renderer: &red
              type: simple
              symbol: {type: simpleFill, style: solid, color: [200, 40, 40], outline: {color: [0, 0, 0], width: 1}}
  - name: plots
    maps:
      - name: Plots
        spatialReference: 3857
        backgroundColor: [255, 255, 255]
        cache: {maxLevel: 6, storage: exploded, metatileSize: 2, buffer: 16, skipEmpty: false}
        layers:
          - name: Plots
            geometryType: polygon
            source: {geopackage: plots.gpkg, table: plots}
            renderer: *red
`

// TestRefreshSurvivesCoordinatorKill is issue 30's proof that a coordinator killed mid-refresh
// loses nothing, and that a GeoPackage edited in place refreshes only the changed rows' tiles,
// on real PostgreSQL, Redis and MinIO with api, worker and coordinator as separate processes:
//
//  1. both caches are seeded;
//  2. a PostGIS feature is moved (A); while its refresh job runs, a feature is inserted (B) and
//     the coordinator has put it in the backlog; then, with A's job planned and not ended, the
//     coordinator is killed with SIGKILL;
//  3. while it is down, a PostGIS feature is deleted and one renamed (C), and two GeoPackage
//     rows are changed in place with SQLite (G1: a move, a rename);
//  4. a new coordinator takes the killed one's job over and refreshes B, C and G1; once its
//     first look at the GeoPackage is done, one more row is moved and renamed (G2), seen by
//     a later look;
//
// Then: the refresh jobs hold exactly the envelopes of A, B, C, G1 and G2 (before and after),
// never a whole layer; the tiles rewritten in the store are exactly those of the jobs'
// metatiles; cachetool verify passes; a REST client revalidating with If-None-Match gets 200
// for a changed tile and 304 for a far one; and a full re-seed of both caches rewrites every
// stored tile with the bytes it already had: the stored tiles equal a fresh render.
func TestRefreshSurvivesCoordinatorKill(t *testing.T) {
	start := time.Now()
	bin := buildBinary(t, "github.com/mapfarm/mapfarm")
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	dir := t.TempDir()

	// PostGIS: four 100 km parcels over 4,000 km, with change capture.
	dsn := testenv.PostgresDB(t)
	install, err := changes.InstallSQL(changes.Capture{Layer: "parcels", Table: "public.parcels", Geometry: "geom", Cap: 10000})
	if err != nil {
		t.Fatal(err)
	}
	sq := func(x, y float64) string { s, _ := square(x, y, 100_000); return s }
	env := func(x, y float64) orb.Bound { _, b := square(x, y, 100_000); return b }
	testenv.PostgresExec(t, dsn,
		`CREATE TABLE parcels (id int PRIMARY KEY, name text, geom geometry(Polygon, 3857))`,
		fmt.Sprintf(`INSERT INTO parcels VALUES (1, 'a', %s), (2, 'b', %s), (3, 'c', %s), (4, 'd', %s)`,
			sq(0, 0), sq(2_000_000, 2_000_000), sq(3_900_000, 0), sq(0, 3_900_000)),
		install)

	// GeoPackage: sixteen 100 km plots on a 4 × 4 grid 1,300 km apart.
	plot := func(i int) (float64, float64) { return float64(i%4) * 1_300_000, float64(i/4) * 1_300_000 }
	gpkgPath := filepath.Join(dir, "plots.gpkg")
	w, err := gpkg.Create(gpkgPath, "plots", 3857, "POLYGON", []feature.Field{{Name: "fid", Type: feature.FieldOID}, {Name: "name", Type: feature.FieldString}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if err := w.Add([]any{int64(i + 1), fmt.Sprint("p", i+1)}, env(plot(i)).ToPolygon()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	editPlots := func(stmts ...func(db *sql.DB) error) {
		t.Helper()
		db, err := sql.Open("sqlite", gpkgPath)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if err := s(db); err != nil {
				t.Fatal(err)
			}
		}
	}
	movePlot := func(fid int, to orb.Bound) func(*sql.DB) error {
		return func(db *sql.DB) error {
			g, err := geomblob.Encode(to.ToPolygon(), 3857)
			if err != nil {
				return err
			}
			_, err = db.Exec(`UPDATE plots SET geom = ? WHERE fid = ?`, g, fid)
			return err
		}
	}
	renamePlot := func(fid int, name string) func(*sql.DB) error {
		return func(db *sql.DB) error {
			_, err := db.Exec(`UPDATE plots SET name = ? WHERE fid = ?`, name, fid)
			return err
		}
	}

	defPath := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(defPath, []byte(killDefinition), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	penv := append(farmEnv(t, addr), "MAPFARM_SERVICES="+defPath, "MAPFARM_TEST_PARCELS_DSN="+dsn)
	// The coordinator keeps the GeoPackage's row digests in its state directory: the same for
	// the killed one and the next.
	coordEnv := func() []string {
		return append(slices.Clone(penv), "MAPFARM_STATE_DIR="+filepath.Join(dir, "coordinator-state"), "MAPFARM_REFRESH_FILE_POLL=1s",
			"MAPFARM_METRICS_LISTEN="+freePort(t))
	}
	worker := startKillableProcess(t, bin, "worker", penv)
	ce := coordEnv()
	coord := startKillableProcess(t, bin, "coordinator", ce)
	startProcess(t, bin, "api", penv)
	base := "http://" + addr
	waitReady(t, base+"/readyz", 60*time.Second)
	// Ready once it runs its loops: its first look at the GeoPackage (the baseline) is made at
	// once, long before the first edit below (after the seeds).
	waitReady(t, "http://"+strings.TrimPrefix(ce[len(ce)-1], "MAPFARM_METRICS_LISTEN=")+"/readyz", 60*time.Second)
	store := minioStore(t, penv)
	t.Logf("farm started at %v", time.Since(start))

	// 1. Seed both caches.
	ids := []string{submitSeed(t, base, seed.Request{Service: "lots"}), submitSeed(t, base, seed.Request{Service: "plots"})}
	for _, id := range ids {
		if st := waitJob(t, base, id, 2*time.Minute, nil); st.State != seed.StateDone || st.Failed != 0 {
			t.Fatalf("seed job %s: %+v", id, st)
		}
	}
	t.Logf("seeded at %v", time.Since(start))
	lotsRoot, plotsRoot := seed.CacheRoot("lots", "Lots"), seed.CacheRoot("plots", "Plots")
	before := map[string]map[string]blob.Info{lotsRoot: storedTiles(t, store, lotsRoot), plotsRoot: storedTiles(t, store, plotsRoot)}
	seeded := map[string]bool{}
	for _, st := range listJobs(t, base) {
		seeded[st.ID] = true
	}

	// What a REST client holds: a tile where a parcel will be deleted, one where a plot will
	// move from, and a far tile of each.
	gone, farParcel := tileAt(t, 6, 2_050_000, 2_050_000), tileAt(t, 6, 50_000, 3_950_000)
	x5, y5 := plot(5)
	x0, y0 := plot(0)
	movedFrom, farPlot := tileAt(t, 6, x5+50_000, y5+50_000), tileAt(t, 6, 3*1_300_000+50_000, 3*1_300_000+50_000)
	restURL := func(service string, tl tilecache.Tile) string {
		return fmt.Sprintf("%s/arcgis/rest/services/%s/MapServer/tile/%d/%d/%d", base, service, tl.Level, tl.Row, tl.Col)
	}
	clientETags := map[string]string{}
	for _, u := range []string{restURL("lots", gone), restURL("lots", farParcel), restURL("plots", movedFrom), restURL("plots", farPlot)} {
		code, etag := getTile(t, u, "")
		if code != http.StatusOK || etag == "" {
			t.Fatalf("GET %s: %d, ETag %q", u, code, etag)
		}
		clientETags[u] = etag
	}

	// 2. Move parcel 1 (A); while its refresh job runs, insert parcel 5 (B), wait until the
	// coordinator has it in the backlog, and kill the coordinator.
	testenv.PostgresExec(t, dsn, `UPDATE parcels SET geom = `+sq(800_000, 800_000)+` WHERE id = 1`)
	var jobA seed.Status
	for deadline := time.Now().Add(time.Minute); jobA.ID == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no refresh job for the move within a minute")
		}
		for _, st := range listJobs(t, base) {
			if strings.HasPrefix(st.ID, "refresh-lots-") && !seeded[st.ID] {
				jobA = st
			}
		}
	}
	if seed.Terminal(jobA.State) {
		t.Fatalf("the move's refresh job had ended when first seen: %+v", jobA)
	}
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (5, 'e', `+sq(3_000_000, 3_000_000)+`)`)
	for deadline := time.Now().Add(30 * time.Second); !inBacklog(t, base, "lots/Lots"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the insert did not reach the refresh backlog within 30 s")
		}
	}
	// Killed once A's job is planned (its units are on the queue, the worker renders them) and
	// before it ends (the coordinator's next pass, a second later at the soonest).
	for deadline := time.Now().Add(30 * time.Second); jobA.State != seed.StateRunning; time.Sleep(20 * time.Millisecond) {
		if jobA = jobStatus(t, base, jobA.ID); seed.Terminal(jobA.State) || time.Now().After(deadline) {
			t.Fatalf("the move's refresh job was not seen running: %+v", jobA)
		}
	}
	if err := coord.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	coord.Wait()
	jobA = jobStatus(t, base, jobA.ID)
	t.Logf("coordinator killed at %v: job %s %s, %d/%d tiles", time.Since(start), jobA.ID, jobA.State, jobA.Done, jobA.Total)
	if seed.Terminal(jobA.State) {
		t.Fatalf("the move's refresh job ended before the coordinator was killed: %+v", jobA)
	}

	// 3. While no coordinator runs: delete parcel 2 and rename parcel 3 (C); move plot 6 by
	// 300 km and rename plot 11 (G1).
	testenv.PostgresExec(t, dsn, `BEGIN; DELETE FROM parcels WHERE id = 2; UPDATE parcels SET name = 'c2' WHERE id = 3; COMMIT`)
	editPlots(movePlot(6, env(x5+300_000, y5)), renamePlot(11, "renamed"))

	// 4. A new coordinator; once its first look at the GeoPackage made a refresh job, move and
	// rename plot 1 (G2), which a later look (every second here, 10 s by default) finds.
	startProcess(t, bin, "coordinator", coordEnv())
	t.Logf("coordinator started again at %v", time.Since(start))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if slices.ContainsFunc(listJobs(t, base), func(st seed.Status) bool { return strings.HasPrefix(st.ID, "refresh-plots-") && !seeded[st.ID] }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no refresh job of the GeoPackage edited while the coordinator was down, a minute after its restart")
		}
	}
	editPlots(func(db *sql.DB) error {
		g, err := geomblob.Encode(env(x0, y0+200_000).ToPolygon(), 3857)
		if err != nil {
			return err
		}
		_, err = db.Exec(`UPDATE plots SET geom = ?, name = 'moved' WHERE fid = 1`, g)
		return err
	})
	t.Logf("GeoPackage edited with the coordinator running at %v", time.Since(start))

	want := map[string][]orb.Bound{
		"lots":  {env(0, 0), env(800_000, 800_000), env(3_000_000, 3_000_000), env(2_000_000, 2_000_000), env(3_900_000, 0)},
		"plots": {env(x5, y5), env(x5+300_000, y5), env(plot(10)), env(x0, y0), env(x0, y0+200_000)},
	}
	jobs := waitDirty(t, base, seeded, want)
	t.Logf("refreshed at %v", time.Since(start))

	// The jobs, their envelopes (never a whole layer) and the store's writes.
	for _, svc := range []string{"lots", "plots"} {
		root := seed.CacheRoot(svc, strings.ToUpper(svc[:1])+svc[1:])
		var dirty []orb.Bound
		planned := map[string]bool{}
		cache, _, err := tilecache.Open(context.Background(), store, root, tilecache.FusedLayer, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range jobs[svc] {
			sp := st.Spec
			if st.State != seed.StateDone || st.Failed != 0 || len(sp.Dirty) == 0 || sp.Reach != 16 {
				t.Fatalf("refresh job %s: %s, failed %d, dirty %v, reach %d; want done, a few envelopes with reach 16", st.ID, st.State, st.Failed, sp.Dirty, sp.Reach)
			}
			dirty = append(dirty, sp.Dirty...)
			units, err := seed.DirtyPlan(sp, sp.Dirty, sp.Reach, 0)
			if err != nil {
				t.Fatal(err)
			}
			for u := range units {
				for _, m := range u.Metatiles {
					for r := m.TopLeft.Row; r < m.TopLeft.Row+m.Rows; r++ {
						for c := m.TopLeft.Col; c < m.TopLeft.Col+m.Cols; c++ {
							planned[cache.TileKey(tilecache.Tile{Level: m.TopLeft.Level, Row: r, Col: c})] = true
						}
					}
				}
			}
		}
		if got := boundStrings(dirty); !slices.Equal(got, boundStrings(want[svc])) {
			t.Errorf("%s: the refresh jobs' envelopes are %v, want %v", svc, got, boundStrings(want[svc]))
		}
		after := storedTiles(t, store, root)
		rewritten, outside := rewrittenTiles(before[root], after, planned)
		t.Logf("%s: %d refresh jobs, %d tiles stored, %d rewritten, %d planned", svc, len(jobs[svc]), len(after), len(rewritten), len(planned))
		if len(outside) > 0 || len(rewritten) != len(planned) || len(planned) >= len(after) {
			t.Errorf("%s: rewritten %d tiles of %d, planned %d; rewritten outside the plan: %v", svc, len(rewritten), len(after), len(planned), outside)
		}
		verifyProcesses(t, tool, penv, svc, strings.ToUpper(svc[:1])+svc[1:])
	}

	// A client revalidating: 200 and a new ETag where the data changed, 304 far away.
	for _, u := range []string{restURL("lots", gone), restURL("plots", movedFrom)} {
		if code, etag := getTile(t, u, clientETags[u]); code != http.StatusOK || etag == clientETags[u] {
			t.Errorf("GET %s with the old ETag: %d, ETag %s; want 200 and a new ETag", u, code, etag)
		}
	}
	for _, u := range []string{restURL("lots", farParcel), restURL("plots", farPlot)} {
		if code, _ := getTile(t, u, clientETags[u]); code != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", u, code)
		}
	}

	// The stored tiles equal a fresh render: a full re-seed of each cache by a worker started
	// now (which has read nothing before) writes every tile with the bytes it had (the store's
	// ETag is the MD5 of the bytes).
	if err := worker.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	worker.Wait()
	startProcess(t, bin, "worker", penv)
	for _, svc := range []string{"lots", "plots"} {
		root := seed.CacheRoot(svc, strings.ToUpper(svc[:1])+svc[1:])
		refreshed := storedTiles(t, store, root)
		seedAndWait(t, base, seed.Request{Service: svc})
		fresh := storedTiles(t, store, root)
		differ, same := 0, 0
		for k, f := range fresh {
			r, ok := refreshed[k]
			if !strings.HasSuffix(k, ".png") || !ok {
				continue
			}
			if r.ETag != f.ETag {
				differ++
				t.Errorf("%s: %s differs from a fresh render", svc, k)
			} else {
				same++
			}
		}
		if same == 0 || len(fresh) != len(refreshed) {
			t.Errorf("%s: %d tiles before the re-seed, %d after, %d compared", svc, len(refreshed), len(fresh), same)
		}
		t.Logf("%s: %d stored tiles equal a fresh render, %d differ", svc, same, differ)
	}
	t.Logf("done at %v", time.Since(start))
}

// tileAt is the tile of a level holding the point (x, y) in Web Mercator.
func tileAt(t *testing.T, level int, x, y float64) tilecache.Tile {
	t.Helper()
	r, err := tilecache.WebMercator().TilesCovering(level, orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x, y}})
	if err != nil {
		t.Fatal(err)
	}
	return tilecache.Tile{Level: level, Row: r.MinRow, Col: r.MinCol}
}

// listJobs lists the farm's seeding jobs, newest first.
func listJobs(t testing.TB, base string) []seed.Status {
	t.Helper()
	var list struct {
		Jobs []seed.Status `json:"jobs"`
	}
	getAdminJSON(t, base+"/admin/seed?limit=200", &list)
	return list.Jobs
}

// inBacklog reports whether the refresh backlog of a cache ("service/map") holds something.
func inBacklog(t testing.TB, base, cache string) bool {
	t.Helper()
	var backlog struct {
		Backlog []refresh.Waiting `json:"backlog"`
	}
	getAdminJSON(t, base+"/admin/refresh", &backlog)
	return slices.ContainsFunc(backlog.Backlog, func(w refresh.Waiting) bool { return w.Cache == cache && w.Entries > 0 })
}

// waitDirty waits (3 min at most) until, for each service of want, the refresh jobs not in
// skip have all ended and hold every envelope of want[service], and the backlog is empty; it
// returns those jobs by service, with their specs.
func waitDirty(t *testing.T, base string, skip map[string]bool, want map[string][]orb.Bound) map[string][]seed.Status {
	t.Helper()
	specs := map[string]*seed.Spec{}
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		out := map[string][]seed.Status{}
		settled := !inBacklog(t, base, "lots/Lots") && !inBacklog(t, base, "plots/Plots")
		for _, st := range listJobs(t, base) {
			svc, ok := strings.CutPrefix(st.ID, "refresh-")
			svc, _, _ = strings.Cut(svc, "-")
			if !ok || skip[st.ID] || want[svc] == nil {
				continue
			}
			if !seed.Terminal(st.State) {
				settled = false
				continue
			}
			if specs[st.ID] == nil {
				var full seed.Status
				getAdminJSON(t, base+"/admin/seed/"+st.ID, &full)
				specs[st.ID] = full.Spec
			}
			st.Spec = specs[st.ID]
			out[svc] = append(out[svc], st)
		}
		for svc, envs := range want {
			var got []orb.Bound
			for _, st := range out[svc] {
				got = append(got, st.Spec.Dirty...)
			}
			have := boundStrings(got)
			for _, s := range boundStrings(envs) {
				settled = settled && slices.Contains(have, s)
			}
		}
		if settled {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the refresh did not settle within 3 minutes: jobs %+v", out)
		}
	}
}

// rewrittenTiles lists the tiles (.png objects) of after that are new or were written again
// since before (another modification time or ETag), and those of them not in planned.
func rewrittenTiles(before, after map[string]blob.Info, planned map[string]bool) (rewritten, outside []string) {
	for k, a := range after {
		if !strings.HasSuffix(k, ".png") {
			continue // conf.xml, conf.cdi
		}
		if b, ok := before[k]; ok && a.ModTime.Equal(b.ModTime) && a.ETag == b.ETag {
			continue
		}
		rewritten = append(rewritten, k)
		if !planned[k] {
			outside = append(outside, k)
		}
	}
	return rewritten, outside
}

// verifyProcesses runs cachetool verify on a service of a farm of separate processes.
func verifyProcesses(t *testing.T, tool string, env []string, service, mapName string) {
	t.Helper()
	cmd := exec.Command(tool, "verify", "-service", service, "-map", mapName)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 0 problems") {
		t.Fatalf("cachetool verify -service %s: %v\n%s", service, err, out)
	}
}
