package queries

import (
	"context"
	"iter"
	"maps"
	"slices"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/where"
)

// Attachments are stored with the data, as GDAL writes them in a GeoPackage: the table
// `<table>__ATTACH` with ATTACHMENTID, REL_OBJECTID, CONTENT_TYPE, ATT_NAME, DATA_SIZE, DATA.

// QueryAttachmentInfos describes the attachments of the rows of RowIDs (every row when
// empty), ordered by row then attachment id.
func (s *Service) QueryAttachmentInfos(ctx context.Context, c *operation.Call, req *gisxml.QueryAttachmentInfos) (*gisxml.QueryAttachmentInfosResponse, error) {
	src, l, err := sourceOf(c, req.MapName, req.TableID)
	if err != nil {
		return nil, err
	}
	out, err := attachmentInfos(ctx, src, l, "", req.RowIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentInfosResponse{Result: out}, nil
}

// QueryAttachmentInfos2 is QueryAttachmentInfos with the layer from a MapTableDescription,
// whose definition expression limits the rows.
func (s *Service) QueryAttachmentInfos2(ctx context.Context, c *operation.Call, req *gisxml.QueryAttachmentInfos2) (*gisxml.QueryAttachmentInfos2Response, error) {
	_, src, l, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	out, err := attachmentInfos(ctx, src, l, defExpr, req.RowIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentInfos2Response{Result: out}, nil
}

// QueryAttachmentData returns attachments by id, in the order asked, with their bytes: inline
// (gisTransportTypeEmbedded) or as a data: URL (gisTransportTypeUrl; RFC 2397, so the URL
// needs no storage and never expires). Unknown ids are a not-found fault.
func (s *Service) QueryAttachmentData(ctx context.Context, c *operation.Call, req *gisxml.QueryAttachmentData) (*gisxml.QueryAttachmentDataResponse, error) {
	src, l, err := sourceOf(c, req.MapName, req.TableID)
	if err != nil {
		return nil, err
	}
	out, err := attachmentData(ctx, src, l, "", req.AttachmentIDs, req.TransportType, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentDataResponse{Result: out}, nil
}

// QueryAttachmentData2 is QueryAttachmentData with the layer from a MapTableDescription;
// attachments of rows its definition expression excludes are not found.
func (s *Service) QueryAttachmentData2(ctx context.Context, c *operation.Call, req *gisxml.QueryAttachmentData2) (*gisxml.QueryAttachmentData2Response, error) {
	_, src, l, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	out, err := attachmentData(ctx, src, l, defExpr, req.AttachmentIDs, req.TransportType, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryAttachmentData2Response{Result: out}, nil
}

// attachmentTable is a layer's attachments with the column positions resolved.
type attachmentTable struct {
	data                                   feature.Source
	parent, contentType, name, size, bytes int
	src                                    *source
	rows                                   *plan // the parent rows that may show attachments
}

func openAttachments(ctx context.Context, src *source, l *catalog.Layer, defExpr string) (*attachmentTable, error) {
	if l == nil || l.Attachments == nil {
		return nil, operation.Invalid("%s %d (%s) has no attachments", src.kind, src.id, src.name)
	}
	p, err := newPlan(ctx, src, nil, defExpr)
	if err != nil {
		return nil, err
	}
	a := l.Attachments.Info()
	return &attachmentTable{data: l.Attachments, src: src, rows: p,
		parent: a.FieldIndex("REL_OBJECTID"), contentType: a.FieldIndex("CONTENT_TYPE"), name: a.FieldIndex("ATT_NAME"),
		size: a.FieldIndex("DATA_SIZE"), bytes: a.FieldIndex("DATA")}, nil
}

// visibleParents returns which parents of the attachment rows are rows the definition
// expression keeps.
func (t *attachmentTable) visibleParents(found iter.Seq[*feature.Feature]) (map[int64]bool, error) {
	var parents []int64
	for f := range found {
		if p, ok := f.Values[t.parent].(int64); ok {
			parents = append(parents, p)
		}
	}
	if len(parents) == 0 {
		return map[int64]bool{}, nil
	}
	p := *t.rows
	p.fids = parents
	q := p.query()
	q.NoGeometry, q.Columns = true, []int{}
	ok := map[int64]bool{}
	err := p.run(q, func(f *feature.Feature) bool { ok[f.ID] = true; return true })
	return ok, err
}

// columns returns the attachment columns to read: the metadata, and the bytes when asked or when
// there is no size column to tell the size.
func (t *attachmentTable) columns(withBytes bool) []int {
	cols := []int{}
	for _, c := range []int{t.parent, t.contentType, t.name, t.size} {
		if c >= 0 {
			cols = append(cols, c)
		}
	}
	if t.bytes >= 0 && (withBytes || t.size < 0) {
		cols = append(cols, t.bytes)
	}
	return cols
}

// scan reads attachments rows; errors are translated as for a query.
func (t *attachmentTable) scan(ctx context.Context, q *feature.Query, fn func(*feature.Feature)) error {
	err := t.data.Scan(ctx, q, func(f *feature.Feature) error { fn(f); return nil })
	return t.src.fault(err)
}

func (t *attachmentTable) info(f *feature.Feature) *gisxml.AttachmentInfo {
	value := func(i int) any {
		if i < 0 {
			return nil
		}
		return f.Values[i]
	}
	parent, _ := value(t.parent).(int64)
	ct, _ := value(t.contentType).(string)
	name, _ := value(t.name).(string)
	size, ok := value(t.size).(int64)
	if !ok {
		b, _ := value(t.bytes).([]byte)
		size = int64(len(b))
	}
	return &gisxml.AttachmentInfo{AttachmentID: int(f.ID), ParentID: int(parent), Name: name, ContentType: ct, Size: int(size)}
}

func attachmentInfos(ctx context.Context, src *source, l *catalog.Layer, defExpr string, rows gisxml.ArrayOfInt) (gisxml.ArrayOfAttachmentInfo, error) {
	t, err := openAttachments(ctx, src, l, defExpr)
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfAttachmentInfo{}
	if t.parent < 0 {
		return out, nil
	}
	// With row ids, only their attachments are read; without, every attachment is, and the
	// parents are checked after.
	var cond *where.Expr
	if len(rows) > 0 {
		values := make([]any, len(rows))
		for i, r := range rows {
			values[i] = int64(r)
		}
		if cond, err = where.In(t.data.Info().Fields[t.parent].Name, values); err != nil {
			return nil, operation.Invalid("RowIDs: %v", err)
		}
	}
	var found []*feature.Feature
	err = t.scan(ctx, &feature.Query{Where: cond, Columns: t.columns(false), NoGeometry: true}, func(f *feature.Feature) {
		found = append(found, f)
	})
	if err != nil {
		return nil, err
	}
	visible, err := t.visibleParents(slices.Values(found))
	if err != nil {
		return nil, err
	}
	for _, f := range found {
		if p, ok := f.Values[t.parent].(int64); ok && visible[p] {
			out = append(out, t.info(f))
		}
	}
	slices.SortStableFunc(out, func(a, b *gisxml.AttachmentInfo) int { return a.ParentID - b.ParentID })
	return out, nil
}

func attachmentData(ctx context.Context, src *source, l *catalog.Layer, defExpr string, ids gisxml.ArrayOfInt, tt gisxml.TransportType, publish publishFunc) (gisxml.ArrayOfAttachmentData, error) {
	switch tt {
	case "", gisxml.TransportTypeEmbedded, gisxml.TransportTypeUrl:
	default:
		return nil, operation.Invalid("TransportType %q is not a gisTransportType value", tt)
	}
	t, err := openAttachments(ctx, src, l, defExpr)
	if err != nil {
		return nil, err
	}
	want := make([]int64, len(ids))
	for i, id := range ids {
		want[i] = int64(id)
	}
	found := map[int64]*feature.Feature{}
	if err := t.scan(ctx, &feature.Query{IDs: want, Columns: t.columns(true), NoGeometry: true}, func(f *feature.Feature) {
		found[f.ID] = f
	}); err != nil {
		return nil, err
	}
	visible, err := t.visibleParents(maps.Values(found))
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfAttachmentData{}
	for _, id := range ids {
		f, ok := found[int64(id)]
		if ok {
			parent, _ := f.Values[t.parent].(int64)
			ok = visible[parent]
		}
		if !ok {
			return nil, operation.NotFound("%s %d (%s) has no attachment %d", src.kind, src.id, src.name, id)
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
