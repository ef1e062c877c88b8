package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mapfarm/mapfarm/internal/memcache"
)

// cacheCollector exports the counters of a process's in-memory caches at each scrape:
//
//	cache_hits_total{cache}, cache_misses_total{cache}, cache_evictions_total{cache}
//	cache_bytes{cache}, cache_max_bytes{cache}, cache_entries{cache}
type cacheCollector struct {
	mu     sync.Mutex
	caches []memcache.Statser

	hits, misses, evictions, bytes, maxBytes, entries *prometheus.Desc
}

func newCacheCollector() *cacheCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("mapfarm_"+name, help, []string{"cache"}, nil)
	}
	return &cacheCollector{
		hits:      d("cache_hits_total", "Lookups that found their entry, by cache."),
		misses:    d("cache_misses_total", "Lookups that did not, by cache."),
		evictions: d("cache_evictions_total", "Entries dropped to stay within the cache's byte bound."),
		bytes:     d("cache_bytes", "Bytes held by the cache's entries."),
		maxBytes:  d("cache_max_bytes", "The cache's byte bound."),
		entries:   d("cache_entries", "Entries in the cache."),
	}
}

// Describe implements prometheus.Collector.
func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.hits, c.misses, c.evictions, c.bytes, c.maxBytes, c.entries} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	caches := append([]memcache.Statser(nil), c.caches...)
	c.mu.Unlock()
	for _, cc := range caches {
		s := cc.Stats()
		ch <- prometheus.MustNewConstMetric(c.hits, prometheus.CounterValue, float64(s.Hits), s.Name)
		ch <- prometheus.MustNewConstMetric(c.misses, prometheus.CounterValue, float64(s.Misses), s.Name)
		ch <- prometheus.MustNewConstMetric(c.evictions, prometheus.CounterValue, float64(s.Evictions), s.Name)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(s.Bytes), s.Name)
		ch <- prometheus.MustNewConstMetric(c.maxBytes, prometheus.GaugeValue, float64(s.MaxBytes), s.Name)
		ch <- prometheus.MustNewConstMetric(c.entries, prometheus.GaugeValue, float64(s.Entries), s.Name)
	}
}

// RegisterCaches exports the counters of caches (memcache.Cache values, or anything reporting
// memcache.Stats) under their names. A nil Metrics ignores them.
func (m *Metrics) RegisterCaches(caches ...memcache.Statser) {
	if m == nil {
		return
	}
	m.caches.mu.Lock()
	defer m.caches.mu.Unlock()
	for _, c := range caches {
		if c != nil {
			m.caches.caches = append(m.caches.caches, c)
		}
	}
}
