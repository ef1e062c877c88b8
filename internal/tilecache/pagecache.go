package tilecache

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"golang.org/x/sync/singleflight"
)

// DefaultPageSize is the page size of the bundle page cache
// ([IndexCacheOptions].PageBytes): 256 KiB, about twenty map tiles.
const DefaultPageSize = 256 << 10

// pageCache keeps aligned byte ranges ("pages") of compact bundles in
// memory, least recently used out first. A tile read whose pages are cached
// costs no request; one that misses fetches the missing pages it needs with
// a ranged GET, so the tiles stored next to it (the neighbours in its row
// of the bundle, which map clients ask for next) come from memory after it.
//
// Each page is one ranged GET, shared by the readers that miss it at the same time
// (singleflight); its bytes live in a memcache.Cache ("bundle pages").
//
// Pages belong to one loaded bundle index (the *bundleIndex of the
// IndexCache entry), not to the bundle's key: when the IndexCache drops or
// reloads an index (Invalidate, a Flush of this process, a revalidation that
// finds the bundle changed, an eviction), that index's pages are dropped
// with it and can no longer be read. So cached pages are exactly as fresh
// as the index that points into them. (A read still under way with an index
// being dropped may add pages of it; no new read finds them, and they age
// out of the LRU.)
type pageCache struct {
	size  int64 // page size
	pages *memcache.Cache[pageKey, []byte]
	loads singleflight.Group // one GET per page at a time, shared by its readers

	hits    atomic.Int64 // reads served from memory alone
	fetches atomic.Int64 // ranged GETs of pages
}

type pageKey struct {
	ix *bundleIndex
	n  int64 // page number: offset / size
}

func newPageCache(maxBytes, size int64) *pageCache {
	return &pageCache{size: size, pages: memcache.New[pageKey, []byte]("bundle pages", maxBytes)}
}

// read returns bytes [off, off+n) of the bundle at key described by ix,
// fewer when the bundle (as ix knows it) ends first. Like Store.GetRange,
// an offset at or past the end gives an error wrapping blob.ErrInvalidRange.
func (p *pageCache) read(ctx context.Context, store Store, key string, ix *bundleIndex, off, n int64) ([]byte, error) {
	if off < 0 || n <= 0 || off >= ix.size {
		return nil, fmt.Errorf("tilecache: read %s [%d, +%d) of %d bytes: %w", key, off, n, ix.size, blob.ErrInvalidRange)
	}
	end := min(off+n, ix.size)
	first, last := off/p.size, (end-1)/p.size
	out := make([]byte, end-off)
	fetched := false
	for i := first; i <= last; i++ {
		data, ok := p.pages.Get(pageKey{ix, i})
		if !ok {
			var err error
			if data, err = p.fetch(ctx, store, key, ix, i); err != nil {
				return nil, err
			}
			fetched = true
		}
		start := i * p.size
		lo, hi := max(off, start), min(end, start+int64(len(data)))
		copy(out[lo-off:hi-off], data[lo-start:hi-start])
	}
	if !fetched {
		p.hits.Add(1)
	}
	return out, nil
}

// fetch reads page i of a bundle with one ranged GET, shared by the readers that want it at
// the same time, and keeps it (when it fits the cache's bound).
func (p *pageCache) fetch(ctx context.Context, store Store, key string, ix *bundleIndex, i int64) ([]byte, error) {
	ch := p.loads.DoChan(fmt.Sprintf("%p/%d", ix, i), func() (any, error) {
		start, stop := i*p.size, min((i+1)*p.size, ix.size)
		p.fetches.Add(1)
		// Not the first reader's own context: the others share this GET.
		data, err := store.GetRange(context.WithoutCancel(ctx), key, start, stop-start)
		if err != nil {
			return nil, err
		}
		if int64(len(data)) != stop-start {
			return nil, fmt.Errorf("%w: %s: %d bytes at %d, but its index says it holds %d", ErrCorruptBundle, key, len(data), start, ix.size)
		}
		p.pages.Add(pageKey{ix, i}, data, int64(len(data)))
		return data, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]byte), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// drop forgets every page of an index.
func (p *pageCache) drop(ix *bundleIndex) {
	if p == nil || ix == nil {
		return
	}
	p.pages.RemoveIf(func(k pageKey) bool { return k.ix == ix })
}

// stats adds the page counters to s.
func (p *pageCache) stats(s *IndexCacheStats) {
	if p == nil {
		return
	}
	st := p.pages.Stats()
	s.PageHits, s.PageFetches, s.PageEvictions = p.hits.Load(), p.fetches.Load(), st.Evictions
	s.Pages, s.PageBytes = st.Entries, st.Bytes
}
