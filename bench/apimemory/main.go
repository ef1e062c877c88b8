// Command apimemory loads a running api with hostile and normal SOAP requests at once and
// reports the api's peak RSS and the normal requests' latency (bench/apimemory.sh runs it).
//
// Hostile streams (-hostile, default 4) send, in turn, 2,000,000 empty elements (8.0 MB), a
// polygon of 1,000,000 empty points (8.0 MB) and an accepted 100,000-vertex polygon query
// (4.3 MB); four normal streams send small queries. The api's RSS is sampled every 100 ms
// from /proc; VmHWM is its peak.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func env(body string) []byte {
	return []byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:gis="http://schemas.mapfarm.dev/gis/10.7"><soap:Body>` + body + `</soap:Body></soap:Envelope>`)
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/arcgis/services/world/MapServer", "the api's SOAP endpoint")
	pid := flag.Int("pid", 0, "the api's process id, for its RSS")
	dur := flag.Duration("d", 90*time.Second, "how long to load")
	hostileN := flag.Int("hostile", 4, "concurrent hostile streams")
	flag.Parse()
	var poly strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&poly, `<Point><X>%.1f</X><Y>%.1f</Y></Point>`, -1e6+float64(i)*10, 1e5*float64(i%2))
	}
	hostile := [][]byte{
		env(`<gis:GetMapCount>` + strings.Repeat("<a/>", 2_000_000) + `</gis:GetMapCount>`),
		env(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter xsi:type="gis:SpatialFilter"><FilterGeometry xsi:type="gis:PolygonN"><RingArray><Ring><PointArray>` +
			strings.Repeat("<Point/>", 1_000_000) + `</PointArray></Ring></RingArray></FilterGeometry></QueryFilter></gis:QueryFeatureCount>`),
		env(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter xsi:type="gis:SpatialFilter"><SpatialRel>gisSpatialRelEnvelopeIntersects</SpatialRel><FilterGeometry xsi:type="gis:PolygonN"><RingArray><Ring><PointArray>` +
			poly.String() + `</PointArray></Ring></RingArray></FilterGeometry></QueryFilter></gis:QueryFeatureCount>`),
	}
	normal := [][]byte{
		env(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter><WhereClause>1=1</WhereClause></QueryFilter></gis:QueryFeatureCount>`),
		env(`<gis:GetServiceConfigurationInfo/>`),
		env(`<gis:GetMapCount/>`),
	}
	for i, b := range hostile {
		fmt.Printf("hostile body %d: %.1f MB\n", i, float64(len(b))/1e6)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	deadline := time.Now().Add(*dur)
	var mu sync.Mutex
	var lat []time.Duration
	codes := map[string]int{}
	var sent atomic.Int64
	post := func(b []byte) (int, time.Duration) {
		start := time.Now()
		resp, err := client.Post(*url, "text/xml", bytes.NewReader(b))
		if err != nil {
			return -1, time.Since(start)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start)
	}
	var wg sync.WaitGroup
	for g := range *hostileN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; time.Now().Before(deadline); i++ {
				code, _ := post(hostile[i%len(hostile)])
				sent.Add(1)
				mu.Lock()
				codes[fmt.Sprintf("hostile%d:%d", i%len(hostile), code)]++
				mu.Unlock()
			}
		}()
	}
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; time.Now().Before(deadline); i++ {
				code, d := post(normal[i%len(normal)])
				mu.Lock()
				lat = append(lat, d)
				codes[fmt.Sprintf("normal:%d", code)]++
				mu.Unlock()
			}
		}()
	}
	var maxRSS int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if r := rss(*pid); r > maxRSS {
				maxRSS = r
			}
		}
	}()
	wg.Wait()
	close(stop)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Println("answers by body and HTTP status:", codes, "hostile bodies sent:", sent.Load())
	if len(lat) > 0 {
		fmt.Printf("normal: %d requests, p50 %v p99 %v\n", len(lat), lat[len(lat)/2], lat[len(lat)*99/100])
	}
	fmt.Printf("api RSS: max sampled %.1f MB, now %.1f MB, VmHWM %s\n", float64(maxRSS)/1024, float64(rss(*pid))/1024, field(*pid, "VmHWM"))
}

func rss(pid int) int64 {
	var kb int64
	fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(field(pid, "VmRSS")), " kB"), &kb)
	return kb
}

func field(pid int, name string) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
