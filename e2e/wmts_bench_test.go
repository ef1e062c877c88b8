package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
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
	seedAndWait(b, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{6}, SkipEmpty: &no})
	tiles := aoiTiles(seedAOI, 6)
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
			fetch := func(t [2]int) error {
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
				if err := fetch(t); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := timedClients(b, 8, func(i int) error { return fetch(tiles[i%len(tiles)]) })
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tiles/s")
		})
	}
}
