package e2e

import (
	"fmt"

	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// BenchmarkMixedLoad drives a farm of separate processes (api, coordinator, two workers) with a
// fixed-duration, bounded mix of ExportMapImage (512×512, random extents, 30%), GetMapTile
// (random tiles of a world cache seeded first, levels 0–5, 40%) and QueryFeatureCount (random
// envelopes, 30%) from 8 clients on loopback, and reports throughput, latency percentiles per
// operation and errors (the target is none).
//
//	go test ./e2e -run '^$' -bench MixedLoad -benchtime 1x
func BenchmarkMixedLoad(b *testing.B) {
	f := startProcessFarm(b, nil, "worker", "worker", "coordinator", "api")
	endpoint := f.base + "/arcgis/services/world/MapServer"
	no := false
	seedAndWait(b, f.base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1, 2, 3, 4, 5}, SkipEmpty: &no})

	const clients, duration, maxRequests = 8, 10 * time.Second, 200_000
	type sample struct {
		op  string
		d   time.Duration
		err bool
	}
	var mu sync.Mutex
	var samples []sample
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		deadline := time.Now().Add(duration)
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(seed uint64) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, 7))
				hc := &http.Client{Timeout: 30 * time.Second}
				for i := 0; i < maxRequests/clients && time.Now().Before(deadline); i++ {
					// A random square of 2,000–8,000 km somewhere between 60°S and 70°N.
					size := 2e6 + rng.Float64()*6e6
					x := -2e7 + rng.Float64()*(4e7-size)
					y := -8.5e6 + rng.Float64()*(2e7-size)
					env := fmt.Sprintf(`<XMin>%g</XMin><YMin>%g</YMin><XMax>%g</XMax><YMax>%g</YMax>`, x, y, x+size, y+size)
					var op, body string
					switch k := rng.IntN(10); {
					case k < 3:
						op = "ExportMapImage"
						body = `<gis:ExportMapImage><MapDescription><Name>Layers</Name><MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN">` + env +
							`</Extent></MapArea></MapDescription><ImageDescription><ImageType><ImageFormat>gisImagePNG24</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
							`<ImageDisplay><ImageHeight>512</ImageHeight><ImageWidth>512</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage>`
					case k < 7:
						op = "GetMapTile"
						level := rng.IntN(6)
						n := 1 << level
						body = fmt.Sprintf(`<gis:GetMapTile><MapName>Layers</MapName><Level>%d</Level><Row>%d</Row><Column>%d</Column></gis:GetMapTile>`, level, rng.IntN(n), rng.IntN(n))
					default:
						op = "QueryFeatureCount"
						body = `<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter xsi:type="gis:SpatialFilter"><WhereClause></WhereClause>` +
							`<SpatialRel>gisSpatialRelIntersects</SpatialRel><FilterGeometry xsi:type="gis:EnvelopeN">` + env + `</FilterGeometry></QueryFilter></gis:QueryFeatureCount>`
					}
					start := time.Now()
					resp, err := hc.Post(endpoint, "text/xml", strings.NewReader(soapEnv(body)))
					failed := err != nil
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						failed = resp.StatusCode != 200
					}
					mu.Lock()
					samples = append(samples, sample{op, time.Since(start), failed})
					mu.Unlock()
				}
			}(uint64(c))
		}
		wg.Wait()
	}
	b.StopTimer()
	byOp := map[string][]float64{}
	errs := 0
	for _, s := range samples {
		if s.err {
			errs++
			continue
		}
		byOp[s.op] = append(byOp[s.op], float64(s.d)/float64(time.Millisecond))
	}
	b.ReportMetric(float64(len(samples))/(duration.Seconds()*float64(b.N)), "req/s")
	b.ReportMetric(float64(errs), "errors")
	for op, ds := range byOp {
		sort.Float64s(ds)
		b.ReportMetric(ds[len(ds)/2], op+"-p50-ms")
		b.ReportMetric(ds[len(ds)*99/100], op+"-p99-ms")
	}
}
