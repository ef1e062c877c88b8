// Package memcache is the in-memory cache every long-lived process uses for what it may
// compute or fetch again: font faces and glyph masks, tile bundle indexes and pages, served
// tiles, fresh images, pictures. Each cache is bounded by bytes, not entries, evicts the least
// recently used entry to stay under its bound, and counts hits, misses, evictions and bytes
// under its name for the metrics (internal/metrics exports every cache a process registers).
//
// The recency order is github.com/hashicorp/golang-lru/v2's simplelru, a maintained LRU list;
// this package adds the byte accounting and the counters. Loads that fetch over the network
// share one fetch per key with golang.org/x/sync/singleflight where they are made
// (internal/tilecache), not here.
package memcache

import (
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Cache is a byte-bounded LRU cache, safe for concurrent use. The zero value is not usable;
// make one with New.
type Cache[K comparable, V any] struct {
	name     string
	maxBytes int64

	mu        sync.Mutex
	lru       *simplelru.LRU[K, entry[V]]
	bytes     int64
	hits      int64
	misses    int64
	evictions int64
	removing  bool // an explicit Remove or replacement, not an eviction
	evicted   func(K, V)
}

type entry[V any] struct {
	v    V
	size int64
}

// New returns a cache named name (for metrics and logs) holding at most maxBytes of entries, as
// their sizes are given to Add. maxBytes ≤ 0 makes a cache that keeps nothing.
func New[K comparable, V any](name string, maxBytes int64) *Cache[K, V] {
	c := &Cache[K, V]{name: name, maxBytes: maxBytes}
	// The entry count is not the bound: bytes are.
	lru, err := simplelru.NewLRU[K, entry[V]](math.MaxInt32, c.onEvict)
	if err != nil {
		panic("memcache: " + err.Error()) // only for a size ≤ 0
	}
	c.lru = lru
	return c
}

// OnEvict makes the cache call f with every entry it evicts to stay within its bound (not with
// those removed or replaced), while it holds its lock: f must not call the cache. Set it before
// the cache is used.
func (c *Cache[K, V]) OnEvict(f func(K, V)) { c.evicted = f }

// onEvict keeps the byte count; it runs under c.mu.
func (c *Cache[K, V]) onEvict(k K, e entry[V]) {
	c.bytes -= e.size
	if !c.removing {
		c.evictions++
		if c.evicted != nil {
			c.evicted(k, e.v)
		}
	}
}

// Get returns the value cached for k and marks it recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(k)
	if ok {
		c.hits++
	} else {
		c.misses++
	}
	return e.v, ok
}

// Peek returns the value cached for k without marking it used or counting a hit or a miss.
func (c *Cache[K, V]) Peek(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Peek(k)
	return e.v, ok
}

// Add caches v for k as size bytes (replacing what k held), then evicts the least recently used
// entries until the cache is within its bound. A value larger than the whole bound is not kept.
func (c *Cache[K, V]) Add(k K, v V, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removing = true
	c.lru.Remove(k)
	c.removing = false
	if size > c.maxBytes {
		return
	}
	c.lru.Add(k, entry[V]{v: v, size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		c.lru.RemoveOldest()
	}
}

// Remove drops k's entry, if any.
func (c *Cache[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removing = true
	c.lru.Remove(k)
	c.removing = false
}

// RemoveIf drops every entry whose key satisfies drop.
func (c *Cache[K, V]) RemoveIf(drop func(K) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removing = true
	for _, k := range c.lru.Keys() {
		if drop(k) {
			c.lru.Remove(k)
		}
	}
	c.removing = false
}

// RemoveEntriesIf drops every entry whose key and value satisfy drop (which must not call the
// cache).
func (c *Cache[K, V]) RemoveEntriesIf(drop func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removing = true
	for _, k := range c.lru.Keys() {
		if e, ok := c.lru.Peek(k); ok && drop(k, e.v) {
			c.lru.Remove(k)
		}
	}
	c.removing = false
}

// Stats are a cache's counters since it was made.
type Stats struct {
	Name      string
	Hits      int64
	Misses    int64
	Evictions int64 // entries dropped to stay within MaxBytes
	Entries   int
	Bytes     int64
	MaxBytes  int64
}

// Stats returns the cache's counters.
func (c *Cache[K, V]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Name: c.name, Hits: c.hits, Misses: c.misses, Evictions: c.evictions,
		Entries: c.lru.Len(), Bytes: c.bytes, MaxBytes: c.maxBytes}
}

// Name is the cache's name.
func (c *Cache[K, V]) Name() string { return c.name }

// Statser is what the metrics read of a cache, whatever its types.
type Statser interface {
	Stats() Stats
}
