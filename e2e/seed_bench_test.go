package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// layouts are the storage layouts the benchmarks run on, by their service-definition names.
var layouts = []struct {
	name   string // as in a service definition's cache.storage
	format tilecache.StorageFormat
}{{"exploded", tilecache.Exploded}, {"compactV1", tilecache.CompactV1}, {"compactV2", tilecache.CompactV2}}

// withStorage returns a farm option that serves services/services.yaml with the world map's
// cache in another storage layout: a copy of the file whose one `storage: compactV2` line is
// replaced.
func withStorage(tb testing.TB, storage string) func(*config.Config) {
	tb.Helper()
	yaml, _ := sampleServices(tb)
	const line = "storage: compactV2\n"
	if n := strings.Count(yaml, line); n != 1 {
		tb.Fatalf("services.yaml has %d %q lines, want 1 (the world cache)", n, line)
	}
	return withServices(tb, strings.Replace(yaml, line, "storage: "+storage+"\n", 1))
}

// checkStoredLayout fails unless the world cache's conf.xml names format.
func checkStoredLayout(tb testing.TB, f *farm, format tilecache.StorageFormat) {
	tb.Helper()
	info, _, err := tilecache.ReadMetadata(context.Background(), f.store, seed.CacheRoot("world", "Layers"))
	if err != nil {
		tb.Fatal(err)
	}
	if info.Storage != format {
		tb.Fatalf("conf.xml names layout %v, want %v", info.Storage, format)
	}
}

// BenchmarkSeedWorld seeds the world sample's cache, levels 0-7 (21,845 tiles), on an
// in-process farm on real Redis and MinIO, in each storage layout, with 1 and 2 workers
// (worker concurrency), and reports tiles per second: the job's tiles over the time from
// submitting it to seeing it done (planning, rendering, merging and conf.xml included).
// Each runs storing every tile (skipEmpty=false) and with the cache's default skipEmpty
// (10,829 ocean-only tiles not stored, which halves the exploded layout's PUTs).
//
//	go test ./e2e -run '^$' -bench SeedWorld -benchtime 1x -count 3
func BenchmarkSeedWorld(b *testing.B) {
	type run struct {
		layout    int // index in layouts
		workers   int
		skipEmpty bool
	}
	var runs []run
	for i := range layouts {
		for _, skip := range []bool{false, true} {
			for _, w := range []int{1, 2} {
				runs = append(runs, run{i, w, skip})
			}
		}
	}
	for _, r := range runs {
		l := layouts[r.layout]
		name := "layout=" + l.name + "/workers=" + strconv.Itoa(r.workers) + "/skipEmpty=" + strconv.FormatBool(r.skipEmpty)
		b.Run(name, func(b *testing.B) {
			workers := r.workers
			f := startFarm(b, withStorage(b, l.name), func(c *config.Config) { c.Worker.Concurrency = workers })
			base := strings.TrimSuffix(f.url, "/")
			skip := r.skipEmpty
			for b.Loop() {
				start := time.Now()
				id := submitSeed(b, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1, 2, 3, 4, 5, 6, 7}, SkipEmpty: &skip})
				st := waitJob(b, base, id, 20*time.Minute, nil)
				elapsed := time.Since(start)
				if st.State != seed.StateDone || st.Failed != 0 {
					b.Fatalf("job ended %s: %+v", st.State, st)
				}
				if st.Total != 21845 {
					b.Fatalf("job of %d tiles, want 21,845", st.Total)
				}
				b.ReportMetric(float64(st.Total)/elapsed.Seconds(), "tiles/s")
				b.ReportMetric(float64(st.Total), "tiles")
				b.ReportMetric(float64(st.Empty), "empty")
			}
			checkStoredLayout(b, f, l.format)
		})
	}
}

// BenchmarkGetMapTile measures GetMapTile over SOAP from the world cache on MinIO, for each
// storage layout, with the bundle-index cache warm or cold, and the api's served-tile memory and
// bundle page cache on or off: 8 concurrent clients on loopback, the 56 level-6 tiles of a
// seeded area in turn. It reports tiles/s, p50 and p99 latency, and the store requests the api
// made per tile (GETs, ranged or whole, and Stats, from the farm's /metrics).
//
//   - index=warm: the default index cache, filled before the timed pass;
//   - index=cold: the api keeps no index (config tiles.indexBytes < 0), so every read loads
//     its bundle's index itself (and the page cache is not used);
//   - index=none: the exploded layout, which has no index (one GET per tile);
//   - memory=on: the served-tile memory (16 MiB, 10 s), filled before the timed pass, so tiles
//     come from memory; memory=off (tiles.memoryBytes < 0);
//   - pages=on: the bundle page cache (tiles.pageBytes, 16 MiB of 256 KiB pages); pages=off
//     (tiles.pageBytes < 0). With memory=off and pages=off every tile read goes to MinIO:
//     one ranged GET with a warm index.
//
// Run it with a bounded count, 3 times, and read the medians:
//
//	go test ./e2e -run '^$' -bench 'GetMapTile$' -benchtime 10000x -count 3
func BenchmarkGetMapTile(b *testing.B) {
	type variant struct{ index, memory, pages string }
	for _, l := range layouts {
		variants := []variant{{"warm", "on", "on"}, {"warm", "off", "on"}, {"warm", "off", "off"}, {"cold", "on", "off"}, {"cold", "off", "off"}}
		if l.format == tilecache.Exploded {
			variants = []variant{{"none", "on", "off"}, {"none", "off", "off"}}
		}
		for _, v := range variants {
			name := "layout=" + l.name + "/index=" + v.index + "/memory=" + v.memory + "/pages=" + v.pages
			b.Run(name, func(b *testing.B) {
				f := startFarm(b, withStorage(b, l.name), func(c *config.Config) {
					if v.index == "cold" {
						c.Tiles.IndexBytes = -1
					}
					if v.memory == "off" {
						c.Tiles.MemoryBytes = -1
					}
					if v.pages == "off" {
						c.Tiles.PageBytes = -1
					}
				})
				benchGetMapTile(b, f)
				checkStoredLayout(b, f, l.format)
			})
		}
	}
}

func benchGetMapTile(b *testing.B, f *farm) {
	base := strings.TrimSuffix(f.url, "/")
	no := false
	seedAndWait(b, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{3, 4, 5, 6}, SkipEmpty: &no})
	loadTiles(b, base, 6, aoiTiles(seedAOI, 6), true) // all stored
}

// BenchmarkGetMapTileRows reads every tile of level 7 of the world (16,384 tiles, one bundle)
// once, in storage order (row by row), over SOAP from MinIO with the served-tile memory off and
// a warm index: the first read of tiles, in the order most favourable to the page cache (a map
// client's screen is parts of a few rows, one page fetch per row it touches; scattered reads
// gain nothing). With pages=off each tile is one ranged GET of the tile; with pages=on one
// ranged GET of a 256 KiB page serves the tiles stored in it. 8 concurrent clients take
// the tiles in turn; b.N is capped at 16,384 (each tile read once).
//
//	go test ./e2e -run '^$' -bench GetMapTileRows -benchtime 16384x -count 3
func BenchmarkGetMapTileRows(b *testing.B) {
	for _, l := range layouts[1:] {
		for _, pages := range []string{"on", "off"} {
			b.Run("layout="+l.name+"/index=warm/memory=off/pages="+pages, func(b *testing.B) {
				if b.N > 128*128 {
					b.Fatalf("b.N = %d: each of the 16,384 tiles is read once; use -benchtime 16384x or less", b.N)
				}
				f := startFarm(b, withStorage(b, l.name), func(c *config.Config) {
					c.Tiles.MemoryBytes = -1
					if pages == "off" {
						c.Tiles.PageBytes = -1
					}
				})
				base := strings.TrimSuffix(f.url, "/")
				no := false
				id := submitSeed(b, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{7}, SkipEmpty: &no})
				if st := waitJob(b, base, id, 10*time.Minute, nil); st.State != seed.StateDone || st.Total != 128*128 {
					b.Fatalf("seed: %+v", st)
				}
				var tiles [][2]int
				for row := range 128 {
					for col := range 128 {
						tiles = append(tiles, [2]int{row, col})
					}
				}
				loadTiles(b, base, 7, tiles, false)
				checkStoredLayout(b, f, l.format)
			})
		}
	}
}

// loadTiles times b.N GetMapTile requests from 8 concurrent clients, for the tiles of a level
// in turn, and reports tiles/s, p50, p99 and the store requests per tile. With warm, every
// tile is read (and checked to be a 256×256 PNG) before the timed pass; else only the first,
// which loads the bundle index, and a sample of the answers is checked after it.
func loadTiles(b *testing.B, base string, level int, tiles [][2]int, warm bool) {
	var bodies [][]byte
	for _, t := range tiles {
		bodies = append(bodies, []byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="`+namespace+`"><soap:Body><gis:GetMapTile>`+
			`<MapName>Layers</MapName><Level>`+strconv.Itoa(level)+`</Level><Row>`+strconv.Itoa(t[0])+`</Row><Column>`+strconv.Itoa(t[1])+`</Column></gis:GetMapTile></soap:Body></soap:Envelope>`))
	}
	endpoint := base + "/arcgis/services/world/MapServer"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(body []byte, keep *[]byte) (time.Duration, error) {
		start := time.Now()
		resp, err := client.Post(endpoint, "text/xml", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		var w io.Writer = io.Discard
		var buf bytes.Buffer
		if keep != nil {
			w = &buf
		}
		_, err = io.Copy(w, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("GetMapTile: %s", resp.Status)
		}
		if keep != nil {
			*keep = buf.Bytes()
		}
		return time.Since(start), err
	}
	// Warm up (index, tile memory, connections), and check that the answers are 256×256 PNGs.
	warmup := bodies
	if !warm {
		warmup = bodies[:1]
	}
	for _, body := range warmup {
		var resp []byte
		if _, err := get(body, &resp); err != nil {
			b.Fatal(err)
		}
		checkTileResponse(b, resp)
	}
	lat := make([]time.Duration, b.N)
	before := storeOps(b, base)
	elapsed := timedClients(b, 8, func(i int) error {
		var err error
		lat[i], err = get(bodies[i%len(bodies)], nil)
		return err
	})
	after := storeOps(b, base)
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tiles/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	gets := after["get_range"] + after["get"] - before["get_range"] - before["get"]
	b.ReportMetric(gets/float64(b.N), "GETs/tile")
	b.ReportMetric((after["stat"]-before["stat"])/float64(b.N), "stats/tile")
	if !warm { // the timed pass read these from the store or the page cache: check a sample
		for i := 0; i < min(b.N, len(bodies)); i += 97 {
			var resp []byte
			if _, err := get(bodies[i], &resp); err != nil {
				b.Fatal(err)
			}
			checkTileResponse(b, resp)
		}
	}
}

// checkTileResponse fails unless a GetMapTile response holds a 256×256 PNG.
func checkTileResponse(tb testing.TB, resp []byte) {
	tb.Helper()
	_, rest, ok := bytes.Cut(resp, []byte("<Result>"))
	enc, _, ok2 := bytes.Cut(rest, []byte("</Result>"))
	if !ok || !ok2 {
		tb.Fatalf("GetMapTile answered %.300s", resp)
	}
	data, err := base64.StdEncoding.DecodeString(string(enc))
	if err != nil {
		tb.Fatalf("GetMapTile result: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 256 || cfg.Height != 256 {
		tb.Fatalf("GetMapTile tile: %+v, %v", cfg, err)
	}
}

// storeOps returns the farm's object-store operations so far by kind (get, get_range, stat,
// …), from the api's /metrics.
func storeOps(tb testing.TB, base string) map[string]float64 {
	tb.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	const prefix = `mapfarm_store_operation_duration_seconds_count{op="`
	ops := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		op, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			tb.Fatalf("/metrics line %q: %v", sc.Text(), err)
		}
		ops[op] = n
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(ops) == 0 {
		tb.Fatal("/metrics has no store operation counts")
	}
	return ops
}
