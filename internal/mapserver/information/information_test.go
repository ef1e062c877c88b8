package information_test

import (
	"slices"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
)

const stateFacts = 3 // the usa map's State facts layer

func TestSubtypeInfos(t *testing.T) {
	f := mapservertest.New(t)
	res := mapservertest.Must[gisxml.GetMapTableSubtypeInfosResponse](f, "usa", "GetMapTableSubtypeInfos", &gisxml.GetMapTableSubtypeInfos{}).Result
	if len(res) != 1 || res[0].TableID != stateFacts || res[0].SubtypeFieldName != "REGION" || len(res[0].SubtypeInfos) != 5 {
		t.Fatalf("subtype infos %+v", res)
	}
	west := res[0].SubtypeInfos[3]
	if west.SubtypeCode != 4 || west.SubtypeName != "West" || len(west.FieldDomainInfos) != 2 {
		t.Fatalf("West subtype %+v", west)
	}
	coded, ok := west.FieldDomainInfos[0].Domain.(*gisxml.CodedValueDomain)
	if !ok || west.FieldDomainInfos[0].FieldName != "REGION" || len(coded.CodedValues) != 5 || coded.CodedValues[1].Code != 2 || coded.CodedValues[1].Name != "Midwest" {
		t.Errorf("REGION domain %+v", west.FieldDomainInfos[0].Domain)
	}
	rng, ok := west.FieldDomainInfos[1].Domain.(*gisxml.RangeDomain)
	if !ok || rng.MinValue != 1 || rng.MaxValue != 300 {
		t.Errorf("COUNTIES domain %+v", west.FieldDomainInfos[1].Domain)
	}
	res2 := mapservertest.Must[gisxml.GetMapTableSubtypeInfos2Response](f, "usa", "GetMapTableSubtypeInfos2", &gisxml.GetMapTableSubtypeInfos2{
		LayerDescriptions: gisxml.ArrayOfLayerDescription{{LayerID: 0}, {LayerID: 1}}}).Result
	if len(res2) != 0 {
		t.Errorf("States and Counties have no subtypes, yet %+v", res2)
	}
}

func TestGetSQLSyntaxInfo(t *testing.T) {
	f := mapservertest.New(t)
	info := mapservertest.Must[gisxml.GetSQLSyntaxInfoResponse](f, "usa", "GetSQLSyntaxInfo", &gisxml.GetSQLSyntaxInfo{LayerID: 1}).Result
	if !slices.Contains(info.SupportedPredicates, "esriSQL_LIKE") || !slices.Contains(info.Keywords, "UPPER") || !info.StringComparisonCase {
		t.Errorf("syntax info: predicates %v, keywords %d, case %v", info.SupportedPredicates, len(info.Keywords), info.StringComparisonCase)
	}
	found := false
	for _, p := range info.FunctionNames.PropertyArray {
		if p.Value == "UPPER" {
			found = true
		}
	}
	if !found {
		t.Error("FunctionNames lacks UPPER")
	}
	// Advertised functions work in a where clause.
	n := f.Count("usa", 1, mapservertest.Where("UPPER(NAME) = 'ORANGE' AND CHAR_LENGTH(NAME) = 6"))
	if n == 0 {
		t.Error("no county named Orange")
	}
	if _, err := f.Do("usa", "GetSQLSyntaxInfo", &gisxml.GetSQLSyntaxInfo{LayerID: 42}); err == nil {
		t.Error("layer 42 accepted")
	}
}
