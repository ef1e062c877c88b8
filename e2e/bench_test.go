package e2e

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

var renderDur = regexp.MustCompile(`render;dur=([0-9.]+)`)

// BenchmarkFarmOverhead measures what the farm adds to a render: one ExportMapImage through
// api → Redis queue → worker → MinIO → image URL, minus the worker's own draw-and-encode time
// (from the Server-Timing header). Reported: median and p99 of that overhead, in ms.
//
//	go test ./e2e -run '^$' -bench FarmOverhead -benchtime 300x
func BenchmarkFarmOverhead(b *testing.B) {
	f := startFarm(b)
	overheads := farmOverhead(b, f.url, b.N, b.ResetTimer)
	b.StopTimer()
	reportOverheads(b, overheads)
}

// farmOverhead posts n ExportMapImage requests (256×256, after 20 to warm up; reset is called
// between) one after another to the farm at url and returns what the farm added to each: the
// time to the response's last byte minus the worker's draw and encode (Server-Timing), in ms.
func farmOverhead(b *testing.B, url string, n int, reset func()) []float64 {
	endpoint := url + "/arcgis/services/world/MapServer"
	body := exportBody(256, 256, "96", "")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func() float64 {
		start := time.Now()
		resp, err := client.Post(endpoint, "text/xml", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		overhead, _ := overheadOf(b, start, resp)
		return overhead
	}
	for range 20 { // warm up connections, caches and the worker
		post()
	}
	overheads := make([]float64, 0, n)
	reset()
	for range n {
		overheads = append(overheads, post())
	}
	return overheads
}

// BenchmarkWorkerRSS renders 1024×768 world maps continuously on a worker process (4 clients,
// b.N renders) and reports the worker's peak resident set size.
//
//	go test ./e2e -run '^$' -bench WorkerRSS -benchtime 200x
func BenchmarkWorkerRSS(b *testing.B) {
	f := startProcessFarm(b, []string{"MAPFARM_WORKER_CONCURRENCY=2"}, "worker", "api")
	endpoint := f.base + "/arcgis/services/world/MapServer"
	body := exportBody(1024, 768, "96", "")
	timedClients(b, 4, func(int) error {
		resp, err := http.Post(endpoint, "text/xml", strings.NewReader(body))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("render: %s", resp.Status)
		}
		return nil
	})
	peak, ok := testenv.ProcStatusMB(f.cmds[0].Process.Pid, "VmHWM")
	if !ok {
		peak = -1
	}
	b.ReportMetric(peak, "worker-peak-rss-MB")
}
