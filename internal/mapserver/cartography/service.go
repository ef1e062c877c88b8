// Package cartography implements the MapServer operations that draw or measure maps, free of any
// transport:
//
//	export.go        ExportMapImage, through the render farm
//	scalebar.go      ExportScaleBar, on the farm too
//	legend.go        GetLegendInfo, GetLegendInfo2 (swatches drawn here)
//	drawingdesc.go   GetDefaultLayerDrawingDescriptions
//	drawing.go       request symbols, renderers and graphics (docs/cartography.md)
//	mapgeometry.go   ComputeScale, ComputeDistance, ToMapPoints, FromMapPoints
//	pictures.go      picture symbols named by URI (ResolvePictures)
//
// Each operation is a method of Service taking the call (operation.Call) and its gisxml request
// and returning its gisxml response; the SOAP front end reaches them through mapserver.Server.Do,
// a REST handler calls them directly (the drawing ones through mapserver.Drawing, which fetches
// their pictures first). LayerStates and ColorOf are shared with the query family
// (Find and Identify search the layers drawn; GenerateDataClasses reads colour ramps).
package cartography

import (
	"sync"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/render"
)

// Params configure a Service.
type Params struct {
	// Exporter renders on the farm (ExportMapImage; ExportScaleBar when it is a ScaleBarExporter).
	Exporter operation.Exporter
	// Limits bound image sizes and the points of ToMapPoints and FromMapPoints.
	Limits operation.Limits
	// Outputs stores legend swatches answered by URL; nil: MIME data instead.
	Outputs operation.OutputStore
	// OutputURL returns the public URL of a stored output object.
	OutputURL func(key string) string
	// NewID returns a fresh, unguessable id for a render or an output.
	NewID func() string
	// Recent, when set, keeps the bytes of images answered by URL until the store write lands.
	Recent operation.RecentOutputs
	// Pictures say where pictures named by PictureUri may be fetched from (pictures.go).
	Pictures PictureOptions
}

// Service runs the cartography operations.
type Service struct {
	p Params
	// swatches is the renderer of legend swatches (legend.go), made on first use.
	swatches struct {
		once sync.Once
		r    *render.Renderer
		err  error
	}
}

// New returns a Service.
func New(p Params) *Service { return &Service{p: p} }
