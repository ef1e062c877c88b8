// Package operation holds what every MapServer operation family (information, queries,
// cartography, caches) needs, whatever the transport that calls them:
//
//	call.go      the call context (Call, RenderInfo), request errors (RequestError,
//	             ErrInvalidArgument, ErrNotFound, ErrNotImplemented and their constructors
//	             Invalid, NotFound, OverLimit), finding a map of a service (MapOf),
//	             transformers between systems (Transformer), resolving a map view within the
//	             Limits (ResolveView), and the farm and output storage interfaces
//	geometry.go  the one place geometries change representation (schema ↔ orb)
//	describe.go  spatial references, envelopes, fields and colours in their schema form
//
// A front end turns an error wrapping ErrInvalidArgument into a client fault, one wrapping
// ErrNotFound into a not-found answer.
package operation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/paulmach/orb"
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
	// limit is set when the request is over one of the limits (OverLimit).
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

// Invalid and NotFound build every RequestError; a value of the request they quote is cut to
// quote.MaxLen characters, so a fault never echoes a whole (megabytes long) input.
func Invalid(format string, args ...any) error {
	return &RequestError{Msg: quote.Sprintf(format, args...)}
}

// OverLimit is invalid for a request over one of the limits (internal/limits); the message
// names the limit's value.
func OverLimit(limit limits.Name, format string, args ...any) error {
	e := limits.Refuse(limit, format, args...)
	return &RequestError{Msg: e.Msg, limit: e}
}

// NotFound is a RequestError for something the request names that does not exist.
func NotFound(format string, args ...any) error {
	return &RequestError{Msg: quote.Sprintf(format, args...), NotFound: true}
}

// ErrNotImplemented is returned for operations of the interface this build does not serve yet.
var ErrNotImplemented = errors.New("operation not implemented")

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

// RecentOutputs remembers freshly rendered images.
type RecentOutputs interface {
	Remember(key, contentType string, data []byte)
}

// OutputStore writes rendered bytes; the tile store satisfies it.
type OutputStore interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Exporter renders a map image on the farm and reports where it went.
type Exporter interface {
	Export(ctx context.Context, job task.ExportMap) (task.Result, error)
}

// Transformer returns the transformer from one system to another for an answer of map m, or nil
// when none is needed (the same system, or either unknown); what names the request's field in
// the fault for a system the server cannot use.
func Transformer(m *catalog.Map, from, to proj.SR, what string) (*proj.Transformer, error) {
	if from.IsZero() || to.IsZero() || from.Same(to) {
		return nil, nil
	}
	if m.Systems == nil {
		return nil, Invalid("%s: %s differs from the map's %s, and this map cannot be reprojected", what, from.Name(), to.Name())
	}
	t, err := m.Systems.Transformer(from, to)
	if err != nil {
		return nil, Invalid("%s: %v", what, err)
	}
	return t, nil
}

// MapOf finds a map of the call's service; "" means the default map.
func MapOf(c *Call, name string) (*catalog.Map, error) {
	if m, ok := c.Service.Map(name); ok {
		return m, nil
	}
	names := make([]string, 0, len(c.Service.Maps))
	for _, m := range c.Service.Maps {
		names = append(names, m.Name)
	}
	return nil, NotFound("map %q is not in service %s (maps: %s)", name, c.Service.Name, strings.Join(names, ", "))
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
		return orb.Bound{}, Invalid("MapArea/LayerID %d is not a layer of map %s", layerID, v.m.Name)
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
			return orb.Bound{}, Invalid("MapArea/FeatureIDs: layer %d has no feature %d", layerID, id)
		}
	}
	if b.IsEmpty() {
		return orb.Bound{}, nil
	}
	return b, nil
}

// ResolveView resolves the view of a request on map m within the image limits.
func ResolveView(ctx context.Context, m *catalog.Map, md *gisxml.MapDescription, disp *gisxml.ImageDisplay, lim Limits) (mapview.View, error) {
	v, err := mapview.Resolve(viewMap{ctx, m}, md, disp, mapview.Limits{MaxWidth: lim.MaxImageWidth, MaxHeight: lim.MaxImageHeight})
	var bad *mapview.BadRequestError
	if errors.As(err, &bad) {
		return v, Invalid("%s", bad.Msg)
	}
	return v, err
}
