package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// BenchmarkSeedWorld seeds the world sample's cache, levels 0-7 (21,845 tiles, compact V2), on
// an in-process farm with 1 and 2 workers (worker concurrency), with and without skipping
// empty (ocean-only) tiles, on real Redis and MinIO, and reports tiles per second: the job's
// tiles over the time from submitting it to seeing it done (planning, rendering, merging and
// conf.xml included).
//
//	go test ./e2e -run '^$' -bench SeedWorld -benchtime 1x
func BenchmarkSeedWorld(b *testing.B) {
	for _, run := range []struct {
		workers   int
		skipEmpty bool
	}{{1, true}, {2, true}, {1, false}, {2, false}} {
		b.Run("workers="+strconv.Itoa(run.workers)+"/skipEmpty="+strconv.FormatBool(run.skipEmpty), func(b *testing.B) {
			b.Setenv("MAPFARM_WORKER_CONCURRENCY", strconv.Itoa(run.workers))
			f := startFarm(b)
			base := strings.TrimSuffix(f.url, "/")
			for b.Loop() {
				start := time.Now()
				id := submitSeed(b, base, seed.Request{Service: "world", Levels: []int{0, 1, 2, 3, 4, 5, 6, 7}, SkipEmpty: &run.skipEmpty,
					Extent: []float64{-20037508.342789244, -20037508.342789244, 20037508.342789244, 20037508.342789244}})
				st := waitJob(b, base, id, 20*time.Minute, nil)
				elapsed := time.Since(start)
				if st.State != seed.StateDone || st.Failed != 0 {
					b.Fatalf("job ended %s: %+v", st.State, st)
				}
				b.ReportMetric(float64(st.Total)/elapsed.Seconds(), "tiles/s")
				b.ReportMetric(float64(st.Total), "tiles")
				b.ReportMetric(float64(st.Empty), "empty")
			}
		})
	}
}

// BenchmarkGetMapTile measures GetMapTile over SOAP from the compact-V2 cache on MinIO with a
// warm bundle-index cache: 8 concurrent clients on loopback, tiles of a seeded area at levels
// 3-6; it reports tiles/s and the 99th percentile latency.
//
//	go test ./e2e -run '^$' -bench GetMapTile -benchtime 20000x
func BenchmarkGetMapTile(b *testing.B) {
	f := startFarm(b)
	base := strings.TrimSuffix(f.url, "/")
	no := false
	id := submitSeed(b, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{3, 4, 5, 6}, SkipEmpty: &no})
	if st := waitJob(b, base, id, 5*time.Minute, nil); st.State != seed.StateDone {
		b.Fatalf("seed: %+v", st)
	}
	// Tiles of the AOI at level 6 (all stored).
	var bodies [][]byte
	size := 40075016.685578488 / 64
	for row := int((20037508.342789244 - seedAOI[3]) / size); row <= int((20037508.342789244-seedAOI[1])/size); row++ {
		for col := int((seedAOI[0] + 20037508.342789244) / size); col <= int((seedAOI[2]+20037508.342789244)/size); col++ {
			bodies = append(bodies, []byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="`+namespace+`"><soap:Body><gis:GetMapTile>`+
				`<MapName>Layers</MapName><Level>6</Level><Row>`+strconv.Itoa(row)+`</Row><Column>`+strconv.Itoa(col)+`</Column></gis:GetMapTile></soap:Body></soap:Envelope>`))
		}
	}
	endpoint := base + "/arcgis/services/world/MapServer"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(body []byte) (time.Duration, error) {
		start := time.Now()
		resp, err := client.Post(endpoint, "text/xml", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("GetMapTile: %s", resp.Status)
		}
		return time.Since(start), err
	}
	for _, body := range bodies { // warm the index cache
		if _, err := get(body); err != nil {
			b.Fatal(err)
		}
	}
	const clients = 8
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				d, err := get(bodies[int(i)%len(bodies)])
				if err != nil {
					b.Error(err)
					return
				}
				lat[i] = d
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tiles/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
