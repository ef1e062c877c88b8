package rest

import (
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// mapDescription is the map view identify and find share: the default map description in the
// request's sr, with its layers' result options and definitions.
func (ms *mapService) mapDescription(q *request, info *gisxml.MapServerInfo, sr gisxml.SpatialReference, returnGeometry, fieldNames bool) (*gisxml.MapDescription, error) {
	if info.DefaultMapDescription == nil {
		return nil, badRequest("the map has no default map description")
	}
	md := *info.DefaultMapDescription
	md.SpatialReference = sr
	md.LayerDescriptions = make(gisxml.ArrayOfLayerDescription, len(info.DefaultMapDescription.LayerDescriptions))
	for i, ld := range info.DefaultMapDescription.LayerDescriptions {
		c := *ld
		g, n := returnGeometry, fieldNames
		c.LayerResultOptions = &gisxml.LayerResultOptions{IncludeGeometry: &g, ReturnFieldNamesInResults: &n}
		md.LayerDescriptions[i] = &c
	}
	if err := applyLayerDefs(md.LayerDescriptions, q.param("layerDefs")); err != nil {
		return nil, err
	}
	return &md, nil
}

// parseIDs reads a comma list of layer ids.
func parseIDs(name, s string) (gisxml.ArrayOfInt, error) {
	var ids gisxml.ArrayOfInt
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, badRequest("'%s' parameter is invalid: %q", name, s)
		}
		ids = append(ids, n)
	}
	return ids, nil
}

// displayValue is the value of the layer's display field among a result's properties (keyed
// by alias, or by name with returnFieldName).
func displayValue(info *gisxml.MapServerInfo, layerID int, props *gisxml.PropertySet, fieldNames bool) (string, string) {
	l := findLayer(info, layerID)
	if l == nil || props == nil {
		return "", ""
	}
	key := l.DisplayField
	if !fieldNames && l.Fields != nil {
		for _, f := range l.Fields.FieldArray {
			if strings.EqualFold(f.Name, l.DisplayField) && f.AliasName != nil && *f.AliasName != "" {
				key = *f.AliasName
			}
		}
	}
	for _, p := range props.PropertyArray {
		if p != nil && p.Key == key {
			return l.DisplayField, valueString(p.Value)
		}
	}
	return l.DisplayField, ""
}

func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "Null"
	case string:
		return x
	}
	var w jsonWriter
	w.value(v)
	return string(w.bytes())
}

// result is one identify or find result.
type result struct {
	foundFieldName *string // find only
	layerID        int
	displayField   string
	value          string
	props          *gisxml.PropertySet
	shape          gisxml.GeometryKind
}

// writeResults answers identify's and find's results: the layer, the display field's value, the
// attributes, and the geometry with its spatial reference.
func (ms *mapService) writeResults(q *request, v *viewRequest, results []result) error {
	var w jsonWriter
	w.objOpen()
	w.key("results")
	w.arrOpen()
	for _, r := range results {
		w.objOpen()
		if r.foundFieldName != nil {
			w.key("foundFieldName")
			w.str(*r.foundFieldName)
		}
		w.key("layerId")
		w.int(int64(r.layerID))
		w.key("layerName")
		if l := findLayer(v.info, r.layerID); l != nil {
			w.str(l.Name)
		} else {
			w.str("")
		}
		w.key("displayFieldName")
		w.str(r.displayField)
		w.key("value")
		w.str(r.value)
		w.key("attributes")
		w.objOpen()
		if r.props != nil {
			for _, p := range r.props.PropertyArray {
				if p != nil {
					w.key(p.Key)
					w.value(p.Value)
				}
			}
		}
		w.objClose()
		if r.shape != nil {
			w.key("geometryType")
			w.str(geometryTypeOf(r.shape))
			w.key("geometry")
			w.geometryWithSR(r.shape, v.sr)
		}
		w.objClose()
	}
	w.arrClose()
	w.objClose()
	return ms.h.writeJSON(q, &w)
}

// geometryWithSR writes a geometry that carries its spatial reference, as identify and find
// write it.
func (w *jsonWriter) geometryWithSR(shape gisxml.GeometryKind, sr gisxml.SpatialReference) {
	var g jsonWriter
	g.geometry(shape)
	b := g.bytes()
	if len(b) > 1 && b[len(b)-1] == '}' {
		var s jsonWriter
		s.spatialReference(sr)
		b = append(append(append(b[:len(b)-1], `,"spatialReference":`...), s.bytes()...), '}')
	}
	w.raw(b)
}

// viewRequest is what identify and find read alike: the service, the request's sr (the map's
// by default), returnFieldName, and the default map description with the result options.
type viewRequest struct {
	info       *gisxml.MapServerInfo
	sr         gisxml.SpatialReference
	fieldNames bool
	md         *gisxml.MapDescription
}

func (ms *mapService) viewRequest(q *request) (*viewRequest, error) {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return nil, err
	}
	sr, err := srParam(q, "sr", info.SpatialReference)
	if err != nil {
		return nil, err
	}
	returnGeometry, err := boolParam(q, "returnGeometry", true)
	if err != nil {
		return nil, err
	}
	fieldNames, err := boolParam(q, "returnFieldName", false)
	if err != nil {
		return nil, err
	}
	md, err := ms.mapDescription(q, info, sr, returnGeometry, fieldNames)
	if err != nil {
		return nil, err
	}
	return &viewRequest{info: info, sr: sr, fieldNames: fieldNames, md: md}, nil
}

// identify answers identify: the features near a geometry on the map, through Identify.
func (ms *mapService) identify(q *request) error {
	v, err := ms.viewRequest(q)
	if err != nil {
		return err
	}
	geometryType := q.param("geometryType")
	if geometryType == "" {
		geometryType = "esriGeometryPoint"
	}
	if q.param("geometry") == "" {
		return badRequest("'geometry' parameter is required")
	}
	geom, err := parseGeometry(q.param("geometry"), geometryType, v.sr)
	if err != nil {
		return err
	}
	tolerance, err := intParam(q, "tolerance")
	if err != nil {
		return err
	}
	ext, err := parseBBox(q.param("mapExtent"), v.sr)
	if err != nil {
		return badRequest("'mapExtent' parameter is invalid: %q", q.param("mapExtent"))
	}
	disp, err := parseImageDisplay(q.param("imageDisplay"))
	if err != nil {
		return err
	}
	v.md.MapArea = &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: ext}}
	option := gisxml.IdentifyTopmost
	layers := q.param("layers")
	mode, list, _ := strings.Cut(layers, ":")
	switch strings.ToLower(mode) {
	case "", "top":
	case "visible":
		option = gisxml.IdentifyVisibleLayers
	case "all":
		option = gisxml.IdentifyAllLayers
	default:
		return badRequest("'layers' parameter is invalid: %q", layers)
	}
	ids, err := parseIDs("layers", list)
	if err != nil {
		return err
	}
	resp, err := invoke(ms, q, "Identify", mapserver.Drawing(ms.h.p.Ops, ms.families().Queries.Identify), &gisxml.Identify{MapDescription: v.md, MapImageDisplay: disp, SearchShape: geom,
		Tolerance: tolerance, IdentifyOption: option, LayerIDs: ids})
	if err != nil {
		return err
	}
	var results []result
	for _, r := range resp.Result {
		field, value := displayValue(v.info, r.LayerID, r.Properties, v.fieldNames)
		results = append(results, result{layerID: r.LayerID, displayField: field, value: value, props: r.Properties, shape: r.Shape})
	}
	return ms.writeResults(q, v, results)
}

// parseImageDisplay reads imageDisplay=width,height,dpi.
func parseImageDisplay(s string) (*gisxml.ImageDisplay, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, badRequest("'imageDisplay' parameter is invalid: %q", s)
	}
	w, err1 := strconv.Atoi(strings.TrimSpace(parts[0]))
	h, err2 := strconv.Atoi(strings.TrimSpace(parts[1]))
	dpi := 96.0
	var err3 error
	if len(parts) == 3 {
		dpi, err3 = strconv.ParseFloat(strings.TrimSpace(parts[2]), 64)
	}
	if err1 != nil || err2 != nil || err3 != nil || w <= 0 || h <= 0 || dpi <= 0 {
		return nil, badRequest("'imageDisplay' parameter is invalid: %q", s)
	}
	return &gisxml.ImageDisplay{ImageWidth: w, ImageHeight: h, ImageDPI: dpi}, nil
}

// find answers find: features whose field values hold searchText, through Find.
func (ms *mapService) find(q *request) error {
	v, err := ms.viewRequest(q)
	if err != nil {
		return err
	}
	text := q.param("searchText")
	if text == "" {
		return badRequest("'searchText' parameter is required")
	}
	contains, err := boolParam(q, "contains", true)
	if err != nil {
		return err
	}
	ids, err := parseIDs("layers", q.param("layers"))
	if err != nil {
		return err
	}
	resp, err := invoke(ms, q, "Find", mapserver.Drawing(ms.h.p.Ops, ms.families().Queries.Find), &gisxml.Find{MapDescription: v.md, MapImageDisplay: &gisxml.ImageDisplay{ImageWidth: 400, ImageHeight: 400, ImageDPI: 96},
		SearchString: text, Contains: contains, SearchFields: q.param("searchFields"), FindOption: gisxml.FindAllLayers, LayerIDs: ids})
	if err != nil {
		return err
	}
	var results []result
	for _, r := range resp.Result {
		field, _ := displayValue(v.info, r.LayerID, r.Properties, v.fieldNames)
		results = append(results, result{foundFieldName: &r.FieldName, layerID: r.LayerID, displayField: field, value: r.Value, props: r.Properties, shape: r.Shape})
	}
	return ms.writeResults(q, v, results)
}
