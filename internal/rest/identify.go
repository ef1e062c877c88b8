package rest

import (
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// viewParams are the map view identify and find share: the default map description in the
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

// writeResult writes the members identify and find results share.
func writeResult(w *jsonWriter, info *gisxml.MapServerInfo, layerID int, displayField, value string, props *gisxml.PropertySet, shape gisxml.GeometryKind, sr gisxml.SpatialReference) {
	w.key("layerId")
	w.int(int64(layerID))
	w.key("layerName")
	if l := findLayer(info, layerID); l != nil {
		w.str(l.Name)
	} else {
		w.str("")
	}
	w.key("displayFieldName")
	w.str(displayField)
	w.key("value")
	w.str(value)
	w.key("attributes")
	w.objOpen()
	if props != nil {
		for _, p := range props.PropertyArray {
			if p != nil {
				w.key(p.Key)
				w.value(p.Value)
			}
		}
	}
	w.objClose()
	if shape != nil {
		w.key("geometryType")
		w.str(geometryTypeOf(shape))
		w.key("geometry")
		var g jsonWriter
		g.geometry(shape)
		b := g.bytes()
		if len(b) > 1 && b[len(b)-1] == '}' {
			// The geometry carries its spatial reference, as identify and find write it.
			var s jsonWriter
			s.spatialReference(sr)
			b = append(append(append(b[:len(b)-1], `,"spatialReference":`...), s.bytes()...), '}')
		}
		w.raw(b)
	}
}

// identify answers identify: the features near a geometry on the map, through Identify.
func (ms *mapService) identify(q *request) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	sr, err := parseSR("sr", q.param("sr"))
	if err != nil {
		return err
	}
	if sr == nil {
		sr = info.SpatialReference
	}
	geometryType := q.param("geometryType")
	if geometryType == "" {
		geometryType = "esriGeometryPoint"
	}
	if q.param("geometry") == "" {
		return badRequest("'geometry' parameter is required")
	}
	geom, err := parseGeometry(q.param("geometry"), geometryType, sr)
	if err != nil {
		return err
	}
	tolerance, err := intParam(q, "tolerance")
	if err != nil {
		return err
	}
	ext, err := parseBBox(q.param("mapExtent"), sr)
	if err != nil {
		return badRequest("'mapExtent' parameter is invalid: %q", q.param("mapExtent"))
	}
	disp, err := parseImageDisplay(q.param("imageDisplay"))
	if err != nil {
		return err
	}
	returnGeometry, err := boolParam(q, "returnGeometry", true)
	if err != nil {
		return err
	}
	fieldNames, err := boolParam(q, "returnFieldName", false)
	if err != nil {
		return err
	}
	md, err := ms.mapDescription(q, info, sr, returnGeometry, fieldNames)
	if err != nil {
		return err
	}
	md.MapArea = &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: ext}}
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
	resp, err := ms.do(q, "Identify", &gisxml.Identify{MapDescription: md, MapImageDisplay: disp, SearchShape: geom,
		Tolerance: tolerance, IdentifyOption: option, LayerIDs: ids})
	if err != nil {
		return err
	}
	var w jsonWriter
	w.objOpen()
	w.key("results")
	w.arrOpen()
	for _, r := range resp.(*gisxml.IdentifyResponse).Result {
		field, value := displayValue(info, r.LayerID, r.Properties, fieldNames)
		w.objOpen()
		writeResult(&w, info, r.LayerID, field, value, r.Properties, r.Shape, sr)
		w.objClose()
	}
	w.arrClose()
	w.objClose()
	return ms.h.writeJSON(q, &w)
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
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	text := q.param("searchText")
	if text == "" {
		return badRequest("'searchText' parameter is required")
	}
	sr, err := parseSR("sr", q.param("sr"))
	if err != nil {
		return err
	}
	if sr == nil {
		sr = info.SpatialReference
	}
	contains, err := boolParam(q, "contains", true)
	if err != nil {
		return err
	}
	returnGeometry, err := boolParam(q, "returnGeometry", true)
	if err != nil {
		return err
	}
	fieldNames, err := boolParam(q, "returnFieldName", false)
	if err != nil {
		return err
	}
	ids, err := parseIDs("layers", q.param("layers"))
	if err != nil {
		return err
	}
	md, err := ms.mapDescription(q, info, sr, returnGeometry, fieldNames)
	if err != nil {
		return err
	}
	resp, err := ms.do(q, "Find", &gisxml.Find{MapDescription: md, MapImageDisplay: &gisxml.ImageDisplay{ImageWidth: 400, ImageHeight: 400, ImageDPI: 96},
		SearchString: text, Contains: contains, SearchFields: q.param("searchFields"), FindOption: gisxml.FindAllLayers, LayerIDs: ids})
	if err != nil {
		return err
	}
	var w jsonWriter
	w.objOpen()
	w.key("results")
	w.arrOpen()
	for _, r := range resp.(*gisxml.FindResponse).Result {
		field, _ := displayValue(info, r.LayerID, r.Properties, fieldNames)
		w.objOpen()
		w.key("foundFieldName")
		w.str(r.FieldName)
		writeResult(&w, info, r.LayerID, field, r.Value, r.Properties, r.Shape, sr)
		w.objClose()
	}
	w.arrClose()
	w.objClose()
	return ms.h.writeJSON(q, &w)
}
