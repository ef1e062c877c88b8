package tilecache

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
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

	mu       sync.Mutex
	entries  map[string]*list.Element // of *indexEntry
	lru      *list.List               // front = most recently used
	bytes    int64
	inflight map[string]*indexLoad
	stats    IndexCacheStats
	pages    *pageCache // nil: none
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

// indexLoad is a load in progress, shared by concurrent readers.
type indexLoad struct {
	done  chan struct{}
	entry *indexEntry
	err   error
}

// NewIndexCache returns an empty index cache.
func NewIndexCache(opts IndexCacheOptions) *IndexCache {
	c := &IndexCache{
		maxBytes: opts.MaxBytes,
		maxAge:   opts.MaxAge,
		now:      opts.Now,
		entries:  make(map[string]*list.Element),
		lru:      list.New(),
		inflight: make(map[string]*indexLoad),
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
	return c
}

// Invalidate drops the cached index of the bundle object key (the .bundle
// key), so the next read loads it again.
func (c *IndexCache) Invalidate(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.pages.drop(c.remove(el).ix)
		c.stats.Invalidated++
	}
}

// Stats returns the cache's counters.
func (c *IndexCache) Stats() IndexCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Entries = len(c.entries)
	s.Bytes = c.bytes
	c.pages.stats(&s)
	return s
}

// remove drops an entry (not its pages) and returns it; c.mu is held.
func (c *IndexCache) remove(el *list.Element) *indexEntry {
	e := el.Value.(*indexEntry)
	c.lru.Remove(el)
	delete(c.entries, e.key)
	c.bytes -= e.memSize()
	return e
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
	for range 3 { // bounded: a load that races an invalidation retries
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			e := el.Value.(*indexEntry)
			if c.maxAge < 0 || c.now().Sub(e.checked) < c.maxAge {
				c.lru.MoveToFront(el)
				c.stats.Hits++
				c.mu.Unlock()
				return e.ix, nil
			}
		}
		if l, ok := c.inflight[key]; ok {
			c.mu.Unlock()
			select {
			case <-l.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if l.err != nil {
				return nil, l.err
			}
			if l.entry != nil {
				return l.entry.ix, nil
			}
			continue
		}
		var stale *indexEntry
		if el, ok := c.entries[key]; ok {
			stale = el.Value.(*indexEntry)
		}
		l := &indexLoad{done: make(chan struct{})}
		c.inflight[key] = l
		c.mu.Unlock()

		l.entry, l.err = c.fetch(ctx, key, src, stale)

		c.mu.Lock()
		delete(c.inflight, key)
		if l.err == nil {
			if el, ok := c.entries[key]; ok {
				if old := c.remove(el); old.ix != l.entry.ix {
					c.pages.drop(old.ix)
				}
			}
			c.entries[key] = c.lru.PushFront(l.entry)
			c.bytes += l.entry.memSize()
			for c.bytes > c.maxBytes && c.lru.Len() > 1 {
				c.pages.drop(c.remove(c.lru.Back()).ix)
				c.stats.Evictions++
			}
		}
		c.mu.Unlock()
		close(l.done)
		if l.err != nil {
			return nil, l.err
		}
		return l.entry.ix, nil
	}
	return nil, fmt.Errorf("tilecache: index of %q: gave up after concurrent reloads", key)
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
