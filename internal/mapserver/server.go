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
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// ErrInvalidArgument marks errors caused by the request.
var ErrInvalidArgument = errors.New("invalid argument")

// ErrNotFound marks a request for a service, map, layer or record that does not exist.
var ErrNotFound = errors.New("not found")

// RequestError is an error caused by the request. It matches ErrInvalidArgument, and ErrNotFound
// when it names something that does not exist; its message is the whole explanation.
type RequestError struct {
	Msg      string
	NotFound bool
	// limit is set when the request is over one of the limits (overLimit).
	limit *limits.Error
}

func (e *RequestError) Error() string { return e.Msg }

// Unwrap returns the *limits.Error of a request over a limit, so that the front end can count
// the refusal by limit.
func (e *RequestError) Unwrap() error {
	if e.limit == nil {
		return nil
	}
	return e.limit
}

// Is makes errors.Is(err, ErrInvalidArgument) and, for missing things, ErrNotFound hold.
func (e *RequestError) Is(target error) bool {
	return target == ErrInvalidArgument || (e.NotFound && target == ErrNotFound)
}

// invalid and notFound build every RequestError; a value of the request they quote is cut to
// quote.MaxLen characters, so a fault never echoes a whole (megabytes long) input.
func invalid(format string, args ...any) error {
	return &RequestError{Msg: quote.Sprintf(format, args...)}
}

// overLimit is invalid for a request over one of the limits (internal/limits); the message
// names the limit's value.
func overLimit(limit limits.Name, format string, args ...any) error {
	e := limits.Refuse(limit, format, args...)
	return &RequestError{Msg: e.Msg, limit: e}
}

func notFound(format string, args ...any) error {
	return &RequestError{Msg: quote.Sprintf(format, args...), NotFound: true}
}

// Exporter renders a map image on the farm and reports where it went.
type Exporter interface {
	Export(ctx context.Context, job task.ExportMap) (task.Result, error)
}

// RecentOutputs remembers freshly rendered images.
type RecentOutputs interface {
	Remember(key, contentType string, data []byte)
}

// Limits are the bounds operations enforce and report in GetServiceConfigurationInfo.
type Limits struct {
	MaxImageWidth  int
	MaxImageHeight int
	MaxRecordCount int
	MaxBodyBytes   int64
	// MaxPoints bounds the points of one ToMapPoints or FromMapPoints; 0 means
	// limits.DefaultMaxPoints.
	MaxPoints int
}

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

// Call is one operation invocation on one service.
type Call struct {
	Service *catalog.Service
	// RequestID follows the call into the farm's logs.
	RequestID string
	// Render is filled by operations that rendered on the farm.
	Render *RenderInfo
}

// RenderInfo tells how a farm render went, for logs and the Server-Timing header.
type RenderInfo struct {
	Worker string        // host:pid of the worker
	Render time.Duration // the worker's draw and encode time
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

// ErrNotImplemented is returned for operations of the interface this build does not serve yet.
var ErrNotImplemented = errors.New("operation not implemented")

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
	if err := s.resolvePictures(ctx, req); err != nil {
		return nil, err
	}
	return f(ctx, c, req)
}

// Service finds a service by name, case-insensitively.
func (s *Server) Service(name string) (*catalog.Service, bool) { return s.p.Catalog.Service(name) }

// transformer returns the transformer from one system to another for an answer of map m, or nil
// when none is needed (the same system, or either unknown); what names the request's field in
// the fault for a system the server cannot use.
func transformer(m *catalog.Map, from, to proj.SR, what string) (*proj.Transformer, error) {
	if from.IsZero() || to.IsZero() || from.Same(to) {
		return nil, nil
	}
	if m.Systems == nil {
		return nil, invalid("%s: %s differs from the map's %s, and this map cannot be reprojected", what, from.Name(), to.Name())
	}
	t, err := m.Systems.Transformer(from, to)
	if err != nil {
		return nil, invalid("%s: %v", what, err)
	}
	return t, nil
}

// mapOf finds a map of the call's service; "" means the default map.
func mapOf(c *Call, name string) (*catalog.Map, error) {
	if m, ok := c.Service.Map(name); ok {
		return m, nil
	}
	names := make([]string, 0, len(c.Service.Maps))
	for _, m := range c.Service.Maps {
		names = append(names, m.Name)
	}
	return nil, notFound("map %q is not in service %s (maps: %s)", name, c.Service.Name, strings.Join(names, ", "))
}

// viewMap adapts a catalog map to what mapview needs.
type viewMap struct {
	ctx context.Context
	m   *catalog.Map
}

func (v viewMap) SpatialReference() proj.SR { return v.m.SR }
func (v viewMap) Systems() *proj.Systems    { return v.m.Systems }
func (v viewMap) DefaultExtent() orb.Bound  { return v.m.InitialExtent }
func (v viewMap) FeatureBounds(layerID int, ids []int) (orb.Bound, error) {
	l, ok := v.m.Layer(layerID)
	if !ok {
		return orb.Bound{}, invalid("MapArea/LayerID %d is not a layer of map %s", layerID, v.m.Name)
	}
	if len(ids) == 0 {
		return l.Extent, nil
	}
	want := make([]int64, len(ids))
	for i, id := range ids {
		want[i] = int64(id)
	}
	b := feature.EmptyBound()
	found := map[int64]bool{}
	err := l.Data.Scan(v.ctx, &feature.Query{IDs: want, Columns: []int{}}, func(f *feature.Feature) error {
		found[f.ID] = true
		if f.Geom != nil {
			b = b.Union(f.Geom.Bound())
		}
		return nil
	})
	if err != nil {
		return orb.Bound{}, fmt.Errorf("layer %d (%s): %w", l.ID, l.Name, err)
	}
	for _, id := range want {
		if !found[id] {
			return orb.Bound{}, invalid("MapArea/FeatureIDs: layer %d has no feature %d", layerID, id)
		}
	}
	if b.IsEmpty() {
		return orb.Bound{}, nil
	}
	return b, nil
}

func (s *Server) resolveView(ctx context.Context, m *catalog.Map, md *gisxml.MapDescription, disp *gisxml.ImageDisplay) (mapview.View, error) {
	v, err := mapview.Resolve(viewMap{ctx, m}, md, disp, mapview.Limits{MaxWidth: s.p.Limits.MaxImageWidth, MaxHeight: s.p.Limits.MaxImageHeight})
	var bad *mapview.BadRequestError
	if errors.As(err, &bad) {
		return v, invalid("%s", bad.Msg)
	}
	return v, err
}
