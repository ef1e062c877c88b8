package api

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// CachePath is the route prefix of the virtual cache directories (GetVirtualCacheDirectory).
const CachePath = "/arcgis/rest/directories/arcgiscache"

// CacheURL returns the virtual cache directory of a map's cache folder:
// <public URL>/arcgis/rest/directories/arcgiscache/<service>/<map>/<folder>.
func CacheURL(publicURL, service, mapName, folder string) string {
	return publicURL + CachePath + "/" + service + "/" + mapName + "/" + folder
}

// cacheHandler serves tiles of stored caches in the exploded layout, whatever the stored
// layout:
//
//	GET /arcgis/rest/directories/arcgiscache/<service>/<map>/<folder>/L<nn>/R<row hex 8>/C<col hex 8>.<ext>
//
// The cache is opened from its conf.xml (re-read at most every 5 s); compact bundles are read
// through the shared bundle-index cache, one ranged GET per tile when warm.
type cacheHandler struct {
	store tilecache.Store
	index *tilecache.IndexCache

	caches *memcache.Cache[string, openCache] // by service/map/folder
}

// openCacheBytes is what one opened cache counts for in cacheHandler.caches, whose bound
// (openCachesBytes) so allows about a thousand.
const (
	openCacheBytes  = 1 << 10
	openCachesBytes = 1 << 20
)

type openCache struct {
	c    *tilecache.Cache
	info tilecache.CacheInfo
	at   time.Time
}

func (h *cacheHandler) open(ctx context.Context, service, mapName, folder string) (*tilecache.Cache, tilecache.CacheInfo, error) {
	key := service + "/" + mapName + "/" + folder
	oc, ok := h.caches.Get(key)
	if ok && time.Since(oc.at) < 5*time.Second {
		return oc.c, oc.info, nil
	}
	c, info, err := tilecache.Open(ctx, h.store, seed.CacheRoot(service, mapName), folder, h.index)
	if err != nil {
		return nil, info, err
	}
	h.caches.Add(key, openCache{c: c, info: info, at: time.Now()}, openCacheBytes)
	return c, info, nil
}

func (h *cacheHandler) serveTile(c *gin.Context) {
	t, ext, err := tilecache.ParseTilePath(c.Param("tile"))
	if err != nil {
		c.String(http.StatusNotFound, "not a tile path: %v\n", err)
		return
	}
	cache, info, err := h.open(c.Request.Context(), c.Param("service"), c.Param("map"), c.Param("folder"))
	if errors.Is(err, fs.ErrNotExist) {
		c.String(http.StatusNotFound, "no such cache\n")
		return
	}
	if err != nil {
		c.String(http.StatusInternalServerError, "cache: %v\n", err)
		return
	}
	if !info.Scheme.Contains(t) {
		c.String(http.StatusNotFound, "tile %v is not in the tiling scheme\n", t)
		return
	}
	data, err := cache.ReadTile(c.Request.Context(), t)
	if errors.Is(err, fs.ErrNotExist) {
		c.String(http.StatusNotFound, "tile %v is not cached\n", t)
		return
	}
	if err != nil {
		c.String(http.StatusInternalServerError, "tile %v: %v\n", t, err)
		return
	}
	ct := http.DetectContentType(data)
	if (ext == "png" && ct != "image/png") || ((ext == "jpg" || ext == "jpeg") && ct != "image/jpeg") {
		c.String(http.StatusNotFound, "tile %v is stored as %s, not .%s\n", t, ct, ext)
		return
	}
	c.Header("Cache-Control", "public, max-age=3600")
	c.Data(http.StatusOK, ct, data)
}
