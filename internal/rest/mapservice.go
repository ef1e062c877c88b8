package rest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// supportedImageFormatTypes are the export formats, as the root resource lists them (those the
// SOAP ExportMapImage draws).
const supportedImageFormatTypes = "PNG32,PNG24,PNG,JPG,DIB,TIFF,GIF,SVG,PDF,BMP"

// mapService is one MapServer resource being answered.
type mapService struct {
	h    *Handler
	svc  *catalog.Service
	call *mapserver.Call
	info *gisxml.MapServerInfo // GetServerInfo of the default map, fetched once
}

// do runs one operation of the service, after the request limits.
func (ms *mapService) do(q *request, op string, req any) (any, error) {
	start := time.Now()
	if check := ms.h.p.Check; check != nil {
		if err := check(op, req); err != nil {
			ms.observe(op, start, err)
			return nil, &Error{Code: http.StatusBadRequest, Message: "Unable to complete operation.", Details: []string{err.Error()}, err: err}
		}
	}
	resp, err := ms.h.p.Ops.Do(q.ctx, ms.call, op, req)
	ms.observe(op, start, err)
	return resp, err
}

func (ms *mapService) observe(op string, start time.Time, err error) {
	if o := ms.h.p.Observe; o != nil {
		o(op, start, err)
	}
}

// serverInfo is GetServerInfo of the service's default map, which every resource describes.
func (ms *mapService) serverInfo(q *request) (*gisxml.MapServerInfo, error) {
	if ms.info != nil {
		return ms.info, nil
	}
	resp, err := ms.do(q, "GetServerInfo", &gisxml.GetServerInfo{MapName: ms.svc.DefaultMap().Name})
	if err != nil {
		return nil, err
	}
	ms.info = resp.(*gisxml.GetServerInfoResponse).Result
	return ms.info, nil
}

// jsonInfo is serverInfo for a resource that answers only f=json and f=pjson.
func (ms *mapService) jsonInfo(q *request) (*gisxml.MapServerInfo, error) {
	if err := jsonFormat(q); err != nil {
		return nil, err
	}
	return ms.serverInfo(q)
}

func layerID(s string) (int, error) {
	id, err := strconv.Atoi(s)
	if err != nil || id < 0 {
		return 0, badRequest("Invalid layer ID: %q", s)
	}
	return id, nil
}

// defaultVisibility reads the default map description's layer visibility.
func defaultVisibility(info *gisxml.MapServerInfo) map[int]bool {
	vis := map[int]bool{}
	if md := info.DefaultMapDescription; md != nil {
		for _, ld := range md.LayerDescriptions {
			if ld != nil {
				vis[ld.LayerID] = ld.Visible
			}
		}
	}
	return vis
}

// root answers the MapServer resource as ArcGIS Server 10.7 does.
func (ms *mapService) root(q *request) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	vis := defaultVisibility(info)
	var w jsonWriter
	w.objOpen()
	ms.h.version(&w)
	w.key("serviceDescription")
	w.str(ms.svc.Def.Description)
	w.key("mapName")
	w.str(info.Name)
	w.key("description")
	w.str(info.Description)
	w.key("copyrightText")
	w.str(info.CopyrightText)
	w.key("supportsDynamicLayers")
	w.bool(false)
	w.key("layers")
	w.arrOpen()
	for _, l := range info.MapLayerInfos {
		w.objOpen()
		w.key("id")
		w.int(int64(l.LayerID))
		w.key("name")
		w.str(l.Name)
		w.key("parentLayerId")
		w.int(int64(parentOf(l)))
		w.key("defaultVisibility")
		w.bool(vis[l.LayerID])
		w.key("subLayerIds")
		subLayerIDs(&w, l)
		w.key("minScale")
		w.float(l.MinScale)
		w.key("maxScale")
		w.float(l.MaxScale)
		w.key("geometryType")
		w.str(layerGeometryType(l.Fields))
		w.objClose()
	}
	w.arrClose()
	w.key("tables")
	w.arrOpen()
	for _, t := range info.StandaloneTableInfos {
		w.objOpen()
		w.key("id")
		w.int(int64(t.ID))
		w.key("name")
		w.str(t.Name)
		w.objClose()
	}
	w.arrClose()
	w.key("spatialReference")
	w.spatialReference(info.SpatialReference)
	if err := ms.tileInfo(q, &w); err != nil {
		return err
	}
	w.key("initialExtent")
	w.envelope(info.Extent)
	w.key("fullExtent")
	w.envelope(info.FullExtent)
	w.key("minScale")
	w.float(deref(info.MinScale))
	w.key("maxScale")
	w.float(deref(info.MaxScale))
	w.key("units")
	w.str(esriType(string(info.Units)))
	w.key("supportedImageFormatTypes")
	w.str(supportedImageFormatTypes)
	w.key("documentInfo")
	w.objOpen()
	for _, k := range []string{"Title", "Author", "Comments", "Subject", "Category", "AntialiasingMode", "TextAntialiasingMode", "Keywords"} {
		w.key(k)
		w.str("")
	}
	w.objClose()
	w.key("capabilities")
	w.str("Map,Query,Data")
	w.key("supportedQueryFormats")
	w.str("JSON, geoJSON")
	w.key("exportTilesAllowed")
	w.bool(false)
	w.key("supportsDatumTransformation")
	w.bool(false)
	w.key("maxRecordCount")
	w.int(int64(ms.h.p.MaxRecordCount))
	w.key("maxImageHeight")
	w.int(int64(ms.h.p.MaxImageHeight))
	w.key("maxImageWidth")
	w.int(int64(ms.h.p.MaxImageWidth))
	w.key("supportedExtensions")
	w.str("")
	w.objClose()
	return ms.h.writeJSON(q, &w)
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// parentOf is a layer's parentLayerId: -1 for a top-level layer (the maps here have no group
// layers, and GetServerInfo writes -1 for none).
func parentOf(l *gisxml.MapLayerInfo) int {
	if l.ParentLayerID <= 0 {
		return -1
	}
	return l.ParentLayerID
}

func subLayerIDs(w *jsonWriter, l *gisxml.MapLayerInfo) {
	if len(l.SubLayerIDs) == 0 {
		w.null()
		return
	}
	w.arrOpen()
	for _, id := range l.SubLayerIDs {
		w.int(int64(id))
	}
	w.arrClose()
}

// tileInfo writes singleFusedMapCache, and tileInfo with its LODs where the map has a fused
// cache, from the cache operations.
func (ms *mapService) tileInfo(q *request, w *jsonWriter) error {
	name := ms.svc.DefaultMap().Name
	resp, err := ms.do(q, "HasSingleFusedMapCache", &gisxml.HasSingleFusedMapCache{MapName: name})
	if err != nil {
		return err
	}
	cached := resp.(*gisxml.HasSingleFusedMapCacheResponse).Result
	w.key("singleFusedMapCache")
	w.bool(cached)
	if !cached {
		return nil
	}
	tr, err := ms.do(q, "GetTileCacheInfo", &gisxml.GetTileCacheInfo{MapName: name})
	if err != nil {
		return err
	}
	ir, err := ms.do(q, "GetTileImageInfo", &gisxml.GetTileImageInfo{MapName: name})
	if err != nil {
		return err
	}
	ti := tr.(*gisxml.GetTileCacheInfoResponse).Result
	ii := ir.(*gisxml.GetTileImageInfoResponse).Result
	w.key("tileInfo")
	w.objOpen()
	w.key("rows")
	w.int(int64(ti.TileRows))
	w.key("cols")
	w.int(int64(ti.TileCols))
	w.key("dpi")
	w.int(int64(ti.DPI))
	w.key("format")
	w.str(ii.CacheTileFormat)
	w.key("compressionQuality")
	w.int(int64(ii.CompressionQuality))
	w.key("origin")
	x, y, _ := pointXY(ti.TileOrigin)
	w.objOpen()
	w.key("x")
	w.float(x)
	w.key("y")
	w.float(y)
	w.objClose()
	w.key("spatialReference")
	w.spatialReference(ti.SpatialReference)
	w.key("lods")
	w.arrOpen()
	for _, l := range ti.LODInfos {
		w.objOpen()
		w.key("level")
		w.int(int64(l.LevelID))
		w.key("resolution")
		w.float(l.Resolution)
		w.key("scale")
		w.float(l.Scale)
		w.objClose()
	}
	w.arrClose()
	w.objClose()
	return nil
}

// layerGeometryType is the Esri geometry type of a layer from its shape field.
func layerGeometryType(fs *gisxml.Fields) string {
	if fs == nil {
		return ""
	}
	for _, f := range fs.FieldArray {
		if f.GeometryDef != nil {
			return esriType(string(f.GeometryDef.GeometryType))
		}
	}
	return ""
}

// layers answers /layers: every layer's and table's description.
func (ms *mapService) layers(q *request) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	renderers, err := ms.renderers(q, info)
	if err != nil {
		return err
	}
	var w jsonWriter
	w.objOpen()
	w.key("layers")
	w.arrOpen()
	for _, l := range info.MapLayerInfos {
		ms.writeLayer(&w, info, l, renderers[l.LayerID])
	}
	w.arrClose()
	w.key("tables")
	w.arrOpen()
	for _, t := range info.StandaloneTableInfos {
		ms.writeTable(&w, t)
	}
	w.arrClose()
	w.objClose()
	return ms.h.writeJSON(q, &w)
}

// layer answers /<id>: one layer or table.
func (ms *mapService) layer(q *request, id int) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	var w jsonWriter
	if l := findLayer(info, id); l != nil {
		renderers, err := ms.renderers(q, info)
		if err != nil {
			return err
		}
		w.objOpen()
		ms.h.version(&w)
		ms.layerMembers(&w, info, l, renderers[id])
		w.objClose()
		return ms.h.writeJSON(q, &w)
	}
	if t := findTable(info, id); t != nil {
		w.objOpen()
		ms.h.version(&w)
		ms.tableMembers(&w, t)
		w.objClose()
		return ms.h.writeJSON(q, &w)
	}
	return badRequest("Invalid layer ID: %d", id)
}

func findLayer(info *gisxml.MapServerInfo, id int) *gisxml.MapLayerInfo {
	for _, l := range info.MapLayerInfos {
		if l.LayerID == id {
			return l
		}
	}
	return nil
}

func findTable(info *gisxml.MapServerInfo, id int) *gisxml.StandaloneTableInfo {
	for _, t := range info.StandaloneTableInfos {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// renderers fetches the layers' default drawing descriptions.
func (ms *mapService) renderers(q *request, info *gisxml.MapServerInfo) (map[int]gisxml.LayerDrawingDescription, error) {
	ids := make(gisxml.ArrayOfInt, 0, len(info.MapLayerInfos))
	for _, l := range info.MapLayerInfos {
		ids = append(ids, l.LayerID)
	}
	resp, err := ms.do(q, "GetDefaultLayerDrawingDescriptions", &gisxml.GetDefaultLayerDrawingDescriptions{MapName: info.Name, LayerIDs: ids})
	if err != nil {
		return nil, err
	}
	out := map[int]gisxml.LayerDrawingDescription{}
	for i, d := range resp.(*gisxml.GetDefaultLayerDrawingDescriptionsResponse).Result {
		if i < len(ids) {
			out[ids[i]] = d
		}
	}
	return out, nil
}

func (ms *mapService) writeLayer(w *jsonWriter, info *gisxml.MapServerInfo, l *gisxml.MapLayerInfo, dd gisxml.LayerDrawingDescription) {
	w.objOpen()
	ms.layerMembers(w, info, l, dd)
	w.objClose()
}

func (ms *mapService) writeTable(w *jsonWriter, t *gisxml.StandaloneTableInfo) {
	w.objOpen()
	ms.tableMembers(w, t)
	w.objClose()
}

func strp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// layerMembers writes a feature layer's description as the REST layer resource has it.
func (ms *mapService) layerMembers(w *jsonWriter, info *gisxml.MapServerInfo, l *gisxml.MapLayerInfo, dd gisxml.LayerDrawingDescription) {
	w.key("id")
	w.int(int64(l.LayerID))
	w.key("name")
	w.str(l.Name)
	w.key("type")
	w.str(l.LayerType)
	w.key("description")
	w.str(l.Description)
	w.key("geometryType")
	w.str(layerGeometryType(l.Fields))
	w.key("sourceSpatialReference")
	w.spatialReference(info.SpatialReference)
	w.key("copyrightText")
	w.str(l.CopyrightText)
	w.key("parentLayer")
	w.null()
	w.key("subLayers")
	w.arrOpen()
	w.arrClose()
	w.key("minScale")
	w.float(l.MinScale)
	w.key("maxScale")
	w.float(l.MaxScale)
	w.key("drawingInfo")
	drawingInfo(w, dd)
	w.key("defaultVisibility")
	w.bool(defaultVisibility(info)[l.LayerID])
	w.key("extent")
	w.envelope(l.Extent)
	w.key("hasAttachments")
	w.bool(l.HasAttachments != nil && *l.HasAttachments)
	w.key("htmlPopupType")
	if l.HTMLPopupType != nil {
		w.str(esriType(string(*l.HTMLPopupType)))
	} else {
		w.str("esriServerHTMLPopupTypeNone")
	}
	w.key("displayField")
	w.str(l.DisplayField)
	w.key("typeIdField")
	w.null()
	w.key("subtypeField")
	w.null()
	w.key("fields")
	writeFields(w, l.Fields, l.IDField)
	w.key("geometryField")
	writeGeometryField(w, l.Fields)
	w.key("indexes")
	w.arrOpen()
	w.arrClose()
	w.key("subtypes")
	w.arrOpen()
	w.arrClose()
	w.key("relationships")
	writeRelationships(w, l.RelateInfos)
	w.key("canModifyLayer")
	w.bool(false)
	w.key("canScaleSymbols")
	w.bool(l.CanScaleSymbols)
	w.key("hasLabels")
	w.bool(l.HasLabels)
	ms.queryMembers(w)
	w.key("hasZ")
	w.bool(false)
	w.key("hasM")
	w.bool(false)
}

// tableMembers writes a standalone table's description.
func (ms *mapService) tableMembers(w *jsonWriter, t *gisxml.StandaloneTableInfo) {
	w.key("id")
	w.int(int64(t.ID))
	w.key("name")
	w.str(t.Name)
	w.key("type")
	w.str("Table")
	w.key("description")
	w.str(strp(t.Description))
	w.key("definitionExpression")
	w.str("")
	w.key("hasAttachments")
	w.bool(t.HasAttachments != nil && *t.HasAttachments)
	w.key("htmlPopupType")
	w.str("esriServerHTMLPopupTypeNone")
	w.key("displayField")
	w.str(strp(t.DisplayField))
	w.key("typeIdField")
	w.null()
	w.key("subtypeField")
	w.null()
	w.key("fields")
	writeFields(w, t.Fields, strp(t.IDField))
	w.key("indexes")
	w.arrOpen()
	w.arrClose()
	w.key("subtypes")
	w.arrOpen()
	w.arrClose()
	w.key("relationships")
	writeRelationships(w, t.RelateInfos)
	ms.queryMembers(w)
}

// queryMembers are the members layers and tables share about querying.
func (ms *mapService) queryMembers(w *jsonWriter) {
	w.key("capabilities")
	w.str("Map,Query,Data")
	w.key("maxRecordCount")
	w.int(int64(ms.h.p.MaxRecordCount))
	w.key("supportsStatistics")
	w.bool(true)
	w.key("supportsAdvancedQueries")
	w.bool(true)
	w.key("supportedQueryFormats")
	w.str("JSON, geoJSON")
	w.key("isDataVersioned")
	w.bool(false)
	w.key("useStandardizedQueries")
	w.bool(true)
	w.key("advancedQueryCapabilities")
	w.objOpen()
	for _, k := range []string{"useStandardizedQueries", "supportsStatistics", "supportsOrderBy", "supportsDistinct", "supportsPagination"} {
		w.key(k)
		w.bool(true)
	}
	for _, k := range []string{"supportsTrueCurve", "supportsReturningQueryExtent", "supportsQueryWithDistance", "supportsSqlExpression"} {
		w.key(k)
		w.bool(false)
	}
	w.objClose()
	w.key("supportsDatumTransformation")
	w.bool(false)
}

// writeFields writes the published fields (the shape field aside) with their esri types; the
// id field is esriFieldTypeOID.
func writeFields(w *jsonWriter, fs *gisxml.Fields, idField string) {
	w.arrOpen()
	if fs != nil {
		for _, f := range fs.FieldArray {
			if f.GeometryDef != nil {
				continue
			}
			writeField(w, f, idField)
		}
	}
	w.arrClose()
}

func writeField(w *jsonWriter, f *gisxml.Field, idField string) {
	w.objOpen()
	w.key("name")
	w.str(f.Name)
	w.key("type")
	t := esriType(string(f.Type))
	if idField != "" && strings.EqualFold(f.Name, idField) {
		t = "esriFieldTypeOID"
	}
	w.str(t)
	w.key("alias")
	if f.AliasName != nil && *f.AliasName != "" {
		w.str(*f.AliasName)
	} else {
		w.str(f.Name)
	}
	if t == "esriFieldTypeString" {
		w.key("length")
		w.int(int64(f.Length))
	}
	w.key("domain")
	w.null()
	w.objClose()
}

func writeGeometryField(w *jsonWriter, fs *gisxml.Fields) {
	if fs != nil {
		for _, f := range fs.FieldArray {
			if f.GeometryDef != nil {
				w.objOpen()
				w.key("name")
				w.str(f.Name)
				w.key("type")
				w.str("esriFieldTypeGeometry")
				w.key("alias")
				w.str(f.Name)
				w.objClose()
				return
			}
		}
	}
	w.null()
}

func writeRelationships(w *jsonWriter, rs gisxml.ArrayOfRelateInfo) {
	w.arrOpen()
	for _, r := range rs {
		w.objOpen()
		w.key("id")
		w.int(int64(r.RelationshipID))
		w.key("name")
		w.str(r.Name)
		w.key("relatedTableId")
		w.int(int64(r.RelatedTableID))
		if r.Cardinality != nil {
			w.key("cardinality")
			w.str(esriType(string(*r.Cardinality)))
		}
		if r.Role != nil {
			w.key("role")
			w.str(esriType(string(*r.Role)))
		}
		if r.KeyField != nil {
			w.key("keyField")
			w.str(*r.KeyField)
		}
		w.key("composite")
		w.bool(r.IsComposite != nil && *r.IsComposite)
		w.objClose()
	}
	w.arrClose()
}
