// Package information implements the MapServer operations that describe a service and its maps,
// free of any transport: GetServerInfo, GetDocumentInfo, GetMapCount, GetMapName,
// GetDefaultMapName, GetServiceConfigurationInfo, GetSupportedImageReturnTypes, IsFixedScaleMap
// (info.go), GetMapTableSubtypeInfos and its 2 (subtypes.go) and GetSQLSyntaxInfo
// (sqlsyntax.go). describe_layers.go builds the layer and table infos and the default map
// description they answer with.
//
// Each operation is a method of Service taking the call (operation.Call) and its gisxml request
// and returning its gisxml response; the SOAP front end reaches them through mapserver.Server.Do,
// a REST handler calls them directly.
package information

import "github.com/mapfarm/mapfarm/internal/mapserver/operation"

// Params configure a Service.
type Params struct {
	// Limits are reported by GetServiceConfigurationInfo.
	Limits operation.Limits
}

// Service runs the information operations.
type Service struct {
	p Params
}

// New returns a Service.
func New(p Params) *Service { return &Service{p: p} }
