package ogcapi

import (
	"net/http"
	"strconv"
)

// openAPI answers /api: a compact OpenAPI 3.0 definition of the service's API, every path with
// its parameters (the items' property filters among them, one per field of the layer), so that
// the parameters a request may give are the ones it names.
func (s *service) openAPI(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaOpenAPI, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	info, err := s.serverInfo()
	if err != nil {
		return err
	}
	str := map[string]any{"type": "string"}
	param := func(name, in, desc string, schema map[string]any, required bool) map[string]any {
		return map[string]any{"name": name, "in": in, "description": desc, "required": required, "schema": schema, "style": "form", "explode": false}
	}
	f := func(values ...string) map[string]any {
		return param("f", "query", "the format of the answer (else the Accept header)", map[string]any{"type": "string", "enum": values}, false)
	}
	ok := func(desc string, types ...string) map[string]any {
		content := map[string]any{}
		for _, t := range types {
			content[t] = map[string]any{}
		}
		return map[string]any{"200": map[string]any{"description": desc, "content": content}}
	}
	get := func(summary string, params []any, resp map[string]any) map[string]any {
		return map[string]any{"get": map[string]any{"summary": summary, "parameters": params, "responses": resp}}
	}
	var uris []any
	for _, c := range s.systems() {
		uris = append(uris, c.uri)
	}
	crsSchema := map[string]any{"type": "string", "format": "uri", "enum": uris}
	bbox := param("bbox", "query", "lower and upper corners, in bbox-crs", map[string]any{"type": "array", "minItems": 4, "maxItems": 6, "items": map[string]any{"type": "number"}}, false)
	mapParams := []any{bbox, param("bbox-crs", "query", "the system of bbox (CRS84 by default)", crsSchema, false),
		param("crs", "query", "the system of the map (the map's own by default)", crsSchema, false),
		param("width", "query", "width in pixels", map[string]any{"type": "integer", "minimum": 1, "maximum": s.h.p.MaxImageWidth}, false),
		param("height", "query", "height in pixels", map[string]any{"type": "integer", "minimum": 1, "maximum": s.h.p.MaxImageHeight}, false),
		f("png", "jpg")}
	tileParams := []any{param("tileMatrixSetId", "path", "the tile matrix set", map[string]any{"type": "string", "enum": []any{wmqID}}, true),
		param("tileMatrix", "path", "the level", str, true), param("tileRow", "path", "the row", map[string]any{"type": "integer", "minimum": 0}, true),
		param("tileCol", "path", "the column", map[string]any{"type": "integer", "minimum": 0}, true), f("png", "jpg")}
	meta := []any{f("json", "html")}
	paths := map[string]any{
		"/":                            get("the landing page", meta, ok("the landing page", mediaJSON, mediaHTML)),
		"/conformance":                 get("the conformance classes", meta, ok("the conformance declaration", mediaJSON, mediaHTML)),
		"/api":                         get("this definition", []any{f("json")}, ok("the API definition", mediaOpenAPI)),
		"/collections":                 get("the collections", meta, ok("the collections", mediaJSON, mediaHTML)),
		"/map":                         get("a map of the dataset", mapParams, ok("the map", mediaPNG, mediaJPEG)),
		"/map/tiles":                   get("the dataset's map tilesets", meta, ok("the tilesets", mediaJSON, mediaHTML)),
		"/map/tiles/{tileMatrixSetId}": get("a map tileset", append([]any{tileParams[0]}, meta...), ok("the tileset", mediaJSON, mediaHTML)),
		"/map/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}": get("a map tile", tileParams, ok("the tile", mediaPNG, mediaJPEG)),
		"/tileMatrixSets":                   get("the tile matrix sets", meta, ok("the tile matrix sets", mediaJSON, mediaHTML)),
		"/tileMatrixSets/{tileMatrixSetId}": get("a tile matrix set", append([]any{tileParams[0]}, meta...), ok("the tile matrix set", mediaJSON, mediaHTML)),
	}
	if vt := s.h.p.VectorTiles; vt != nil {
		mvtParams := append(tileParams[:len(tileParams)-1:len(tileParams)-1], f("mvt"))
		paths["/tiles"] = get("the dataset's vector tilesets", meta, ok("the tilesets", mediaJSON, mediaHTML))
		paths["/tiles/{tileMatrixSetId}"] = get("a vector tileset", append([]any{tileParams[0]}, meta...), ok("the tileset", mediaJSON, mediaHTML))
		paths["/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}"] = get("a vector tile", mvtParams, ok("the tile", mediaMVT))
	}
	for _, l := range info.MapLayerInfos {
		id := strconv.Itoa(l.LayerID)
		c := "/collections/" + id
		paths[c] = get("collection "+id+": "+l.Name, meta, ok("the collection", mediaJSON, mediaHTML))
		paths[c+"/map"] = get("a map of "+l.Name, mapParams, ok("the map", mediaPNG, mediaJPEG))
		paths[c+"/map/tiles"] = get("the map tilesets of "+l.Name, meta, ok("the tilesets", mediaJSON, mediaHTML))
		paths[c+"/map/tiles/{tileMatrixSetId}"] = get("a map tileset of "+l.Name, append([]any{tileParams[0]}, meta...), ok("the tileset", mediaJSON, mediaHTML))
		paths[c+"/map/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}"] = get("a map tile of "+l.Name, tileParams, ok("the tile", mediaPNG, mediaJPEG))
		if !l.IsFeatureLayer {
			continue
		}
		items := []any{param("limit", "query", "the most features of a page", map[string]any{"type": "integer", "minimum": 1, "maximum": s.h.p.MaxRecordCount, "default": defaultLimit}, false),
			param("offset", "query", "the features to skip", map[string]any{"type": "integer", "minimum": 0, "default": 0}, false),
			bbox, param("bbox-crs", "query", "the system of bbox (CRS84 by default)", crsSchema, false),
			param("crs", "query", "the system of the geometries (CRS84 by default)", crsSchema, false),
			param("datetime", "query", "no feature has a time: filters nothing", str, false),
			f("geojson", "json", "html")}
		for _, fd := range fieldsOf(l) {
			if fd.GeometryDef == nil {
				items = append(items, param(fd.Name, "query", "features whose "+fd.Name+" equals the value", str, false))
			}
		}
		paths[c+"/items"] = get("the features of "+l.Name, items, ok("the features", mediaGeoJSON, mediaHTML))
		paths[c+"/items/{featureId}"] = get("a feature of "+l.Name, []any{param("featureId", "path", "the feature's object id", map[string]any{"type": "integer"}, true),
			param("crs", "query", "the system of the geometry (CRS84 by default)", crsSchema, false), f("geojson", "json", "html")},
			ok("the feature", mediaGeoJSON, mediaHTML))
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": title(s.svc.Def.DocumentInfo.Title, s.svc.Name), "description": s.svc.Def.Description, "version": "1.0.0"},
		"servers": []any{map[string]any{"url": s.base}},
		"paths":   paths,
	}
	jsonType := mediaOpenAPI
	if mt == mediaJSON {
		jsonType = mediaJSON
	}
	pg := &page{Title: "API definition of " + s.svc.Name, Description: "The OpenAPI 3.0 definition: " + s.base + "/api?f=json",
		Links: []link{{Href: s.base + "/api?f=json", Rel: "service-desc", Type: mediaOpenAPI}}}
	return writeDoc(w, r, mt, jsonType, doc, pg)
}
