package e2e

import (
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var renderDur = regexp.MustCompile(`render;dur=([0-9.]+)`)

// BenchmarkFarmOverhead measures what the farm adds to a render: one ExportMapImage through
// api → Redis queue → worker → MinIO → image URL, minus the worker's own draw-and-encode time
// (from the Server-Timing header). Reported: median and p99 of that overhead, in ms.
//
//	go test ./e2e -run '^$' -bench FarmOverhead -benchtime 300x
func BenchmarkFarmOverhead(b *testing.B) {
	f := startFarm(b)
	p50, p99 := farmOverhead(b, f.url, b.N, b.ResetTimer)
	b.StopTimer()
	b.ReportMetric(p50, "overhead-p50-ms")
	b.ReportMetric(p99, "overhead-p99-ms")
}

// farmOverhead posts n ExportMapImage requests (256×256, after 20 to warm up; reset is called
// between) one after another to the farm at url and returns the median and the 99th percentile
// of what the farm added to each: the time to the response's last byte minus the worker's draw
// and encode (Server-Timing), in ms.
func farmOverhead(b *testing.B, url string, n int, reset func()) (p50, p99 float64) {
	endpoint := url + "/arcgis/services/world/MapServer"
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:ExportMapImage>` +
		`<MapDescription><Name>Layers</Name></MapDescription><ImageDescription>` +
		`<ImageType><ImageFormat>gisImagePNG24</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
		`<ImageDisplay><ImageHeight>256</ImageHeight><ImageWidth>256</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	post := func() (total, render time.Duration) {
		start := time.Now()
		resp, err := client.Post(endpoint, "text/xml", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		var buf [4096]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		total = time.Since(start)
		m := renderDur.FindStringSubmatch(resp.Header.Get("Server-Timing"))
		if resp.StatusCode != 200 || m == nil {
			b.Fatalf("%s, Server-Timing %q", resp.Status, resp.Header.Get("Server-Timing"))
		}
		ms, _ := strconv.ParseFloat(m[1], 64)
		return total, time.Duration(ms * float64(time.Millisecond))
	}
	for i := 0; i < 20; i++ { // warm up connections, caches and the worker
		post()
	}
	overheads := make([]float64, 0, n)
	reset()
	for i := 0; i < n; i++ {
		total, render := post()
		overheads = append(overheads, float64(total-render)/float64(time.Millisecond))
	}
	sort.Float64s(overheads)
	return overheads[len(overheads)/2], overheads[(len(overheads)*99)/100]
}

// rssOf returns a process's peak resident set size in MB (VmHWM).
func rssOf(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// BenchmarkWorkerRSS renders 1024×768 world maps continuously on a worker process (4 clients,
// b.N renders) and reports the worker's peak resident set size.
//
//	go test ./e2e -run '^$' -bench WorkerRSS -benchtime 200x
func BenchmarkWorkerRSS(b *testing.B) {
	bin := buildBinary(b, "github.com/mapfarm/mapfarm")
	addr := freePort(b)
	env := append(farmEnv(b, addr), "MAPFARM_WORKER_CONCURRENCY=2")
	w := startProcess(b, bin, "worker", env)
	startProcess(b, bin, "api", env)
	waitReady(b, "http://"+addr+"/readyz", 60*time.Second)
	endpoint := "http://" + addr + "/arcgis/services/world/MapServer"
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + namespace + `"><soap:Body><gis:ExportMapImage>` +
		`<MapDescription><Name>Layers</Name></MapDescription><ImageDescription>` +
		`<ImageType><ImageFormat>gisImagePNG24</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
		`<ImageDisplay><ImageHeight>768</ImageHeight><ImageWidth>1024</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`
	work := make(chan struct{}, b.N)
	for i := 0; i < b.N; i++ {
		work <- struct{}{}
	}
	close(work)
	b.ResetTimer()
	done := make(chan struct{})
	for c := 0; c < 4; c++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for range work {
				resp, err := http.Post(endpoint, "text/xml", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("render: %s", resp.Status)
				}
			}
		}()
	}
	for c := 0; c < 4; c++ {
		<-done
	}
	b.StopTimer()
	b.ReportMetric(rssOf(w.Process.Pid), "worker-peak-rss-MB")
}
