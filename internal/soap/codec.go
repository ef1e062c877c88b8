package soap

import (
	"reflect"
	"strings"
	"sync"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// Codec reads request messages into gisxml values and writes response messages from them. It
// is safe for concurrent use; build one per process with NewCodec.
type Codec struct {
	schema    *gisxml.Schema
	namespace string
	limits    Limits
	fields    sync.Map // reflect.Type → []fieldInfo
	defaults  map[string]string
}

// NewCodec returns a codec for the given target namespace (for example
// "http://schemas.mapfarm.dev/gis/10.7").
func NewCodec(namespace string, lim Limits) *Codec {
	return &Codec{
		schema:    gisxml.Load(),
		namespace: namespace,
		limits:    lim.withDefaults(),
		defaults:  defaultKinds(),
	}
}

// defaultKinds names the concrete type read for an untyped element in a slot of an abstract
// type. Esri's own hand-written requests omit xsi:type; these are the only sensible readings.
func defaultKinds() map[string]string {
	return map[string]string{
		"Point":                   "PointN",
		"Envelope":                "EnvelopeN",
		"Multipoint":              "MultipointN",
		"Polyline":                "PolylineN",
		"Polygon":                 "PolygonN",
		"MapArea":                 "MapExtent",
		"Color":                   "RgbColor",
		"SpatialReference":        "UnknownCoordinateSystem",
		"MapTableDescription":     "LayerDescription",
		"LayerDrawingDescription": "FeatureLayerDrawingDescription",
		"FillSymbol":              "SimpleFillSymbol",
		"LineSymbol":              "SimpleLineSymbol",
		"MarkerSymbol":            "SimpleMarkerSymbol",
		"ScaleBar":                "AlternatingScaleBar",
		"Segment":                 "Line",
	}
}

// fieldInfo is one element slot of a struct, in wire order, with embedded bases flattened.
type fieldInfo struct {
	index    []int
	name     string // element name
	typ      string // schema type: "xs:int" or a gis type name
	opt      bool
	many     bool
	nillable bool
	own      bool // declared on this type, not inherited
}

func (c *Codec) fieldsOf(t reflect.Type) []fieldInfo {
	if v, ok := c.fields.Load(t); ok {
		return v.([]fieldInfo)
	}
	var out []fieldInfo
	var walk func(t reflect.Type, prefix []int, own bool)
	walk = func(t reflect.Type, prefix []int, own bool) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int(nil), prefix...), i)
			if f.Anonymous {
				walk(f.Type, idx, false)
				continue
			}
			tag, ok := f.Tag.Lookup("gis")
			if !ok {
				continue
			}
			parts := strings.Split(tag, ",")
			fi := fieldInfo{index: idx, name: parts[0], typ: parts[1], own: own}
			for _, p := range parts[2:] {
				switch p {
				case "opt":
					fi.opt = true
				case "many":
					fi.many = true
				case "nillable":
					fi.nillable = true
				}
			}
			out = append(out, fi)
		}
	}
	walk(t, nil, true)
	c.fields.Store(t, out)
	return out
}
