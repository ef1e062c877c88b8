// Package queries implements the MapServer operations that read features and rows, free of any
// transport:
//
//	query.go         QueryFeatureCount/IDs/Data (and 2), QueryRowCount/RowIDs, QueryData
//	query_filter.go  QueryFilter and SpatialFilter into a plan (docs/queries.md)
//	statistics.go    QueryDataStatistics
//	related.go       QueryRelatedRecords, QueryRelatedRecords2
//	find.go          Find; identify.go: Identify; hyperlinks.go: QueryHyperlinks
//	popups.go        QueryHTMLPopups (and 2); attachments.go: QueryAttachmentInfos/Data (and 2)
//	raster.go        QueryRasterValue (and 2)
//	classes.go       GenerateDataClasses
//	outputs.go       handing out bytes (attachments, raster values, JSON results) by URL
//
// Each operation is a method of Service taking the call (operation.Call) and its gisxml request
// and returning its gisxml response; the SOAP front end reaches them through mapserver.Server.Do,
// a REST handler calls them directly (e.g. QueryFeatureData2).
package queries

import "github.com/mapfarm/mapfarm/internal/mapserver/operation"

// Params configure a Service.
type Params struct {
	// Limits bound the records of one answer (MaxRecordCount).
	Limits operation.Limits
	// Outputs stores what operations hand out by URL under outputs/; nil: data: URLs instead.
	Outputs operation.OutputStore
	// OutputURL returns the public URL of a stored output object.
	OutputURL func(key string) string
	// NewID returns a fresh, unguessable name for an output.
	NewID func() string
	// Recent, when set, keeps the bytes handed out by URL until the store write lands.
	Recent operation.RecentOutputs
}

// Service runs the query operations.
type Service struct {
	p Params
}

// New returns a Service.
func New(p Params) *Service { return &Service{p: p} }
