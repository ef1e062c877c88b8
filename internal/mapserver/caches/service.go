// Package caches implements the MapServer cache operations, free of any transport:
// HasSingleFusedMapCache, HasLayerCache, GetTileCacheInfo, GetTileImageInfo,
// GetCacheControlInfo, GetCacheStorageInfo, GetCacheDescriptionInfo, GetCacheName,
// GetVirtualCacheDirectory, GetMapTile and GetLayerTile (cache.go), with the memory of recently
// served tiles (tilememory.go). cache.go is the one place a stored cache is opened (conf.xml
// read, layer folders opened as tilecache.Cache, on-demand metatiles drawn on the farm).
//
// Each operation is a method of Service taking the call (operation.Call) and its gisxml request
// and returning its gisxml response; the SOAP front end reaches them through mapserver.Server.Do,
// REST and WMTS handlers call them directly (e.g. GetMapTile).
package caches

import (
	"log/slog"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Params configure a Service.
type Params struct {
	// Tiles is the store tile caches live in; nil: no map is cached.
	Tiles TileStore
	// TileIndex caches bundle indexes for tile reads; nil gives each cache a private one.
	TileIndex *tilecache.IndexCache
	// TileMemoryBytes bounds the memory of recently served tiles (tilememory.go); zero means
	// 64 MiB, negative turns it off.
	TileMemoryBytes int64
	// CacheURL returns the public URL of a cache folder (GetVirtualCacheDirectory), given the
	// service, map and folder names path-escaped.
	CacheURL func(service, mapName, folder string) string
	// Metatiles draws missing tiles of caches with onDemand; nil: a missing tile is a fault.
	Metatiles MetatileRenderer
	// NewID returns a fresh, unguessable id for a render.
	NewID  func() string
	Logger *slog.Logger
}

// Service runs the cache operations.
type Service struct {
	p     Params
	tiles *tileCaches
}

// New returns a Service.
func New(p Params) *Service {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	return &Service{p: p, tiles: &tileCaches{roots: map[string]*storedCache{},
		memory: newTileMemory(tileMemorySize(p.TileMemoryBytes), tileMemoryMaxAge)}}
}

// Caches returns the service's in-memory caches (the served-tile memory), for metrics.
func (s *Service) Caches() []memcache.Statser {
	if c := s.tiles.memory.cache(); c != nil {
		return []memcache.Statser{c}
	}
	return nil
}
