//go:build unix

package ogcapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// BenchmarkItems measures OGC API Features answering GeoJSON pages of 1,000 features, end to
// end through the handler (QueryRowIDs, QueryData, the encoding), and reports features per
// second: the country points (layer 0) and the country polygons (layer 1, 1:50m outlines). On a
// shared machine the wall clock measures the queue for a core as much as the work, so it reports
// features per second of the process's CPU time too (features/cpu-s).
func BenchmarkItems(b *testing.B) {
	f := newFarmWith(b, farmURL, 1000)
	for _, c := range []struct{ name, target string }{
		{"points", "/ogc/world/collections/0/items?limit=1000"},
		{"polygons", "/ogc/world/collections/1/items?limit=1000"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var fc struct{ NumberReturned int }
			_, body := get(b, f, c.target)
			if err := json.Unmarshal(body, &fc); err != nil || fc.NumberReturned == 0 {
				b.Fatalf("%s: %v %.200s", c.target, err, body)
			}
			req := httptest.NewRequest(http.MethodGet, c.target, nil)
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec := httptest.NewRecorder()
				f.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
			b.ReportMetric(float64(fc.NumberReturned)*float64(b.N)/b.Elapsed().Seconds(), "features/s")
			b.ReportMetric(float64(fc.NumberReturned)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "features/cpu-s")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
