package api

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/onewrite"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/wmts"
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
// through the shared bundle-index cache, one ranged GET per tile when warm. While tokens are on
// the route needs a token of the service, as the tile route does, and its tiles are private
// (policy.go); this handler never sees a token.
type cacheHandler struct {
	store  tilecache.Store
	index  *tilecache.IndexCache
	logger *slog.Logger

	caches *memcache.Cache[string, openCache] // by service/map/folder
	// tiles holds the tiles served lately, by path, with their header values, so that a hot tile
	// costs no store read (no open, Stat and ranged read of its bundle) and no header building.
	tiles *memcache.Cache[string, servedTile]
}

// The served-tile memory of the directory route: tiles are trusted for servedTileMaxAge, the
// window in which the bundle-index cache trusts an index without a Stat of its bundle (so a
// re-seeded tile is served stale no longer than through the index), in servedTilesBytes, none
// larger than an eighth of it.
const (
	servedTilesBytes = 16 << 20
	servedTileMaxAge = tilecache.DefaultIndexMaxAge
)

// servedTile is a tile of the memory with its header values (never edited: each has capacity
// one, so an Add copies it).
type servedTile struct {
	data        []byte
	contentType []string
	length      []string
	etag        []string
	at          time.Time
}

// directoryCacheControl is the Cache-Control of every tile of the route, shared as the values
// of servedTile are.
var directoryCacheControl = []string{"public, max-age=3600"}

func newCacheHandler(store tilecache.Store, index *tilecache.IndexCache, logger *slog.Logger) *cacheHandler {
	return &cacheHandler{store: store, index: index, logger: logger,
		caches: memcache.New[string, openCache]("opened caches", openCachesBytes),
		tiles:  memcache.New[string, servedTile]("directory tiles", servedTilesBytes)}
}

// serveRemembered answers a tile of the memory, and reports whether it did.
func (h *cacheHandler) serveRemembered(c *gin.Context) bool {
	st, ok := h.tiles.Get(c.Request.URL.Path)
	if !ok {
		return false
	}
	if time.Since(st.at) > servedTileMaxAge {
		h.tiles.Remove(c.Request.URL.Path)
		return false
	}
	st.write(c)
	return true
}

// forget drops what the handler keeps of the tiles v names: the tiles it served and, when v
// covers the whole cache root, the opened caches (conf.xml may have changed).
func (h *cacheHandler) forget(v refresh.Invalidation) {
	h.tiles.RemoveIf(func(path string) bool {
		key, ok := strings.CutPrefix(path, directoriesPath)
		return ok && v.CoversTilePath(key)
	})
	if v.Whole() {
		prefix := strings.TrimPrefix(v.Root, "arcgiscache/") + "/"
		h.caches.RemoveIf(func(key string) bool { return strings.HasPrefix(key, prefix) })
	}
}

// directoriesPath is the part of a tile's path before its key in the store: the directory
// route's paths are "/arcgis/rest/directories/" + the key of an exploded tile.
const directoriesPath = "/arcgis/rest/directories/"

// write answers the tile: its bytes with their type and length and the strong ETag of its bytes
// (the one the REST and WMTS tile routes send), or 304 Not Modified when the client's
// If-None-Match names it; public for an hour (the policy makes it private when tokens are on).
func (st servedTile) write(c *gin.Context) {
	hd := c.Writer.Header()
	hd["Cache-Control"] = directoryCacheControl
	hd["Etag"] = st.etag
	if wmts.ETagMatches(c.Request.Header["If-None-Match"], st.etag[0]) {
		c.Writer.WriteHeader(http.StatusNotModified)
		return
	}
	hd["Content-Type"] = st.contentType
	hd["Content-Length"] = st.length
	c.Writer.WriteHeader(http.StatusOK)
	_ = onewrite.Write(c.Writer, c.Request, st.data) // header and tile in one write system call
}

// remember keeps a tile served at path, and returns it with its header values.
func (h *cacheHandler) remember(path string, data []byte, ct string) servedTile {
	st := servedTile{data: data, contentType: []string{ct}, length: []string{strconv.Itoa(len(data))}, etag: []string{wmts.TileETag(data)}, at: time.Now()}
	if len(data) <= servedTilesBytes/8 {
		h.tiles.Add(path, st, int64(len(data)+len(path)+64))
	}
	return st
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

// validCacheSegment reports whether a decoded path segment can name a service, a map or a
// cache folder: 1 to 255 bytes, not "." or "..", without '/', '\\' or control characters.
// Anything else never reaches the store.
func validCacheSegment(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 255 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}

func (h *cacheHandler) serveTile(c *gin.Context) {
	if h.serveRemembered(c) {
		return
	}
	service, mapName, folder := c.Param("service"), c.Param("map"), c.Param("folder")
	if !validCacheSegment(service) || !validCacheSegment(mapName) || !validCacheSegment(folder) {
		c.String(http.StatusBadRequest, "malformed cache path: service, map and folder must be names, not . or ..\n")
		return
	}
	t, ext, err := tilecache.ParseTilePath(c.Param("tile"))
	if err != nil {
		c.String(http.StatusNotFound, "not a tile path: want Lnn/Rxxxxxxxx/Cxxxxxxxx.ext after the cache folder\n")
		return
	}
	cache, info, err := h.open(c.Request.Context(), service, mapName, folder)
	if errors.Is(err, fs.ErrNotExist) {
		c.String(http.StatusNotFound, "no such cache\n")
		return
	}
	if err != nil {
		h.failed(c, "open cache", err)
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
		h.failed(c, "read tile", err)
		return
	}
	ct := http.DetectContentType(data)
	if (ext == "png" && ct != "image/png") || ((ext == "jpg" || ext == "jpeg") && ct != "image/jpeg") {
		c.String(http.StatusNotFound, "tile %v is stored as %s, not .%s\n", t, ct, ext)
		return
	}
	h.remember(c.Request.URL.Path, data, ct).write(c)
}

// failed answers a request the store could not serve: the error, which names store keys,
// goes to the log only (at INFO when the client went away).
func (h *cacheHandler) failed(c *gin.Context, what string, err error) {
	id := requestIDOf(c)
	if clientGone(c, err) {
		h.logger.Info("client went away before the tile was read", "request_id", id, "path", c.Request.URL.Path)
		c.AbortWithStatus(statusClientClosed)
		return
	}
	h.logger.Error("cache: "+what, "request_id", id, "err", err)
	c.String(http.StatusInternalServerError, "the cache could not be read; the cause is in the server's log (request id %s)\n", id)
}
