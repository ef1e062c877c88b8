package mapserver

import (
	"github.com/mapfarm/mapfarm/internal/mapserver/caches"
	"github.com/mapfarm/mapfarm/internal/mapserver/cartography"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// The types and errors front ends use, defined by the operation families.
type (
	// Call is one operation invocation on one service (operation.Call).
	Call = operation.Call
	// RenderInfo tells how a farm render went (operation.RenderInfo).
	RenderInfo = operation.RenderInfo
	// RequestError is an error caused by the request (operation.RequestError).
	RequestError = operation.RequestError
	// Limits are the bounds operations enforce (operation.Limits).
	Limits = operation.Limits
	// Exporter renders a map image on the farm (operation.Exporter).
	Exporter = operation.Exporter
	// RecentOutputs remembers freshly rendered images (operation.RecentOutputs).
	RecentOutputs = operation.RecentOutputs
	// OutputStore writes rendered bytes (operation.OutputStore).
	OutputStore = operation.OutputStore
	// TileStore is the object storage tile caches live in (caches.TileStore).
	TileStore = caches.TileStore
	// PictureOptions say where pictures named by PictureUri may be fetched from
	// (cartography.PictureOptions).
	PictureOptions = cartography.PictureOptions
)

var (
	// ErrInvalidArgument marks errors caused by the request (operation.ErrInvalidArgument).
	ErrInvalidArgument = operation.ErrInvalidArgument
	// ErrNotFound marks a request for something that does not exist (operation.ErrNotFound).
	ErrNotFound = operation.ErrNotFound
	// ErrNotImplemented is returned for operations this build does not serve yet
	// (operation.ErrNotImplemented).
	ErrNotImplemented = operation.ErrNotImplemented
)
