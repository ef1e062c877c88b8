package ogcapi

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
)

// defaultLimit is a page's size when the request gives no limit (Features Part 1's example
// default).
const defaultLimit = 10

// itemsQuery is an items request as read from its parameters.
type itemsQuery struct {
	p      map[string]string
	mt     string
	limit  int
	offset int
	crs    crsRef
	filter gisxml.QueryFilterKind
	base   *gisxml.QueryFilter // the filter's where clause and output system
	fields []*gisxml.Field     // the layer's fields, the shape among them
}

// featureLayer checks that l has features to answer.
func featureLayer(l *gisxml.MapLayerInfo) error {
	if !l.IsFeatureLayer {
		return notFound("collection " + strconv.Itoa(l.LayerID) + " has no items: it is a " + l.LayerType)
	}
	return nil
}

// fieldsOf is the layer's fields.
func fieldsOf(l *gisxml.MapLayerInfo) []*gisxml.Field {
	if l.Fields == nil {
		return nil
	}
	return l.Fields.FieldArray
}

// readItems reads an items request: limit (1 to MaxRecordCount; a larger one is taken as
// MaxRecordCount, as Features Part 1 §7.15.3 requires), offset, bbox and bbox-crs, crs,
// datetime (no layer has a temporal property: it filters nothing), f, and a filter on any field
// but the shape (field=value, compared for equality). Any other parameter is a 400.
func (s *service) readItems(r *http.Request, l *gisxml.MapLayerInfo) (*itemsQuery, error) {
	fields := fieldsOf(l)
	fieldByName := func(name string) *gisxml.Field {
		for _, f := range fields {
			if f.Name == name && f.GeometryDef == nil {
				return f
			}
		}
		return nil
	}
	p, err := params(r, func(name string) bool {
		switch name {
		case "f", "limit", "offset", "bbox", "bbox-crs", "crs", "datetime":
			return true
		}
		return fieldByName(name) != nil
	})
	if err != nil {
		return nil, err
	}
	q := &itemsQuery{p: p, fields: fields}
	if q.mt, err = negotiate(r, p, mediaGeoJSON, mediaHTML, mediaJSON); err != nil {
		return nil, err
	}
	if q.limit, err = intParam(p, "limit", defaultLimit, 1, math.MaxInt32); err != nil {
		return nil, err
	}
	q.limit = min(q.limit, s.h.p.MaxRecordCount)
	if q.offset, err = intParam(p, "offset", 0, 0, math.MaxInt32); err != nil {
		return nil, err
	}
	if q.crs, err = s.readCRS(p, "crs", s.defaultCRS()); err != nil {
		return nil, err
	}
	var where []string
	for name, v := range p {
		f := fieldByName(name)
		if f == nil {
			continue
		}
		cond, err := equals(f, v)
		if err != nil {
			return nil, err
		}
		where = append(where, cond)
	}
	// The conditions in a fixed order, so that the same request is the same query.
	slices.Sort(where)
	q.base = &gisxml.QueryFilter{WhereClause: strings.Join(where, " AND "), OutputSpatialReference: mapview.SpatialReference(q.crs.sr)}
	q.filter = q.base
	bbox, bc, err := s.readBBoxCRS(p)
	if err != nil {
		return nil, err
	}
	if bbox != nil {
		env := &gisxml.EnvelopeN{XMin: bbox[0], YMin: bbox[1], XMax: bbox[2], YMax: bbox[3], SpatialReference: mapview.SpatialReference(bc.sr)}
		if env.XMin > env.XMax && bc.sr.IsGeographic() {
			// A box across the antimeridian (Features Part 1 §7.15.3): both sides of it.
			env.XMax += 360
		}
		if !(env.XMin <= env.XMax && env.YMin <= env.YMax) {
			return nil, invalid("bbox", "its lower corner must be below and left of its upper corner")
		}
		q.filter = &gisxml.SpatialFilter{QueryFilter: *q.base, SearchOrder: gisxml.SearchOrderSpatial, SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: env}
		q.base = &q.filter.(*gisxml.SpatialFilter).QueryFilter
	} else if _, ok := p["bbox-crs"]; ok {
		return nil, invalid("bbox-crs", "given without bbox")
	}
	return q, nil
}

// equals is the where clause of field = value: a number for a numeric field (else a 400), a
// string literal otherwise.
func equals(f *gisxml.Field, v string) (string, error) {
	switch f.Type {
	case gisxml.FieldTypeInteger, gisxml.FieldTypeSmallInteger, gisxml.FieldTypeOID:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return "", invalid(f.Name, "must be a whole number, not "+quoted(v))
		}
		return f.Name + " = " + strconv.FormatInt(n, 10), nil
	case gisxml.FieldTypeDouble, gisxml.FieldTypeSingle:
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return "", invalid(f.Name, "must be a number, not "+quoted(v))
		}
		return f.Name + " = " + strconv.FormatFloat(n, 'g', -1, 64), nil
	}
	return f.Name + " = '" + strings.ReplaceAll(v, "'", "''") + "'", nil
}

// subFields are every field of the layer, the shape last.
func subFields(fields []*gisxml.Field) string {
	var names []string
	shape := ""
	for _, f := range fields {
		if f.GeometryDef != nil {
			shape = f.Name
			continue
		}
		names = append(names, f.Name)
	}
	if shape != "" {
		names = append(names, shape)
	}
	return strings.Join(names, ",")
}

// withIDs is q's filter restricted to ids.
func (q *itemsQuery) withIDs(ids gisxml.ArrayOfInt) gisxml.QueryFilterKind {
	base := *q.base
	sub := subFields(q.fields)
	base.SubFields = &sub
	base.FIDSet = &gisxml.FIDSet{FIDArray: ids}
	if len(ids) == 0 {
		// An empty FIDSet means no restriction to the operations: ask for an id no row has.
		base.FIDSet = &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{math.MinInt32}}
	}
	if f, ok := q.filter.(*gisxml.SpatialFilter); ok {
		sf := *f
		sf.QueryFilter = base
		return &sf
	}
	return &base
}

// records is QueryData of the records of ids.
func (s *service) records(l *gisxml.MapLayerInfo, q *itemsQuery, ids gisxml.ArrayOfInt) (*gisxml.RecordSet, error) {
	resp, err := invoke(s, "QueryData", s.families().Queries.QueryData, &gisxml.QueryData{MapName: s.svc.DefaultMap().Name,
		MapTableDescription: &gisxml.LayerDescription{LayerID: l.LayerID, Visible: true}, QueryFilter: q.withIDs(ids),
		QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultRecordSetAsObject}})
	if err != nil {
		return nil, err
	}
	rs, ok := resp.Result.Object.(*gisxml.RecordSet)
	if !ok {
		return nil, &Error{Status: http.StatusInternalServerError, Code: "ServerError", Description: "the query answered no record set"}
	}
	return rs, nil
}

// items answers /collections/{id}/items: the matching ids (QueryRowIDs, numberMatched), then
// the page's records by id (QueryData), in id order.
func (s *service) items(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo) error {
	if err := featureLayer(l); err != nil {
		return err
	}
	q, err := s.readItems(r, l)
	if err != nil {
		return err
	}
	resp, err := invoke(s, "QueryRowIDs", s.families().Queries.QueryRowIDs, &gisxml.QueryRowIDs{MapName: s.svc.DefaultMap().Name,
		MapTableDescription: &gisxml.LayerDescription{LayerID: l.LayerID, Visible: true}, QueryFilter: q.filter})
	if err != nil {
		return err
	}
	ids := resp.Result
	from := min(q.offset, len(ids))
	to := min(from+q.limit, len(ids))
	rs, err := s.records(l, q, ids[from:to])
	if err != nil {
		return err
	}
	href := s.base + "/collections/" + strconv.Itoa(l.LayerID) + "/items"
	var links []link
	add := func(rel, mt string, set map[string]string) {
		links = append(links, link{Href: pageURL(href, q.p, set), Rel: rel, Type: mt})
	}
	f := map[string]string{mediaGeoJSON: "geojson", mediaJSON: "json", mediaHTML: "html"}
	add("self", q.mt, map[string]string{"f": f[q.mt]})
	if q.mt == mediaHTML {
		add("alternate", mediaGeoJSON, map[string]string{"f": "geojson"})
	} else {
		add("alternate", mediaHTML, map[string]string{"f": "html"})
	}
	if to < len(ids) {
		add("next", q.mt, map[string]string{"f": f[q.mt], "offset": strconv.Itoa(to), "limit": strconv.Itoa(q.limit)})
	}
	if from > 0 {
		add("prev", q.mt, map[string]string{"f": f[q.mt], "offset": strconv.Itoa(max(0, from-q.limit)), "limit": strconv.Itoa(q.limit)})
	}
	links = append(links, link{Href: s.base + "/collections/" + strconv.Itoa(l.LayerID), Rel: "collection", Type: mediaJSON, Title: l.Name})
	setCRSHeader(w, q.crs)
	if q.mt == mediaHTML {
		return writeItemsHTML(w, r, l, rs, links, len(ids), q.crs)
	}
	var b jsonBuf
	enc := newFeatureEncoder(rs, l.IDField, q.crs.northFirst)
	b.objOpen()
	b.key("type")
	b.str("FeatureCollection")
	b.key("numberMatched")
	b.int(len(ids))
	b.key("numberReturned")
	b.int(len(rs.Records))
	b.key("timeStamp")
	b.str(time.Now().UTC().Format(time.RFC3339))
	b.key("links")
	b.raw(mustJSON(links))
	b.key("features")
	b.arrOpen()
	for _, rec := range rs.Records {
		enc.feature(&b, rec)
	}
	b.arrClose()
	b.objClose()
	writeBody(w, r, http.StatusOK, q.mt, "public, max-age=60", b.b)
	return nil
}

// setCRSHeader names the system of the answer's coordinates (Features Part 2 §6.2).
func setCRSHeader(w http.ResponseWriter, c crsRef) {
	w.Header().Set("Content-Crs", "<"+c.uri+">")
}

// item answers /collections/{id}/items/{featureId}: the feature whose object id it is.
func (s *service) item(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo, fid string) error {
	if err := featureLayer(l); err != nil {
		return err
	}
	id, err := strconv.Atoi(fid)
	if err != nil || strconv.Itoa(id) != fid || id < math.MinInt32 || id > math.MaxInt32 {
		return notFound("feature " + quoted(fid) + " does not exist")
	}
	p, err := params(r, func(name string) bool { return name == "f" || name == "crs" })
	if err != nil {
		return err
	}
	q := &itemsQuery{p: p, fields: fieldsOf(l)}
	if q.mt, err = negotiate(r, p, mediaGeoJSON, mediaHTML, mediaJSON); err != nil {
		return err
	}
	if q.crs, err = s.readCRS(p, "crs", s.defaultCRS()); err != nil {
		return err
	}
	q.base = &gisxml.QueryFilter{OutputSpatialReference: mapview.SpatialReference(q.crs.sr)}
	q.filter = q.base
	rs, err := s.records(l, q, gisxml.ArrayOfInt{id})
	if err != nil {
		return err
	}
	if len(rs.Records) == 0 {
		return notFound("feature " + quoted(fid) + " does not exist")
	}
	href := s.base + "/collections/" + strconv.Itoa(l.LayerID) + "/items/" + fid
	links := []link{{Href: pageURL(href, p, map[string]string{"f": "geojson"}), Rel: "self", Type: mediaGeoJSON},
		{Href: pageURL(href, p, map[string]string{"f": "html"}), Rel: "alternate", Type: mediaHTML},
		{Href: s.base + "/collections/" + strconv.Itoa(l.LayerID), Rel: "collection", Type: mediaJSON, Title: l.Name}}
	if q.mt == mediaHTML {
		links[0].Rel, links[1].Rel = "alternate", "self"
	}
	setCRSHeader(w, q.crs)
	if q.mt == mediaHTML {
		return writeItemsHTML(w, r, l, rs, links, -1, q.crs)
	}
	var b jsonBuf
	newFeatureEncoder(rs, l.IDField, q.crs.northFirst).featureWith(&b, rs.Records[0], links)
	writeBody(w, r, http.StatusOK, q.mt, "public, max-age=60", b.b)
	return nil
}

// writeItemsHTML answers features as an HTML table of their attributes; matched is the
// number that matched (-1 for a single feature).
func writeItemsHTML(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo, rs *gisxml.RecordSet, links []link, matched int, c crsRef) error {
	pg := &page{Title: l.Name, Links: links}
	if matched >= 0 {
		pg.Description = strconv.Itoa(matched) + " features match; " + strconv.Itoa(len(rs.Records)) + " on this page. Coordinates in " + c.uri + "."
	}
	enc := newFeatureEncoder(rs, l.IDField, c.northFirst)
	for i, f := range enc.fields {
		if i != enc.shape {
			pg.Head = append(pg.Head, f.Name)
		}
	}
	for _, rec := range rs.Records {
		var row []cell
		for i, v := range rec.Values {
			if i == enc.shape || i >= len(enc.fields) {
				continue
			}
			row = append(row, cell{Text: textOf(v)})
		}
		pg.Rows = append(pg.Rows, row)
	}
	return writeDoc(w, r, mediaHTML, "", nil, pg)
}
