// Package mapserver composes the MapServer operations: New builds the operation families from
// one Params. The SOAP front end (api/) runs them by name: Do looks an operation up in the
// dispatch table and runs it on its gisxml request value, returning its gisxml response value;
// the table is SOAP's alone. The REST front end, the tiles and WMTS (internal/wmts), and every
// front end to come, call the typed operations themselves: the methods of the
// families (Families), and the drawing operations through Drawing, which adds their one extra
// step, fetching the pictures the request names (cartography/pictures.go), as the table
// declares it for SOAP. The request limits and the heavy lane are the front ends' (api's
// Admission), applied before an operation is called. The front ends handed the request id in
// the context (WMS, WMTS) share WithRequestID and RequestID (requestid.go).
//
// The operations live, free of any transport, in one package per family:
//
//	operation     what every family needs: Call, RequestError (ErrInvalidArgument, ErrNotFound),
//	              the map of a call, transformers between systems, Limits, the output interfaces,
//	              geometry and description conversions
//	information   GetServerInfo, GetDocumentInfo, GetMapName…, subtypes, SQL syntax
//	queries       QueryFeature*, QueryRow*, QueryData*, statistics, related records, Find,
//	              Identify, hyperlinks, popups, attachments, raster values, GenerateDataClasses
//	cartography   ExportMapImage, ExportScaleBar, legends, default drawing descriptions,
//	              ComputeScale/Distance, To/FromMapPoints, pictures, drawing conversions
//	caches        every cache operation, GetMapTile/GetLayerTile, the served-tile memory, and the
//	              one place a stored cache is opened
//
// The names front ends use (Call, RenderInfo, RequestError, ErrInvalidArgument, ErrNotFound,
// Limits, …) are aliases here of the operation package's.
//
// An operation's errors wrap ErrInvalidArgument when the request is at fault; the front end
// turns that into a client fault (docs/queries.md covers the query operations).
package mapserver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/caches"
	"github.com/mapfarm/mapfarm/internal/mapserver/cartography"
	"github.com/mapfarm/mapfarm/internal/mapserver/information"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/mapserver/queries"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Params configure a Server; New hands each family what it needs.
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
	// Tiles is the store tile caches live in (package caches); nil: no map is
	// cached.
	Tiles TileStore
	// TileIndex caches bundle indexes for tile reads; nil gives each cache a private one.
	TileIndex *tilecache.IndexCache
	// TileMemoryBytes bounds the memory of recently served tiles (caches/tilememory.go); zero means
	// 64 MiB, negative turns it off.
	TileMemoryBytes int64
	// CacheURL returns the public URL of a cache folder (GetVirtualCacheDirectory), given the
	// service, map and folder names path-escaped.
	CacheURL func(service, mapName, folder string) string
	// Pictures say where pictures named by PictureUri may be fetched from (cartography/pictures.go).
	Pictures PictureOptions
}

// Server runs operations against a catalog.
type Server struct {
	p       Params
	ops     map[string]opFunc
	info    *information.Service
	queries *queries.Service
	carto   *cartography.Service
	caches  *caches.Service
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
	return s.caches.Caches()
}

// ForgetTiles drops what the server keeps in memory of the tiles v names (caches.Service.ForgetTiles).
func (s *Server) ForgetTiles(v refresh.Invalidation) { s.caches.ForgetTiles(v) }

// New returns a Server.
func New(p Params) *Server {
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	metatiles, _ := p.Exporter.(caches.MetatileRenderer)
	s := &Server{
		p:    p,
		info: information.New(information.Params{Limits: p.Limits}),
		queries: queries.New(queries.Params{Limits: p.Limits, Outputs: p.Outputs, OutputURL: p.OutputURL,
			NewID: p.NewID, Recent: p.Recent}),
		carto: cartography.New(cartography.Params{Exporter: p.Exporter, Limits: p.Limits, Outputs: p.Outputs,
			OutputURL: p.OutputURL, NewID: p.NewID, Recent: p.Recent, Pictures: p.Pictures}),
		caches: caches.New(caches.Params{Tiles: p.Tiles, TileIndex: p.TileIndex, TileMemoryBytes: p.TileMemoryBytes,
			CacheURL: p.CacheURL, Metatiles: metatiles, NewID: p.NewID, Logger: p.Logger}),
	}
	info, q, carto, cache := s.info, s.queries, s.carto, s.caches
	// The operations that draw, or read the drawing descriptions of their request (Identify,
	// Find and QueryHyperlinks check them with the layers' visibility), fetch the pictures it
	// names first (Drawing); the others never look for pictures.
	s.ops = map[string]opFunc{
		"GetDocumentInfo":              handle(info.GetDocumentInfo),
		"GetMapCount":                  handle(info.GetMapCount),
		"GetMapName":                   handle(info.GetMapName),
		"GetDefaultMapName":            handle(info.GetDefaultMapName),
		"GetServerInfo":                handle(info.GetServerInfo),
		"GetServiceConfigurationInfo":  handle(info.GetServiceConfigurationInfo),
		"GetSupportedImageReturnTypes": handle(info.GetSupportedImageReturnTypes),
		"IsFixedScaleMap":              handle(info.IsFixedScaleMap),
		"ExportMapImage":               handle(Drawing(s, carto.ExportMapImage)),
		"ExportScaleBar":               handle(Drawing(s, carto.ExportScaleBar)),
		"GetLegendInfo":                handle(Drawing(s, carto.GetLegendInfo)),
		"GetLegendInfo2":               handle(Drawing(s, carto.GetLegendInfo2)),
		"ComputeScale":                 handle(carto.ComputeScale),
		"ComputeDistance":              handle(carto.ComputeDistance),
		"ToMapPoints":                  handle(carto.ToMapPoints),
		"FromMapPoints":                handle(carto.FromMapPoints),
		"QueryFeatureCount":            handle(q.QueryFeatureCount),
		"QueryFeatureCount2":           handle(q.QueryFeatureCount2),
		"QueryFeatureIDs":              handle(q.QueryFeatureIDs),
		"QueryFeatureIDs2":             handle(q.QueryFeatureIDs2),
		"QueryFeatureData":             handle(q.QueryFeatureData),
		"QueryFeatureData2":            handle(q.QueryFeatureData2),
		"QueryRowCount":                handle(q.QueryRowCount),
		"QueryRowIDs":                  handle(q.QueryRowIDs),
		"QueryData":                    handle(q.QueryData),
		"QueryDataStatistics":          handle(q.QueryDataStatistics),
		"Find":                         handle(Drawing(s, q.Find)),
		"Identify":                     handle(Drawing(s, q.Identify)),
		"GetSQLSyntaxInfo":             handle(info.GetSQLSyntaxInfo),
		"QueryRelatedRecords":          handle(q.QueryRelatedRecords),
		"QueryRelatedRecords2":         handle(q.QueryRelatedRecords2),
		"QueryHyperlinks":              handle(Drawing(s, q.QueryHyperlinks)),
		"QueryHTMLPopups":              handle(q.QueryHTMLPopups),
		"QueryHTMLPopups2":             handle(q.QueryHTMLPopups2),
		"QueryAttachmentInfos":         handle(q.QueryAttachmentInfos),
		"QueryAttachmentInfos2":        handle(q.QueryAttachmentInfos2),
		"QueryAttachmentData":          handle(q.QueryAttachmentData),
		"QueryAttachmentData2":         handle(q.QueryAttachmentData2),
		"GetMapTableSubtypeInfos":      handle(info.GetMapTableSubtypeInfos),
		"GetMapTableSubtypeInfos2":     handle(info.GetMapTableSubtypeInfos2),
		"GenerateDataClasses":          handle(q.GenerateDataClasses),
		"QueryRasterValue":             handle(q.QueryRasterValue),
		"QueryRasterValue2":            handle(q.QueryRasterValue2),
		"HasSingleFusedMapCache":       handle(cache.HasSingleFusedMapCache),
		"HasLayerCache":                handle(cache.HasLayerCache),
		"GetTileCacheInfo":             handle(cache.GetTileCacheInfo),
		"GetTileImageInfo":             handle(cache.GetTileImageInfo),
		"GetCacheControlInfo":          handle(cache.GetCacheControlInfo),
		"GetCacheStorageInfo":          handle(cache.GetCacheStorageInfo),
		"GetCacheDescriptionInfo":      handle(cache.GetCacheDescriptionInfo),
		"GetCacheName":                 handle(cache.GetCacheName),
		"GetVirtualCacheDirectory":     handle(cache.GetVirtualCacheDirectory),
		"GetMapTile":                   handle(cache.GetMapTile),
		"GetLayerTile":                 handle(cache.GetLayerTile),
	}
	s.ops["GetDefaultLayerDrawingDescriptions"] = handle(carto.GetDefaultLayerDrawingDescriptions)
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
		return nil, operation.Invalid("unknown operation %q", op)
	}
	return f(ctx, c, req)
}

// Drawing returns the drawing operation f (ExportMapImage, ExportScaleBar, GetLegendInfo,
// GetLegendInfo2; and Identify, Find and QueryHyperlinks, which read drawing descriptions) with
// its first step: the picture symbols of the request that name their picture by PictureUri get
// its bytes (cartography.Service.ResolvePictures, which may fetch over the network), so that
// the task a worker draws carries them.
func Drawing[Req, Resp any](s *Server, f func(context.Context, *Call, *Req) (*Resp, error)) func(context.Context, *Call, *Req) (*Resp, error) {
	return func(ctx context.Context, c *Call, req *Req) (*Resp, error) {
		if err := s.carto.ResolvePictures(ctx, req); err != nil {
			return nil, err
		}
		return f(ctx, c, req)
	}
}

// Admitted runs the typed operation f with c and req under admit, a front end's request policy:
// admit calls run when it lets the operation through, and returns why not when it does not (that
// refusal is the error returned, with no answer). With admit nil, f runs at once.
func Admitted[Req, Resp any](ctx context.Context, admit func(ctx context.Context, op string, req any, run func()) error, op string, f func(context.Context, *Call, *Req) (*Resp, error), c *Call, req *Req) (*Resp, error) {
	if admit == nil {
		return f(ctx, c, req)
	}
	var (
		resp *Resp
		err  error
	)
	if aerr := admit(ctx, op, req, func() { resp, err = f(ctx, c, req) }); aerr != nil {
		return nil, aerr
	}
	return resp, err
}

// Families are the operation families a Server dispatches to. A front end that is not SOAP
// (REST) calls their typed operations directly, e.g. Queries.QueryFeatureData2, with the same
// Call it would hand to Do; a drawing operation through Drawing.
type Families struct {
	Information *information.Service
	Queries     *queries.Service
	Cartography *cartography.Service
	Caches      *caches.Service
}

// Families returns the server's operation families.
func (s *Server) Families() Families {
	return Families{Information: s.info, Queries: s.queries, Cartography: s.carto, Caches: s.caches}
}

// Service finds a service by name, case-insensitively.
func (s *Server) Service(name string) (*catalog.Service, bool) { return s.p.Catalog.Service(name) }

// Services returns the catalog's services in definition order (the OGC APIs list them).
func (s *Server) Services() []*catalog.Service { return s.p.Catalog.Services() }
