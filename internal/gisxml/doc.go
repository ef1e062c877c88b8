// Package gisxml holds the Go message types of the ArcGIS-10.7-compatible MapServer XML schema
// (enumeration prefix "gis"): every request and response element, every complex type in wire
// order, and every enumeration. The types are generated from schema/mapserver-10.7.txt; run
// `go generate ./internal/gisxml` after changing that listing.
//
// The types know nothing of XML. internal/soap reads and writes them, and writes the WSDL, from
// the `gis` struct tags and the table returned by Types; the operations in internal/mapserver
// work on them as plain Go values.
//
// Conventions:
//
//   - A slot of a polymorphic schema type (abstract, or extended by others) holds an interface:
//     Geometry, Point, Envelope, MapArea, Color, Symbol, SpatialReference, …, or TKind for a
//     concrete type T that has subtypes (QueryFilterKind holds *QueryFilter or *SpatialFilter).
//     Values are stored as pointers (&PointN{…}).
//   - Optional scalars are pointers; optional complex values are nil when absent.
//   - ArrayOfX types are named slices.
package gisxml

//go:generate go run ./internal/gen -in schema/mapserver-10.7.txt -out types_gen.go
