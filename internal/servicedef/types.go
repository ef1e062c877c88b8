package servicedef

import (
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/provider"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// Config is one loaded service definition file.
type Config struct {
	// File is the absolute path of the file the configuration came from.
	File string
	// Services lists the services (YAML key `services`, required, at least
	// one), in file order.
	Services []*Service
	// Connections (`connections`, default none) are the database
	// connections PostGIS sources name, by name. See Connection.
	Connections map[string]*Connection
}

// Service is one MapServer service, published at
// /arcgis/services/<Name>/MapServer.
type Service struct {
	// Name (`name`, required) is the service name: letters, digits and
	// underscores, unique in the file regardless of case.
	Name string
	// Description (`description`, default "") is the service description.
	Description string
	// CopyrightText (`copyrightText`, default "") is the default copyright
	// text of every map in the service.
	CopyrightText string
	// DocumentInfo (`documentInfo`) is what GetDocumentInfo returns.
	DocumentInfo DocumentInfo
	// Maps (`maps`, required, at least one) are the service's maps (data
	// frames). The first is the default map.
	Maps []*Map
}

// DocumentInfo is the map document's properties, returned by
// GetDocumentInfo. Every key is optional and defaults to "".
type DocumentInfo struct {
	Title    string // `title`
	Subject  string // `subject`
	Author   string // `author`
	Category string // `category`
	Keywords string // `keywords`, comma-separated
	Comments string // `comments`
}

// Map is one map (data frame) of a service.
type Map struct {
	// Name (`name`, default "Layers", ArcGIS's default data frame name) is
	// unique within the service regardless of case.
	Name string
	// Description (`description`, default "").
	Description string
	// CopyrightText (`copyrightText`, default: the service's).
	CopyrightText string
	// SpatialReference (`spatialReference`, required) is the map's
	// coordinate system, given as a WKID (`3857`) or `{wkid: 3857}`. Layers
	// stored in another SR are reprojected as they are read: any pair with
	// PROJ (build tag proj, docs/projections.md), only 4326 ↔ Web Mercator
	// (3857/102100/900913) without it, so that any other WKID then works only
	// when every layer's data is stored in it.
	SpatialReference proj.SR
	// BackgroundColor (`backgroundColor`, default white) fills the map
	// image behind the layers.
	BackgroundColor symbology.Color
	// InitialExtent (`initialExtent`, default: the full extent) is the
	// extent of the default map description, `[xmin, ymin, xmax, ymax]` in
	// the map's SR. Nil when not set.
	InitialExtent *orb.Bound
	// Layers (`layers`, default none) are drawn bottom-up from the last to
	// the first: layer 0 is on top, as in ArcGIS.
	Layers []*Layer
	// Tables (`tables`, default none) are standalone tables.
	Tables []*Table
	// Relationships (`relationships`, default none) relate the map's layers and tables, for
	// QueryRelatedRecords.
	Relationships []*Relationship
	// Cache (`cache`, default none) is the map's tile cache; nil when the
	// map is not cached. See Cache.
	Cache *Cache
	// ReferenceScale (`referenceScale`, default 0: none) is the scale
	// denominator at which symbols are drawn at their given sizes (ArcMap's
	// data frame reference scale). When it is set, layers that scale their
	// symbols (Layer.ScaleSymbols) draw every size (marker sizes, line and
	// outline widths, label text, offsets, pattern sizes) multiplied by
	// ReferenceScale / the map's scale, so symbols grow as one zooms in.
	ReferenceScale float64
}

// Source names where a layer's or table's rows come from, as the provider
// that reads them decoded it (package provider): a gpkg.Definition (a
// GeoPackage table), a geojson.Definition (a GeoJSON file) or a
// postgis.Definition (a PostGIS table or SQL view). Which one is chosen by
// the provider key the `source:` mapping holds (`geopackage`, `geojson`,
// `postgis`); the keys of each are in docs/service-definitions.md. Paths
// are absolute after Load.
type Source = provider.Definition

// Field is one published attribute.
type Field struct {
	// Name (`name`, required) is the column name in the source table.
	Name string
	// Alias (`alias`, default: Name) is the display name.
	Alias string
}

// Layer is one feature layer of a map.
type Layer struct {
	// ID (`id`, default: one more than the previous layer's ID, starting
	// at 0) is unique among the map's layers and tables.
	ID int
	// Name (`name`, required) is unique among the map's layers and tables
	// regardless of case.
	Name string
	// Description (`description`, default "").
	Description string
	// CopyrightText (`copyrightText`, default "").
	CopyrightText string
	// Source (`source`, required) is the feature table; it must have a
	// geometry column.
	Source Source
	// GeometryType (`geometryType`, default: from the data) is point,
	// multipoint, polyline or polygon; when given it must match the data.
	GeometryType feature.GeometryType
	// Fields (`fields`, default: every column of the table) lists the
	// published attributes in order, each as a column name or
	// `{name, alias}`. The table's object-ID column is always published.
	Fields []Field
	// DisplayField (`displayField`, default: the first published String
	// field, else the first published field) is the field shown as the
	// feature's name.
	DisplayField string
	// Visible (`visible`, default true) is the default visibility.
	Visible bool
	// ScaleSymbols (`scaleSymbols`, default true) scales the layer's symbols
	// with the map's ReferenceScale; it has no effect when the map has none.
	// It is the default of LayerDescription.ScaleSymbols.
	ScaleSymbols bool
	// ScaleRange (`minScale`, `maxScale`) is the scale range of the layer.
	symbology.ScaleRange
	// DefinitionExpression (`definitionExpression`, default "") is a SQL
	// where clause that filters the features served.
	DefinitionExpression string
	// Renderer (`renderer`, default: a simple grey symbol fitting the
	// geometry type) draws the features.
	Renderer symbology.Renderer
	// Labels (`labels`, default none) are the label classes.
	Labels []symbology.Label
	// Queryable holds hyperlinkField, popup, attachments, domains, subtypes and rasterField.
	Queryable
	// VectorTiles (`vectorTiles`) says whether and how the layer goes into vector tiles:
	// `include`, `fields`, `minZoom` (see VectorTiles).
	VectorTiles VectorTiles
}

// Table is one standalone (non-spatial) table of a map. A source table
// with a geometry column may be used; its geometry is ignored.
type Table struct {
	// ID (`id`, default: one more than the previous layer's or table's
	// ID) is unique among the map's layers and tables.
	ID int
	// Name (`name`, required) is unique among the map's layers and tables
	// regardless of case.
	Name string
	// Description (`description`, default "").
	Description string
	// Source (`source`, required).
	Source Source
	// Fields (`fields`, default: every column) as for Layer.
	Fields []Field
	// DisplayField (`displayField`, default as for Layer).
	DisplayField string
	// DefinitionExpression (`definitionExpression`, default "").
	DefinitionExpression string
}

// Relationship relates the rows of one layer or table of a map (the origin) to the rows of
// another (the destination) whose key field holds the same value; QueryRelatedRecords follows
// it. YAML: an item of a map's `relationships` list.
type Relationship struct {
	// ID (`id`, default: one more than the previous relationship's, from 0) is unique in the map.
	ID int
	// Name (`name`, required) names the relationship (e.g. "State counties").
	Name string
	// Origin (`origin`, required) is the ID of the origin layer or table.
	Origin int
	// Destination (`destination`, required) is the ID of the destination layer or table.
	Destination int
	// OriginKey (`originKey`, required) is the origin's key field.
	OriginKey string
	// DestinationKey (`destinationKey`, required) is the destination's field matching OriginKey.
	DestinationKey string
	// Cardinality (`cardinality`, default "oneToMany") is oneToOne or oneToMany.
	Cardinality string
}

// PopupType is how a layer's HTML popup is served.
type PopupType string

// Popup types (YAML `type` of `popup`).
const (
	// PopupHTML returns the filled template as HTML text.
	PopupHTML PopupType = "htmlText"
	// PopupURL returns the filled template as a URL.
	PopupURL PopupType = "url"
)

// Popup is a layer's HTML popup template (YAML `popup`).
type Popup struct {
	// Type (`type`, default "htmlText") is htmlText or url.
	Type PopupType
	// Template (`template`, required) is the popup text with {FIELD} placeholders replaced by the
	// feature's values (HTML-escaped for htmlText, query-escaped for url). Every placeholder
	// must name a column of the table.
	Template string
}

// DomainType is the kind of an attribute domain.
type DomainType string

// Domain types (YAML `type` of a domain).
const (
	// CodedValueDomain lists the allowed codes and their names.
	CodedValueDomain DomainType = "codedValue"
	// RangeDomain bounds a numeric field.
	RangeDomain DomainType = "range"
)

// Domain is an attribute domain of a field: coded values or a range. YAML: a value of a layer's
// `domains` mapping.
type Domain struct {
	// Name (`name`, required) is the domain name.
	Name string
	// Description (`description`, default "").
	Description string
	// Type (`type`, required) is codedValue or range.
	Type DomainType
	// Codes (`values`, codedValue, at least one) are the coded values in order: a list of
	// {code, name}. Codes are numbers for numeric fields, text for string fields.
	Codes []CodedValue
	// Min and Max (`min`, `max`, range, required) bound the values; Min ≤ Max.
	Min, Max float64
}

// CodedValue is one code of a coded-value domain.
type CodedValue struct {
	// Code (`code`, required) is the stored value, as written.
	Code string
	// Name (`name`, required) is its description.
	Name string
}

// Subtypes splits a layer's features by an integer field; each subtype has a code and a name.
// YAML: `subtypes: {field, default, values: [{code, name}]}`.
type Subtypes struct {
	// Field (`field`, required) is the integer subtype field.
	Field string
	// Default (`default`, default: the first code) is the default subtype code.
	Default int
	// Values (`values`, at least one) are the subtypes, codes unique.
	Values []Subtype
}

// Subtype is one subtype of a layer.
type Subtype struct {
	// Code (`code`, required) is the value of the subtype field.
	Code int
	// Name (`name`, required) is the subtype's name.
	Name string
}

// Queryable holds the keys of a layer that only the query operations use: hyperlinks, popups,
// attachments, domains, subtypes and a raster field. They are written directly in the layer's
// mapping.
type Queryable struct {
	// HyperlinkField (`hyperlinkField`, default none) is a String field holding each feature's URL,
	// for QueryHyperlinks.
	HyperlinkField string
	// Popup (`popup`, default none) is the HTML popup template, for QueryHTMLPopups and Identify.
	Popup *Popup
	// Attachments (`attachments`, default false): the features have attachments, stored as GDAL
	// writes them in a GeoPackage: the table `<source table>__ATTACH` in the same file, with
	// columns ATTACHMENTID, REL_OBJECTID, CONTENT_TYPE, ATT_NAME, DATA_SIZE and DATA.
	Attachments bool
	// Domains (`domains`, default none) maps field names to their domains.
	Domains map[string]*Domain
	// Subtypes (`subtypes`, default none).
	Subtypes *Subtypes
	// RasterField (`rasterField`, default none) is a Blob field holding an encoded image (PNG or
	// JPEG) per feature, served as a raster field (QueryRasterValue).
	RasterField string
}
