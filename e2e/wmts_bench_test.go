package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
)

// BenchmarkTileRESTvsSOAP measures the REST tile resource (…/MapServer/tile/{level}/{row}/{col})
// and SOAP GetMapTile side by side on one farm, over the same 56 level-6 tiles of a seeded
// area of the world cache on MinIO: 8 concurrent clients on loopback, every tile read once
// before the timed pass (so both read the api's served-tile memory, and the comparison is of
// the transports), in three rounds that alternate which transport goes first. It reports
// tiles/s; REST must not be slower than SOAP.
//
//	MAPFARM_GO_TEST_FLAGS="-run ^$ -bench TileRESTvsSOAP -benchtime 3000x" ./scripts/test.sh ./e2e/
func BenchmarkTileRESTvsSOAP(b *testing.B) {
	f := startFarm(b)
	base := strings.TrimSuffix(f.url, "/")
	no := false
	id := submitSeed(b, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{6}, SkipEmpty: &no})
	if st := waitJob(b, base, id, 5*time.Minute, nil); st.State != seed.StateDone {
		b.Fatalf("seed: %+v", st)
	}
	var tiles [][2]int
	size := 40075016.685578488 / 64
	for row := int((20037508.342789244 - seedAOI[3]) / size); row <= int((20037508.342789244-seedAOI[1])/size); row++ {
		for col := int((seedAOI[0] + 20037508.342789244) / size); col <= int((seedAOI[2]+20037508.342789244)/size); col++ {
			tiles = append(tiles, [2]int{row, col})
		}
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	soap := func(t [2]int) (*http.Request, error) {
		body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:GetMapTile>` +
			`<MapName>Layers</MapName><Level>6</Level><Row>` + strconv.Itoa(t[0]) + `</Row><Column>` + strconv.Itoa(t[1]) + `</Column></gis:GetMapTile></soap:Body></soap:Envelope>`
		req, err := http.NewRequest(http.MethodPost, base+"/arcgis/services/world/MapServer", bytes.NewReader([]byte(body)))
		if req != nil {
			req.Header.Set("Content-Type", "text/xml")
		}
		return req, err
	}
	rest := func(t [2]int) (*http.Request, error) {
		return http.NewRequest(http.MethodGet, fmt.Sprintf("%s/arcgis/rest/services/world/MapServer/tile/6/%d/%d", base, t[0], t[1]), nil)
	}
	type transport struct {
		name string
		req  func([2]int) (*http.Request, error)
	}
	// Three rounds, alternating which goes first, so that the machine's load (shared, and
	// moving) weighs on both alike.
	var runs []transport
	for round := range 3 {
		pair := []transport{{"SOAP", soap}, {"REST", rest}}
		if round%2 == 1 {
			pair[0], pair[1] = pair[1], pair[0]
		}
		runs = append(runs, pair...)
	}
	for i, api := range runs {
		b.Run(fmt.Sprintf("round=%d/api=%s", i/2+1, api.name), func(b *testing.B) {
			do := func(t [2]int) error {
				req, err := api.req(t)
				if err != nil {
					return err
				}
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || n < 100 {
					return fmt.Errorf("%s tile %v: %s, %d bytes", api.name, t, resp.Status, n)
				}
				return err
			}
			for _, t := range tiles {
				if err := do(t); err != nil {
					b.Fatal(err)
				}
			}
			const clients = 8
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, clients)
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
						if err := do(tiles[int(i)%len(tiles)]); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tiles/s")
		})
	}
}
