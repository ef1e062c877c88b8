package queries_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// Web Mercator coordinates of downtown Los Angeles (-118.25, 34.05).
const laX, laY = -13163590.0, 4035932.0

func TestQueryFeatureCount(t *testing.T) {
	f := mapservertest.New(t)
	tests := []struct {
		name    string
		service string
		layer   int
		filter  gisxml.QueryFilterKind
		want    int
	}{
		{"no filter counts every county", "usa", 1, nil, 3231},
		{"empty where", "usa", 1, mapservertest.Where(""), 3231},
		{"California counties", "usa", 1, mapservertest.Where("STATEFP = '06'"), 58},
		{"Texas counties by name", "usa", 1, mapservertest.Where("STATE = 'Texas'"), 254},
		{"nothing matches", "usa", 1, mapservertest.Where("1 = 0"), 0},
		{"FIDSet restricts", "usa", 1, &gisxml.QueryFilter{FIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{1, 2, 3, 999999}}}, 3},
		{"FIDSet and where", "usa", 1, &gisxml.QueryFilter{WhereClause: "fid > 1", FIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{1, 2, 3}}}, 2},
		{"point in LA county", "usa", 1, &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.PointN{X: laX, Y: laY}}, 1},
		{"point in California", "usa", 0, &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelWithin, FilterGeometry: &gisxml.PointN{X: laX, Y: laY}}, 1},
		{"filter geometry in another SR", "usa", 1, &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelIntersects,
			FilterGeometry: &gisxml.PointN{X: -118.25, Y: 34.05, SpatialReference: &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: operation.Ptr(4326)}}}}, 1},
		{"SpatialFilter without geometry is a QueryFilter", "usa", 1, &gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{WhereClause: "STATEFP = '06'"}}, 58},
		{"attribute search order gives the same answer", "usa", 1, &gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{WhereClause: "STATEFP = '06'"}, SearchOrder: gisxml.SearchOrderAttribute,
			SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.EnvelopeN{XMin: -2e7, YMin: -2e7, XMax: 2e7, YMax: 2e7}}, 58},
		{"geographic world points", "world_geographic", 0, mapservertest.EnvelopeFilter("", gisxml.SpatialRelIntersects, -180, -90, 180, 90), 241},
		{"a TimeQueryFilter filters in space", "usa", 1, &gisxml.TimeQueryFilter{SpatialFilter: gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelIntersects,
			FilterGeometry: &gisxml.PointN{X: laX, Y: laY}}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.Count(tc.service, tc.layer, tc.filter); got != tc.want {
				t.Errorf("count = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestQueryFilterFaults(t *testing.T) {
	f := mapservertest.New(t)
	tests := []struct {
		name   string
		filter gisxml.QueryFilterKind
		want   string // part of the message
	}{
		{"bad where", mapservertest.Where("NAME = "), "WhereClause"},
		{"unknown where field", mapservertest.Where("NOPE = 1"), "NOPE"},
		{"unknown subfield", &gisxml.QueryFilter{SubFields: operation.Ptr("NAME,NOPE")}, `no field "NOPE"`},
		{"bad order by", &gisxml.QueryFilter{PostfixClause: operation.Ptr("GROUP BY NAME")}, "ORDER BY"},
		{"order by unknown field", &gisxml.QueryFilter{PostfixClause: operation.Ptr("ORDER BY NOPE")}, "NOPE"},
		{"prefix other than DISTINCT", &gisxml.QueryFilter{PrefixClause: operation.Ptr("TOP 5")}, "DISTINCT"},
		{"bad relation pattern", &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelRelation, SpatialRelDescription: "TTX", FilterGeometry: &gisxml.PointN{X: laX, Y: laY}}, "DE-9IM"},
		{"unknown spatial rel", &gisxml.SpatialFilter{SpatialRel: "gisSpatialRelNear", FilterGeometry: &gisxml.PointN{X: laX, Y: laY}}, "gisSpatialRelEnum"},
		{"missing geometry", &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelIntersects}, "FilterGeometry is required"},
		{"short path", &gisxml.SpatialFilter{SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.PolylineN{PathArray: gisxml.ArrayOfPath{&gisxml.Path{PointArray: pts(1, 2)}}}}, "at least 2"},
		{"unsupported output SR", &gisxml.QueryFilter{OutputSpatialReference: &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: operation.Ptr(99999)}}}, "OutputSpatialReference"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := f.ClientFault("usa", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: tc.filter})
			if !strings.Contains(msg, tc.want) {
				t.Errorf("fault %q does not mention %q", msg, tc.want)
			}
		})
	}
	if msg := f.ClientFault("usa", "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 9}); !strings.Contains(msg, "layer 9") {
		t.Errorf("fault %q does not name the layer", msg)
	}
}

func TestQueryFeatureData(t *testing.T) {
	f := mapservertest.New(t)
	rs := mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "usa", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.SpatialFilter{
		QueryFilter: gisxml.QueryFilter{WhereClause: "STATEFP = '06'", SubFields: operation.Ptr("NAME, fid, Shape"), PostfixClause: operation.Ptr("ORDER BY NAME DESC"),
			OutputSpatialReference: &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: operation.Ptr(4326)}}},
		SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.PointN{X: laX, Y: laY},
	}}).Result
	var names []string
	for _, fd := range rs.Fields.FieldArray {
		names = append(names, fd.Name)
	}
	if !slices.Equal(names, []string{"NAME", "fid", "Shape"}) {
		t.Fatalf("fields %v, want NAME fid Shape", names)
	}
	if len(rs.Records) != 1 {
		t.Fatalf("%d records, want 1", len(rs.Records))
	}
	vals := rs.Records[0].Values
	if vals[0] != "Los Angeles" {
		t.Errorf("NAME = %v, want Los Angeles", vals[0])
	}
	if _, ok := vals[1].(int); !ok {
		t.Errorf("fid is %T, want int (xsd:int on the wire)", vals[1])
	}
	poly, ok := vals[2].(*gisxml.PolygonN)
	if !ok {
		t.Fatalf("shape is %T, want *PolygonN", vals[2])
	}
	ext := poly.Extent.(*gisxml.EnvelopeN)
	if ext.XMin < -119.5 || ext.XMax > -117.5 || ext.YMin < 32.5 || ext.YMax > 35 {
		t.Errorf("LA county extent %v is not in degrees around LA", *ext)
	}
	// ORDER BY NAME DESC over California, names only.
	rs = mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "usa", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.QueryFilter{
		WhereClause: "STATEFP = '06'", SubFields: operation.Ptr("NAME"), PostfixClause: operation.Ptr("ORDER BY NAME DESC")}}).Result
	if len(rs.Records) != 58 || len(rs.Fields.FieldArray) != 1 {
		t.Fatalf("%d records of %d fields, want 58 of 1", len(rs.Records), len(rs.Fields.FieldArray))
	}
	if first, last := rs.Records[0].Values[0], rs.Records[57].Values[0]; first != "Yuba" || last != "Alameda" {
		t.Errorf("order: first %v last %v, want Yuba … Alameda", first, last)
	}
	// DISTINCT state names of the counties.
	rs = mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "usa", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.QueryFilter{
		SubFields: operation.Ptr("STATE"), PrefixClause: operation.Ptr("DISTINCT"), PostfixClause: operation.Ptr("ORDER BY STATE")}}).Result
	if len(rs.Records) < 50 || rs.Records[0].Values[0] != "Alabama" {
		t.Errorf("DISTINCT STATE: %d records starting %v, want ≥ 50 starting Alabama", len(rs.Records), rs.Records[0].Values[0])
	}
	// MaxRecordCount caps the record set; the ids are not capped.
	rs = mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "usa", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: mapservertest.Where("")}).Result
	if len(rs.Records) != 1000 {
		t.Errorf("%d records, want MaxRecordCount 1000", len(rs.Records))
	}
	if n := len(f.IDs("usa", 1, mapservertest.Where(""))); n != 3231 {
		t.Errorf("%d ids, want 3231", n)
	}
}

func TestQueryFeatureData2(t *testing.T) {
	f := mapservertest.New(t)
	ld := &gisxml.LayerDescription{LayerID: 1, DefinitionExpression: "STATEFP = '06'",
		LayerResultOptions: &gisxml.LayerResultOptions{IncludeGeometry: operation.Ptr(false)}}
	res := mapservertest.Must[gisxml.QueryFeatureData2Response](f, "usa", "QueryFeatureData2", &gisxml.QueryFeatureData2{LayerDescription: ld,
		QueryFilter: mapservertest.Where("NAME LIKE 'San %'"), QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultRecordSetAsObject}}).Result
	rs, ok := res.Object.(*gisxml.RecordSet)
	if !ok {
		t.Fatalf("Object is %T, want *RecordSet", res.Object)
	}
	// San Benito, San Bernardino, San Diego, San Francisco, San Joaquin, San Luis Obispo, San Mateo.
	if len(rs.Records) != 7 {
		t.Errorf("%d records, want the 7 'San' counties of California", len(rs.Records))
	}
	for _, fd := range rs.Fields.FieldArray {
		if fd.Name == "Shape" {
			t.Errorf("IncludeGeometry false but the Shape field is there")
		}
	}
	if n := mapservertest.Must[gisxml.QueryFeatureCount2Response](f, "usa", "QueryFeatureCount2", &gisxml.QueryFeatureCount2{LayerDescription: ld, QueryFilter: mapservertest.Where("")}).Result; n != 58 {
		t.Errorf("QueryFeatureCount2 = %d, want 58", n)
	}
	if ids := mapservertest.Must[gisxml.QueryFeatureIDs2Response](f, "usa", "QueryFeatureIDs2", &gisxml.QueryFeatureIDs2{LayerDescription: ld, QueryFilter: mapservertest.Where("")}).Result.FIDArray; len(ids) != 58 {
		t.Errorf("QueryFeatureIDs2: %d ids, want 58", len(ids))
	}

	res = mapservertest.Must[gisxml.QueryFeatureData2Response](f, "usa", "QueryFeatureData2", &gisxml.QueryFeatureData2{LayerDescription: &gisxml.LayerDescription{LayerID: 0},
		QueryFilter: mapservertest.Where("NAME = 'Utah'"), QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultJsonAsMime}}).Result
	var fs struct {
		GeometryType     string
		SpatialReference struct{ Wkid int }
		Fields           []struct{ Name, Type string }
		Features         []struct {
			Attributes map[string]any
			Geometry   struct{ Rings [][][2]float64 }
		}
	}
	if err := json.Unmarshal(res.MimeData, &fs); err != nil {
		t.Fatalf("MimeData is not JSON: %v\n%s", err, res.MimeData)
	}
	if fs.GeometryType != "esriGeometryPolygon" || fs.SpatialReference.Wkid != 3857 || len(fs.Features) != 1 {
		t.Fatalf("JSON feature set: %+v", fs)
	}
	if fs.Features[0].Attributes["NAME"] != "Utah" || len(fs.Features[0].Geometry.Rings) == 0 {
		t.Errorf("Utah feature: %+v", fs.Features[0].Attributes)
	}
	// JSON by URL: the same document, handed out by URL (a data: URL without an output store).
	byURL := mapservertest.Must[gisxml.QueryFeatureData2Response](f, "usa", "QueryFeatureData2", &gisxml.QueryFeatureData2{LayerDescription: &gisxml.LayerDescription{LayerID: 0},
		QueryFilter: mapservertest.Where("NAME = 'Utah'"), QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultJsonAsURL}}).Result
	const prefix = "data:application/json;base64,"
	if !strings.HasPrefix(byURL.URL, prefix) || byURL.MimeData != nil {
		t.Fatalf("JSON as URL: %.60q, %d MIME bytes", byURL.URL, len(byURL.MimeData))
	}
	if doc, err := base64.StdEncoding.DecodeString(byURL.URL[len(prefix):]); err != nil || !bytes.Equal(doc, res.MimeData) {
		t.Errorf("the JSON behind the URL differs from the MIME data (%v)", err)
	}
	f.ClientFault("usa", "QueryFeatureData2", &gisxml.QueryFeatureData2{LayerDescription: &gisxml.LayerDescription{LayerID: 0},
		QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultKMLAsMime}})
}

func TestTableQueries(t *testing.T) {
	f := mapservertest.New(t)
	table := &gisxml.StandaloneTableDescription{ID: 2}
	if n := mapservertest.Must[gisxml.QueryRowCountResponse](f, "usa", "QueryRowCount", &gisxml.QueryRowCount{MapTableDescription: table, QueryFilter: mapservertest.Where("STATEFP = '06'")}).Result; n != 58 {
		t.Errorf("QueryRowCount = %d, want 58", n)
	}
	withDef := &gisxml.StandaloneTableDescription{ID: 2, DefinitionExpression: operation.Ptr("STATE = 'Texas'")}
	ids := mapservertest.Must[gisxml.QueryRowIDsResponse](f, "usa", "QueryRowIDs", &gisxml.QueryRowIDs{MapTableDescription: withDef, QueryFilter: mapservertest.Where("")}).Result
	if len(ids) != 254 || !slices.IsSorted(ids) {
		t.Errorf("QueryRowIDs: %d ids (sorted %v), want 254 sorted", len(ids), slices.IsSorted(ids))
	}
	res := mapservertest.Must[gisxml.QueryDataResponse](f, "usa", "QueryData", &gisxml.QueryData{MapTableDescription: table, QueryFilter: mapservertest.Where("GEOID = '06037'")}).Result
	rs := res.Object.(*gisxml.RecordSet)
	if len(rs.Records) != 1 || !slices.Contains(rs.Records[0].Values, any("Los Angeles")) {
		t.Errorf("QueryData GEOID 06037: %v", rs.Records)
	}
	for _, fd := range rs.Fields.FieldArray {
		if fd.Name == "Shape" {
			t.Error("a table's record set has a Shape field")
		}
	}
	f.ClientFault("usa", "QueryRowCount", &gisxml.QueryRowCount{MapTableDescription: table, QueryFilter: &gisxml.SpatialFilter{
		SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.PointN{X: 1, Y: 2}}})
}

func TestQueryDataStatistics(t *testing.T) {
	f := mapservertest.New(t)
	stat := func(field string, typ gisxml.DataStatType, name string) *gisxml.StatisticDescription {
		return &gisxml.StatisticDescription{StatisticFieldName: field, StatisticType: typ, ResultFieldName: operation.Ptr(name)}
	}
	rs := mapservertest.Must[gisxml.QueryDataStatisticsResponse](f, "usa", "QueryDataStatistics", &gisxml.QueryDataStatistics{
		MapTableDescription: &gisxml.StandaloneTableDescription{ID: 2},
		StatisticsRequest: &gisxml.StatisticsRequest{
			StatisticDescriptions: gisxml.ArrayOfStatisticDescription{
				stat("fid", gisxml.DataStatTypeCount, "n"), stat("NAME", gisxml.DataStatTypeMin, "first"),
				stat("NAME", gisxml.DataStatTypeMax, "last"), stat("fid", gisxml.DataStatTypeSum, "s"),
				stat("fid", gisxml.DataStatTypeAverage, "avg"), stat("fid", gisxml.DataStatTypeStdDev, "sd"),
				stat("fid", gisxml.DataStatTypeVariance, "var"),
			},
			GroupByFields: operation.Ptr("STATE"), OrderByFields: operation.Ptr("n DESC, STATE"),
		},
		QueryFilter: mapservertest.Where("STATEFP IN ('06', '48', '11')"),
	}).Result
	if len(rs.Records) != 3 {
		t.Fatalf("%d groups, want 3", len(rs.Records))
	}
	top := rs.Records[0].Values
	if top[0] != "Texas" || top[1] != 254 || top[2] != "Anderson" || top[3] != "Zavala" {
		t.Errorf("first group %v, want Texas 254 Anderson … Zavala", top)
	}
	dc := rs.Records[2].Values
	if dc[0] != "District of Columbia" || dc[1] != 1 || dc[6] != nil || dc[7] != nil {
		t.Errorf("DC group %v: want count 1 and NULL stddev and variance", dc)
	}
	if avg, sum := top[5].(float64), top[4].(float64); math.Abs(avg*254-sum) > 1e-6 {
		t.Errorf("avg %g × 254 ≠ sum %g", avg, sum)
	}
	if sd, v := top[6].(float64), top[7].(float64); math.Abs(sd*sd-v) > 1e-6*v {
		t.Errorf("stddev %g² ≠ variance %g", sd, v)
	}
	f.ClientFault("usa", "QueryDataStatistics", &gisxml.QueryDataStatistics{MapTableDescription: &gisxml.StandaloneTableDescription{ID: 2},
		StatisticsRequest: &gisxml.StatisticsRequest{StatisticDescriptions: gisxml.ArrayOfStatisticDescription{stat("NAME", gisxml.DataStatTypeSum, "x")}}})
}

func TestHugeInListAndFIDSet(t *testing.T) {
	f := mapservertest.New(t)
	in := func(n int) string {
		var b strings.Builder
		b.WriteString("fid IN (")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "%d", i*2)
		}
		return b.String() + ")"
	}
	// The even county ids: 1615 of the ids 1 to 3231.
	if n := f.Count("usa", 1, mapservertest.Where(in(10_000))); n != 1615 {
		t.Errorf("10,000-value IN list: count %d, want 1615", n)
	}
	ids := make(gisxml.ArrayOfInt, 100_000)
	for i := range ids {
		ids[i] = i * 2
	}
	if n := f.Count("usa", 1, &gisxml.QueryFilter{FIDSet: &gisxml.FIDSet{FIDArray: ids}}); n != 1615 {
		t.Errorf("100,000-id FIDSet: count %d, want 1615", n)
	}
	if msg := f.ClientFault("usa", "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: mapservertest.Where(in(20_000))}); !strings.Contains(msg, "limit is 65536") {
		t.Errorf("a clause over 64 KiB: %q", msg)
	}
}

func TestReprojection(t *testing.T) {
	f := mapservertest.New(t)
	merc := &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: operation.Ptr(102100)}}
	// A Web Mercator point on the geographic map, and Web Mercator output from it.
	rs := mapservertest.Must[gisxml.QueryFeatureDataResponse](f, "usa_geographic", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.SpatialFilter{
		QueryFilter: gisxml.QueryFilter{SubFields: operation.Ptr("NAME,Shape"), OutputSpatialReference: merc},
		SpatialRel:  gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.PointN{X: laX, Y: laY, SpatialReference: merc},
	}}).Result
	if len(rs.Records) != 1 || rs.Records[0].Values[0] != "Los Angeles" {
		t.Fatalf("records %v", rs.Records)
	}
	ext := rs.Records[0].Values[1].(*gisxml.PolygonN).Extent.(*gisxml.EnvelopeN)
	if !(ext.XMin < laX && laX < ext.XMax && ext.YMin < laY && laY < ext.YMax) {
		t.Errorf("LA county extent %+v does not hold the Mercator point", *ext)
	}
	if sr := rs.Fields.FieldArray[1].GeometryDef.SpatialReference.SpatialReferencePart(); *sr.WKID != 102100 {
		t.Errorf("shape field SR %d, want 102100", *sr.WKID)
	}
}

// A client fault quotes at most 200 characters of a value of the request, whatever its size.
func TestFaultsQuoteShortly(t *testing.T) {
	f := mapservertest.New(t)
	long := strings.Repeat("Q", 7<<20)
	field := strings.Repeat("F", 60_000) // under the where clause's length limit
	tests := []struct {
		name string
		op   string
		req  any
		want string
	}{
		{"7 MB map name", "QueryFeatureCount", &gisxml.QueryFeatureCount{MapName: long, LayerID: 1}, `map "` + strings.Repeat("Q", 200) + `…" is not in service usa`},
		{"unknown field of 60,000 characters", "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: mapservertest.Where(field + " = 1")}, `FFF…`},
		{"7 MB subfields", "QueryFeatureData", &gisxml.QueryFeatureData{LayerID: 1, QueryFilter: &gisxml.QueryFilter{SubFields: &long}}, `QQQ…`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := f.ClientFault("usa", tc.op, tc.req)
			if !strings.Contains(msg, tc.want) || len(msg) > 600 {
				t.Errorf("fault of %d bytes %.700q, want at most 600 with %q", len(msg), msg, tc.want)
			}
		})
	}
}
