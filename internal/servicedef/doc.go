// Package servicedef reads service definition files: the YAML documents
// that say which MapServer services mapfarm publishes, which maps they
// hold, and for every layer and standalone table where its data lives,
// which fields are published and how features are drawn and labelled.
//
// This package is the one place that format is parsed. Load reads a file,
// checks it against itself (unknown keys, duplicate names and IDs, bad
// colours, inverted scale ranges, symbols that do not fit the geometry)
// and against the data it names (tables, fields, spatial references,
// definition expressions), fills in the defaults, and returns plain
// structs. Every problem is reported, each with its
// file:line:col, in one *ValidationError, so a user fixes a file in one
// pass instead of one error per run.
//
// How a layer is drawn (its renderer, symbols and label classes) is held in
// the types of package symbology, the one model of a drawing that requests,
// the renderer and the style generators share; this package only decodes
// them from YAML (symbology.go) and checks them against the layer.
//
// A layer's `source:` mapping is decoded by the provider it names, from the
// provider.Registry Load is given: the provider owns its keys and reads
// what it can of the data at load (a GeoPackage table's or a GeoJSON
// file's schema), and this package checks the layer against that schema.
// Serving the data is the job of package catalog, through the same
// registry.
//
// A minimal file:
//
//	services:
//	  - name: world
//	    maps:
//	      - spatialReference: 3857
//	        layers:
//	          - name: Countries
//	            source: {geopackage: ../data/sample/world_countries_50m_3857.gpkg, table: countries}
//	            renderer:
//	              type: simple
//	              symbol: {type: simpleFill, color: [232, 228, 216], outline: {color: [96, 96, 96], width: 0.75}}
//	            labels:
//	              - {field: NAME, font: {size: 8}, halo: {color: [255, 255, 255], width: 0.75}}
//
// The full reference, with every key, type and default, is
// docs/service-definitions.md.
package servicedef
