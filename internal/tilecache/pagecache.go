package tilecache

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// DefaultPageSize is the page size of the bundle page cache
// ([IndexCacheOptions].PageBytes): 256 KiB, about twenty map tiles.
const DefaultPageSize = 256 << 10

// pageCache keeps aligned byte ranges ("pages") of compact bundles in
// memory, least recently used out first. A tile read whose pages are cached
// costs no request; one that misses fetches the missing pages it needs with
// one ranged GET, so the tiles stored next to it (the neighbours in its row
// of the bundle, which map clients ask for next) come from memory after it.
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
	size     int64 // page size
	maxBytes int64

	mu       sync.Mutex
	pages    map[*bundleIndex]map[int64]*list.Element // of *page
	lru      *list.List                               // front = most recently used
	bytes    int64
	inflight map[pageKey]*pageLoad
	hits     int64
	fetches  int64
	evicted  int64
}

type pageKey struct {
	ix *bundleIndex
	n  int64 // page number: offset / size
}

type page struct {
	key  pageKey
	data []byte
}

// pageLoad is a fetch in progress, which concurrent readers of its pages
// wait for.
type pageLoad struct {
	done chan struct{}
	err  error
}

func newPageCache(maxBytes, size int64) *pageCache {
	return &pageCache{size: size, maxBytes: maxBytes, pages: map[*bundleIndex]map[int64]*list.Element{},
		lru: list.New(), inflight: map[pageKey]*pageLoad{}}
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
	fetched := false
	// Bounded: each round either returns, waits for a load or loads; a
	// budget too small to keep the pages of one read ends in a direct read.
	for range 4 {
		p.mu.Lock()
		missing := int64(-1)
		for i := first; i <= last; i++ {
			if p.pages[ix][i] == nil {
				missing = i
				break
			}
		}
		if missing < 0 {
			out := make([]byte, end-off)
			for i := first; i <= last; i++ {
				el := p.pages[ix][i]
				p.lru.MoveToFront(el)
				pg := el.Value.(*page)
				start := i * p.size
				lo, hi := max(off, start), min(end, start+int64(len(pg.data)))
				copy(out[lo-off:hi-off], pg.data[lo-start:hi-start])
			}
			if !fetched {
				p.hits++
			}
			p.mu.Unlock()
			return out, nil
		}
		if l := p.inflight[pageKey{ix, missing}]; l != nil {
			p.mu.Unlock()
			select {
			case <-l.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue // loaded or failed (perhaps for the loader's own reason): look again
		}
		// Load the run of missing pages that starts here, in one request.
		stop := missing
		for stop < last && p.pages[ix][stop+1] == nil && p.inflight[pageKey{ix, stop + 1}] == nil {
			stop++
		}
		l := &pageLoad{done: make(chan struct{})}
		for i := missing; i <= stop; i++ {
			p.inflight[pageKey{ix, i}] = l
		}
		p.fetches++
		p.mu.Unlock()

		l.err = p.fetch(ctx, store, key, ix, missing, stop)
		fetched = true
		p.mu.Lock()
		for i := missing; i <= stop; i++ {
			delete(p.inflight, pageKey{ix, i})
		}
		p.mu.Unlock()
		close(l.done)
		if l.err != nil {
			return nil, l.err
		}
	}
	return store.GetRange(ctx, key, off, end-off)
}

// fetch reads pages first to last of a bundle with one ranged GET and keeps
// them.
func (p *pageCache) fetch(ctx context.Context, store Store, key string, ix *bundleIndex, first, last int64) error {
	start, stop := first*p.size, min((last+1)*p.size, ix.size)
	data, err := store.GetRange(ctx, key, start, stop-start)
	if err != nil {
		return err
	}
	if int64(len(data)) != stop-start {
		return fmt.Errorf("%w: %s: %d bytes at %d, but its index says it holds %d", ErrCorruptBundle, key, len(data), start, ix.size)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	byNum := p.pages[ix]
	if byNum == nil {
		byNum = map[int64]*list.Element{}
		p.pages[ix] = byNum
	}
	for i := first; i <= last; i++ {
		lo := (i - first) * p.size
		pd := data[lo:min(lo+p.size, int64(len(data)))]
		if first != last {
			pd = append([]byte(nil), pd...) // own array: pages are evicted one by one
		}
		if old := byNum[i]; old != nil {
			p.remove(old)
		}
		byNum[i] = p.lru.PushFront(&page{key: pageKey{ix, i}, data: pd})
		p.bytes += int64(len(pd))
	}
	for p.bytes > p.maxBytes && p.lru.Len() > 0 {
		p.remove(p.lru.Back())
		p.evicted++
	}
	return nil
}

// remove drops one page; p.mu is held.
func (p *pageCache) remove(el *list.Element) {
	pg := p.lru.Remove(el).(*page)
	p.bytes -= int64(len(pg.data))
	if byNum := p.pages[pg.key.ix]; byNum != nil {
		delete(byNum, pg.key.n)
		if len(byNum) == 0 {
			delete(p.pages, pg.key.ix)
		}
	}
}

// drop forgets every page of an index.
func (p *pageCache) drop(ix *bundleIndex) {
	if p == nil || ix == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, el := range p.pages[ix] {
		p.remove(el)
	}
}

// stats adds the page counters to s.
func (p *pageCache) stats(s *IndexCacheStats) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s.PageHits, s.PageFetches, s.PageEvictions = p.hits, p.fetches, p.evicted
	s.Pages, s.PageBytes = p.lru.Len(), p.bytes
}
