package rest

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
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

// families are the operation families whose typed operations the resource calls.
func (ms *mapService) families() mapserver.Families { return ms.h.p.Ops.Families() }

// invoke runs one typed operation f of the service (a method of an operation family, or a
// drawing operation with its picture step, mapserver.Drawing) under the api's request policy
// (Params.Admit: the request limits, checked on req, and the heavy lane) and counts it by its
// name op in the metrics.
func invoke[Req, Resp any](ms *mapService, q *request, op string, f func(context.Context, *mapserver.Call, *Req) (*Resp, error), req *Req) (*Resp, error) {
	start := time.Now()
	var (
		resp *Resp
		err  error
	)
	run := func() { resp, err = f(q.ctx, ms.call, req) }
	if admit := ms.h.p.Admit; admit != nil {
		if aerr := admit(q.ctx, op, req, run); aerr != nil {
			err = aerr
			if _, over := limits.Of(aerr); over {
				err = &Error{Code: http.StatusBadRequest, Message: "Unable to complete operation.", Details: []string{aerr.Error()}, err: aerr}
			}
		}
	} else {
		run()
	}
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
	resp, err := invoke(ms, q, "GetServerInfo", ms.families().Information.GetServerInfo, &gisxml.GetServerInfo{MapName: ms.svc.DefaultMap().Name})
	if err != nil {
		return nil, err
	}
	ms.info = resp.Result
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

// The members the root, layers and tables answer alike.
const (
	capabilities          = "Map,Query,Data"
	supportedQueryFormats = "JSON, geoJSON"
)

// scaleRange is the minScale and maxScale members.
type scaleRange struct {
	MinScale num `json:"minScale"`
	MaxScale num `json:"maxScale"`
}

// serviceJSON is the MapServer resource, as ArcGIS Server 10.7 answers it.
type serviceJSON struct {
	CurrentVersion              num                `json:"currentVersion"`
	ServiceDescription          text               `json:"serviceDescription"`
	MapName                     text               `json:"mapName"`
	Description                 text               `json:"description"`
	CopyrightText               text               `json:"copyrightText"`
	SupportsDynamicLayers       bool               `json:"supportsDynamicLayers"`
	Layers                      []serviceLayerJSON `json:"layers"`
	Tables                      []serviceTableJSON `json:"tables"`
	SpatialReference            srJSON             `json:"spatialReference"`
	SingleFusedMapCache         bool               `json:"singleFusedMapCache"`
	TileInfo                    *tileInfoJSON      `json:"tileInfo,omitempty"`
	InitialExtent               extentJSON         `json:"initialExtent"`
	FullExtent                  extentJSON         `json:"fullExtent"`
	MinScale                    num                `json:"minScale"`
	MaxScale                    num                `json:"maxScale"`
	Units                       text               `json:"units"`
	SupportedImageFormatTypes   text               `json:"supportedImageFormatTypes"`
	DocumentInfo                documentInfo       `json:"documentInfo"`
	Capabilities                text               `json:"capabilities"`
	SupportedQueryFormats       text               `json:"supportedQueryFormats"`
	ExportTilesAllowed          bool               `json:"exportTilesAllowed"`
	SupportsDatumTransformation bool               `json:"supportsDatumTransformation"`
	MaxRecordCount              int                `json:"maxRecordCount"`
	MaxImageHeight              int                `json:"maxImageHeight"`
	MaxImageWidth               int                `json:"maxImageWidth"`
	SupportedExtensions         text               `json:"supportedExtensions"`
}

// serviceLayerJSON is a layer as the root lists it.
type serviceLayerJSON struct {
	ID                int   `json:"id"`
	Name              text  `json:"name"`
	ParentLayerID     int   `json:"parentLayerId"`
	DefaultVisibility bool  `json:"defaultVisibility"`
	SubLayerIDs       []int `json:"subLayerIds"` // null when there are none
	scaleRange
	GeometryType text `json:"geometryType"`
}

// serviceTableJSON is a table as the root lists it.
type serviceTableJSON struct {
	ID   int  `json:"id"`
	Name text `json:"name"`
}

// documentInfo is the map document's properties, all empty here.
type documentInfo struct {
	Title, Author, Comments, Subject, Category, AntialiasingMode, TextAntialiasingMode, Keywords text
}

// root answers the MapServer resource as ArcGIS Server 10.7 does.
func (ms *mapService) root(q *request) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	vis := defaultVisibility(info)
	v := serviceJSON{
		CurrentVersion:            ms.h.currentVersion(),
		ServiceDescription:        text(ms.svc.Def.Description),
		MapName:                   text(info.Name),
		Description:               text(info.Description),
		CopyrightText:             text(info.CopyrightText),
		Layers:                    make([]serviceLayerJSON, 0, len(info.MapLayerInfos)),
		Tables:                    make([]serviceTableJSON, 0, len(info.StandaloneTableInfos)),
		SpatialReference:          srJSON{info.SpatialReference},
		InitialExtent:             extentJSON{info.Extent},
		FullExtent:                extentJSON{info.FullExtent},
		MinScale:                  num(deref(info.MinScale)),
		MaxScale:                  num(deref(info.MaxScale)),
		Units:                     text(esriType(string(info.Units))),
		SupportedImageFormatTypes: supportedImageFormatTypes,
		Capabilities:              capabilities,
		SupportedQueryFormats:     supportedQueryFormats,
		MaxRecordCount:            ms.h.p.MaxRecordCount,
		MaxImageHeight:            ms.h.p.MaxImageHeight,
		MaxImageWidth:             ms.h.p.MaxImageWidth,
	}
	if ms.h.p.WMS {
		v.SupportedExtensions = "WMSServer"
	}
	for _, l := range info.MapLayerInfos {
		var sub []int
		if len(l.SubLayerIDs) > 0 {
			sub = l.SubLayerIDs
		}
		v.Layers = append(v.Layers, serviceLayerJSON{ID: l.LayerID, Name: text(l.Name), ParentLayerID: parentOf(l), DefaultVisibility: vis[l.LayerID],
			SubLayerIDs: sub, scaleRange: scaleRange{num(l.MinScale), num(l.MaxScale)}, GeometryType: text(layerGeometryType(l.Fields))})
	}
	for _, t := range info.StandaloneTableInfos {
		v.Tables = append(v.Tables, serviceTableJSON{ID: t.ID, Name: text(t.Name)})
	}
	if v.SingleFusedMapCache, v.TileInfo, err = ms.tileInfo(q); err != nil {
		return err
	}
	return ms.h.writeValue(q, v)
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

// tileInfoJSON is the root's tileInfo: the fused cache's tiling scheme.
type tileInfoJSON struct {
	Rows               int              `json:"rows"`
	Cols               int              `json:"cols"`
	DPI                int              `json:"dpi"`
	Format             text             `json:"format"`
	CompressionQuality int              `json:"compressionQuality"`
	Origin             pointJSON        `json:"origin"`
	SpatialReference   srJSON           `json:"spatialReference"`
	LODs               []levelOfDetails `json:"lods"`
}

type pointJSON struct {
	X num `json:"x"`
	Y num `json:"y"`
}

type levelOfDetails struct {
	Level      int `json:"level"`
	Resolution num `json:"resolution"`
	Scale      num `json:"scale"`
}

// tileInfo says whether the map has a fused cache and, if it has, its tileInfo, from the cache
// operations.
func (ms *mapService) tileInfo(q *request) (bool, *tileInfoJSON, error) {
	name := ms.svc.DefaultMap().Name
	resp, err := invoke(ms, q, "HasSingleFusedMapCache", ms.families().Caches.HasSingleFusedMapCache, &gisxml.HasSingleFusedMapCache{MapName: name})
	if err != nil {
		return false, nil, err
	}
	if !resp.Result {
		return false, nil, nil
	}
	tr, err := invoke(ms, q, "GetTileCacheInfo", ms.families().Caches.GetTileCacheInfo, &gisxml.GetTileCacheInfo{MapName: name})
	if err != nil {
		return false, nil, err
	}
	ir, err := invoke(ms, q, "GetTileImageInfo", ms.families().Caches.GetTileImageInfo, &gisxml.GetTileImageInfo{MapName: name})
	if err != nil {
		return false, nil, err
	}
	ti := tr.Result
	ii := ir.Result
	x, y, _ := pointXY(ti.TileOrigin)
	out := &tileInfoJSON{Rows: ti.TileRows, Cols: ti.TileCols, DPI: ti.DPI, Format: text(ii.CacheTileFormat), CompressionQuality: ii.CompressionQuality,
		Origin: pointJSON{num(x), num(y)}, SpatialReference: srJSON{ti.SpatialReference}, LODs: make([]levelOfDetails, 0, len(ti.LODInfos))}
	for _, l := range ti.LODInfos {
		out.LODs = append(out.LODs, levelOfDetails{Level: l.LevelID, Resolution: num(l.Resolution), Scale: num(l.Scale)})
	}
	return true, out, nil
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

// layersJSON is /layers: every layer's and table's description.
type layersJSON struct {
	Layers []*layerJSON `json:"layers"`
	Tables []*tableJSON `json:"tables"`
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
	v := layersJSON{Layers: make([]*layerJSON, 0, len(info.MapLayerInfos)), Tables: make([]*tableJSON, 0, len(info.StandaloneTableInfos))}
	for _, l := range info.MapLayerInfos {
		v.Layers = append(v.Layers, ms.layerJSON(info, l, renderers[l.LayerID]))
	}
	for _, t := range info.StandaloneTableInfos {
		v.Tables = append(v.Tables, ms.tableJSON(t))
	}
	return ms.h.writeValue(q, v)
}

// layer answers /<id>: one layer or table.
func (ms *mapService) layer(q *request, id int) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	version := ms.h.currentVersion()
	if l := findLayer(info, id); l != nil {
		renderers, err := ms.renderers(q, info)
		if err != nil {
			return err
		}
		v := ms.layerJSON(info, l, renderers[id])
		v.CurrentVersion = &version
		return ms.h.writeValue(q, v)
	}
	if t := findTable(info, id); t != nil {
		v := ms.tableJSON(t)
		v.CurrentVersion = &version
		return ms.h.writeValue(q, v)
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
	resp, err := invoke(ms, q, "GetDefaultLayerDrawingDescriptions", ms.families().Cartography.GetDefaultLayerDrawingDescriptions, &gisxml.GetDefaultLayerDrawingDescriptions{MapName: info.Name, LayerIDs: ids})
	if err != nil {
		return nil, err
	}
	out := map[int]gisxml.LayerDrawingDescription{}
	for i, d := range resp.Result {
		if i < len(ids) {
			out[ids[i]] = d
		}
	}
	return out, nil
}

func strp(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// layerJSON is a feature layer's description as the REST layer resource has it.
type layerJSON struct {
	CurrentVersion         *num      `json:"currentVersion,omitempty"` // only at /<id>
	ID                     int       `json:"id"`
	Name                   text      `json:"name"`
	Type                   text      `json:"type"`
	Description            text      `json:"description"`
	GeometryType           text      `json:"geometryType"`
	SourceSpatialReference srJSON    `json:"sourceSpatialReference"`
	CopyrightText          text      `json:"copyrightText"`
	ParentLayer            null      `json:"parentLayer"`
	SubLayers              emptyList `json:"subLayers"`
	scaleRange
	DrawingInfo       *drawingInfoJSON `json:"drawingInfo"`
	DefaultVisibility bool             `json:"defaultVisibility"`
	Extent            extentJSON       `json:"extent"`
	recordMembers
	GeometryField *geometryFieldJSON `json:"geometryField"`
	relationMembers
	CanModifyLayer  bool `json:"canModifyLayer"`
	CanScaleSymbols bool `json:"canScaleSymbols"`
	HasLabels       bool `json:"hasLabels"`
	queryMembers
	HasZ bool `json:"hasZ"`
	HasM bool `json:"hasM"`
}

// tableJSON is a standalone table's description.
type tableJSON struct {
	CurrentVersion       *num `json:"currentVersion,omitempty"` // only at /<id>
	ID                   int  `json:"id"`
	Name                 text `json:"name"`
	Type                 text `json:"type"`
	Description          text `json:"description"`
	DefinitionExpression text `json:"definitionExpression"`
	recordMembers
	relationMembers
	queryMembers
}

// recordMembers are the members layers and tables share about their records.
type recordMembers struct {
	HasAttachments bool        `json:"hasAttachments"`
	HTMLPopupType  text        `json:"htmlPopupType"`
	DisplayField   text        `json:"displayField"`
	TypeIDField    null        `json:"typeIdField"`
	SubtypeField   null        `json:"subtypeField"`
	Fields         []fieldJSON `json:"fields"`
}

// relationMembers are the members layers and tables share about indexes and relationships.
type relationMembers struct {
	Indexes       emptyList          `json:"indexes"`
	Subtypes      emptyList          `json:"subtypes"`
	Relationships []relationshipJSON `json:"relationships"`
}

// queryMembers are the members layers and tables share about querying.
type queryMembers struct {
	Capabilities                text                      `json:"capabilities"`
	MaxRecordCount              int                       `json:"maxRecordCount"`
	SupportsStatistics          bool                      `json:"supportsStatistics"`
	SupportsAdvancedQueries     bool                      `json:"supportsAdvancedQueries"`
	SupportedQueryFormats       text                      `json:"supportedQueryFormats"`
	IsDataVersioned             bool                      `json:"isDataVersioned"`
	UseStandardizedQueries      bool                      `json:"useStandardizedQueries"`
	AdvancedQueryCapabilities   advancedQueryCapabilities `json:"advancedQueryCapabilities"`
	SupportsDatumTransformation bool                      `json:"supportsDatumTransformation"`
}

type advancedQueryCapabilities struct {
	UseStandardizedQueries       bool `json:"useStandardizedQueries"`
	SupportsStatistics           bool `json:"supportsStatistics"`
	SupportsOrderBy              bool `json:"supportsOrderBy"`
	SupportsDistinct             bool `json:"supportsDistinct"`
	SupportsPagination           bool `json:"supportsPagination"`
	SupportsTrueCurve            bool `json:"supportsTrueCurve"`
	SupportsReturningQueryExtent bool `json:"supportsReturningQueryExtent"`
	SupportsQueryWithDistance    bool `json:"supportsQueryWithDistance"`
	SupportsSQLExpression        bool `json:"supportsSqlExpression"`
}

func (ms *mapService) queryMembers() queryMembers {
	return queryMembers{Capabilities: capabilities, MaxRecordCount: ms.h.p.MaxRecordCount, SupportsStatistics: true, SupportsAdvancedQueries: true,
		SupportedQueryFormats: supportedQueryFormats, UseStandardizedQueries: true,
		AdvancedQueryCapabilities: advancedQueryCapabilities{UseStandardizedQueries: true, SupportsStatistics: true, SupportsOrderBy: true,
			SupportsDistinct: true, SupportsPagination: true}}
}

func (ms *mapService) layerJSON(info *gisxml.MapServerInfo, l *gisxml.MapLayerInfo, dd gisxml.LayerDrawingDescription) *layerJSON {
	popup := "esriServerHTMLPopupTypeNone"
	if l.HTMLPopupType != nil {
		popup = esriType(string(*l.HTMLPopupType))
	}
	return &layerJSON{
		ID:                     l.LayerID,
		Name:                   text(l.Name),
		Type:                   text(l.LayerType),
		Description:            text(l.Description),
		GeometryType:           text(layerGeometryType(l.Fields)),
		SourceSpatialReference: srJSON{info.SpatialReference},
		CopyrightText:          text(l.CopyrightText),
		scaleRange:             scaleRange{num(l.MinScale), num(l.MaxScale)},
		DrawingInfo:            drawingInfo(dd),
		DefaultVisibility:      defaultVisibility(info)[l.LayerID],
		Extent:                 extentJSON{l.Extent},
		recordMembers:          recordMembersOf(l.HasAttachments, popup, l.DisplayField, l.Fields, l.IDField),
		GeometryField:          geometryField(l.Fields),
		relationMembers:        relationMembers{Relationships: relationships(l.RelateInfos)},
		CanScaleSymbols:        l.CanScaleSymbols,
		HasLabels:              l.HasLabels,
		queryMembers:           ms.queryMembers(),
	}
}

func (ms *mapService) tableJSON(t *gisxml.StandaloneTableInfo) *tableJSON {
	return &tableJSON{
		ID:              t.ID,
		Name:            text(t.Name),
		Type:            "Table",
		Description:     text(strp(t.Description)),
		recordMembers:   recordMembersOf(t.HasAttachments, "esriServerHTMLPopupTypeNone", strp(t.DisplayField), t.Fields, strp(t.IDField)),
		relationMembers: relationMembers{Relationships: relationships(t.RelateInfos)},
		queryMembers:    ms.queryMembers(),
	}
}

func recordMembersOf(hasAttachments *bool, popup, displayField string, fs *gisxml.Fields, idField string) recordMembers {
	published, _ := schemaOf(fs)
	return recordMembers{HasAttachments: hasAttachments != nil && *hasAttachments, HTMLPopupType: text(popup), DisplayField: text(displayField),
		Fields: fieldsJSON(published, idField)}
}

// fieldJSON is a published field with its esri type; the id field is esriFieldTypeOID.
type fieldJSON struct {
	Name   text `json:"name"`
	Type   text `json:"type"`
	Alias  text `json:"alias"`
	Length *int `json:"length,omitempty"` // strings only
	Domain null `json:"domain"`
}

// fieldsJSON describes fields (the shape field aside).
func fieldsJSON(fs []*gisxml.Field, idField string) []fieldJSON {
	out := make([]fieldJSON, 0, len(fs))
	for _, f := range fs {
		t := esriType(string(f.Type))
		if idField != "" && strings.EqualFold(f.Name, idField) {
			t = "esriFieldTypeOID"
		}
		j := fieldJSON{Name: text(f.Name), Type: text(t), Alias: text(alias(f))}
		if t == "esriFieldTypeString" {
			j.Length = &f.Length
		}
		out = append(out, j)
	}
	return out
}

// alias is a field's alias, its name when it has none.
func alias(f *gisxml.Field) string {
	if f.AliasName != nil && *f.AliasName != "" {
		return *f.AliasName
	}
	return f.Name
}

type geometryFieldJSON struct {
	Name  text `json:"name"`
	Type  text `json:"type"`
	Alias text `json:"alias"`
}

// geometryField describes the shape field; nil (null) for none.
func geometryField(fs *gisxml.Fields) *geometryFieldJSON {
	if fs != nil {
		for _, f := range fs.FieldArray {
			if f.GeometryDef != nil {
				return &geometryFieldJSON{Name: text(f.Name), Type: "esriFieldTypeGeometry", Alias: text(f.Name)}
			}
		}
	}
	return nil
}

type relationshipJSON struct {
	ID             int   `json:"id"`
	Name           text  `json:"name"`
	RelatedTableID int   `json:"relatedTableId"`
	Cardinality    *text `json:"cardinality,omitempty"`
	Role           *text `json:"role,omitempty"`
	KeyField       *text `json:"keyField,omitempty"`
	Composite      bool  `json:"composite"`
}

func relationships(rs gisxml.ArrayOfRelateInfo) []relationshipJSON {
	out := make([]relationshipJSON, 0, len(rs))
	for _, r := range rs {
		j := relationshipJSON{ID: r.RelationshipID, Name: text(r.Name), RelatedTableID: r.RelatedTableID, KeyField: optText(r.KeyField),
			Composite: r.IsComposite != nil && *r.IsComposite}
		if r.Cardinality != nil {
			c := text(esriType(string(*r.Cardinality)))
			j.Cardinality = &c
		}
		if r.Role != nil {
			role := text(esriType(string(*r.Role)))
			j.Role = &role
		}
		out = append(out, j)
	}
	return out
}
