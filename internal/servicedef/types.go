package servicedef

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/provider"
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
	BackgroundColor Color
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

// ScaleRange limits the map scales at which something is drawn, with
// ArcGIS semantics: scales are denominators (1:MinScale), MinScale is the
// most zoomed-out scale and MaxScale the most zoomed-in one; 0 means no
// limit on that side.
type ScaleRange struct {
	// MinScale (`minScale`, default 0): not drawn when the scale
	// denominator is larger.
	MinScale float64
	// MaxScale (`maxScale`, default 0): not drawn when the scale
	// denominator is smaller.
	MaxScale float64
}

// Contains reports whether a map at scale 1:scale is within the range.
func (r ScaleRange) Contains(scale float64) bool {
	return (r.MinScale == 0 || scale <= r.MinScale) && (r.MaxScale == 0 || scale >= r.MaxScale)
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
	ScaleRange
	// DefinitionExpression (`definitionExpression`, default "") is a SQL
	// where clause that filters the features served.
	DefinitionExpression string
	// Renderer (`renderer`, default: a simple grey symbol fitting the
	// geometry type) draws the features.
	Renderer Renderer
	// Labels (`labels`, default none) are the label classes.
	Labels []Label
	// Queryable holds hyperlinkField, popup, attachments, domains, subtypes and rasterField.
	Queryable
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

// RendererType selects how a layer's features get their symbol.
type RendererType string

// Renderer types (YAML `type`).
const (
	// SimpleRenderer draws every feature with one symbol.
	SimpleRenderer RendererType = "simple"
	// UniqueValueRenderer picks a symbol by the values of 1–3 fields.
	UniqueValueRenderer RendererType = "uniqueValue"
	// ClassBreaksRenderer picks a symbol by the numeric range a field's
	// value falls in.
	ClassBreaksRenderer RendererType = "classBreaks"
)

// Renderer describes a layer's symbology. Which keys apply depends on Type.
type Renderer struct {
	// Type (`type`, default "simple") is simple, uniqueValue or classBreaks.
	Type RendererType
	// Symbol (`symbol`, required for simple) is the symbol of a simple
	// renderer.
	Symbol *Symbol
	// Label (`label`, default "") is the legend label of a simple renderer.
	Label string
	// Description (`description`, default "") is the legend description.
	Description string

	// Fields (`fields`, uniqueValue, 1–3 names) are the fields whose values
	// select the symbol.
	Fields []string
	// FieldDelimiter (`fieldDelimiter`, default ", ") joins the values of
	// several fields into one key, as ArcGIS does.
	FieldDelimiter string
	// Values (`values`, uniqueValue) map value combinations to symbols.
	Values []UniqueValue

	// Field (`field`, classBreaks) is the numeric field classified.
	Field string
	// MinValue (`minValue`, classBreaks, default: no lower bound) is the
	// lower bound of the first class.
	MinValue *float64
	// Breaks (`breaks`, classBreaks, at least one) are the classes with
	// strictly ascending upper bounds.
	Breaks []ClassBreak

	// DefaultSymbol (`defaultSymbol`, uniqueValue and classBreaks, default
	// none: unmatched features are not drawn).
	DefaultSymbol *Symbol
	// DefaultLabel (`defaultLabel`, default "<all other values>").
	DefaultLabel string
}

// UniqueValue is one class of a unique value renderer.
type UniqueValue struct {
	// Values (`value`, required) holds one value per renderer field, as
	// text. In YAML a scalar for one field or a list for several. NULL is
	// written "<Null>".
	Values []string
	// Label (`label`, default: the values joined by the delimiter).
	Label string
	// Description (`description`, default "").
	Description string
	// Symbol (`symbol`, required).
	Symbol Symbol
}

// ClassBreak is one class of a class breaks renderer: values in
// (previous MaxValue, MaxValue], the first class starting at MinValue
// inclusive.
type ClassBreak struct {
	// MaxValue (`maxValue`, required) is the inclusive upper bound.
	MaxValue float64
	// Label (`label`, default: "lower - upper").
	Label string
	// Description (`description`, default "").
	Description string
	// Symbol (`symbol`, required).
	Symbol Symbol
}

// NullValue is how a NULL attribute is written in unique value keys.
const NullValue = "<Null>"

// FormatValue renders an attribute value the way unique value renderers
// compare it: integers in decimal, floats in shortest form, dates as
// RFC 3339, NULL as NullValue.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return NullValue
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format(time.RFC3339)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// SymbolFor returns the symbol for a feature whose renderer field values
// are vals: for simple renderers vals is ignored; for unique value
// renderers vals holds the values of Fields in order; for class breaks one
// value, of Field. It returns nil when the feature is not drawn (no class
// matches and there is no default symbol).
func (r *Renderer) SymbolFor(vals []any) *Symbol {
	switch r.Type {
	case UniqueValueRenderer:
	outer:
		for i := range r.Values {
			uv := &r.Values[i]
			if len(uv.Values) != len(vals) {
				continue
			}
			for j, v := range vals {
				if FormatValue(v) != uv.Values[j] {
					continue outer
				}
			}
			return &uv.Symbol
		}
		return r.DefaultSymbol
	case ClassBreaksRenderer:
		if len(vals) != 1 {
			return r.DefaultSymbol
		}
		var x float64
		switch v := vals[0].(type) {
		case int64:
			x = float64(v)
		case float64:
			x = v
		default:
			return r.DefaultSymbol
		}
		if r.MinValue != nil && x < *r.MinValue {
			return r.DefaultSymbol
		}
		for i := range r.Breaks {
			if x <= r.Breaks[i].MaxValue {
				return &r.Breaks[i].Symbol
			}
		}
		return r.DefaultSymbol
	}
	return r.Symbol
}

// RendererFields returns the attribute names the renderer reads, in the
// order SymbolFor expects their values.
func (r *Renderer) RendererFields() []string {
	switch r.Type {
	case UniqueValueRenderer:
		return r.Fields
	case ClassBreaksRenderer:
		return []string{r.Field}
	}
	return nil
}

// SymbolType is the kind of a symbol.
type SymbolType string

// Symbol types (YAML `type`).
const (
	SimpleFill   SymbolType = "simpleFill"   // polygons
	SimpleLine   SymbolType = "simpleLine"   // polylines (and outlines)
	SimpleMarker SymbolType = "simpleMarker" // points and multipoints
)

// FillStyle is the pattern of a simple fill (esriSimpleFillStyle).
type FillStyle string

// Fill styles (YAML `style` of a simpleFill).
const (
	FillSolid            FillStyle = "solid"
	FillNull             FillStyle = "null" // outline only
	FillHorizontal       FillStyle = "horizontal"
	FillVertical         FillStyle = "vertical"
	FillCross            FillStyle = "cross"
	FillForwardDiagonal  FillStyle = "forwardDiagonal"
	FillBackwardDiagonal FillStyle = "backwardDiagonal"
	FillDiagonalCross    FillStyle = "diagonalCross"
)

// LineStyle is the dash pattern of a simple line (esriSimpleLineStyle).
type LineStyle string

// Line styles (YAML `style` of a simpleLine or outline).
const (
	LineSolid      LineStyle = "solid"
	LineDash       LineStyle = "dash"
	LineDot        LineStyle = "dot"
	LineDashDot    LineStyle = "dashDot"
	LineDashDotDot LineStyle = "dashDotDot"
	LineNull       LineStyle = "null" // invisible
)

// MarkerStyle is the shape of a simple marker (esriSimpleMarkerStyle).
type MarkerStyle string

// Marker styles (YAML `style` of a simpleMarker).
const (
	MarkerCircle  MarkerStyle = "circle"
	MarkerSquare  MarkerStyle = "square"
	MarkerCross   MarkerStyle = "cross"
	MarkerX       MarkerStyle = "x"
	MarkerDiamond MarkerStyle = "diamond"
)

// Symbol is a simple fill, line or marker symbol. Sizes and widths are in
// points (1/72 inch; at the ArcGIS default of 96 DPI one point is 4/3
// pixels).
type Symbol struct {
	// Type (`type`, required) is simpleFill, simpleLine or simpleMarker and
	// must fit the layer's geometry type.
	Type SymbolType
	// Color (`color`, default opaque black) is the fill, line or marker
	// colour.
	Color Color
	// FillStyle (`style` of a simpleFill, default solid).
	FillStyle FillStyle
	// LineStyle (`style` of a simpleLine, default solid).
	LineStyle LineStyle
	// MarkerStyle (`style` of a simpleMarker, default circle).
	MarkerStyle MarkerStyle
	// Width (`width` of a simpleLine, default 1) in points.
	Width float64
	// Size (`size` of a simpleMarker, default 6) in points.
	Size float64
	// Outline (`outline` of a simpleFill or simpleMarker, default none) is
	// the border.
	Outline *Outline
	// Picture is the image (PNG, JPEG or GIF bytes) of a pictureMarker or
	// pictureFill symbol; see picture.go. Not set from YAML.
	Picture []byte `yaml:"-"`
	// Angle (degrees anticlockwise) and XOffset, YOffset (points, y up)
	// turn and move a marker, or a picture fill's pattern. Set from
	// requests, not from YAML.
	Angle, XOffset, YOffset float64 `yaml:"-"`
	// PictureStyle holds the further details of picture symbols; see
	// picture.go.
	PictureStyle `yaml:"-"`
	// CharacterStyle is the character and font of a characterMarker
	// symbol; see character.go.
	CharacterStyle `yaml:"-"`
}

// Outline is the border of a fill or marker symbol.
type Outline struct {
	// Color (`color`, default opaque black).
	Color Color
	// Width (`width`, default 1) in points.
	Width float64
	// Style (`style`, default solid).
	Style LineStyle
}

// Label is one label class of a layer.
type Label struct {
	// Field (`field`) labels each feature with one attribute. Exactly one
	// of field and expression is required.
	Field string
	// Expression (`expression`) is a text template in which [FIELD] is
	// replaced by the feature's value, e.g. "[NAME] ([ISO_N3])".
	Expression string
	// Text is Field or Expression parsed into literal and field parts.
	Text []TextPart
	// Font (`font`, default DejaVuSans 8 pt).
	Font Font
	// Color (`color`, default opaque black) is the text colour.
	Color Color
	// Halo (`halo`, default none) is the outline drawn around the glyphs.
	Halo *Halo
	// ScaleRange (`minScale`, `maxScale`, default 0/0) limits when the
	// class is labelled, with the same semantics as a layer's.
	ScaleRange
	// Priority (`priority`, default 0): classes with lower numbers are
	// placed first and win conflicts; ties go to the layer drawn on top.
	Priority int
	// Where limits the class to the features matching this where clause.
	// Set from requests (LabelClassDescription/WhereClause), not from YAML.
	Where string `yaml:"-"`
	// Placement (`placement`, default: the default placement of each
	// geometry type) says where the class's labels go.
	Placement LabelPlacement
}

// LabelPlacement is where a label class puts its labels (`placement`). The
// zero value is the default placement: point labels at the best of eight
// positions, line labels once, curved along the middle of the longest part,
// polygon labels horizontally inside.
type LabelPlacement struct {
	// Points (`point`, default `best`) lists the positions tried around a
	// point, in order: `right`, `above-right`, `below-right`, `left`,
	// `above-left`, `below-left`, `above`, `below`, `center`, or the single
	// word `best`: right, above-right, below-right, left, above-left,
	// below-left, above, below. Empty means best.
	Points []PointPosition
	// Offset (`offset`, points, default 0) is the distance from a point to
	// its label (0: half the marker plus 2 points), from a line's stroke to a
	// label above or below it (0: 2 points), and from a polygon's box to a
	// label placed outside it (0: 2 points).
	Offset float64
	// Line (`line`: `on`, `above` or `below`, default on) is the side of the
	// line (on screen) line labels are drawn on.
	Line LineSide
	// Along (`along`: `middle`, `start` or `end`, default middle) is where
	// along the visible part of a line its label is tried first.
	Along LineAnchor
	// Orientation (`orientation`: `curved`, `straight` or `horizontal`,
	// default curved) is how a line label follows its line.
	Orientation LineOrientation
	// Repeat (`repeat`, points, default 0) repeats a line's label once per
	// stretch of this length; 0 labels each line once.
	Repeat float64
	// AllParts (`parts`: `longest` or `all`, default longest) labels every
	// part of a multipart line instead of only its longest.
	AllParts bool
	// PolygonStraight (`polygon`: `horizontal` or `straight`, default
	// horizontal) turns polygon labels to the polygon's main direction.
	PolygonStraight bool
	// Outside (`outside`, default false) lets a polygon label that fits
	// nowhere inside the polygon go around it like a point label.
	Outside bool
	// RemoveDuplicates (`duplicates`: `keep` or `remove`, default keep)
	// labels each distinct text of the class once per drawing.
	RemoveDuplicates bool
}

// PointPosition is a position of a label around its point.
type PointPosition string

// Point label positions.
const (
	PointRight      PointPosition = "right"
	PointAboveRight PointPosition = "above-right"
	PointBelowRight PointPosition = "below-right"
	PointLeft       PointPosition = "left"
	PointAboveLeft  PointPosition = "above-left"
	PointBelowLeft  PointPosition = "below-left"
	PointAbove      PointPosition = "above"
	PointBelow      PointPosition = "below"
	PointCenter     PointPosition = "center"
)

// LineSide is the side of its line a line label is drawn on.
type LineSide string

// Line sides; "" is LineOn.
const (
	LineOn    LineSide = "on"
	LineAbove LineSide = "above"
	LineBelow LineSide = "below"
)

// LineAnchor is where along a line its label is tried first.
type LineAnchor string

// Line anchors; "" is LineMiddle.
const (
	LineMiddle LineAnchor = "middle"
	LineStart  LineAnchor = "start"
	LineEnd    LineAnchor = "end"
)

// LineOrientation is how a line label follows its line.
type LineOrientation string

// Line orientations; "" is LineCurved.
const (
	LineCurved     LineOrientation = "curved"
	LineStraight   LineOrientation = "straight"
	LineHorizontal LineOrientation = "horizontal"
)

// TextPart is a literal piece of label text or a field reference.
type TextPart struct {
	Literal string // used when Field is ""
	Field   string
}

// Format builds the label text for a feature; value returns a field's
// value (nil for NULL, which renders as "").
func (l *Label) Format(value func(field string) any) string {
	var b strings.Builder
	for _, p := range l.Text {
		if p.Field == "" {
			b.WriteString(p.Literal)
			continue
		}
		if v := value(p.Field); v != nil {
			b.WriteString(FormatValue(v))
		}
	}
	return b.String()
}

// Font is a label font.
type Font struct {
	// Family (`family`, default "DejaVuSans"). Every family is drawn
	// with DejaVu Sans, in the weight and style asked for.
	Family string
	// Size (`size`, default 8) in points.
	Size float64
	// Bold (`weight`: `normal` or `bold`, default normal), Italic
	// (`style`: `normal`, `italic` or `oblique`, default normal),
	// Underline and Strikethrough (`decoration`: `none`, `underline` or
	// `line-through`, default none), as in ArcGIS's text symbol fonts.
	Bold, Italic, Underline, Strikethrough bool
}

// Halo is a label halo.
type Halo struct {
	// Color (`color`, default opaque white).
	Color Color
	// Width (`width`, default 1) in points.
	Width float64
}

// Color is an 8-bit sRGB colour with straight (non-premultiplied) alpha.
// In YAML: `[r, g, b]`, `[r, g, b, a]` (0–255 each) or "#rrggbb" /
// "#rrggbbaa". Alpha defaults to 255 (opaque).
type Color struct {
	R, G, B, A uint8
}

// NRGBA returns the colour as an image/color value.
func (c Color) NRGBA() color.NRGBA { return color.NRGBA{R: c.R, G: c.G, B: c.B, A: c.A} }

// RGBA implements image/color.Color.
func (c Color) RGBA() (r, g, b, a uint32) { return c.NRGBA().RGBA() }

// String returns "#rrggbb" or "#rrggbbaa" when not opaque.
func (c Color) String() string {
	if c.A == 255 {
		return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
	}
	return fmt.Sprintf("#%02x%02x%02x%02x", c.R, c.G, c.B, c.A)
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
