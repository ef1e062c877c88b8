package rest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// layerQuery is a decoded query on one layer or table: what to ask the operations.
type layerQuery struct {
	table    gisxml.MapTableDescription
	idField  string
	display  string
	fields   []*gisxml.Field // the published fields, shape aside
	shape    string          // the shape field's name; "" for a table
	filter   gisxml.QueryFilterKind
	base     *gisxml.QueryFilter
	orderBy  string
	offset   int
	count    int // resultRecordCount; 0: maxRecordCount
	geometry bool
}

func boolParam(q *request, name string, def bool) (bool, error) {
	switch strings.ToLower(q.param(name)) {
	case "":
		return def, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badRequest("'%s' parameter is invalid: %q", name, q.param(name))
}

func intParam(q *request, name string) (int, error) {
	s := q.param(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, badRequest("'%s' parameter is invalid: %q", name, s)
	}
	return n, nil
}

// decodeQuery turns the query parameters into a filter for layer or table id.
func (ms *mapService) decodeQuery(q *request, info *gisxml.MapServerInfo, id int) (*layerQuery, error) {
	lq := &layerQuery{}
	var fs *gisxml.Fields
	if l := findLayer(info, id); l != nil {
		lq.table = &gisxml.LayerDescription{LayerID: id, Visible: true}
		lq.idField, lq.display, fs = l.IDField, l.DisplayField, l.Fields
	} else if t := findTable(info, id); t != nil {
		lq.table = &gisxml.StandaloneTableDescription{ID: id}
		lq.idField, lq.display, fs = strp(t.IDField), strp(t.DisplayField), t.Fields
	} else {
		return nil, badRequest("Invalid layer ID: %d", id)
	}
	if fs != nil {
		for _, f := range fs.FieldArray {
			if f.GeometryDef != nil {
				lq.shape = f.Name
			} else {
				lq.fields = append(lq.fields, f)
			}
		}
	}
	var err error
	if lq.geometry, err = boolParam(q, "returnGeometry", true); err != nil {
		return nil, err
	}
	lq.geometry = lq.geometry && lq.shape != ""
	if lq.offset, err = intParam(q, "resultOffset"); err != nil {
		return nil, err
	}
	if lq.count, err = intParam(q, "resultRecordCount"); err != nil {
		return nil, err
	}
	qf := &gisxml.QueryFilter{WhereClause: q.param("where")}
	if strings.TrimSpace(qf.WhereClause) == "1=1" {
		qf.WhereClause = ""
	}
	if text := q.param("text"); text != "" && lq.display != "" {
		// text: a LIKE on the display field, ANDed with where.
		like := lq.display + " LIKE '%" + strings.ReplaceAll(text, "'", "''") + "%'"
		if qf.WhereClause != "" {
			like = "(" + qf.WhereClause + ") AND " + like
		}
		qf.WhereClause = like
	}
	if s := q.param("objectIds"); s != "" {
		var ids gisxml.ArrayOfInt
		for _, p := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil {
				return nil, badRequest("'objectIds' parameter is invalid: %q is not an id", p)
			}
			ids = append(ids, n)
		}
		qf.FIDSet = &gisxml.FIDSet{FIDArray: ids}
	}
	outSR, err := parseSR("outSR", q.param("outSR"))
	if err != nil {
		return nil, err
	}
	if outSR == nil && q.f == "geojson" {
		outSR = srValue(&jsonSR{WKID: 4326})
	}
	qf.OutputSpatialReference = outSR
	subFields, err := lq.subFields(q.param("outFields"))
	if err != nil {
		return nil, err
	}
	qf.SubFields = &subFields
	if ob := strings.TrimSpace(q.param("orderByFields")); ob != "" {
		lq.orderBy = "ORDER BY " + ob
		qf.PostfixClause = &lq.orderBy
	}
	distinct, err := boolParam(q, "returnDistinctValues", false)
	if err != nil {
		return nil, err
	}
	if distinct {
		d := "DISTINCT"
		qf.PrefixClause = &d
	}
	lq.base = qf
	lq.filter = qf
	if g := q.param("geometry"); g != "" {
		inSR, err := parseSR("inSR", q.param("inSR"))
		if err != nil {
			return nil, err
		}
		geom, err := parseGeometry(g, q.param("geometryType"), inSR)
		if err != nil {
			return nil, err
		}
		rel, err := spatialRel(q.param("spatialRel"))
		if err != nil {
			return nil, err
		}
		lq.filter = &gisxml.SpatialFilter{QueryFilter: *qf, SearchOrder: gisxml.SearchOrderSpatial, SpatialRel: rel, SpatialRelDescription: q.param("relationParam"), FilterGeometry: geom}
		lq.base = &lq.filter.(*gisxml.SpatialFilter).QueryFilter
	}
	return lq, nil
}

// subFields is the SubFields of outFields: "*" every field, a list those fields (checked by the
// operation), nothing the id field only, as ArcGIS answers; the shape last when asked for.
func (lq *layerQuery) subFields(out string) (string, error) {
	var names []string
	switch out = strings.TrimSpace(out); out {
	case "*":
		for _, f := range lq.fields {
			names = append(names, f.Name)
		}
	case "":
		names = append(names, lq.idField)
	default:
		for _, n := range strings.Split(out, ",") {
			if n = strings.TrimSpace(n); n == "*" {
				return lq.subFields("*")
			} else if n != "" {
				names = append(names, n)
			}
		}
	}
	if lq.geometry {
		names = append(names, lq.shape)
	}
	return strings.Join(names, ","), nil
}

// query answers /<id>/query on a layer or table. Its refusals read as ArcGIS's: "Unable to
// complete operation." with the cause, then "Unable to complete Query operation.", in details;
// but "Invalid spatial reference" as it is.
func (ms *mapService) query(q *request, id int) error {
	err := ms.runQuery(q, id)
	if err == nil {
		return nil
	}
	e := asError(err)
	if e.Code != 400 || e.Message == invalidSRMessage {
		return err
	}
	return &Error{Code: 400, Message: "Unable to complete operation.", Details: append(append([]string{}, e.Details...), "Unable to complete Query operation."), err: err}
}

func (ms *mapService) runQuery(q *request, id int) error {
	switch q.f {
	case "json", "pjson", "geojson":
	default:
		return badRequest("f=%s is not supported for query: use json, pjson or geojson", q.f)
	}
	// ArcGIS refuses a query with no filter at all rather than answering every record; a
	// statistics query needs none.
	if q.param("where") == "" && q.param("objectIds") == "" && q.param("geometry") == "" && q.param("text") == "" && q.param("outStatistics") == "" {
		return badRequest("'where' parameter not specified")
	}
	info, err := ms.serverInfo(q)
	if err != nil {
		return err
	}
	lq, err := ms.decodeQuery(q, info, id)
	if err != nil {
		return err
	}
	countOnly, err := boolParam(q, "returnCountOnly", false)
	if err != nil {
		return err
	}
	idsOnly, err := boolParam(q, "returnIdsOnly", false)
	if err != nil {
		return err
	}
	extentOnly, err := boolParam(q, "returnExtentOnly", false)
	if err != nil {
		return err
	}
	mapName := info.Name
	if q.param("outStatistics") != "" {
		return ms.statistics(q, mapName, lq)
	}
	if extentOnly && !countOnly {
		return ms.extent(q, mapName, lq)
	}
	if countOnly {
		resp, err := invoke(ms, q, "QueryRowCount", ms.families().Queries.QueryRowCount, &gisxml.QueryRowCount{MapName: mapName, MapTableDescription: lq.table, QueryFilter: lq.filter})
		if err != nil {
			return err
		}
		return ms.h.writeValue(q, countJSON{Count: resp.Result})
	}
	if idsOnly {
		ids, err := ms.ids(q, mapName, lq)
		if err != nil {
			return err
		}
		v := idsJSON{ObjectIDFieldName: text(lq.idField)}
		if len(ids) > 0 {
			v.ObjectIDs = ids
		}
		return ms.h.writeValue(q, v)
	}
	rs, exceeded, err := ms.records(q, mapName, lq)
	if err != nil {
		return err
	}
	var w jsonWriter
	if q.f == "geojson" {
		encodeGeoJSON(&w, rs, lq.idField, exceeded)
		q.f = "json"
	} else {
		encodeFeatureSet(&w, rs, lq.display, lq.idField, exceeded)
	}
	return ms.h.writeJSON(q, &w)
}

// countJSON is returnCountOnly's answer.
type countJSON struct {
	Count int `json:"count"`
}

// idsJSON is returnIdsOnly's answer.
type idsJSON struct {
	ObjectIDFieldName text  `json:"objectIdFieldName"`
	ObjectIDs         []int `json:"objectIds"` // null when none match
}

func (ms *mapService) ids(q *request, mapName string, lq *layerQuery) (gisxml.ArrayOfInt, error) {
	resp, err := invoke(ms, q, "QueryRowIDs", ms.families().Queries.QueryRowIDs, &gisxml.QueryRowIDs{MapName: mapName, MapTableDescription: lq.table, QueryFilter: lq.filter})
	if err != nil {
		return nil, err
	}
	return resp.Result, nil
}

// records runs the query for its records, one page of at most maxRecordCount (or
// resultRecordCount) from resultOffset; exceeded says more records matched. Without an order,
// pages are slices of the matching ids (QueryRowIDs is not capped) fetched as a FIDSet; with
// orderByFields or DISTINCT, the page is cut from the operation's first maxRecordCount records.
func (ms *mapService) records(q *request, mapName string, lq *layerQuery) (*gisxml.RecordSet, bool, error) {
	limit := ms.h.p.MaxRecordCount
	if lq.count > 0 && lq.count < limit {
		limit = lq.count
	}
	if lq.orderBy != "" && lq.base.PrefixClause == nil && lq.offset > 0 && lq.offset+limit > ms.h.p.MaxRecordCount {
		return ms.orderedPage(q, mapName, lq, limit)
	}
	if lq.orderBy != "" || lq.base.PrefixClause != nil {
		if lq.offset+limit > ms.h.p.MaxRecordCount && lq.offset > 0 {
			return nil, false, badRequest("resultOffset + resultRecordCount over maxRecordCount (%d) is not supported with returnDistinctValues", ms.h.p.MaxRecordCount)
		}
		rs, err := ms.data(q, mapName, lq, lq.filter)
		if err != nil {
			return nil, false, err
		}
		n, err := invoke(ms, q, "QueryRowCount", ms.families().Queries.QueryRowCount, &gisxml.QueryRowCount{MapName: mapName, MapTableDescription: lq.table, QueryFilter: lq.filter})
		if err != nil {
			return nil, false, err
		}
		total := n.Result
		recs := rs.Records
		from := min(lq.offset, len(recs))
		to := min(from+limit, len(recs))
		rs.Records = recs[from:to]
		return rs, lq.base.PrefixClause == nil && lq.offset+len(rs.Records) < total || len(recs) > to, nil
	}
	ids, err := ms.ids(q, mapName, lq)
	if err != nil {
		return nil, false, err
	}
	from := min(lq.offset, len(ids))
	to := min(from+limit, len(ids))
	rs, err := ms.data(q, mapName, lq, lq.withIDs(ids[from:to], nil))
	if err != nil {
		return nil, false, err
	}
	return rs, to < len(ids), nil
}

// withIDs is the query's filter restricted to ids (the same where clause and geometry), with
// subFields instead of the query's when it is not nil.
func (lq *layerQuery) withIDs(ids gisxml.ArrayOfInt, subFields *string) gisxml.QueryFilterKind {
	base := *lq.base
	base.FIDSet = &gisxml.FIDSet{FIDArray: ids}
	if len(ids) == 0 {
		// An empty FIDSet means no restriction to the operations: ask for an id no row has.
		base.FIDSet = &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{math.MinInt32}}
	}
	if subFields != nil {
		base.SubFields = subFields
	}
	if f, ok := lq.filter.(*gisxml.SpatialFilter); ok {
		sf := *f
		sf.QueryFilter = base
		return &sf
	}
	return &base
}

// orderedPage is a page in orderByFields order that reaches past maxRecordCount. The operation
// orders (by the fields, then by id) and answers at most maxRecordCount records, so the order is
// read from it in runs: the first maxRecordCount ids in order among all the matching ids, then
// the first among those left, and so on until the page's ranks are reached; the page's records
// are then fetched by id, in the same order. No record is compared here.
func (ms *mapService) orderedPage(q *request, mapName string, lq *layerQuery, limit int) (*gisxml.RecordSet, bool, error) {
	all, err := ms.ids(q, mapName, lq)
	if err != nil {
		return nil, false, err
	}
	left := all
	idOnly := lq.idField
	var page gisxml.ArrayOfInt
	for rank := 0; rank < lq.offset+limit && len(left) > 0; {
		rs, err := ms.data(q, mapName, lq, lq.withIDs(left, &idOnly))
		if err != nil {
			return nil, false, err
		}
		run, err := recordIDs(rs, lq.idField)
		if err != nil {
			return nil, false, err
		}
		if len(run) == 0 {
			break // the rows changed under the query: what is left matches no more
		}
		for _, id := range run {
			if rank >= lq.offset && rank < lq.offset+limit {
				page = append(page, id)
			}
			rank++
		}
		taken := make(map[int]bool, len(run))
		for _, id := range run {
			taken[id] = true
		}
		rest := make(gisxml.ArrayOfInt, 0, len(left)-len(run))
		for _, id := range left {
			if !taken[id] {
				rest = append(rest, id)
			}
		}
		left = rest
	}
	rs, err := ms.data(q, mapName, lq, lq.withIDs(page, nil))
	if err != nil {
		return nil, false, err
	}
	return rs, lq.offset+len(page) < len(all), nil
}

// recordIDs reads the id field of every record of rs, in order.
func recordIDs(rs *gisxml.RecordSet, idField string) (gisxml.ArrayOfInt, error) {
	col := -1
	if rs.Fields != nil {
		for i, f := range rs.Fields.FieldArray {
			if strings.EqualFold(f.Name, idField) {
				col = i
			}
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("the ordered ids: the record set has no field %q", idField)
	}
	ids := make(gisxml.ArrayOfInt, 0, len(rs.Records))
	for _, r := range rs.Records {
		if col >= len(r.Values) {
			return nil, fmt.Errorf("the ordered ids: a record has no value for %q", idField)
		}
		switch v := r.Values[col].(type) {
		case int:
			ids = append(ids, v)
		case int32:
			ids = append(ids, int(v))
		case int64:
			ids = append(ids, int(v))
		default:
			return nil, fmt.Errorf("the ordered ids: %q is a %T", idField, v)
		}
	}
	return ids, nil
}

func (ms *mapService) data(q *request, mapName string, lq *layerQuery, filter gisxml.QueryFilterKind) (*gisxml.RecordSet, error) {
	resp, err := invoke(ms, q, "QueryData", ms.families().Queries.QueryData, &gisxml.QueryData{MapName: mapName, MapTableDescription: lq.table, QueryFilter: filter,
		QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultRecordSetAsObject}})
	if err != nil {
		return nil, err
	}
	rs, ok := resp.Result.Object.(*gisxml.RecordSet)
	if !ok {
		return nil, badRequest("the query answered no record set")
	}
	return rs, nil
}
