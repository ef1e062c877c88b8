package queries

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// QueryDataStatistics computes statistics of the rows that pass the filter, optionally grouped
// by fields: one record per group, the group fields first, then one value per statistic.
// NULLs are skipped; Count counts non-NULL values; StdDev and Variance are the sample ones
// (divided by n−1, NULL for fewer than two values); Sum, Average, StdDev and Variance need a
// numeric field; Min and Max also take strings and dates.
func (s *Service) QueryDataStatistics(ctx context.Context, c *operation.Call, req *gisxml.QueryDataStatistics) (*gisxml.QueryDataStatisticsResponse, error) {
	src, defExpr, err := tableOf(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	sr := req.StatisticsRequest
	if sr == nil || len(sr.StatisticDescriptions) == 0 {
		return nil, operation.Invalid("StatisticsRequest needs at least one StatisticDescription")
	}
	if n := len(sr.StatisticDescriptions); n > limits.MaxStatistics {
		return nil, operation.OverLimit(limits.Statistics, "StatisticsRequest/StatisticDescriptions: %d statistics is more than the limit of %d a request (%s)",
			n, limits.MaxStatistics, limits.Statistics)
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
			if len(groups) == limits.MaxGroupByFields {
				return nil, operation.OverLimit(limits.Statistics, "StatisticsRequest/GroupByFields: more than %d fields; the limit is %d group fields a request (%s)",
					limits.MaxGroupByFields, limits.MaxGroupByFields, limits.Statistics)
			}
			i := src.field(name)
			if i < 0 {
				return nil, operation.Invalid("GroupByFields: %s %d (%s) has no field %q (fields: %s)", src.kind, src.id, src.name, name, src.fieldNames())
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
			return nil, operation.Invalid("StatisticDescriptions[%d] is empty", k)
		}
		i := src.field(d.StatisticFieldName)
		if i < 0 {
			return nil, operation.Invalid("StatisticDescriptions[%d]: %s %d (%s) has no field %q", k, src.kind, src.id, src.name, d.StatisticFieldName)
		}
		f := src.fields[i]
		st := statSpec{col: src.fieldIndex[i], typ: d.StatisticType}
		name := strings.ToUpper(strings.TrimPrefix(string(d.StatisticType), "gisDataStatType")) + "_" + f.Name
		if d.ResultFieldName != nil && strings.TrimSpace(*d.ResultFieldName) != "" {
			name = strings.TrimSpace(*d.ResultFieldName)
		}
		if len(name) > limits.MaxStatisticNameBytes {
			return nil, operation.OverLimit(limits.Statistics, "StatisticDescriptions[%d]/ResultFieldName: %q is %d bytes long; the limit is %d bytes (%s)",
				k, name, len(name), limits.MaxStatisticNameBytes, limits.Statistics)
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
				return nil, operation.Invalid("StatisticDescriptions[%d]: %s needs a numeric field; %s is %s", k, d.StatisticType, f.Name, f.Type)
			}
		default:
			return nil, operation.Invalid("StatisticDescriptions[%d]: StatisticType %q is not a gisDataStatType value", k, d.StatisticType)
		}
		st.out = out
		stats = append(stats, st)
		outFields = append(outFields, out)
	}

	// The provider computes the statistics where the data lives (SQL aggregates in PostGIS).
	fstats := make([]feature.Stat, len(stats))
	for i, st := range stats {
		fstats[i] = feature.Stat{Kind: statKinds[st.typ], Column: st.col}
	}
	groupCols := make([]int, len(groups))
	for i, g := range groups {
		groupCols[i] = src.fieldIndex[g]
	}
	q := p.query()
	q.MaxGroups = maxGroups(len(groups), len(stats))
	statRows, err := src.data.Stats(ctx, q, fstats, groupCols)
	if errors.Is(err, feature.ErrTooManyGroups) {
		return nil, operation.OverLimit(limits.Statistics, "GroupByFields: more than %d groups of %d fields with %d statistics; the limit is %d groups and %d values an answer (%s)",
			q.MaxGroups, len(groups), len(stats), limits.MaxStatisticsGroups, limits.MaxStatisticsValues, limits.Statistics)
	}
	if err != nil {
		return nil, src.fault(err)
	}
	rows := make([][]any, 0, len(statRows))
	for _, r := range statRows {
		rows = append(rows, append(slices.Clone(r.Group), r.Values...))
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
	rs := &gisxml.RecordSet{Fields: operation.Fields(outFields, nil), Records: make(gisxml.ArrayOfRecord, 0, len(rows))}
	for _, row := range rows {
		vals := make(gisxml.ArrayOfValue, len(row))
		for i, v := range row {
			vals[i] = wireValue(outFields[i].Type, v)
		}
		rs.Records = append(rs.Records, &gisxml.Record{Values: vals})
	}
	return &gisxml.QueryDataStatisticsResponse{Result: rs}, nil
}

// maxGroups is the most groups a statistics answer of that many group fields and statistics
// may have: limits.MaxStatisticsGroups, fewer when the values would pass
// limits.MaxStatisticsValues.
func maxGroups(groupFields, stats int) int {
	return max(1, min(limits.MaxStatisticsGroups, limits.MaxStatisticsValues/(groupFields+stats)))
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

// statKinds maps the interface's statistic types to the providers' aggregates.
var statKinds = map[gisxml.DataStatType]feature.StatKind{
	gisxml.DataStatTypeCount:    feature.StatCount,
	gisxml.DataStatTypeSum:      feature.StatSum,
	gisxml.DataStatTypeMin:      feature.StatMin,
	gisxml.DataStatTypeMax:      feature.StatMax,
	gisxml.DataStatTypeAverage:  feature.StatAvg,
	gisxml.DataStatTypeStdDev:   feature.StatStdDev,
	gisxml.DataStatTypeVariance: feature.StatVariance,
}
