// Package mapserver implements the MapServer operations on the loaded catalog, free of any
// transport: each operation takes its gisxml request value and returns its gisxml response value.
// The SOAP front end (api/) only decodes, calls Do and encodes; a REST front end could reuse
// the same operations.
//
// Operations live one family per file:
//
//	info.go          GetDocumentInfo, GetMapCount, GetMapName, GetDefaultMapName, GetServerInfo,
//	                 GetServiceConfigurationInfo, GetSupportedImageReturnTypes, IsFixedScaleMap
//	export.go        ExportMapImage, through the render farm
//	scalebar.go      ExportScaleBar, on the farm too
//	legend.go        GetLegendInfo, GetLegendInfo2
//	drawingdesc.go   GetDefaultLayerDrawingDescriptions
//	drawing.go       request symbols, renderers and graphics (docs/cartography.md)
//	mapgeometry.go   ComputeScale, ComputeDistance, ToMapPoints, FromMapPoints
//	query.go         QueryFeatureCount/IDs/Data (and 2), QueryRowCount/RowIDs, QueryData
//	query_filter.go  QueryFilter and SpatialFilter into a plan; geometry.go converts geometries
//	statistics.go    QueryDataStatistics
//	related.go       QueryRelatedRecords, QueryRelatedRecords2
//	find.go          Find; identify.go: Identify; hyperlinks.go: QueryHyperlinks
//	popups.go        QueryHTMLPopups (and 2); attachments.go: QueryAttachmentInfos/Data (and 2)
//	subtypes.go      GetMapTableSubtypeInfos (and 2); classes.go: GenerateDataClasses
//	raster.go        QueryRasterValue (and 2); sqlsyntax.go: GetSQLSyntaxInfo
//	cache.go         the cache operations, reading the stored cache layout
//
// An operation's errors wrap ErrInvalidArgument when the request is at fault; the front end
// turns that into a client fault (docs/queries.md covers the query operations).
package mapserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Params configure a Server.
type Params struct {
	Catalog  *catalog.Catalog
	Exporter Exporter
	Limits   Limits
	// OutputURL returns the public URL of a stored output object.
	OutputURL func(key string) string
	// NewID returns a fresh, unguessable id for a render.
	NewID func() string
	// Outputs stores what operations hand out by URL (legend swatches, attachments, raster
	// values, JSON results) under outputs/, beside rendered images. Nil: such answers fall back
	// to MIME data or data: URLs.
	Outputs OutputStore
	// Recent, when set, keeps the bytes of images answered by URL, so they can be served
	// before the worker's store write lands.
	Recent RecentOutputs
	Logger *slog.Logger
	// Tiles is the store tile caches live in (cache operations, cache.go); nil: no map is
	// cached.
	Tiles TileStore
	// TileIndex caches bundle indexes for tile reads; nil gives each cache a private one.
	TileIndex *tilecache.IndexCache
	// TileMemoryBytes bounds the memory of recently served tiles (tilememory.go); zero means
	// 64 MiB, negative turns it off.
	TileMemoryBytes int64
	// CacheURL returns the public URL of a cache folder (GetVirtualCacheDirectory), given the
	// service, map and folder names path-escaped.
	CacheURL func(service, mapName, folder string) string
	// Pictures say where pictures named by PictureUri may be fetched from (pictures.go).
	Pictures PictureOptions
}

// Server runs operations against a catalog.
type Server struct {
	p     Params
	ops   map[string]opFunc
	tiles *tileCaches
	// swatches is the renderer of legend swatches (legend.go), made on first use.
	swatches struct {
		once sync.Once
		r    *render.Renderer
		err  error
	}
}

type opFunc func(ctx context.Context, c *Call, req any) (any, error)

// handle adapts a typed operation to the dispatch table.
func handle[Req, Resp any](f func(ctx context.Context, c *Call, req *Req) (*Resp, error)) opFunc {
	return func(ctx context.Context, c *Call, req any) (any, error) {
		r, ok := req.(*Req)
		if !ok {
			return nil, fmt.Errorf("mapserver: operation got %T", req)
		}
		return f(ctx, c, r)
	}
}

// Caches returns the server's in-memory caches (the served-tile memory), for metrics.
func (s *Server) Caches() []memcache.Statser {
	if c := s.tiles.memory.cache(); c != nil {
		return []memcache.Statser{c}
	}
	return nil
}

// New returns a Server.
func New(p Params) *Server {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	s := &Server{p: p, tiles: &tileCaches{roots: map[string]*storedCache{}, memory: newTileMemory(tileMemorySize(p.TileMemoryBytes), tileMemoryMaxAge)}}
	s.ops = map[string]opFunc{
		"GetDocumentInfo":              handle(s.GetDocumentInfo),
		"GetMapCount":                  handle(s.GetMapCount),
		"GetMapName":                   handle(s.GetMapName),
		"GetDefaultMapName":            handle(s.GetDefaultMapName),
		"GetServerInfo":                handle(s.GetServerInfo),
		"GetServiceConfigurationInfo":  handle(s.GetServiceConfigurationInfo),
		"GetSupportedImageReturnTypes": handle(s.GetSupportedImageReturnTypes),
		"IsFixedScaleMap":              handle(s.IsFixedScaleMap),
		"ExportMapImage":               handle(s.ExportMapImage),
		"ExportScaleBar":               handle(s.ExportScaleBar),
		"GetLegendInfo":                handle(s.GetLegendInfo),
		"GetLegendInfo2":               handle(s.GetLegendInfo2),
		"ComputeScale":                 handle(s.ComputeScale),
		"ComputeDistance":              handle(s.ComputeDistance),
		"ToMapPoints":                  handle(s.ToMapPoints),
		"FromMapPoints":                handle(s.FromMapPoints),
		"QueryFeatureCount":            handle(s.QueryFeatureCount),
		"QueryFeatureCount2":           handle(s.QueryFeatureCount2),
		"QueryFeatureIDs":              handle(s.QueryFeatureIDs),
		"QueryFeatureIDs2":             handle(s.QueryFeatureIDs2),
		"QueryFeatureData":             handle(s.QueryFeatureData),
		"QueryFeatureData2":            handle(s.QueryFeatureData2),
		"QueryRowCount":                handle(s.QueryRowCount),
		"QueryRowIDs":                  handle(s.QueryRowIDs),
		"QueryData":                    handle(s.QueryData),
		"QueryDataStatistics":          handle(s.QueryDataStatistics),
		"Find":                         handle(s.Find),
		"Identify":                     handle(s.Identify),
		"GetSQLSyntaxInfo":             handle(s.GetSQLSyntaxInfo),
		"QueryRelatedRecords":          handle(s.QueryRelatedRecords),
		"QueryRelatedRecords2":         handle(s.QueryRelatedRecords2),
		"QueryHyperlinks":              handle(s.QueryHyperlinks),
		"QueryHTMLPopups":              handle(s.QueryHTMLPopups),
		"QueryHTMLPopups2":             handle(s.QueryHTMLPopups2),
		"QueryAttachmentInfos":         handle(s.QueryAttachmentInfos),
		"QueryAttachmentInfos2":        handle(s.QueryAttachmentInfos2),
		"QueryAttachmentData":          handle(s.QueryAttachmentData),
		"QueryAttachmentData2":         handle(s.QueryAttachmentData2),
		"GetMapTableSubtypeInfos":      handle(s.GetMapTableSubtypeInfos),
		"GetMapTableSubtypeInfos2":     handle(s.GetMapTableSubtypeInfos2),
		"GenerateDataClasses":          handle(s.GenerateDataClasses),
		"QueryRasterValue":             handle(s.QueryRasterValue),
		"QueryRasterValue2":            handle(s.QueryRasterValue2),
		"HasSingleFusedMapCache":       handle(s.HasSingleFusedMapCache),
		"HasLayerCache":                handle(s.HasLayerCache),
		"GetTileCacheInfo":             handle(s.GetTileCacheInfo),
		"GetTileImageInfo":             handle(s.GetTileImageInfo),
		"GetCacheControlInfo":          handle(s.GetCacheControlInfo),
		"GetCacheStorageInfo":          handle(s.GetCacheStorageInfo),
		"GetCacheDescriptionInfo":      handle(s.GetCacheDescriptionInfo),
		"GetCacheName":                 handle(s.GetCacheName),
		"GetVirtualCacheDirectory":     handle(s.GetVirtualCacheDirectory),
		"GetMapTile":                   handle(s.GetMapTile),
		"GetLayerTile":                 handle(s.GetLayerTile),
	}
	s.ops["GetDefaultLayerDrawingDescriptions"] = handle(s.GetDefaultLayerDrawingDescriptions)
	return s
}

// Do runs one operation. req is a pointer to the operation's gisxml request struct; the
// result a pointer to its response struct.
func (s *Server) Do(ctx context.Context, c *Call, op string, req any) (any, error) {
	f, ok := s.ops[op]
	if !ok {
		if _, known := gisxml.Load().Operation(op); known {
			return nil, fmt.Errorf("%w: %s", ErrNotImplemented, op)
		}
		return nil, invalid("unknown operation %q", op)
	}
	if err := s.ResolvePictures(ctx, req); err != nil {
		return nil, err
	}
	return f(ctx, c, req)
}

// Service finds a service by name, case-insensitively.
func (s *Server) Service(name string) (*catalog.Service, bool) { return s.p.Catalog.Service(name) }
