package rest

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// statTypes maps outStatistics' statisticType to the schema's statistics.
var statTypes = map[string]gisxml.DataStatType{
	"count": gisxml.DataStatTypeCount, "sum": gisxml.DataStatTypeSum, "min": gisxml.DataStatTypeMin, "max": gisxml.DataStatTypeMax,
	"avg": gisxml.DataStatTypeAverage, "stddev": gisxml.DataStatTypeStdDev, "var": gisxml.DataStatTypeVariance,
}

// statistics answers a query with outStatistics through QueryDataStatistics: one feature per
// group of groupByFieldsForStatistics, attributes only.
func (ms *mapService) statistics(q *request, mapName string, lq *layerQuery) error {
	var defs []struct {
		StatisticType         string `json:"statisticType"`
		OnStatisticField      string `json:"onStatisticField"`
		OutStatisticFieldName string `json:"outStatisticFieldName"`
	}
	if err := json.Unmarshal([]byte(q.param("outStatistics")), &defs); err != nil {
		return badJSON("outStatistics", err)
	}
	if len(defs) == 0 {
		return badRequest("'outStatistics' parameter is invalid: it lists no statistic")
	}
	req := &gisxml.StatisticsRequest{}
	for _, d := range defs {
		t, ok := statTypes[strings.ToLower(d.StatisticType)]
		if !ok || d.OnStatisticField == "" {
			return badRequest("'outStatistics' parameter is invalid: statisticType %q on %q", d.StatisticType, d.OnStatisticField)
		}
		sd := &gisxml.StatisticDescription{StatisticFieldName: d.OnStatisticField, StatisticType: t}
		if d.OutStatisticFieldName != "" {
			name := d.OutStatisticFieldName
			sd.ResultFieldName = &name
		}
		req.StatisticDescriptions = append(req.StatisticDescriptions, sd)
	}
	if g := strings.TrimSpace(q.param("groupByFieldsForStatistics")); g != "" {
		req.GroupByFields = &g
	}
	if o := strings.TrimSpace(q.param("orderByFields")); o != "" {
		req.OrderByFields = &o
	}
	// The statistics run on the filter without the record options (fields, order, shape).
	base := *lq.base
	base.SubFields, base.PostfixClause, base.PrefixClause, base.OutputSpatialReference = nil, nil, nil, nil
	var filter gisxml.QueryFilterKind = &base
	if sf, ok := lq.filter.(*gisxml.SpatialFilter); ok {
		c := *sf
		c.QueryFilter = base
		filter = &c
	}
	resp, err := invoke(ms, q, "QueryDataStatistics", ms.families().Queries.QueryDataStatistics, &gisxml.QueryDataStatistics{MapName: mapName, MapTableDescription: lq.table, StatisticsRequest: req, QueryFilter: filter})
	if err != nil {
		return err
	}
	rs := resp.Result
	var w jsonWriter
	if q.f == "geojson" {
		encodeGeoJSON(&w, rs, "", false)
		q.f = "json"
	} else {
		encodeFeatureSet(&w, rs, "", "", false)
	}
	return ms.h.writeJSON(q, &w)
}

// extent answers returnExtentOnly: the extent of the matching features' shapes in outSR,
// read page by page through QueryData.
func (ms *mapService) extent(q *request, mapName string, lq *layerQuery) error {
	if lq.shape == "" {
		return badRequest("returnExtentOnly needs a layer with geometry")
	}
	ids, err := ms.ids(q, mapName, lq)
	if err != nil {
		return err
	}
	fields := lq.shape
	base := *lq.base
	base.SubFields, base.PostfixClause, base.PrefixClause = &fields, nil, nil
	bounds := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	var sr gisxml.SpatialReference
	for from := 0; from < len(ids); from += ms.h.p.MaxRecordCount {
		page := base
		page.FIDSet = &gisxml.FIDSet{FIDArray: ids[from:min(from+ms.h.p.MaxRecordCount, len(ids))]}
		var filter gisxml.QueryFilterKind = &page
		if sf, ok := lq.filter.(*gisxml.SpatialFilter); ok {
			c := *sf
			c.QueryFilter = page
			filter = &c
		}
		rs, err := ms.data(q, mapName, lq, filter)
		if err != nil {
			return err
		}
		if rs.Fields != nil && len(rs.Fields.FieldArray) > 0 && rs.Fields.FieldArray[0].GeometryDef != nil {
			sr = rs.Fields.FieldArray[0].GeometryDef.SpatialReference
		}
		for _, r := range rs.Records {
			for _, v := range r.Values {
				extend(&bounds, v)
			}
		}
	}
	if sr == nil {
		sr = lq.base.OutputSpatialReference
	}
	return ms.h.writeValue(q, extentOnlyJSON{boundsJSON{bound(bounds[0]), bound(bounds[1]), bound(bounds[2]), bound(bounds[3]), srJSON{sr}}})
}

// extentOnlyJSON is returnExtentOnly's answer.
type extentOnlyJSON struct {
	Extent boundsJSON `json:"extent"`
}

type boundsJSON struct {
	XMin             bound  `json:"xmin"`
	YMin             bound  `json:"ymin"`
	XMax             bound  `json:"xmax"`
	YMax             bound  `json:"ymax"`
	SpatialReference srJSON `json:"spatialReference"`
}

// bound is a coordinate of an extent; the extent of nothing has infinite bounds, written
// "NaN" as ArcGIS writes them.
type bound float64

func (b bound) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(b), 0) {
		return []byte(`"NaN"`), nil
	}
	return appendFloat(nil, float64(b)), nil
}

// extend grows b by the points of a schema geometry.
func extend(b *[4]float64, g any) {
	add := func(p gisxml.Point) {
		if x, y, ok := pointXY(p); ok {
			b[0], b[1], b[2], b[3] = min(b[0], x), min(b[1], y), max(b[2], x), max(b[3], y)
		}
	}
	switch x := g.(type) {
	case *gisxml.PointN:
		add(x)
	case *gisxml.MultipointN:
		for _, p := range x.PointArray {
			add(p)
		}
	case *gisxml.PolylineN:
		for _, p := range x.PathArray {
			for _, pt := range p.PathPart().PointArray {
				add(pt)
			}
		}
	case *gisxml.PolygonN:
		for _, r := range x.RingArray {
			for _, pt := range r.PointArray {
				add(pt)
			}
		}
	}
}
