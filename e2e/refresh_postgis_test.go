package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
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
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/wmts"
)

// parcelsDefinition is a map of one PostGIS layer with a small exploded cache (levels 0–6,
// 2×2 metatiles, every tile stored), so that each tile's writes show in the store.
const parcelsDefinition = `connections:
  gis:
    dsnEnv: MAPFARM_TEST_PARCELS_DSN
services:
  - name: parcels
    maps:
      - name: Parcels
        spatialReference: 3857
        backgroundColor: [255, 255, 255]
        cache: {maxLevel: 6, storage: exploded, metatileSize: 2, buffer: 16, skipEmpty: false}
        layers:
          - name: Parcels
            geometryType: polygon
            source: {postgis: gis, table: public.parcels, geometryColumn: geom, idColumn: id}
            renderer:
              type: simple
              symbol: {type: simpleFill, style: solid, color: [200, 40, 40], outline: {color: [0, 0, 0], width: 1}}
`

// square is the SQL of a square of side size at (x, y) in EPSG:3857, and its envelope.
func square(x, y, size float64) (string, orb.Bound) {
	return fmt.Sprintf("ST_MakeEnvelope(%g, %g, %g, %g, 3857)", x, y, x+size, y+size),
		orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x + size, y + size}}
}

// storedTiles lists the cache's objects with their modification times and ETags.
func storedTiles(t *testing.T, store *blob.MinIO, root string) map[string]blob.Info {
	t.Helper()
	out := map[string]blob.Info{}
	if err := store.List(context.Background(), root+"/", func(i blob.Info) error { out[i.Key] = i; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitRefreshed waits (2 min at most, looking every poll) until at least n refresh jobs of the
// parcels cache (other than those of skip) were submitted, every one has ended, and nothing
// waits in the backlog; it returns the jobs, oldest first.
func waitRefreshed(t testing.TB, base string, n int, poll time.Duration, skip map[string]bool) []seed.Status {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list struct {
			Jobs []seed.Status `json:"jobs"`
		}
		getAdminJSON(t, base+"/admin/seed?limit=100", &list)
		var backlog struct {
			Backlog []refresh.Waiting `json:"backlog"`
		}
		getAdminJSON(t, base+"/admin/refresh", &backlog)
		var jobs []seed.Status
		ended := true
		for _, st := range list.Jobs {
			if strings.HasPrefix(st.ID, "refresh-parcels-") && !skip[st.ID] {
				jobs = append(jobs, st)
				ended = ended && seed.Terminal(st.State)
			}
		}
		if len(jobs) >= n && ended && len(backlog.Backlog) == 0 {
			slices.Reverse(jobs)
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("refresh did not settle: %d refresh jobs (want %d), ended %v, backlog %+v", len(jobs), n, ended, backlog.Backlog)
		}
		time.Sleep(poll)
	}
}

func getAdminJSON(t testing.TB, url string, out any) {
	t.Helper()
	resp, err := adminDo(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func verifyParcels(t *testing.T, tool string) {
	t.Helper()
	out, err := exec.Command(tool, "verify", "-service", "parcels", "-map", "Parcels").CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 0 problems") {
		t.Fatalf("cachetool verify: %v\n%s", err, out)
	}
}

// The proof of issue 30 on real PostgreSQL, Redis and MinIO: a cache of a PostGIS layer with
// change capture is seeded while a feature is inserted; the insert is refreshed after the seed.
// Then a feature is moved, one deleted and one's attributes updated in one transaction: one
// refresh job holds exactly their envelopes (before and after), and the store's writes are
// exactly the tiles of that job's metatiles (the dirty tiles and their metatile neighbours), no
// other tile being rewritten; cachetool verify passes; a client revalidating a changed tile
// gets 200 and a new ETag on the REST, WMTS and directory routes, 304 for a tile far away and
// for tiles rewritten with the same bytes. Last, a tile all three routes served just before a
// truncate is gone from all of them as soon as the truncate job has ended.
func TestRefreshFollowsPostGIS(t *testing.T) {
	start := time.Now()
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	t.Logf("cachetool built at %v", time.Since(start))
	dsn := testenv.PostgresDB(t)
	install, err := changes.InstallSQL(changes.Capture{Layer: "parcels", Table: "public.parcels", Geometry: "geom", Cap: 10000})
	if err != nil {
		t.Fatal(err)
	}
	sq := func(x, y float64) string { s, _ := square(x, y, 100_000); return s }
	testenv.PostgresExec(t, dsn,
		`CREATE TABLE parcels (id int PRIMARY KEY, name text, geom geometry(Polygon, 3857))`,
		fmt.Sprintf(`INSERT INTO parcels VALUES (1, 'a', %s), (2, 'b', %s), (3, 'c', %s), (4, 'd', %s)`,
			sq(0, 0), sq(1_500_000, 1_500_000), sq(3_000_000, 0), sq(-15_000_000, 8_000_000)),
		install)
	t.Setenv("MAPFARM_TEST_PARCELS_DSN", dsn)
	defPath := filepath.Join(t.TempDir(), "services.yaml")
	if err := os.WriteFile(defPath, []byte(parcelsDefinition), 0o600); err != nil {
		t.Fatal(err)
	}
	f := startFarm(t, func(c *config.Config) { c.Services = defPath })
	t.Setenv("MAPFARM_SERVICES", defPath) // for cachetool verify
	base := strings.TrimSuffix(f.url, "/")
	root := seed.CacheRoot("parcels", "Parcels")
	t.Logf("farm started at %v", time.Since(start))

	// Seed, and insert a feature while the job runs: its refresh follows the seed.
	id := submitSeed(t, base, seed.Request{Service: "parcels"})
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (5, 'e', `+sq(-1_000_000, -1_000_000)+`)`)
	if st := waitJob(t, base, id, 2*time.Minute, nil); st.State != seed.StateDone || st.Failed != 0 {
		t.Fatalf("seed job: %+v", st)
	}
	t.Logf("seeded at %v", time.Since(start))
	first := waitRefreshed(t, base, 1, 100*time.Millisecond, nil)
	t.Logf("insert refreshed at %v", time.Since(start))
	if st := first[0]; st.State != seed.StateDone || st.Failed != 0 {
		t.Fatalf("refresh of the insert: %+v", st)
	}
	verifyParcels(t, tool)
	t.Logf("verified at %v", time.Since(start))

	// The map's vector cache (levels 0–5, the zooms of the raster levels 0–6): seeded, it is
	// refreshed beside the raster cache.
	vroot := seed.VectorCacheRoot("parcels", "Parcels")
	if st := seedAndWait(t, base, seed.Request{Service: "parcels", Format: seed.FormatPBF}); st.Failed != 0 || st.Done == 0 {
		t.Fatalf("vector seed job: %+v", st)
	}
	t.Logf("vector cache seeded at %v", time.Since(start))
	vcache, _, err := tilecache.Open(context.Background(), f.store, vroot, tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	vBefore, vBundlesBefore := vectorTiles(t, vcache), storedTiles(t, f.store, vroot)
	vs := seed.VectorScheme()
	vat := func(level int, x, y float64) tilecache.Tile {
		r, err := vs.TilesCovering(level, orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x, y}})
		if err != nil {
			t.Fatal(err)
		}
		return tilecache.Tile{Level: level, Row: r.MinRow, Col: r.MinCol}
	}
	// Feature 1 is in the same level-5 tile before and after its move; feature 4 far away.
	vChanged, vFar := vat(5, 650_000, 650_000), vat(5, -14_950_000, 8_050_000)
	if vat(5, 50_000, 50_000) != vChanged {
		t.Fatalf("feature 1 leaves vector tile %v", vChanged)
	}
	vETags := map[tilecache.Tile]string{}
	for _, tl := range []tilecache.Tile{vChanged, vFar} {
		code, etag, _ := getVectorTile(t, base, tl, "")
		if code != http.StatusOK || etag == "" {
			t.Fatalf("vector tile %v: %d, ETag %q", tl, code, etag)
		}
		vETags[tl] = etag
	}
	if _, _, body := getVectorTile(t, base, vChanged, ""); math.Abs(featureMinX(t, body, 1)) > 1 {
		t.Fatalf("vector tile %v before the move: feature 1 does not start at x 0", vChanged)
	}

	before := storedTiles(t, f.store, root)
	cache, _, err := tilecache.Open(context.Background(), f.store, root, tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	scheme := tilecache.WebMercator()
	at := func(level int, x, y float64) tilecache.Tile {
		r, err := scheme.TilesCovering(level, orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x, y}})
		if err != nil {
			t.Fatal(err)
		}
		return tilecache.Tile{Level: level, Row: r.MinRow, Col: r.MinCol}
	}
	changed, far := at(6, 50_000, 50_000), at(6, -14_950_000, 8_050_000) // feature 1, feature 4
	etags := map[string]string{}
	for _, tl := range []tilecache.Tile{changed, far} {
		for _, u := range parcelsTileURLs(base, tl) {
			code, etag := getTile(t, u, "")
			if code != http.StatusOK || etag == "" {
				t.Fatalf("GET %s: %d, ETag %q", u, code, etag)
			}
			etags[u] = etag
		}
	}

	// The ETags of the tiles around feature 1 before the edits (what a client holds).
	nearETags := map[tilecache.Tile]string{}
	for r := changed.Row - 2; r <= changed.Row+2; r++ {
		for c := changed.Col - 2; c <= changed.Col+2; c++ {
			tl := tilecache.Tile{Level: changed.Level, Row: r, Col: c}
			if data, err := cache.ReadTile(context.Background(), tl); err == nil {
				nearETags[tl] = wmts.TileETag(data)
			}
		}
	}

	// Move 1, delete 2, rename 3 (attributes only), in one transaction.
	_, moved := square(600_000, 600_000, 100_000)
	testenv.PostgresExec(t, dsn, `BEGIN; UPDATE parcels SET geom = `+sq(600_000, 600_000)+` WHERE id = 1;
		DELETE FROM parcels WHERE id = 2; UPDATE parcels SET name = 'c2' WHERE id = 3; COMMIT`)
	t.Logf("edited at %v", time.Since(start))
	all := waitRefreshed(t, base, 3, 100*time.Millisecond, nil)
	t.Logf("edits refreshed at %v", time.Since(start))
	var jobs, vjobs []seed.Status
	for _, st := range all {
		if strings.HasSuffix(st.ID, "-vector") {
			vjobs = append(vjobs, st)
		} else {
			jobs = append(jobs, st)
		}
	}
	last := jobs[len(jobs)-1]
	if len(jobs) != 2 || last.State != seed.StateDone || last.Failed != 0 {
		t.Fatalf("refresh jobs after the edits: %+v", jobs)
	}
	if len(vjobs) != 1 || vjobs[0].State != seed.StateDone || vjobs[0].Failed != 0 {
		t.Fatalf("vector refresh jobs after the edits: %+v, want one, done", vjobs)
	}
	var st seed.Status
	getAdminJSON(t, base+"/admin/seed/"+last.ID, &st)
	sp := st.Spec
	_, e1 := square(0, 0, 100_000)
	_, e2 := square(1_500_000, 1_500_000, 100_000)
	_, e3 := square(3_000_000, 0, 100_000)
	want := []orb.Bound{e1, moved, e2, e3}
	if got := boundStrings(sp.Dirty); !slices.Equal(got, boundStrings(want)) || sp.Reach != 16 {
		t.Fatalf("refresh job dirty %v reach %d, want %v reach 16", got, sp.Reach, boundStrings(want))
	}
	units, err := seed.DirtyPlan(sp, sp.Dirty, sp.Reach, 0)
	if err != nil {
		t.Fatal(err)
	}
	planned := map[string]bool{}
	for u := range units {
		for _, m := range u.Metatiles {
			for r := m.TopLeft.Row; r < m.TopLeft.Row+m.Rows; r++ {
				for c := m.TopLeft.Col; c < m.TopLeft.Col+m.Cols; c++ {
					planned[cache.TileKey(tilecache.Tile{Level: m.TopLeft.Level, Row: r, Col: c})] = true
				}
			}
		}
	}
	after := storedTiles(t, f.store, root)
	var rewritten, wrong []string
	for k, a := range after {
		b, ok := before[k]
		if !strings.HasSuffix(k, ".png") {
			continue // conf.xml, conf.cdi
		}
		if ok && a.ModTime.Equal(b.ModTime) && a.ETag == b.ETag {
			continue
		}
		rewritten = append(rewritten, k)
		if !planned[k] {
			wrong = append(wrong, k)
		}
	}
	t.Logf("%d tiles stored, %d rewritten by the refresh of 3 edited features (%d planned)", len(after), len(rewritten), len(planned))
	if len(wrong) > 0 || len(rewritten) != len(planned) {
		t.Fatalf("rewritten %d tiles, planned %d; rewritten outside the plan: %v", len(rewritten), len(planned), wrong)
	}
	if !planned[cache.TileKey(changed)] || planned[cache.TileKey(far)] {
		t.Fatalf("the tile of feature 1 (%v) must be in the refresh and the far one (%v) not", changed, far)
	}
	verifyParcels(t, tool)
	checkVectorRefresh(t, base, vjobs[0].ID, want, vcache, vBefore, vBundlesBefore, storedTiles(t, f.store, vroot), vChanged, vFar, vETags)
	for _, u := range parcelsTileURLs(base, changed) {
		if code, etag := getTile(t, u, etags[u]); code != http.StatusOK || etag == etags[u] {
			t.Errorf("GET %s with the old ETag: %d, ETag %s; want 200 and a new ETag", u, code, etag)
		}
	}
	for _, u := range parcelsTileURLs(base, far) {
		if code, _ := getTile(t, u, etags[u]); code != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", u, code)
		}
	}
	// A tile the refresh rewrote with the same bytes (a metatile neighbour of a changed tile)
	// keeps the ETag its clients had: they get 304.
	same := 0
	for tl, etag := range nearETags {
		k := cache.TileKey(tl)
		if !slices.Contains(rewritten, k) || before[k].ETag != after[k].ETag {
			continue
		}
		for _, u := range parcelsTileURLs(base, tl) {
			if code, _ := getTile(t, u, etag); code != http.StatusNotModified {
				t.Errorf("GET %s (rewritten with the same bytes) with the ETag of before: %d, want 304", u, code)
			}
		}
		same++
	}
	t.Logf("%d tiles near the move were rewritten with the same bytes and kept their ETags", same)
	if same == 0 {
		t.Error("no tile near the move was rewritten with the same bytes: the ETag check shows nothing")
	}

	// A tile every route served (and so keeps in memory) just before a truncate is served by
	// none of them once the truncate job has ended: its end tells every api at once, where each
	// used to serve it for up to its trust window (10 s).
	for _, u := range parcelsTileURLs(base, far) {
		if code, _ := getTile(t, u, ""); code != http.StatusOK {
			t.Fatalf("GET %s before the truncate: %d", u, code)
		}
	}
	fb, err := scheme.TileBounds(far)
	if err != nil {
		t.Fatal(err)
	}
	c := fb.Center()
	seedAndWait(t, base, seed.Request{Service: "parcels", Extent: []float64{c[0] - 1, c[1] - 1, c[0] + 1, c[1] + 1}, Levels: []int{6}, Mode: "delete"})
	for _, u := range parcelsTileURLs(base, far) {
		if code, _ := getTile(t, u, ""); code == http.StatusOK {
			t.Errorf("GET %s right after the truncate ended: 200, want the tile gone", u)
		}
	}
}

func getTile(t *testing.T, url, ifNoneMatch string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag")
}

func boundStrings(bs []orb.Bound) []string {
	out := make([]string, 0, len(bs))
	for _, b := range bs {
		out = append(out, fmt.Sprint(b))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// parcelsTileURLs are the REST, WMTS and directory routes of a tile of the parcels cache.
func parcelsTileURLs(base string, tl tilecache.Tile) []string {
	svc := base + "/arcgis/rest/services/parcels/MapServer"
	return []string{
		fmt.Sprintf("%s/tile/%d/%d/%d", svc, tl.Level, tl.Row, tl.Col),
		fmt.Sprintf("%s/WMTS/tile/1.0.0/parcels/default/default028mm/%d/%d/%d.png", svc, tl.Level, tl.Row, tl.Col),
		fmt.Sprintf("%s/arcgis/rest/directories/arcgiscache/parcels/Parcels/_alllayers/L%02d/R%08x/C%08x.png", base, tl.Level, tl.Row, tl.Col),
	}
}

// vectorTiles reads every tile of a vector cache (levels 0–5: one bundle a level).
func vectorTiles(t *testing.T, c *tilecache.Cache) map[tilecache.Tile][]byte {
	t.Helper()
	out := map[tilecache.Tile][]byte{}
	for level := 0; level <= 5; level++ {
		tiles, err := c.StoredTiles(context.Background(), tilecache.BundleOf(tilecache.Tile{Level: level}))
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tiles {
			data, err := c.ReadTile(context.Background(), tl)
			if err != nil {
				t.Fatal(err)
			}
			out[tl] = data
		}
	}
	return out
}

// checkVectorRefresh holds the vector cache's refresh of the edits (want, their envelopes):
// its job holds exactly those envelopes with the vector tile buffer's reach (9 px) at the
// cache's levels 0–5, and rendered exactly the tiles of its plan, a few of the cache's tiles;
// the tiles whose bytes changed are in the plan, among them the moved feature's, and the
// bundles written are those holding a changed tile; a client sees the moved feature at its
// new place (200 and a new ETag) and revalidates with 304 the far tile and tiles re-encoded to
// the same bytes.
func checkVectorRefresh(t *testing.T, base, id string, want []orb.Bound, vcache *tilecache.Cache, before map[tilecache.Tile][]byte,
	bundlesBefore, bundlesAfter map[string]blob.Info, changed, far tilecache.Tile, etags map[tilecache.Tile]string) {
	t.Helper()
	var st seed.Status
	getAdminJSON(t, base+"/admin/seed/"+id, &st)
	sp := st.Spec
	if got := boundStrings(sp.Dirty); !slices.Equal(got, boundStrings(want)) || sp.Reach != 9 || !sp.Vector() ||
		!slices.Equal(sp.Levels, []int{0, 1, 2, 3, 4, 5}) || sp.Root != seed.VectorCacheRoot("parcels", "Parcels") {
		t.Fatalf("vector refresh job: dirty %v reach %d format %q levels %v root %s; want dirty %v, reach 9, levels 0–5",
			got, sp.Reach, sp.Format, sp.Levels, sp.Root, boundStrings(want))
	}
	units, err := seed.DirtyPlan(sp, sp.Dirty, sp.Reach, 0)
	if err != nil {
		t.Fatal(err)
	}
	planned := map[tilecache.Tile]bool{}
	for u := range units {
		for _, m := range u.Metatiles {
			for tl := range m.Tiles() {
				planned[tl] = true
			}
		}
	}
	// Rendered (stored, or empty and left out): exactly the plan's tiles, no other.
	if n := st.Done + st.Empty + st.Kept; n != int64(len(planned)) || st.Failed != 0 {
		t.Fatalf("vector refresh rendered %d tiles (done %d, empty %d, kept %d, failed %d), want the plan's %d",
			n, st.Done, st.Empty, st.Kept, st.Failed, len(planned))
	}
	after := vectorTiles(t, vcache)
	var rewritten []tilecache.Tile
	levels := map[int]bool{}
	for tl, data := range after {
		if string(before[tl]) == string(data) {
			continue
		}
		rewritten = append(rewritten, tl)
		levels[tl.Level] = true
		if !planned[tl] {
			t.Errorf("vector tile %v changed outside the refresh plan", tl)
		}
	}
	for tl := range before {
		if _, ok := after[tl]; !ok && !planned[tl] {
			t.Errorf("vector tile %v gone outside the refresh plan", tl)
		}
	}
	if !slices.Contains(rewritten, changed) || planned[far] {
		t.Fatalf("vector tile %v of the move must have changed (changed: %v) and the far one %v be out of the plan", changed, rewritten, far)
	}
	// The store's writes: a bundle is written only when a tile of it changed (one bundle a
	// level here).
	var written []string
	for k, a := range bundlesAfter {
		if b, ok := bundlesBefore[k]; strings.HasSuffix(k, ".bundle") && (!ok || a.ETag != b.ETag || !a.ModTime.Equal(b.ModTime)) {
			written = append(written, k)
		}
	}
	if len(written) != len(levels) {
		t.Fatalf("vector bundles written: %v; want the %d holding a changed tile", written, len(levels))
	}
	t.Logf("vector refresh: %d of %d stored vector tiles rendered, %d changed, %d bundles written", len(planned), len(before), len(rewritten), len(written))
	code, etag, body := getVectorTile(t, base, changed, etags[changed])
	if code != http.StatusOK || etag == etags[changed] {
		t.Fatalf("vector tile %v with the ETag of before: %d, ETag %s; want 200 and a new ETag", changed, code, etag)
	}
	// Feature 1 now starts at x = 600 km: 600,000 / 1,252,344 m of the tile × 4096 units.
	if x := featureMinX(t, body, 1); x < 1960 || x > 1964 {
		t.Fatalf("vector tile %v after the move: feature 1 starts at x %v, want about 1962", changed, x)
	}
	if code, _, _ := getVectorTile(t, base, far, etags[far]); code != http.StatusNotModified {
		t.Fatalf("far vector tile %v with its ETag: %d, want 304", far, code)
	}
	// Tiles the refresh re-encoded to the same bytes keep their ETag (the hash of the stored
	// bytes): a client holding the ETag of before gets 304.
	same := 0
	for tl := range planned {
		if b, ok := before[tl]; !ok || string(b) != string(after[tl]) || same == 3 {
			continue
		}
		sum := sha256.Sum256(before[tl])
		if code, _, _ := getVectorTile(t, base, tl, `"`+hex.EncodeToString(sum[:16])+`"`); code != http.StatusNotModified {
			t.Errorf("vector tile %v, re-encoded to the same bytes, with the ETag of before: %d, want 304", tl, code)
		}
		same++
	}
	if same == 0 {
		t.Error("no vector tile was re-encoded to the same bytes: the ETag check shows nothing")
	}
}

// getVectorTile fetches a tile of the parcels VectorTileServer (revalidating with ifNoneMatch
// when set) and returns its status, ETag and plain bytes.
func getVectorTile(t *testing.T, base string, tl tilecache.Tile, ifNoneMatch string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/arcgis/rest/services/parcels/VectorTileServer/tile/%d/%d/%d.pbf", base, tl.Level, tl.Row, tl.Col), nil)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	resp, err := http.DefaultClient.Do(req) // Go asks for gzip and inflates
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("ETag"), body
}

// featureMinX decodes a vector tile and returns the least x (tile units) of feature id's
// geometry in layer Parcels; it fails the test when the tile has no such feature.
func featureMinX(t *testing.T, tile []byte, id uint64) float64 {
	t.Helper()
	layers, err := mvtcheck.Decode(tile)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		for _, f := range l.Features {
			if l.Name == "Parcels" && f.ID == id {
				return f.Geometry.Bound().Min[0]
			}
		}
	}
	t.Fatalf("no feature %d in the vector tile (%d layers)", id, len(layers))
	return 0
}
