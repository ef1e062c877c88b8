package tilecache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"golang.org/x/sync/singleflight"
)

// Defaults of [IndexCacheOptions].
const (
	// DefaultIndexCacheBytes bounds the memory of cached bundle indexes:
	// 64 MiB, about 500 bundles.
	DefaultIndexCacheBytes = 64 << 20
	// DefaultIndexMaxAge is how long a cached index is trusted before a
	// Stat checks that the bundle has not changed.
	DefaultIndexMaxAge = 10 * time.Second
)

// IndexCacheOptions configures an [IndexCache]. The zero value gives the
// defaults.
type IndexCacheOptions struct {
	// MaxBytes bounds the memory used by cached indexes (about 128 KiB per
	// bundle). Zero means DefaultIndexCacheBytes. The least recently used
	// index is dropped first. Negative means no cache at all: every compact
	// tile read loads its bundle's index itself (V2: a Stat and a ranged GET
	// of 128 KiB before the tile's ranged GET). That is the cold-index cost,
	// for measurements; it is no production setting.
	MaxBytes int64
	// MaxAge is how long an index is used without checking the bundle. When
	// it has passed, the next read Stats the bundle (one cheap HEAD request)
	// and reloads the index only if the ETag, size or modification time
	// changed. Zero means DefaultIndexMaxAge; negative means never check
	// (rely on [IndexCache.Invalidate] and the writes of this process).
	MaxAge time.Duration
	// PageBytes bounds a cache of bundle data: aligned pages of PageSize
	// bytes, least recently used out first. A tile read whose page is cached
	// costs no request; a miss fetches the page(s) holding the tile with one
	// ranged GET instead of the tile alone, so its neighbours in the bundle
	// are read from memory next. Pages belong to the loaded index and go
	// with it (invalidation, revalidation that finds the bundle changed,
	// eviction). Zero or negative means no page cache: every tile read is
	// one ranged GET of the tile. Not used when MaxBytes is negative.
	PageBytes int64
	// PageSize is the page size; zero means DefaultPageSize.
	PageSize int64
	// Now is the clock; nil means time.Now. For tests.
	Now func() time.Time
}

// IndexCache keeps the parsed indexes of compact bundles in memory so that
// reading a tile costs one ranged GET. It is safe for concurrent use and may
// be shared by the caches of one store (keys are object keys, so caches on
// different stores need their own IndexCache).
type IndexCache struct {
	maxBytes int64
	maxAge   time.Duration
	now      func() time.Time

	entries *memcache.Cache[string, *indexEntry] // by bundle key, least recently used out first
	loads   singleflight.Group                   // one load or revalidation per bundle at a time
	pages   *pageCache                           // nil: none

	mu    sync.Mutex // serializes installing loaded entries; guards stats
	stats IndexCacheStats
}

// IndexCacheStats counts what an IndexCache did.
type IndexCacheStats struct {
	Hits        int64 // reads served from a cached index
	Loads       int64 // indexes read from the store
	Checks      int64 // Stat calls to revalidate an old index
	Evictions   int64 // indexes dropped to stay under MaxBytes
	Entries     int   // indexes (and known-missing bundles) held now
	Bytes       int64 // their approximate memory
	Invalidated int64 // explicit or write-triggered invalidations

	// The page cache (IndexCacheOptions.PageBytes), all zero without one.
	PageHits      int64 // tile reads served from cached pages
	PageFetches   int64 // ranged GETs of pages (tile reads that missed)
	PageEvictions int64 // pages dropped to stay under PageBytes
	Pages         int   // pages held now
	PageBytes     int64 // their bytes
}

// indexEntry is one cached bundle: its index (nil when the bundle does not
// exist) and the version of the object(s) it was read from.
type indexEntry struct {
	key     string
	ix      *bundleIndex
	version string
	checked time.Time
}

func (e *indexEntry) memSize() int64 {
	n := int64(len(e.key)+len(e.version)) + 96
	if e.ix != nil {
		n += e.ix.memSize()
	}
	return n
}

// NewIndexCache returns an empty index cache.
func NewIndexCache(opts IndexCacheOptions) *IndexCache {
	c := &IndexCache{
		maxBytes: opts.MaxBytes,
		maxAge:   opts.MaxAge,
		now:      opts.Now,
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultIndexCacheBytes
	}
	if c.maxAge == 0 {
		c.maxAge = DefaultIndexMaxAge
	}
	if c.now == nil {
		c.now = time.Now
	}
	if opts.PageBytes > 0 && c.maxBytes > 0 {
		size := opts.PageSize
		if size <= 0 {
			size = DefaultPageSize
		}
		c.pages = newPageCache(opts.PageBytes, size)
	}
	c.entries = memcache.New[string, *indexEntry]("bundle indexes", max(c.maxBytes, 0))
	c.entries.OnEvict(func(_ string, e *indexEntry) { c.pages.drop(e.ix) })
	return c
}

// Caches returns the index cache's memory caches (indexes, and pages when there are any), for
// metrics.
func (c *IndexCache) Caches() []memcache.Statser {
	if c.pages == nil {
		return []memcache.Statser{c.entries}
	}
	return []memcache.Statser{c.entries, c.pages.pages}
}

// Invalidate drops the cached index of the bundle object key (the .bundle
// key), so the next read loads it again.
func (c *IndexCache) Invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries.Peek(key); ok {
		c.entries.Remove(key)
		c.pages.drop(e.ix)
		c.stats.Invalidated++
	}
}

// InvalidateWhere drops the cached index, and the cached pages, of every bundle whose object
// key satisfies match (a refresh or truncate of their tiles ended), and returns how many.
func (c *IndexCache) InvalidateWhere(match func(key string) bool) int {
	var dropped []*indexEntry
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.RemoveEntriesIf(func(key string, e *indexEntry) bool {
		if !match(key) {
			return false
		}
		dropped = append(dropped, e)
		return true
	})
	for _, e := range dropped {
		c.pages.drop(e.ix)
	}
	c.stats.Invalidated += int64(len(dropped))
	return len(dropped)
}

// Stats returns the cache's counters.
func (c *IndexCache) Stats() IndexCacheStats {
	c.mu.Lock()
	s := c.stats
	c.mu.Unlock()
	es := c.entries.Stats()
	s.Hits, s.Evictions, s.Entries, s.Bytes = es.Hits, es.Evictions, es.Entries, es.Bytes
	c.pages.stats(&s)
	return s
}

// readRange reads bytes [off, off+n) of the bundle at key, whose index is
// ix: through the page cache when there is one, else with one ranged GET.
func (c *IndexCache) readRange(ctx context.Context, store Store, key string, ix *bundleIndex, off, n int64) ([]byte, error) {
	if c.pages == nil {
		return store.GetRange(ctx, key, off, n)
	}
	return c.pages.read(ctx, store, key, ix, off, n)
}

// bundleSource reads what an index is made of. It is implemented for V1 and
// V2 by Cache.
type bundleSource interface {
	// version returns a string that changes whenever the bundle changes, or
	// an error wrapping fs.ErrNotExist.
	version(ctx context.Context) (string, error)
	// load reads and parses the index, returning it with its version.
	load(ctx context.Context) (*bundleIndex, string, error)
}

// get returns the index of the bundle key (nil if the bundle does not
// exist), loading or revalidating it as needed.
func (c *IndexCache) get(ctx context.Context, key string, src bundleSource) (*bundleIndex, error) {
	if c.maxBytes < 0 {
		e, err := c.fetch(ctx, key, src, nil)
		if err != nil {
			return nil, err
		}
		return e.ix, nil
	}
	if e, ok := c.entries.Get(key); ok && (c.maxAge < 0 || c.now().Sub(e.checked) < c.maxAge) {
		return e.ix, nil
	}
	ch := c.loads.DoChan(key, func() (any, error) {
		stale, _ := c.entries.Peek(key)
		// Not the first reader's own context: the others share this load.
		e, err := c.fetch(context.WithoutCancel(ctx), key, src, stale)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if old, ok := c.entries.Peek(key); ok && old.ix != e.ix {
			c.pages.drop(old.ix)
		}
		c.entries.Add(key, e, e.memSize())
		return e, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*indexEntry).ix, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fetch revalidates stale (if any) or loads the index.
func (c *IndexCache) fetch(ctx context.Context, key string, src bundleSource, stale *indexEntry) (*indexEntry, error) {
	now := c.now()
	if stale != nil {
		c.count(func(s *IndexCacheStats) { s.Checks++ })
		v, err := src.version(ctx)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &indexEntry{key: key, checked: now}, nil
		case err != nil:
			return nil, err
		case v == stale.version && stale.version != "":
			return &indexEntry{key: key, ix: stale.ix, version: v, checked: now}, nil
		}
	}
	c.count(func(s *IndexCacheStats) { s.Loads++ })
	ix, v, err := src.load(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		return &indexEntry{key: key, checked: now}, nil
	}
	if err != nil {
		return nil, err
	}
	return &indexEntry{key: key, ix: ix, version: v, checked: now}, nil
}

func (c *IndexCache) count(f func(*IndexCacheStats)) {
	c.mu.Lock()
	f(&c.stats)
	c.mu.Unlock()
}

// infoVersion makes a version string from object info.
func infoVersion(in blob.Info) string {
	return fmt.Sprintf("%s/%d/%d", in.ETag, in.Size, in.ModTime.UnixNano())
}
