package mapserver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// QueryDataStatistics computes statistics of the rows that pass the filter, optionally grouped
// by fields: one record per group, the group fields first, then one value per statistic.
// NULLs are skipped; Count counts non-NULL values; StdDev and Variance are the sample ones
// (divided by n−1, NULL for fewer than two values); Sum, Average, StdDev and Variance need a
// numeric field; Min and Max also take strings and dates.
func (s *Server) QueryDataStatistics(ctx context.Context, c *Call, req *gisxml.QueryDataStatistics) (*gisxml.QueryDataStatisticsResponse, error) {
	src, defExpr, err := tableOf(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	sr := req.StatisticsRequest
	if sr == nil || len(sr.StatisticDescriptions) == 0 {
		return nil, invalid("StatisticsRequest needs at least one StatisticDescription")
	}
	p, err := newPlan(ctx, src, req.QueryFilter, defExpr)
	if err != nil {
		return nil, err
	}
	var groups []int // positions in src.fields
	if sr.GroupByFields != nil {
		for name := range strings.SplitSeq(*sr.GroupByFields, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			i := src.field(name)
			if i < 0 {
				return nil, invalid("GroupByFields: %s %d (%s) has no field %q (fields: %s)", src.kind, src.id, src.name, name, src.fieldNames())
			}
			groups = append(groups, i)
		}
	}
	stats := make([]statSpec, 0, len(sr.StatisticDescriptions))
	outFields := make([]feature.Field, 0, len(groups)+len(sr.StatisticDescriptions))
	for _, g := range groups {
		outFields = append(outFields, src.fields[g])
	}
	for k, d := range sr.StatisticDescriptions {
		if d == nil {
			return nil, invalid("StatisticDescriptions[%d] is empty", k)
		}
		i := src.field(d.StatisticFieldName)
		if i < 0 {
			return nil, invalid("StatisticDescriptions[%d]: %s %d (%s) has no field %q", k, src.kind, src.id, src.name, d.StatisticFieldName)
		}
		f := src.fields[i]
		st := statSpec{col: src.fieldIndex[i], typ: d.StatisticType}
		name := strings.ToUpper(strings.TrimPrefix(string(d.StatisticType), "gisDataStatType")) + "_" + f.Name
		if d.ResultFieldName != nil && strings.TrimSpace(*d.ResultFieldName) != "" {
			name = strings.TrimSpace(*d.ResultFieldName)
		}
		out := feature.Field{Name: name, Alias: name, Type: feature.FieldDouble, Length: 8, Nullable: true}
		switch d.StatisticType {
		case gisxml.DataStatTypeCount:
			out.Type, out.Length = feature.FieldInteger, 4
		case gisxml.DataStatTypeMin, gisxml.DataStatTypeMax:
			out.Type, out.Length = f.Type, f.Length
			if f.Type == feature.FieldOID {
				out.Type = feature.FieldInteger
			}
		case gisxml.DataStatTypeSum, gisxml.DataStatTypeAverage, gisxml.DataStatTypeStdDev, gisxml.DataStatTypeVariance:
			if !f.Type.Numeric() {
				return nil, invalid("StatisticDescriptions[%d]: %s needs a numeric field; %s is %s", k, d.StatisticType, f.Name, f.Type)
			}
		default:
			return nil, invalid("StatisticDescriptions[%d]: StatisticType %q is not a gisDataStatType value", k, d.StatisticType)
		}
		st.out = out
		stats = append(stats, st)
		outFields = append(outFields, out)
	}

	type group struct {
		key  []any
		accs []statAcc
	}
	byKey := map[string]*group{}
	var order []*group
	var key strings.Builder
	err = p.scan(func(f *feature.Feature) bool {
		key.Reset()
		for _, g := range groups {
			v := f.Values[src.fieldIndex[g]]
			fmt.Fprintf(&key, "%T:%v\x00", v, v)
		}
		gr, ok := byKey[key.String()]
		if !ok {
			gr = &group{accs: make([]statAcc, len(stats))}
			for _, g := range groups {
				gr.key = append(gr.key, f.Values[src.fieldIndex[g]])
			}
			byKey[key.String()] = gr
			order = append(order, gr)
		}
		for i, st := range stats {
			gr.accs[i].add(f.Values[st.col])
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 && len(order) == 0 {
		order = append(order, &group{accs: make([]statAcc, len(stats))})
	}

	rows := make([][]any, 0, len(order))
	for _, gr := range order {
		row := slices.Clone(gr.key)
		for i, st := range stats {
			row = append(row, gr.accs[i].result(st.typ))
		}
		rows = append(rows, row)
	}
	// Order: OrderByFields (group or result fields), else the group values ascending.
	var keys []orderKey
	if sr.OrderByFields != nil && strings.TrimSpace(*sr.OrderByFields) != "" {
		tmp := &source{kind: src.kind, id: src.id, name: src.name, fields: outFields, fieldIndex: seqInts(len(outFields))}
		if keys, err = tmp.orderKeys(*sr.OrderByFields, "OrderByFields"); err != nil {
			return nil, err
		}
	} else {
		for i := range groups {
			keys = append(keys, orderKey{col: i})
		}
	}
	slices.SortStableFunc(rows, func(a, b []any) int {
		for _, k := range keys {
			c := compareValues(a[k.col], b[k.col])
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	rs := &gisxml.RecordSet{Fields: fields(outFields, nil), Records: make(gisxml.ArrayOfRecord, 0, len(rows))}
	for _, row := range rows {
		vals := make(gisxml.ArrayOfValue, len(row))
		for i, v := range row {
			vals[i] = wireValue(outFields[i].Type, v)
		}
		rs.Records = append(rs.Records, &gisxml.Record{Values: vals})
	}
	return &gisxml.QueryDataStatisticsResponse{Result: rs}, nil
}

func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

type statSpec struct {
	col int // position in Feature.Values
	typ gisxml.DataStatType
	out feature.Field
}

// statAcc accumulates one statistic of one group (Welford's method for the variance).
type statAcc struct {
	n          int
	sum        float64
	mean, m2   float64
	minV, maxV any
}

func (a *statAcc) add(v any) {
	if v == nil {
		return
	}
	a.n++
	if a.minV == nil || compareValues(v, a.minV) < 0 {
		a.minV = v
	}
	if a.maxV == nil || compareValues(v, a.maxV) > 0 {
		a.maxV = v
	}
	var x float64
	switch t := v.(type) {
	case int64:
		x = float64(t)
	case float64:
		x = t
	default:
		return
	}
	a.sum += x
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
}

func (a *statAcc) result(t gisxml.DataStatType) any {
	switch t {
	case gisxml.DataStatTypeCount:
		return int64(a.n)
	case gisxml.DataStatTypeMin:
		return a.minV
	case gisxml.DataStatTypeMax:
		return a.maxV
	}
	if a.n == 0 {
		return nil
	}
	switch t {
	case gisxml.DataStatTypeSum:
		return a.sum
	case gisxml.DataStatTypeAverage:
		return a.sum / float64(a.n)
	}
	if a.n < 2 {
		return nil
	}
	v := a.m2 / float64(a.n-1)
	if t == gisxml.DataStatTypeStdDev {
		return math.Sqrt(v)
	}
	return v
}
