package rest

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// legend answers /legend: each layer's legend classes with their swatches as base64 PNG,
// from GetLegendInfo.
func (ms *mapService) legend(q *request) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	resp, err := invoke(ms, q, "GetLegendInfo", mapserver.Drawing(ms.h.p.Ops, ms.families().Cartography.GetLegendInfo), &gisxml.GetLegendInfo{MapName: info.Name,
		LegendPatch: &gisxml.MapServerLegendPatch{Width: 20, Height: 20, ImageDPI: 96},
		ImageType:   &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData}})
	if err != nil {
		return err
	}
	v := legendJSON{Layers: []legendLayerJSON{}}
	for _, li := range resp.Result {
		l := legendLayerJSON{LayerID: li.LayerID, LayerName: text(li.Name), LayerType: "Feature Layer", Legend: []legendClassJSON{}}
		if ml := findLayer(info, li.LayerID); ml != nil {
			l.scaleRange = &scaleRange{num(ml.MinScale), num(ml.MaxScale)}
		}
		for _, g := range li.LegendGroups {
			for _, c := range g.LegendClasses {
				lc := legendClassJSON{Label: text(c.Label)}
				if img := c.SymbolImage; img != nil {
					lc.swatchJSON = &swatchJSON{ImageData: text(base64.StdEncoding.EncodeToString(img.ImageData)), ContentType: text(strp(img.ImageType)),
						Height: img.ImageHeight, Width: img.ImageWidth}
				}
				l.Legend = append(l.Legend, lc)
			}
		}
		v.Layers = append(v.Layers, l)
	}
	return ms.h.writeValue(q, v)
}

// legendJSON is /legend.
type legendJSON struct {
	Layers []legendLayerJSON `json:"layers"`
}

type legendLayerJSON struct {
	LayerID   int  `json:"layerId"`
	LayerName text `json:"layerName"`
	LayerType text `json:"layerType"`
	*scaleRange
	Legend []legendClassJSON `json:"legend"`
}

type legendClassJSON struct {
	Label text `json:"label"`
	*swatchJSON
}

// swatchJSON is a legend class's image, base64 PNG.
type swatchJSON struct {
	ImageData   text `json:"imageData"`
	ContentType text `json:"contentType"`
	Height      int  `json:"height"`
	Width       int  `json:"width"`
}

// queryRelatedRecords answers /<id>/queryRelatedRecords through QueryRelatedRecords: one group
// of related records per source object id.
func (ms *mapService) queryRelatedRecords(q *request, id int) error {
	info, err := ms.jsonInfo(q)
	if err != nil {
		return err
	}
	ids, err := parseIDs("objectIds", q.param("objectIds"))
	if err != nil || len(ids) == 0 {
		return badRequest("'objectIds' parameter is invalid: %q", q.param("objectIds"))
	}
	rel, err := strconv.Atoi(q.param("relationshipId"))
	if err != nil {
		return badRequest("'relationshipId' parameter is invalid: %q", q.param("relationshipId"))
	}
	returnGeometry, err := boolParam(q, "returnGeometry", true)
	if err != nil {
		return err
	}
	outSR, err := parseSR("outSR", q.param("outSR"))
	if err != nil {
		return err
	}
	rd := &gisxml.RelateDescription{RelationshipID: rel, IncludeGeometry: &returnGeometry, OutputSpatialReference: outSR,
		ResultFormat: gisxml.RelateResultRelatedRecordSetAsObject}
	if f := strings.TrimSpace(q.param("outFields")); f != "" && f != "*" {
		rd.RelatedTableFields = &f
	}
	if d := q.param("definitionExpression"); d != "" {
		rd.RelatedTableDefinitionExpression = &d
	}
	resp, err := invoke(ms, q, "QueryRelatedRecords", ms.families().Queries.QueryRelatedRecords, &gisxml.QueryRelatedRecords{MapName: info.Name, SourceTableID: id,
		SourceFIDSet: &gisxml.FIDSet{FIDArray: ids}, RelateDescription: rd})
	if err != nil {
		return err
	}
	set, ok := resp.Result.Object.(*gisxml.RelatedRecordSet)
	if !ok {
		return badRequest("the relationship query answered no record set")
	}
	// Each group is written as a feature set's features; the fields once.
	var w jsonWriter
	w.objOpen()
	fields, shapeDef := schemaOf(set.RelatedRecordFields)
	writeSchema(&w, fields, shapeDef, "")
	w.key("relatedRecordGroups")
	w.arrOpen()
	for _, g := range set.RelatedRecordGroups {
		w.objOpen()
		w.key("objectId")
		w.int(int64(g.SourceRowID))
		w.key("relatedRecords")
		writeFeatures(&w, &gisxml.RecordSet{Fields: set.RelatedRecordFields, Records: g.Records})
		w.objClose()
	}
	w.arrClose()
	w.objClose()
	return ms.h.writeJSON(q, &w)
}

// attachments answers /<id>/<oid>/attachments (the list) and …/attachments/<aid> (the bytes),
// from QueryAttachmentInfos and QueryAttachmentData.
func (ms *mapService) attachments(q *request, id, oid int, attachment string) error {
	info, err := ms.serverInfo(q)
	if err != nil {
		return err
	}
	if attachment != "" {
		aid, err := strconv.Atoi(attachment)
		if err != nil {
			return badRequest("Invalid attachment ID: %q", attachment)
		}
		resp, err := invoke(ms, q, "QueryAttachmentData", ms.families().Queries.QueryAttachmentData, &gisxml.QueryAttachmentData{MapName: info.Name, TableID: id,
			AttachmentIDs: gisxml.ArrayOfInt{aid}, TransportType: gisxml.TransportTypeEmbedded})
		if err != nil {
			return err
		}
		data := resp.Result
		if len(data) != 1 || data[0].AttachmentInfo == nil || data[0].AttachmentInfo.ParentID != oid {
			return notFoundErr("Attachment %d of feature %d not found", aid, oid)
		}
		q.w.Header().Set("Content-Type", data[0].AttachmentInfo.ContentType)
		q.w.Header().Set("Content-Disposition", `inline; filename="`+strings.ReplaceAll(data[0].AttachmentInfo.Name, `"`, "")+`"`)
		q.w.WriteHeader(http.StatusOK)
		_, _ = q.w.Write(data[0].Data)
		return nil
	}
	if err := jsonFormat(q); err != nil {
		return err
	}
	resp, err := invoke(ms, q, "QueryAttachmentInfos", ms.families().Queries.QueryAttachmentInfos, &gisxml.QueryAttachmentInfos{MapName: info.Name, TableID: id, RowIDs: gisxml.ArrayOfInt{oid}})
	if err != nil {
		return err
	}
	v := attachmentsJSON{AttachmentInfos: []attachmentJSON{}}
	for _, a := range resp.Result {
		v.AttachmentInfos = append(v.AttachmentInfos, attachmentJSON{ID: a.AttachmentID, ContentType: text(a.ContentType), Size: a.Size, Name: text(a.Name)})
	}
	return ms.h.writeValue(q, v)
}

// attachmentsJSON is a feature's attachments.
type attachmentsJSON struct {
	AttachmentInfos []attachmentJSON `json:"attachmentInfos"`
}

type attachmentJSON struct {
	ID          int  `json:"id"`
	ContentType text `json:"contentType"`
	Size        int  `json:"size"`
	Name        text `json:"name"`
}
