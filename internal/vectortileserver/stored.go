package vectortileserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// VectorCacheSuffix is added to a map's cache root ("arcgiscache/<service>/<map>", as seeding
// names it) for the root of its seeded vector cache: "arcgiscache/<service>/<map>_vector".
const VectorCacheSuffix = "_vector"

// StoreCaches reads the seeded vector caches of a store: compact-V2 bundles of Web Mercator
// tiles (level z, row y, column x) in the fused folder of "arcgiscache/<service>/<map>_vector",
// each tile gzip-compressed or plain. A map without such a cache costs one missing bundle a
// bundle of tiles, which the index cache remembers for its time.
type StoreCaches struct {
	store tilecache.Store
	index *tilecache.IndexCache

	mu     sync.Mutex
	caches map[string]*tilecache.Cache
}

// NewStoreCaches returns the reader of the vector caches of store, reading bundle indexes
// through index (nil: a private one).
func NewStoreCaches(store tilecache.Store, index *tilecache.IndexCache) *StoreCaches {
	if index == nil {
		index = tilecache.NewIndexCache(tilecache.IndexCacheOptions{})
	}
	return &StoreCaches{store: store, index: index, caches: map[string]*tilecache.Cache{}}
}

// VectorTile returns tile z/y/x of the seeded vector cache of a map, ok false when the cache
// does not hold it.
func (s *StoreCaches) VectorTile(ctx context.Context, service, mapName string, z, y, x int) ([]byte, bool, error) {
	c, err := s.cache("arcgiscache/" + service + "/" + mapName + VectorCacheSuffix)
	if err != nil {
		return nil, false, err
	}
	data, err := c.ReadTile(ctx, tilecache.Tile{Level: z, Row: y, Col: x})
	switch {
	case errors.Is(err, tilecache.ErrTileNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("vector cache of %s/%s: %w", service, mapName, err)
	}
	return data, true, nil
}

func (s *StoreCaches) cache(root string) (*tilecache.Cache, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.caches[root]; ok {
		return c, nil
	}
	// The tile format names only the file extension of exploded caches; bundles hold any bytes.
	c, err := tilecache.New(s.store, tilecache.Options{Root: root, Format: tilecache.CompactV2, TileFormat: "PNG", Index: s.index})
	if err != nil {
		return nil, err
	}
	if len(s.caches) < 4096 {
		s.caches[root] = c
	}
	return c, nil
}
