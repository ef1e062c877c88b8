package caches

import (
	"time"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// tileMemory keeps recently served tiles in memory, least recently used out first, so that hot
// tiles cost no object-store request at all. An entry is trusted for maxAge, the same window
// in which the bundle-index cache trusts an index without checking the bundle
// (tilecache.DefaultIndexMaxAge), so a re-seeded tile is served stale for at most that long,
// as with the index alone. Its bytes are bounded by a memcache.Cache ("served tiles").
type tileMemory struct {
	maxBytes int
	maxAge   time.Duration
	tiles    *memcache.Cache[tileKey, tileEntry]
}

// tileKey names a tile of the memory: the key of its cache folder in the store (the
// tilecache.Cache's Dir) and the tile. A struct, not the joined string, so that a hit allocates
// nothing; the string ("<dir>/<level>/<row>/<col>", the form refresh.Invalidation.CoversTileKey
// reads) is made only when the memory is invalidated (forget).
type tileKey struct {
	dir  string
	tile tilecache.Tile
}

// String is the key's store form, "<dir>/<level>/<row>/<col>".
func (k tileKey) String() string { return k.dir + "/" + k.tile.String() }

type tileEntry struct {
	data []byte
	at   time.Time
	ttl  time.Duration // 0: the memory's maxAge
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
	return &tileMemory{maxBytes: maxBytes, maxAge: maxAge, tiles: memcache.New[tileKey, tileEntry]("served tiles", int64(maxBytes))}
}

// get returns the tile stored under key if it is fresh.
func (m *tileMemory) get(key tileKey, now time.Time) ([]byte, bool) {
	if m == nil {
		return nil, false
	}
	e, ok := m.tiles.Get(key)
	if !ok {
		return nil, false
	}
	ttl := e.ttl
	if ttl <= 0 {
		ttl = m.maxAge
	}
	if now.Sub(e.at) > ttl {
		m.tiles.Remove(key)
		return nil, false
	}
	return e.data, true
}

// put remembers a tile for ttl (0: the memory's maxAge); tiles larger than an eighth of the
// budget are not kept.
func (m *tileMemory) put(key tileKey, data []byte, now time.Time, ttl time.Duration) {
	if m == nil || len(data) > m.maxBytes/8 {
		return
	}
	m.tiles.Add(key, tileEntry{data: data, at: now, ttl: ttl}, int64(len(data)+len(key.dir)+tileKeyBytes))
}

// tileKeyBytes is what a key counts for beside its folder's name: the tile's three numbers.
const tileKeyBytes = 24

// forget drops the tiles whose keys, in their store form (tileKey.String), covers reports.
func (m *tileMemory) forget(covers func(key string) bool) {
	if m == nil {
		return
	}
	m.tiles.RemoveIf(func(k tileKey) bool { return covers(k.String()) })
}

// cache is the memory's cache, for metrics (nil when there is none).
func (m *tileMemory) cache() memcache.Statser {
	if m == nil {
		return nil
	}
	return m.tiles
}
