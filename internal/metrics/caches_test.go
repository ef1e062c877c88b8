package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/metrics"
)

// A registered cache's counters appear at /metrics under its name.
func TestCacheMetrics(t *testing.T) {
	m := metrics.New()
	c := memcache.New[int, int]("glyph masks", 100)
	m.RegisterCaches(c)
	for i := range 5 {
		c.Add(i, i, 30) // three fit; two are evicted
	}
	c.Get(4)
	c.Get(0)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`mapfarm_cache_hits_total{cache="glyph masks"} 1`,
		`mapfarm_cache_misses_total{cache="glyph masks"} 1`,
		`mapfarm_cache_evictions_total{cache="glyph masks"} 2`,
		`mapfarm_cache_bytes{cache="glyph masks"} 90`,
		`mapfarm_cache_max_bytes{cache="glyph masks"} 100`,
		`mapfarm_cache_entries{cache="glyph masks"} 3`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
