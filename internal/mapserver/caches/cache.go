package caches

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"golang.org/x/sync/singleflight"
)

// The cache operations read what is stored: conf.xml in the map's cache root
// (seed.CacheRoot, "arcgiscache/<service>/<map>") and the layer folders beside it, not the
// service definition. A map without a stored cache is "not cached": HasSingleFusedMapCache and
// HasLayerCache answer false, and every other cache operation answers a client fault saying
// so (ArcGIS's SDK says an uncached service gives null properties, which the 10.7 schema does
// not allow for the required elements; a fault is what clients handle). The definition's
// cache section matters only to GetMapTile/GetLayerTile on a missing tile: with onDemand the
// tile's metatile is drawn on the farm exactly as seeding draws it (same metatile size, buffer,
// scheme, format), concurrent requests for tiles of one metatile share one render, and the
// metatile's tiles are kept in the served-tile memory, not stored: a bundle's only writer is
// its seeding merge, and a write from here could lose a concurrent seed's tiles.

// TileStore is the object storage tile caches live in.
type TileStore = tilecache.Store

// storedCache is a map's stored cache metadata, read at most every cacheMetaTTL.
type storedCache struct {
	info   tilecache.CacheInfo
	ok     bool // conf.xml exists
	read   time.Time
	caches map[string]*tilecache.Cache // by layer folder
}

// cacheMetaTTL is how long conf.xml is trusted before it is read again.
const cacheMetaTTL = 5 * time.Second

// tileCaches remembers opened caches per cache root, recently served tiles, and the
// on-demand metatile renders under way.
type tileCaches struct {
	mu      sync.Mutex
	roots   map[string]*storedCache
	memory  *tileMemory
	flights singleflight.Group // on-demand metatile renders, one per metatile
	waiting atomic.Int64       // callers attached to one of them
}

// MetatileRenderer draws the tiles of one cache metatile on the farm (on-demand tiles). The
// farm client implements it next to Exporter; without it a missing tile is a fault even when
// the cache has onDemand.
type MetatileRenderer interface {
	RenderMetatile(ctx context.Context, job task.CacheMetatile) (task.Result, error)
}

// shareRender runs render for key, or, when a render of key is under way, waits for its result
// (or for ctx). shared reports whether more than one caller took the result.
func (tc *tileCaches) shareRender(ctx context.Context, key string, render func() (map[tilecache.Tile][]byte, error)) (tiles map[tilecache.Tile][]byte, shared bool, err error) {
	ch := tc.flights.DoChan(key, func() (any, error) { return render() })
	tc.waiting.Add(1)
	defer tc.waiting.Add(-1)
	select {
	case r := <-ch:
		tiles, _ = r.Val.(map[tilecache.Tile][]byte)
		return tiles, r.Shared, r.Err
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
}

// Defaults of the served-tile memory.
const (
	tileMemoryBytes  = 64 << 20
	tileMemoryMaxAge = tilecache.DefaultIndexMaxAge
)

// stored returns the stored cache of a map: its conf.xml (ok false when there is none).
func (s *Service) stored(ctx context.Context, c *operation.Call, m *catalog.Map, now time.Time) (*storedCache, error) {
	if s.p.Tiles == nil {
		return &storedCache{}, nil
	}
	// The root's key is built on the stack: a tile read that finds its cache costs no allocation.
	var buf [128]byte
	key := seed.AppendCacheRoot(buf[:0], c.Service.Name, m.Name)
	tc := s.tiles
	tc.mu.Lock()
	sc := tc.roots[string(key)]
	tc.mu.Unlock()
	if sc != nil && now.Sub(sc.read) < cacheMetaTTL {
		return sc, nil
	}
	root := string(key)
	info, _, err := tilecache.ReadMetadata(ctx, s.p.Tiles, root)
	sc = &storedCache{info: info, ok: err == nil, read: time.Now(), caches: map[string]*tilecache.Cache{}}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mapserver: read cache metadata of %s: %w", root, err)
	}
	tc.mu.Lock()
	if len(tc.roots) > 1024 {
		clear(tc.roots)
	}
	tc.roots[root] = sc
	tc.mu.Unlock()
	return sc, nil
}

// ForgetTiles drops what the service keeps of the tiles v names: served and on-demand tiles
// in memory, and, when v covers the whole root, the root's metadata (read again at the next
// request). The apis call it for every message of the invalidation channel.
func (s *Service) ForgetTiles(v refresh.Invalidation) {
	s.tiles.memory.forget(v.CoversTileKey)
	if v.Whole() {
		s.tiles.mu.Lock()
		delete(s.tiles.roots, v.Root)
		s.tiles.mu.Unlock()
	}
}

// cacheOf opens one layer folder of a map's stored cache.
func (s *Service) cacheOf(c *operation.Call, m *catalog.Map, sc *storedCache, folder string) (*tilecache.Cache, error) {
	s.tiles.mu.Lock()
	defer s.tiles.mu.Unlock()
	if cc, ok := sc.caches[folder]; ok {
		return cc, nil
	}
	cc, err := tilecache.New(s.p.Tiles, tilecache.Options{Root: seed.CacheRoot(c.Service.Name, m.Name), Layer: folder,
		Format: sc.info.Storage, TileFormat: sc.info.Scheme.Format, Index: s.p.TileIndex})
	if err != nil {
		return nil, err
	}
	sc.caches[folder] = cc
	return cc, nil
}

// cachedMap resolves the map and its stored cache, or faults when it has none.
func (s *Service) cachedMap(ctx context.Context, c *operation.Call, name string) (*catalog.Map, *storedCache, error) {
	return s.cachedMapAt(ctx, c, name, time.Now())
}

// cachedMapAt is cachedMap for a caller that has read the clock already (now).
func (s *Service) cachedMapAt(ctx context.Context, c *operation.Call, name string, now time.Time) (*catalog.Map, *storedCache, error) {
	m, err := operation.MapOf(c, name)
	if err != nil {
		return nil, nil, err
	}
	sc, err := s.stored(ctx, c, m, now)
	if err != nil {
		return nil, nil, err
	}
	if !sc.ok {
		return nil, nil, operation.NotFound("map %s of service %s has no tile cache", m.Name, c.Service.Name)
	}
	return m, sc, nil
}

// hasFolder reports whether the stored cache holds any tile in a layer folder.
func (s *Service) hasFolder(ctx context.Context, c *operation.Call, m *catalog.Map, folder string) (bool, error) {
	ok, err := tilecache.HasLayer(ctx, s.p.Tiles, seed.CacheRoot(c.Service.Name, m.Name), folder)
	if err != nil {
		return false, fmt.Errorf("mapserver: list cache folder %s: %w", folder, err)
	}
	return ok, nil
}

// layerFolder returns the cache folder of a layer id: FusedLayer for -1, else the layer name.
func layerFolder(m *catalog.Map, id int) (string, error) {
	if id == -1 {
		return tilecache.FusedLayer, nil
	}
	l, ok := m.Layer(id)
	if !ok {
		return "", operation.NotFound("map %s has no layer %d", m.Name, id)
	}
	return l.Name, nil
}

// HasSingleFusedMapCache reports whether the map has a stored fused cache (_alllayers).
func (s *Service) HasSingleFusedMapCache(ctx context.Context, c *operation.Call, req *gisxml.HasSingleFusedMapCache) (*gisxml.HasSingleFusedMapCacheResponse, error) {
	ok, err := s.hasLayerCache(ctx, c, req.MapName, -1)
	if err != nil {
		return nil, err
	}
	return &gisxml.HasSingleFusedMapCacheResponse{Result: ok}, nil
}

// HasLayerCache reports whether a layer has a stored cache of its own (-1: the fused cache).
func (s *Service) HasLayerCache(ctx context.Context, c *operation.Call, req *gisxml.HasLayerCache) (*gisxml.HasLayerCacheResponse, error) {
	ok, err := s.hasLayerCache(ctx, c, req.MapName, req.LayerID)
	if err != nil {
		return nil, err
	}
	return &gisxml.HasLayerCacheResponse{Result: ok}, nil
}

// hasLayerCache reports whether layer id (-1: the fused cache) of a map has a stored cache of
// its own; a map without a stored cache has none.
func (s *Service) hasLayerCache(ctx context.Context, c *operation.Call, mapName string, id int) (bool, error) {
	m, err := operation.MapOf(c, mapName)
	if err != nil {
		return false, err
	}
	folder, err := layerFolder(m, id)
	if err != nil {
		return false, err
	}
	sc, err := s.stored(ctx, c, m, time.Now())
	if err != nil || !sc.ok {
		return false, err
	}
	return s.hasFolder(ctx, c, m, folder)
}

func tileCacheInfo(info tilecache.CacheInfo) *gisxml.TileCacheInfo {
	sch := info.Scheme
	sr := proj.SR{WKID: sch.SpatialReference.WKID, EsriWKT: sch.SpatialReference.WKT}
	if sch.SpatialReference.LatestWKID != 0 {
		sr.WKID = sch.SpatialReference.LatestWKID
	}
	tci := &gisxml.TileCacheInfo{
		SpatialReference: operation.SpatialReference(sr),
		TileOrigin:       &gisxml.PointN{X: sch.Origin[0], Y: sch.Origin[1]},
		TileCols:         sch.TileCols, TileRows: sch.TileRows, DPI: sch.DPI,
		LODInfos: gisxml.ArrayOfLODInfo{},
	}
	for _, l := range sch.LODs {
		tci.LODInfos = append(tci.LODInfos, &gisxml.LODInfo{LevelID: l.LevelID, Scale: l.Scale, Resolution: l.Resolution})
	}
	return tci
}

func tileImageInfo(info tilecache.CacheInfo) *gisxml.TileImageInfo {
	sch := info.Scheme
	return &gisxml.TileImageInfo{CacheTileFormat: sch.Format, CompressionQuality: sch.CompressionQuality, Antialiasing: fmt.Sprint(sch.Antialiasing)}
}

// GetTileCacheInfo returns the stored cache's tiling scheme.
func (s *Service) GetTileCacheInfo(ctx context.Context, c *operation.Call, req *gisxml.GetTileCacheInfo) (*gisxml.GetTileCacheInfoResponse, error) {
	_, sc, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetTileCacheInfoResponse{Result: tileCacheInfo(sc.info)}, nil
}

// GetTileImageInfo returns the stored cache's image format.
func (s *Service) GetTileImageInfo(ctx context.Context, c *operation.Call, req *gisxml.GetTileImageInfo) (*gisxml.GetTileImageInfoResponse, error) {
	_, sc, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetTileImageInfoResponse{Result: tileImageInfo(sc.info)}, nil
}

// GetCacheControlInfo answers that clients may cache tiles: seeded tiles change only when a
// job rewrites them.
func (s *Service) GetCacheControlInfo(ctx context.Context, c *operation.Call, req *gisxml.GetCacheControlInfo) (*gisxml.GetCacheControlInfoResponse, error) {
	if _, _, err := s.cachedMap(ctx, c, req.MapName); err != nil {
		return nil, err
	}
	return &gisxml.GetCacheControlInfoResponse{Result: &gisxml.CacheControlInfo{ClientCachingAllowed: true}}, nil
}

// storageFormat names a layout in the service's enumeration.
func storageFormat(f tilecache.StorageFormat) gisxml.MapCacheStorageFormat {
	switch f {
	case tilecache.Exploded:
		return gisxml.MapCacheStorageModeExploded
	case tilecache.CompactV1:
		return gisxml.MapCacheStorageModeCompact
	}
	return gisxml.MapCacheStorageModeCompactV2
}

// GetCacheStorageInfo returns the stored cache's layout.
func (s *Service) GetCacheStorageInfo(ctx context.Context, c *operation.Call, req *gisxml.GetCacheStorageInfo) (*gisxml.GetCacheStorageInfoResponse, error) {
	_, sc, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	ps := sc.info.PacketSize
	if ps == 0 {
		ps = sc.info.Storage.PacketSize()
	}
	return &gisxml.GetCacheStorageInfoResponse{Result: &gisxml.CacheStorageInfo{StorageFormat: storageFormat(sc.info.Storage), PacketSize: ps}}, nil
}

// GetCacheDescriptionInfo returns scheme, image info, cache control, which layers have caches
// and whether the cache is fused.
func (s *Service) GetCacheDescriptionInfo(ctx context.Context, c *operation.Call, req *gisxml.GetCacheDescriptionInfo) (*gisxml.GetCacheDescriptionInfoResponse, error) {
	m, sc, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	fused, err := s.hasFolder(ctx, c, m, tilecache.FusedLayer)
	if err != nil {
		return nil, err
	}
	d := &gisxml.CacheDescriptionInfo{
		TileCacheInfo: tileCacheInfo(sc.info), TileImageInfo: tileImageInfo(sc.info),
		CacheControlInfo: &gisxml.CacheControlInfo{ClientCachingAllowed: true},
		LayerCacheInfos:  gisxml.ArrayOfLayerCacheInfo{},
		ServiceType:      gisxml.SingleFusedMapCache,
	}
	if !fused {
		d.ServiceType = gisxml.IndividualLayerCaches
	}
	for _, l := range m.Layers {
		has := fused
		if !fused {
			if has, err = s.hasFolder(ctx, c, m, l.Name); err != nil {
				return nil, err
			}
		}
		d.LayerCacheInfos = append(d.LayerCacheInfos, &gisxml.LayerCacheInfo{LayerID: l.ID, HasCache: has})
	}
	return &gisxml.GetCacheDescriptionInfoResponse{Result: d}, nil
}

// cachedFolder resolves a map with a stored cache and the folder of a layer id (-1: the fused
// cache) whose cache is stored, or faults.
func (s *Service) cachedFolder(ctx context.Context, c *operation.Call, mapName string, layerID int) (*catalog.Map, string, error) {
	m, _, err := s.cachedMap(ctx, c, mapName)
	if err != nil {
		return nil, "", err
	}
	folder, err := layerFolder(m, layerID)
	if err != nil {
		return nil, "", err
	}
	ok, err := s.hasFolder(ctx, c, m, folder)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		if layerID == -1 {
			return nil, "", operation.NotFound("map %s of service %s has no fused cache", m.Name, c.Service.Name)
		}
		return nil, "", operation.NotFound("layer %d of map %s has no cache of its own", layerID, m.Name)
	}
	return m, folder, nil
}

// GetCacheName returns "_alllayers" for the fused cache (LayerID -1) or the layer's cache
// folder name.
func (s *Service) GetCacheName(ctx context.Context, c *operation.Call, req *gisxml.GetCacheName) (*gisxml.GetCacheNameResponse, error) {
	_, folder, err := s.cachedFolder(ctx, c, req.MapName, req.LayerID)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetCacheNameResponse{Result: folder}, nil
}

// GetVirtualCacheDirectory returns the URL the api serves the cache's tiles under, in the
// exploded layout: <url>/L<nn>/R<row hex>/C<col hex>.<ext> (see api/cache.go), whatever
// the stored layout.
func (s *Service) GetVirtualCacheDirectory(ctx context.Context, c *operation.Call, req *gisxml.GetVirtualCacheDirectory) (*gisxml.GetVirtualCacheDirectoryResponse, error) {
	m, folder, err := s.cachedFolder(ctx, c, req.MapName, req.LayerID)
	if err != nil {
		return nil, err
	}
	if s.p.CacheURL == nil {
		return nil, fmt.Errorf("mapserver: no cache URL configured")
	}
	// Layer folders are layer names, which may hold spaces ("Country points").
	return &gisxml.GetVirtualCacheDirectoryResponse{Result: s.p.CacheURL(url.PathEscape(c.Service.Name), url.PathEscape(m.Name), url.PathEscape(folder))}, nil
}

// GetMapTile returns a tile of the fused cache.
func (s *Service) GetMapTile(ctx context.Context, c *operation.Call, req *gisxml.GetMapTile) (*gisxml.GetMapTileResponse, error) {
	b, err := s.tile(ctx, c, req.MapName, -1, req.Level, req.Row, req.Column, req.Format)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetMapTileResponse{Result: b}, nil
}

// GetLayerTile returns a tile of a layer's cache (-1: the fused cache).
func (s *Service) GetLayerTile(ctx context.Context, c *operation.Call, req *gisxml.GetLayerTile) (*gisxml.GetLayerTileResponse, error) {
	b, err := s.tile(ctx, c, req.MapName, req.LayerID, req.Level, req.Row, req.Column, req.Format)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetLayerTileResponse{Result: b}, nil
}

// TileExtensions returns the file extensions a cache of CacheTileFormat format holds.
func TileExtensions(format string) []string {
	switch strings.ToUpper(format) {
	case "JPEG", "JPG":
		return []string{"jpg"}
	case "MIXED":
		return []string{"png", "jpg"}
	}
	return []string{"png"}
}

func (s *Service) tile(ctx context.Context, c *operation.Call, mapName string, layerID, level, row, col int, format *string) ([]byte, error) {
	now := time.Now()
	m, sc, err := s.cachedMapAt(ctx, c, mapName, now)
	if err != nil {
		return nil, err
	}
	t := tilecache.Tile{Level: level, Row: row, Col: col}
	if !sc.info.Scheme.Contains(t) {
		return nil, operation.Invalid("tile level %d row %d column %d is not in the cache's tiling scheme (levels %v)", level, row, col, sc.info.Scheme.Levels())
	}
	if format != nil && *format != "" {
		f := strings.ToLower(strings.TrimPrefix(*format, "."))
		if f == "jpeg" {
			f = "jpg"
		}
		exts := TileExtensions(sc.info.Scheme.Format)
		if !contains(exts, f) {
			return nil, operation.Invalid("the cache holds %s tiles, not %q", strings.Join(exts, " and "), *format)
		}
	}
	folder, err := layerFolder(m, layerID)
	if err != nil {
		return nil, err
	}
	cc, err := s.cacheOf(c, m, sc, folder)
	if err != nil {
		return nil, err
	}
	memKey := tileKey{dir: cc.Dir(), tile: t}
	if data, ok := s.tiles.memory.get(memKey, now); ok {
		return data, nil
	}
	data, err := cc.ReadTile(ctx, t)
	if err == nil {
		s.tiles.memory.put(memKey, data, now, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if r := s.p.Metatiles; r != nil && m.Def.Cache != nil && m.Def.Cache.OnDemand {
			return s.onDemandTile(ctx, c, r, m, sc, cc, layerID, t)
		}
		return nil, operation.NotFound("tile level %d row %d column %d is not in the cache of map %s (folder %s)", level, row, col, m.Name, folder)
	}
	if err != nil {
		return nil, fmt.Errorf("mapserver: read tile %v: %w", t, err)
	}
	return data, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// onDemandTile draws a missing tile on the farm: the whole metatile holding it, with the
// buffer, as seeding draws it (seed.DrawingOf), so the tile has the bytes a seeding job would
// store. Concurrent requests for tiles of one metatile share one render; the metatile's tiles
// go into the served-tile memory, so its neighbours are answered from there. Nothing is
// stored (see the top of this file).
func (s *Service) onDemandTile(ctx context.Context, c *operation.Call, r MetatileRenderer, m *catalog.Map, sc *storedCache, cc *tilecache.Cache, layerID int, t tilecache.Tile) ([]byte, error) {
	if perLayer := m.Def.Cache.LayerCaches; perLayer == (layerID == -1) {
		what := "one fused cache"
		if perLayer {
			what = "one cache per layer"
		}
		return nil, operation.NotFound("tile level %d row %d column %d is not in the cache of map %s, and it is not rendered on demand: the map's cache section defines %s",
			t.Level, t.Row, t.Col, m.Name, what)
	}
	d, err := seed.DrawingOf(m)
	if err != nil {
		return nil, fmt.Errorf("mapserver: on-demand tile of map %s: %w", m.Name, err)
	}
	if why := sameTiles(sc.info.Scheme, d.Scheme, t.Level); why != "" {
		return nil, operation.NotFound("tile level %d row %d column %d is not in the cache of map %s, and it is not rendered on demand: %s",
			t.Level, t.Row, t.Col, m.Name, why)
	}
	mt, err := d.Scheme.Metatile(t, d.MetatileSize)
	if err != nil {
		return nil, operation.Invalid("%v", err)
	}
	tiles, shared, err := s.tiles.shareRender(ctx, cc.Dir()+"/"+mt.String(), func() (map[tilecache.Tile][]byte, error) {
		// One client giving up must not fail the others waiting for the same metatile; the
		// farm client bounds the wait by its render timeout.
		tiles, err := s.renderMetatile(context.WithoutCancel(ctx), c, r, m, d, layerID, mt)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		for tt, data := range tiles {
			s.tiles.memory.put(tileKey{dir: cc.Dir(), tile: tt}, data, now, m.Def.Cache.OnDemandTTL)
		}
		return tiles, nil
	})
	if err != nil {
		return nil, err
	}
	data, ok := tiles[t]
	if !ok {
		return nil, fmt.Errorf("mapserver: on-demand metatile %v came back without tile %v", mt, t)
	}
	s.p.Logger.Debug("on-demand tile", "request_id", c.RequestID, "tile", t.String(), "metatile", mt.String(), "shared", shared)
	return data, nil
}

// sameTiles says why tiles drawn with the definition's scheme d would not fit the stored
// cache's scheme st at level (a cache imported from elsewhere, or a definition changed since
// seeding), or "" when they fit.
func sameTiles(st, d tilecache.Scheme, level int) string {
	ls, ok1 := st.LOD(level)
	ld, ok2 := d.LOD(level)
	switch {
	case !ok1 || !ok2:
		return fmt.Sprintf("level %d is not in both the stored tiling scheme and the service definition's", level)
	case math.Abs(ls.Resolution-ld.Resolution) > 1e-9*ld.Resolution,
		math.Abs(st.Origin[0]-d.Origin[0]) > 1e-6*ld.Resolution, math.Abs(st.Origin[1]-d.Origin[1]) > 1e-6*ld.Resolution,
		st.TileCols != d.TileCols, st.TileRows != d.TileRows:
		return "the stored cache's tiling scheme differs from the service definition's"
	case !strings.EqualFold(st.Format, d.Format):
		return fmt.Sprintf("the stored cache holds %s tiles, the service definition draws %s", st.Format, d.Format)
	}
	return ""
}

// renderMetatile has the farm draw metatile mt and returns its tiles.
func (s *Service) renderMetatile(ctx context.Context, c *operation.Call, r MetatileRenderer, m *catalog.Map, d seed.Drawing, layerID int, mt tilecache.Metatile) (map[tilecache.Tile][]byte, error) {
	id := s.p.NewID()
	job := task.CacheMetatile{
		ID: id, TraceID: c.RequestID, Service: c.Service.Name, Map: m.Name, LayerID: layerID,
		Scheme: d.Scheme, Level: mt.TopLeft.Level, Metatile: [4]int{mt.TopLeft.Row, mt.TopLeft.Col, mt.Rows, mt.Cols},
		Buffer: d.Buffer, Quality: d.Quality, Key: "outputs/metatile-" + id + ".part",
	}
	res, err := r.RenderMetatile(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("mapserver: render metatile %v: %w", mt, err)
	}
	c.Render = &operation.RenderInfo{Worker: res.Worker, Render: time.Duration(res.RenderNanos)}
	if res.Error != "" {
		return nil, fmt.Errorf("mapserver: render metatile %v: worker: %s", mt, res.Error)
	}
	data := res.Data
	if data == nil && res.Key != "" {
		// Too large for the result: the worker left it in the tile store.
		if data, err = s.p.Tiles.Get(ctx, res.Key); err != nil {
			return nil, fmt.Errorf("mapserver: read metatile %v: %w", mt, err)
		}
		if err := s.p.Tiles.Delete(ctx, res.Key); err != nil {
			s.p.Logger.Warn("delete on-demand metatile", "key", res.Key, "err", err)
		}
	}
	changes, err := seed.DecodeStaging(mt.TopLeft.Level, data)
	if err != nil {
		return nil, fmt.Errorf("mapserver: metatile %v: %w", mt, err)
	}
	tiles := make(map[tilecache.Tile][]byte, len(changes))
	for _, ch := range changes {
		if mt.Contains(ch.Tile) && ch.Data != nil {
			tiles[ch.Tile] = ch.Data
		}
	}
	return tiles, nil
}

// Scheme returns the tiling scheme of a map's stored cache, with the extent its levels cover,
// or an error wrapping ErrNotFound when the map has none: what a front end publishing the
// cache's own tile matrix set (OGC API Tiles) reads whole.
func (s *Service) Scheme(ctx context.Context, c *operation.Call, mapName string) (tilecache.Scheme, error) {
	_, sc, err := s.cachedMap(ctx, c, mapName)
	if err != nil {
		return tilecache.Scheme{}, err
	}
	return sc.info.Scheme, nil
}
