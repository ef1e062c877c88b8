package mapserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// The cache operations read what is stored: conf.xml in the map's cache root
// (seed.CacheRoot, "arcgiscache/<service>/<map>") and the layer folders beside it, not the
// service definition. A map without a stored cache is "not cached": HasSingleFusedMapCache and
// HasLayerCache answer false, and every other cache operation answers a client fault saying
// so (ArcGIS's SDK says an uncached service gives null properties, which the 10.7 schema does
// not allow for the required elements; a fault is what clients handle). The definition's
// cache section matters only to GetMapTile/GetLayerTile on a missing tile: with onDemand the
// tile is rendered (and returned, not stored: only seeding writes bundles).

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

// tileCaches remembers opened caches per cache root, and recently served tiles.
type tileCaches struct {
	mu     sync.Mutex
	roots  map[string]*storedCache
	memory *tileMemory
}

// Defaults of the served-tile memory.
const (
	tileMemoryBytes  = 64 << 20
	tileMemoryMaxAge = tilecache.DefaultIndexMaxAge
)

// stored returns the stored cache of a map: its conf.xml (ok false when there is none).
func (s *Server) stored(ctx context.Context, c *Call, m *catalog.Map) (*storedCache, error) {
	if s.p.Tiles == nil {
		return &storedCache{}, nil
	}
	root := seed.CacheRoot(c.Service.Name, m.Name)
	tc := s.tiles
	tc.mu.Lock()
	sc := tc.roots[root]
	tc.mu.Unlock()
	if sc != nil && time.Since(sc.read) < cacheMetaTTL {
		return sc, nil
	}
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

// cacheOf opens one layer folder of a map's stored cache.
func (s *Server) cacheOf(c *Call, m *catalog.Map, sc *storedCache, folder string) (*tilecache.Cache, error) {
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
func (s *Server) cachedMap(ctx context.Context, c *Call, name string) (*catalog.Map, *storedCache, error) {
	m, err := mapOf(c, name)
	if err != nil {
		return nil, nil, err
	}
	sc, err := s.stored(ctx, c, m)
	if err != nil {
		return nil, nil, err
	}
	if !sc.ok {
		return nil, nil, notFound("map %s of service %s has no tile cache", m.Name, c.Service.Name)
	}
	return m, sc, nil
}

// hasFolder reports whether the stored cache holds any tile in a layer folder.
func (s *Server) hasFolder(ctx context.Context, c *Call, m *catalog.Map, folder string) (bool, error) {
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
		return "", notFound("map %s has no layer %d", m.Name, id)
	}
	return l.Name, nil
}

// HasSingleFusedMapCache reports whether the map has a stored fused cache (_alllayers).
func (s *Server) HasSingleFusedMapCache(ctx context.Context, c *Call, req *gisxml.HasSingleFusedMapCache) (*gisxml.HasSingleFusedMapCacheResponse, error) {
	m, err := mapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	sc, err := s.stored(ctx, c, m)
	if err != nil || !sc.ok {
		return &gisxml.HasSingleFusedMapCacheResponse{Result: false}, err
	}
	ok, err := s.hasFolder(ctx, c, m, tilecache.FusedLayer)
	return &gisxml.HasSingleFusedMapCacheResponse{Result: ok}, err
}

// HasLayerCache reports whether a layer has a stored cache of its own (-1: the fused cache).
func (s *Server) HasLayerCache(ctx context.Context, c *Call, req *gisxml.HasLayerCache) (*gisxml.HasLayerCacheResponse, error) {
	m, err := mapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	folder, err := layerFolder(m, req.LayerID)
	if err != nil {
		return nil, err
	}
	sc, err := s.stored(ctx, c, m)
	if err != nil || !sc.ok {
		return &gisxml.HasLayerCacheResponse{Result: false}, err
	}
	ok, err := s.hasFolder(ctx, c, m, folder)
	return &gisxml.HasLayerCacheResponse{Result: ok}, err
}

func tileCacheInfo(info tilecache.CacheInfo) *gisxml.TileCacheInfo {
	sch := info.Scheme
	sr := proj.SR{WKID: sch.SpatialReference.WKID}
	if sch.SpatialReference.LatestWKID != 0 {
		sr.WKID = sch.SpatialReference.LatestWKID
	}
	tci := &gisxml.TileCacheInfo{
		SpatialReference: spatialReference(sr),
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
func (s *Server) GetTileCacheInfo(ctx context.Context, c *Call, req *gisxml.GetTileCacheInfo) (*gisxml.GetTileCacheInfoResponse, error) {
	_, sc, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetTileCacheInfoResponse{Result: tileCacheInfo(sc.info)}, nil
}

// GetTileImageInfo returns the stored cache's image format.
func (s *Server) GetTileImageInfo(ctx context.Context, c *Call, req *gisxml.GetTileImageInfo) (*gisxml.GetTileImageInfoResponse, error) {
	_, sc, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetTileImageInfoResponse{Result: tileImageInfo(sc.info)}, nil
}

// GetCacheControlInfo answers that clients may cache tiles: seeded tiles change only when a
// job rewrites them.
func (s *Server) GetCacheControlInfo(ctx context.Context, c *Call, req *gisxml.GetCacheControlInfo) (*gisxml.GetCacheControlInfoResponse, error) {
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
func (s *Server) GetCacheStorageInfo(ctx context.Context, c *Call, req *gisxml.GetCacheStorageInfo) (*gisxml.GetCacheStorageInfoResponse, error) {
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
func (s *Server) GetCacheDescriptionInfo(ctx context.Context, c *Call, req *gisxml.GetCacheDescriptionInfo) (*gisxml.GetCacheDescriptionInfoResponse, error) {
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

// existingFolder returns the folder of a layer id whose cache is stored, or a fault.
func (s *Server) existingFolder(ctx context.Context, c *Call, m *catalog.Map, layerID int) (string, error) {
	folder, err := layerFolder(m, layerID)
	if err != nil {
		return "", err
	}
	ok, err := s.hasFolder(ctx, c, m, folder)
	if err != nil {
		return "", err
	}
	if !ok {
		if layerID == -1 {
			return "", notFound("map %s of service %s has no fused cache", m.Name, c.Service.Name)
		}
		return "", notFound("layer %d of map %s has no cache of its own", layerID, m.Name)
	}
	return folder, nil
}

// GetCacheName returns "_alllayers" for the fused cache (LayerID -1) or the layer's cache
// folder name.
func (s *Server) GetCacheName(ctx context.Context, c *Call, req *gisxml.GetCacheName) (*gisxml.GetCacheNameResponse, error) {
	m, _, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	folder, err := s.existingFolder(ctx, c, m, req.LayerID)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetCacheNameResponse{Result: folder}, nil
}

// GetVirtualCacheDirectory returns the URL the api serves the cache's tiles under, in the
// exploded layout: <url>/L<nn>/R<row hex>/C<col hex>.<ext> (see api/cache.go), whatever
// the stored layout.
func (s *Server) GetVirtualCacheDirectory(ctx context.Context, c *Call, req *gisxml.GetVirtualCacheDirectory) (*gisxml.GetVirtualCacheDirectoryResponse, error) {
	m, _, err := s.cachedMap(ctx, c, req.MapName)
	if err != nil {
		return nil, err
	}
	folder, err := s.existingFolder(ctx, c, m, req.LayerID)
	if err != nil {
		return nil, err
	}
	if s.p.CacheURL == nil {
		return nil, fmt.Errorf("mapserver: no cache URL configured")
	}
	return &gisxml.GetVirtualCacheDirectoryResponse{Result: s.p.CacheURL(c.Service.Name, m.Name, folder)}, nil
}

// GetMapTile returns a tile of the fused cache.
func (s *Server) GetMapTile(ctx context.Context, c *Call, req *gisxml.GetMapTile) (*gisxml.GetMapTileResponse, error) {
	b, err := s.tile(ctx, c, req.MapName, -1, req.Level, req.Row, req.Column, req.Format)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetMapTileResponse{Result: b}, nil
}

// GetLayerTile returns a tile of a layer's cache (-1: the fused cache).
func (s *Server) GetLayerTile(ctx context.Context, c *Call, req *gisxml.GetLayerTile) (*gisxml.GetLayerTileResponse, error) {
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

func (s *Server) tile(ctx context.Context, c *Call, mapName string, layerID, level, row, col int, format *string) ([]byte, error) {
	m, sc, err := s.cachedMap(ctx, c, mapName)
	if err != nil {
		return nil, err
	}
	t := tilecache.Tile{Level: level, Row: row, Col: col}
	if !sc.info.Scheme.Contains(t) {
		return nil, invalid("tile level %d row %d column %d is not in the cache's tiling scheme (levels %v)", level, row, col, sc.info.Scheme.Levels())
	}
	if format != nil && *format != "" {
		f := strings.ToLower(strings.TrimPrefix(*format, "."))
		if f == "jpeg" {
			f = "jpg"
		}
		exts := TileExtensions(sc.info.Scheme.Format)
		if !contains(exts, f) {
			return nil, invalid("the cache holds %s tiles, not %q", strings.Join(exts, " and "), *format)
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
	memKey := cc.Dir() + "/" + t.String()
	now := time.Now()
	if data, ok := s.tiles.memory.get(memKey, now); ok {
		return data, nil
	}
	data, err := cc.ReadTile(ctx, t)
	if err == nil {
		s.tiles.memory.put(memKey, data, now)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if def := m.Def.Cache; def != nil && def.OnDemand && s.p.Exporter != nil {
			return s.renderTile(ctx, c, m, sc, layerID, t)
		}
		return nil, notFound("tile level %d row %d column %d is not in the cache of map %s (folder %s)", level, row, col, m.Name, folder)
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

// renderTile draws a missing tile on the farm, as one ExportMapImage of the tile's extent,
// and returns it without storing it (bundles have one writer: the seeding job).
func (s *Server) renderTile(ctx context.Context, c *Call, m *catalog.Map, sc *storedCache, layerID int, t tilecache.Tile) ([]byte, error) {
	b, err := sc.info.Scheme.TileBounds(t)
	if err != nil {
		return nil, invalid("%v", err)
	}
	job := task.ExportMap{
		RequestID: s.p.NewID(), Service: c.Service.Name, Map: m.Name,
		Extent: [4]float64{b.Min[0], b.Min[1], b.Max[0], b.Max[1]},
		Width:  sc.info.Scheme.TileCols, Height: sc.info.Scheme.TileRows, DPI: float64(sc.info.Scheme.DPI),
		Format: "png", Key: "outputs/tile-" + s.p.NewID() + ".png",
	}
	if strings.EqualFold(sc.info.Scheme.Format, "JPEG") {
		job.Format, job.Key = "jpg", strings.TrimSuffix(job.Key, ".png")+".jpg"
	}
	for _, l := range m.Layers {
		if layerID >= 0 && l.ID != layerID {
			continue
		}
		job.Layers = append(job.Layers, task.LayerOverride{ID: l.ID, Visible: layerID >= 0 || l.Def.Visible, ShowLabels: true, DefinitionExpression: l.Def.DefinitionExpression})
	}
	res, err := s.p.Exporter.Export(ctx, job)
	if err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, fmt.Errorf("mapserver: render tile %v: %s", t, res.Error)
	}
	if res.Data == nil {
		return nil, fmt.Errorf("mapserver: render tile %v: no bytes returned", t)
	}
	return res.Data, nil
}
