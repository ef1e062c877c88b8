package mapserver

import (
	"context"
	"slices"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// Attachments are stored with the data, as GDAL writes them in a GeoPackage: the table
// `<table>__ATTACH` with ATTACHMENTID, REL_OBJECTID, CONTENT_TYPE, ATT_NAME, DATA_SIZE, DATA.

// QueryAttachmentInfos describes the attachments of the rows of RowIDs (every row when
// empty), ordered by row then attachment id.
func (s *Server) QueryAttachmentInfos(_ context.Context, c *Call, req *gisxml.QueryAttachmentInfos) (*gisxml.QueryAttachmentInfosResponse, error) {
	m, err := mapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	src, l, err := sourceByID(m, req.TableID)
	if err != nil {
		return nil, err
	}
	out, err := attachmentInfos(src, l, "", req.RowIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentInfosResponse{Result: out}, nil
}

// QueryAttachmentInfos2 is QueryAttachmentInfos with the layer from a MapTableDescription,
// whose definition expression limits the rows.
func (s *Server) QueryAttachmentInfos2(_ context.Context, c *Call, req *gisxml.QueryAttachmentInfos2) (*gisxml.QueryAttachmentInfos2Response, error) {
	_, src, l, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	out, err := attachmentInfos(src, l, defExpr, req.RowIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentInfos2Response{Result: out}, nil
}

// QueryAttachmentData returns attachments by id, in the order asked, with their bytes: inline
// (gisTransportTypeEmbedded) or as a data: URL (gisTransportTypeUrl; RFC 2397, so the URL
// needs no storage and never expires). Unknown ids are a not-found fault.
func (s *Server) QueryAttachmentData(ctx context.Context, c *Call, req *gisxml.QueryAttachmentData) (*gisxml.QueryAttachmentDataResponse, error) {
	m, err := mapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	src, l, err := sourceByID(m, req.TableID)
	if err != nil {
		return nil, err
	}
	out, err := attachmentData(src, l, "", req.AttachmentIDs, req.TransportType, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentDataResponse{Result: out}, nil
}

// QueryAttachmentData2 is QueryAttachmentData with the layer from a MapTableDescription;
// attachments of rows its definition expression excludes are not found.
func (s *Server) QueryAttachmentData2(ctx context.Context, c *Call, req *gisxml.QueryAttachmentData2) (*gisxml.QueryAttachmentData2Response, error) {
	_, src, l, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	out, err := attachmentData(src, l, defExpr, req.AttachmentIDs, req.TransportType, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentData2Response{Result: out}, nil
}

// attachmentTable is a layer's attachments with the column positions resolved.
type attachmentTable struct {
	data                                   *feature.Layer
	parent, contentType, name, size, bytes int
	src                                    *source
	rowOK                                  func(id int64) bool
}

func openAttachments(src *source, l *catalog.Layer, defExpr string) (*attachmentTable, error) {
	if l == nil || l.Attachments == nil {
		return nil, invalid("%s %d (%s) has no attachments", src.kind, src.id, src.name)
	}
	p, err := newPlan(src, nil, defExpr)
	if err != nil {
		return nil, err
	}
	a := l.Attachments
	t := &attachmentTable{data: a, src: src,
		parent: a.FieldIndex("REL_OBJECTID"), contentType: a.FieldIndex("CONTENT_TYPE"), name: a.FieldIndex("ATT_NAME"),
		size: a.FieldIndex("DATA_SIZE"), bytes: a.FieldIndex("DATA"),
		rowOK: func(id int64) bool {
			f, ok := src.data.ByID(id)
			return ok && (p.pred == nil || p.pred.Match(f.Values))
		}}
	return t, nil
}

func (t *attachmentTable) info(f *feature.Feature) *gisxml.AttachmentInfo {
	parent, _ := f.Values[t.parent].(int64)
	ct, _ := f.Values[t.contentType].(string)
	name, _ := f.Values[t.name].(string)
	size, ok := f.Values[t.size].(int64)
	if !ok {
		b, _ := f.Values[t.bytes].([]byte)
		size = int64(len(b))
	}
	return &gisxml.AttachmentInfo{AttachmentID: int(f.ID), ParentID: int(parent), Name: name, ContentType: ct, Size: int(size)}
}

func attachmentInfos(src *source, l *catalog.Layer, defExpr string, rows gisxml.ArrayOfInt) (gisxml.ArrayOfAttachmentInfo, error) {
	t, err := openAttachments(src, l, defExpr)
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfAttachmentInfo{}
	for i := range t.data.Features() {
		f := &t.data.Features()[i]
		parent, _ := f.Values[t.parent].(int64)
		if hasID(rows, int(parent)) && t.rowOK(parent) {
			out = append(out, t.info(f))
		}
	}
	slices.SortStableFunc(out, func(a, b *gisxml.AttachmentInfo) int { return a.ParentID - b.ParentID })
	return out, nil
}

func attachmentData(src *source, l *catalog.Layer, defExpr string, ids gisxml.ArrayOfInt, tt gisxml.TransportType, publish publishFunc) (gisxml.ArrayOfAttachmentData, error) {
	switch tt {
	case "", gisxml.TransportTypeEmbedded, gisxml.TransportTypeUrl:
	default:
		return nil, invalid("TransportType %q is not a gisTransportType value", tt)
	}
	t, err := openAttachments(src, l, defExpr)
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfAttachmentData{}
	for _, id := range ids {
		f, ok := t.data.ByID(int64(id))
		if ok {
			parent, _ := f.Values[t.parent].(int64)
			ok = t.rowOK(parent)
		}
		if !ok {
			return nil, notFound("%s %d (%s) has no attachment %d", src.kind, src.id, src.name, id)
		}
		info := t.info(f)
		data, _ := f.Values[t.bytes].([]byte)
		d := &gisxml.AttachmentData{AttachmentInfo: info, TransportType: gisxml.TransportTypeEmbedded, Data: data}
		if tt == gisxml.TransportTypeUrl {
			d.TransportType, d.Data = gisxml.TransportTypeUrl, nil
			url, err := publish(data, info.ContentType)
			if err != nil {
				return nil, err
			}
			d.URL = url
		}
		out = append(out, d)
	}
	return out, nil
}
