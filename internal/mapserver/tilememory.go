package mapserver

import (
	"container/list"
	"sync"
	"time"
)

// tileMemory keeps recently served tiles in memory, least recently used out first, so that hot
// tiles cost no object-store request at all. An entry is trusted for maxAge, the same window
// in which the bundle-index cache trusts an index without checking the bundle
// (tilecache.DefaultIndexMaxAge), so a re-seeded tile is served stale for at most that long,
// as with the index alone.
type tileMemory struct {
	mu       sync.Mutex
	maxBytes int
	maxAge   time.Duration
	bytes    int
	order    *list.List // front: most recently used; values are *tileEntry
	entries  map[string]*list.Element
}

type tileEntry struct {
	key  string
	data []byte
	at   time.Time
}

// tileMemorySize is the budget of a configured size (Params.TileMemoryBytes): zero is the
// default, negative is none.
func tileMemorySize(configured int64) int {
	switch {
	case configured == 0:
		return tileMemoryBytes
	case configured < 0:
		return 0
	}
	return int(min(configured, 1<<40))
}

// newTileMemory returns a memory of maxBytes, or nil (which holds nothing) when maxBytes is not
// positive.
func newTileMemory(maxBytes int, maxAge time.Duration) *tileMemory {
	if maxBytes <= 0 {
		return nil
	}
	return &tileMemory{maxBytes: maxBytes, maxAge: maxAge, order: list.New(), entries: map[string]*list.Element{}}
}

// get returns the tile stored under key if it is fresh.
func (m *tileMemory) get(key string, now time.Time) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*tileEntry)
	if now.Sub(e.at) > m.maxAge {
		m.remove(el)
		return nil, false
	}
	m.order.MoveToFront(el)
	return e.data, true
}

// put remembers a tile; tiles larger than an eighth of the budget are not kept.
func (m *tileMemory) put(key string, data []byte, now time.Time) {
	if m == nil || len(data) > m.maxBytes/8 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.entries[key]; ok {
		m.remove(el)
	}
	m.entries[key] = m.order.PushFront(&tileEntry{key: key, data: data, at: now})
	m.bytes += len(data) + len(key)
	for m.bytes > m.maxBytes {
		m.remove(m.order.Back())
	}
}

func (m *tileMemory) remove(el *list.Element) {
	e := m.order.Remove(el).(*tileEntry)
	delete(m.entries, e.key)
	m.bytes -= len(e.data) + len(e.key)
}
