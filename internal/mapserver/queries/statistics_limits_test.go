package queries_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
)

// The statistics limits are the operation's, so SOAP has them as REST does: too many
// statistics, group fields, groups or values, or a result name too long, is a client fault
// naming the limit; the counties (3,231) grouped by fid pass with 21 values a group and are
// refused with 41.
func TestQueryDataStatisticsLimits(t *testing.T) {
	f := mapservertest.New(t)
	stats := func(n int, name string) gisxml.ArrayOfStatisticDescription {
		var out gisxml.ArrayOfStatisticDescription
		for i := range n {
			rn := fmt.Sprintf("%s%d", name, i)
			out = append(out, &gisxml.StatisticDescription{StatisticFieldName: "fid", StatisticType: gisxml.DataStatTypeMax, ResultFieldName: &rn})
		}
		return out
	}
	req := func(descs gisxml.ArrayOfStatisticDescription, groupBy string) *gisxml.QueryDataStatistics {
		return &gisxml.QueryDataStatistics{MapTableDescription: &gisxml.LayerDescription{LayerID: 1},
			StatisticsRequest: &gisxml.StatisticsRequest{StatisticDescriptions: descs, GroupByFields: &groupBy}}
	}
	for _, c := range []struct {
		name string
		req  *gisxml.QueryDataStatistics
		want string
	}{
		{"5,000 statistics", req(stats(5_000, "m"), "STATE,NAME,STATEFP,fid,NAME"), "5000 statistics is more than the limit of 100 a request (statistics)"},
		{"11 group fields", req(stats(1, "m"), strings.Repeat("STATE,", 11)), "the limit is 10 group fields a request (statistics)"},
		{"3,231 groups of 41 values", req(stats(40, "m"), "fid"), "more than 2439 groups of 1 fields with 40 statistics; the limit is 10000 groups and 100000 values an answer (statistics)"},
		{"a result name of 200 bytes", req(stats(1, strings.Repeat("n", 200)), ""), "bytes long; the limit is 128 bytes (statistics)"},
	} {
		if msg := f.ClientFault("usa", "QueryDataStatistics", c.req); !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want %q", c.name, msg, c.want)
		}
	}
	rs := mapservertest.Must[gisxml.QueryDataStatisticsResponse](f, "usa", "QueryDataStatistics", req(stats(20, "m"), "fid")).Result
	if len(rs.Records) != 3231 {
		t.Errorf("3,231 groups of 21 values: %d records", len(rs.Records))
	}
}
