package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/limits"
)

// BenchmarkRESTBesideMultipoints measures small REST queries (count where NAME = 'France') while
// three clients send 5,000-point multipoint queries without pause (issue 25, 3: their median went
// from 1.5 to 23 ms beside them): the heavy ones take turns in the heavy lane at a lower CPU
// priority. It reports the small queries' median alone and their median and p90 beside the heavy
// ones (300 queries, one every 10 ms), and how many heavy ones were answered meanwhile.
//
//	go test -tags proj ./api -run '^$' -bench RESTBesideMultipoints -benchtime 1x
func BenchmarkRESTBesideMultipoints(b *testing.B) {
	h := restLaneServer(b, limits.Request{}, HeavyLane{}).Handler()
	var pts []string
	for i := range 5_000 {
		pts = append(pts, fmt.Sprintf("[%d,%d]", (i*7919)%38_000_000-19_000_000, (i*104_729)%30_000_000-15_000_000))
	}
	heavy := url.Values{"geometry": {`{"points":[` + strings.Join(pts, ",") + `],"spatialReference":{"wkid":3857}}`},
		"geometryType": {"esriGeometryMultipoint"}, "spatialRel": {"esriSpatialRelIntersects"}, "returnCountOnly": {"true"}, "f": {"json"}}.Encode()
	post := func(ctx context.Context, body string) {
		req := httptest.NewRequestWithContext(ctx, "POST", "/arcgis/rest/services/world/MapServer/1/query", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	small := url.Values{"where": {"NAME = 'France'"}, "returnCountOnly": {"true"}, "f": {"json"}}.Encode()
	// sample times n small queries, one every 10 ms, and returns their median and p90.
	sample := func(n int) (p50, p90 time.Duration) {
		took := make([]time.Duration, 0, n)
		for range n {
			start := time.Now()
			post(context.Background(), small)
			took = append(took, time.Since(start))
			time.Sleep(10 * time.Millisecond)
		}
		slices.Sort(took)
		return took[n/2], took[n*9/10]
	}
	quiet50, _ := sample(100)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var answered atomic.Int64
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for ctx.Err() == nil {
				post(ctx, heavy)
				answered.Add(1)
			}
		})
	}
	var p50, p90 time.Duration
	for b.Loop() {
		p50, p90 = sample(300)
	}
	cancel()
	wg.Wait()
	b.ReportMetric(float64(quiet50.Microseconds())/1000, "ms-quiet-p50")
	b.ReportMetric(float64(p50.Microseconds())/1000, "ms-p50")
	b.ReportMetric(float64(p90.Microseconds())/1000, "ms-p90")
	b.ReportMetric(float64(answered.Load()), "heavy-answered")
}
