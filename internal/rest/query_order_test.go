package rest_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/rest"
)

// Paging in orderByFields order reaches past maxRecordCount: with a maxRecordCount of 10, the
// world's countries paged 7 at a time by display field descending, to the end, are exactly the
// records of one ordered query of a server allowing 1000, in the same order, and every page but
// the last says exceededTransferLimit.
func TestQueryOrderedPagingPastMaxRecordCount(t *testing.T) {
	big := newHandler(t)
	layer := getJSON(t, big, "/arcgis/rest/services/world/MapServer/0?f=json")
	display, _ := layer["displayField"].(string)
	idField := ""
	for _, f := range layer["fields"].([]any) {
		if f := f.(map[string]any); f["type"] == "esriFieldTypeOID" {
			idField = f["name"].(string)
		}
	}
	if display == "" || idField == "" {
		t.Fatalf("layer 0: display field %q, id field %q", display, idField)
	}
	order := url.QueryEscape(display + " DESC")
	ids := func(v map[string]any) []int {
		var out []int
		for _, f := range v["features"].([]any) {
			out = append(out, int(f.(map[string]any)["attributes"].(map[string]any)[idField].(float64)))
		}
		return out
	}
	want := ids(getJSON(t, big, "/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&returnGeometry=false&outFields="+idField+","+display+"&orderByFields="+order))
	if len(want) < 40 {
		t.Fatalf("only %d countries: the test needs several pages past maxRecordCount", len(want))
	}

	if slices.IsSorted(want) {
		t.Fatal("the ordered query is in id order: the test would not tell ordered paging from paging by id")
	}
	c := catalogtest.Samples(t)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 10}, Exporter: mapservertest.NewLocalFarm(t, c)})
	small := rest.New(rest.Params{Ops: ops, Services: c, MaxRecordCount: 10})
	var got []int
	for offset := 0; offset < len(want)+7; offset += 7 {
		v := getJSON(t, small, fmt.Sprintf("/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%%3D1&returnGeometry=false&outFields=%s&orderByFields=%s&resultOffset=%d&resultRecordCount=7", idField, order, offset))
		if v["error"] != nil {
			t.Fatalf("offset %d: %v", offset, v["error"])
		}
		page := ids(v)
		more, _ := v["exceededTransferLimit"].(bool)
		if wantMore := offset+len(page) < len(want); more != wantMore {
			t.Errorf("offset %d: exceededTransferLimit %v, want %v", offset, more, wantMore)
		}
		got = append(got, page...)
	}
	if len(got) != len(want) {
		t.Fatalf("paged %d records, the ordered query has %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: id %d, want %d (ordered paging differs from the ordered query)", i, got[i], want[i])
		}
	}
	t.Logf("%d records in %d-record pages past maxRecordCount 10, in %s order", len(got), 7, display+" DESC")
}
