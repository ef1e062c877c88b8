package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// BenchmarkRefreshSingleEdit measures, on the farm of the tests (api, coordinator and worker in
// one process on real Redis, MinIO and PostgreSQL), the time from the COMMIT of a one-feature
// edit (a 100 m move of a 100 m parcel) to the end of the refresh job that renders every
// affected tile at levels 0–14, and reports its median and the tiles that job rendered, against
// the tiles of a full seed of the layer's extent at the same levels (docs/freshness.md).
//
//	go test -tags proj,nomsgpack -run '^$' -bench RefreshSingleEdit -benchtime 10x ./e2e/
func BenchmarkRefreshSingleEdit(b *testing.B) {
	dsn, base := startRegionFarm(b, 400)

	// A benchmark runs more than once in one binary, on one Redis database: the jobs of an
	// earlier run are not this run's.
	var list struct {
		Jobs []seed.Status `json:"jobs"`
	}
	getAdminJSON(b, base+"/admin/seed?limit=1000", &list)
	skip := map[string]bool{}
	for _, st := range list.Jobs {
		skip[st.ID] = true
	}
	var latencies []time.Duration
	var tiles int64
	b.ResetTimer()
	for i := range b.N {
		id := i%400 + 1
		dx := float64(100 * (1 + i/400))
		commit := time.Now()
		testenv.PostgresExec(b, dsn, fmt.Sprintf(`UPDATE parcels SET geom = ST_Translate(geom, %g, 0) WHERE id = %d`, dx, id))
		jobs := waitRefreshed(b, base, i+1, 20*time.Millisecond, skip)
		latencies = append(latencies, time.Since(commit))
		tiles += jobs[len(jobs)-1].Total
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(latencies[len(latencies)/2].Seconds(), "s/edit-median")
	b.ReportMetric(float64(tiles)/float64(b.N), "tiles/edit")
	sp := &seed.Spec{Scheme: tilecache.WebMercator(), Levels: seq(0, 14),
		Extent: orb.Bound{Min: orb.Point{250_000, 6_250_000}, Max: orb.Point{630_100, 6_630_100}}, Layers: []seed.Layer{{ID: -1}}}
	full, err := seed.Count(sp)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(full), "tiles/full-seed")
}

func seq(lo, hi int) []int {
	var out []int
	for l := lo; l <= hi; l++ {
		out = append(out, l)
	}
	return out
}

// startRegionFarm makes the refresh benchmarks' region: n parcels of 100 m on a grid of rows of 20,
// 20 km apart (400 make a region of 380 km, about France's north), in a PostGIS table with change
// capture installed, a farm of the tests serving it as the parcels service with a compact V2
// cache of levels 0–14, and a seed of levels 0–2 (conf.xml). It returns the table's database and
// the farm's base URL.
func startRegionFarm(b *testing.B, n int) (dsn, base string) {
	dsn = testenv.PostgresDB(b)
	install, err := changes.InstallSQL(changes.Capture{Layer: "parcels", Table: "public.parcels", Geometry: "geom", Cap: 100000})
	if err != nil {
		b.Fatal(err)
	}
	var rows []string
	for i := range n {
		x, y := 250_000+float64(i%20)*20_000, 6_250_000+float64(i/20)*20_000
		s, _ := square(x, y, 100)
		rows = append(rows, fmt.Sprintf("(%d, 'p%d', %s)", i+1, i+1, s))
	}
	testenv.PostgresExec(b, dsn,
		`CREATE TABLE parcels (id int PRIMARY KEY, name text, geom geometry(Polygon, 3857))`,
		`INSERT INTO parcels VALUES `+strings.Join(rows, ", "), install)
	b.Setenv("MAPFARM_TEST_PARCELS_DSN", dsn)
	defPath := filepath.Join(b.TempDir(), "services.yaml")
	def := strings.Replace(parcelsDefinition, "maxLevel: 6, storage: exploded", "maxLevel: 14, storage: compactV2", 1)
	if err := os.WriteFile(defPath, []byte(def), 0o600); err != nil {
		b.Fatal(err)
	}
	f := startFarm(b, func(c *config.Config) { c.Services = defPath })
	base = strings.TrimSuffix(f.url, "/")
	seedAndWait(b, base, seed.Request{Service: "parcels", Levels: []int{0, 1, 2}})
	return dsn, base
}
