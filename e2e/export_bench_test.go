package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkExportRESTvsSOAP measures what the farm adds to a render through REST export and
// through SOAP ExportMapImage, side by side on one farm: the same 256×256 PNG24 of the same
// extent returned as a URL (REST f=json, SOAP gisImageReturnURL), one request after another
// after 20 to warm up, in three rounds that alternate which transport goes first. Overhead is
// the time to the response's last byte minus the worker's draw and encode (Server-Timing);
// reported: its median and 99th percentile in ms. REST's must be no more than SOAP's.
//
//	MAPFARM_GO_TEST_FLAGS="-run ^$ -bench ExportRESTvsSOAP -benchtime 200x" ./scripts/test.sh ./e2e/
func BenchmarkExportRESTvsSOAP(b *testing.B) {
	f := startFarm(b)
	base := strings.TrimSuffix(f.url, "/")
	box := [4]float64{-8237702.5, -3994221.0, -3874691.25, 586056.875}
	soapBody := exportBody(256, 256, "96", `<MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN">`+envelopeXML(box[0], box[1], box[2], box[3])+`</Extent></MapArea>`)
	restURL := fmt.Sprintf("%s/arcgis/rest/services/world/MapServer/export?bbox=%.3f,%.3f,%.3f,%.3f&size=256,256&dpi=96&format=png24&f=json", base, box[0], box[1], box[2], box[3])
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	transports := map[string]func() (*http.Response, error){
		"SOAP": func() (*http.Response, error) {
			return client.Post(base+"/arcgis/services/world/MapServer", "text/xml", strings.NewReader(soapBody))
		},
		"REST": func() (*http.Response, error) { return client.Get(restURL) },
	}
	// one sends a request and returns the farm's overhead on it in ms.
	one := func(name string) float64 {
		start := time.Now()
		resp, err := transports[name]()
		if err != nil {
			b.Fatal(err)
		}
		overhead, body := overheadOf(b, start, resp)
		if !strings.Contains(string(body), "/arcgis/output/") {
			b.Fatalf("%s: no image URL in %.300s", name, body)
		}
		return overhead
	}
	for round := range 3 {
		pair := []string{"SOAP", "REST"}
		if round%2 == 1 {
			pair[0], pair[1] = pair[1], pair[0]
		}
		for _, name := range pair {
			b.Run(fmt.Sprintf("round=%d/api=%s", round+1, name), func(b *testing.B) {
				for range 20 {
					one(name)
				}
				overheads := make([]float64, 0, b.N)
				b.ResetTimer()
				for range b.N {
					overheads = append(overheads, one(name))
				}
				b.StopTimer()
				reportOverheads(b, overheads)
			})
		}
	}
}
