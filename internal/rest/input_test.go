package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// restError decodes an ArcGIS REST error answer (HTTP 200, the code in the body, as ArcGIS
// answers f=json): its code and its message and details in one string.
func restError(t *testing.T, h http.Handler, target string) (code int, text string, size int) {
	t.Helper()
	status, body := get(t, h, target)
	var v struct {
		Error *struct {
			Code    int      `json:"code"`
			Message string   `json:"message"`
			Details []string `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Error == nil {
		t.Fatalf("GET %.200s: HTTP %d %.300s: not an error answer (%v)", target, status, body, err)
	}
	return v.Error.Code, v.Error.Message + " " + strings.Join(v.Error.Details, " "), len(body)
}

// Hostile REST input (issue 25): each is a 400 that names what was wrong or the limit it is
// over, quotes at most 200 characters of the input, and names no Go type.
func TestHostileRESTInput(t *testing.T) {
	h := newHandler(t)
	const counties = "/arcgis/rest/services/usa/MapServer/1/query?f=json&"
	stats := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"statisticType":"max","onStatisticField":"fid","outStatisticFieldName":"m%d"}`, i)
		}
		return url.QueryEscape(b.String() + "]")
	}
	for _, c := range []struct {
		name, target string
		want         []string // substrings of the message and details
		echo         string   // a repeated unit of the input the answer may quote 200 characters of
	}{
		{name: "where given twice in different case", target: counties + "where=1%3D1&WHERE=fid%3D1&returnCountOnly=true",
			want: []string{"parameter WHERE is given more than once"}},
		{name: "f given twice in different case", target: counties + "where=1%3D1&F=html",
			want: []string{"parameter F is given more than once"}},
		{name: "LIKE pattern of 50,010 %", target: counties + "where=" + url.QueryEscape("NAME LIKE '"+strings.Repeat("%", 50_010)+"'"),
			want: []string{"LIKE pattern of 50010 bytes is longer than the limit of 10000 bytes", "whereClause"}},
		{name: "text of 50,001 characters", target: counties + "text=" + strings.Repeat("Tx", 25_000) + "T",
			want: []string{"LIKE pattern", "limit of 10000 bytes", "whereClause"}, echo: "Tx"},
		{name: "5,000 statistics grouped by five fields", target: counties + "where=1%3D1&groupByFieldsForStatistics=STATE,NAME,STATEFP,fid,NAME&outStatistics=" + stats(5_000),
			want: []string{"5000 statistics is more than the limit of 100", "(statistics)"}},
		{name: "11 group fields", target: counties + "where=1%3D1&groupByFieldsForStatistics=" + strings.Repeat("STATE,", 11) + "&outStatistics=" + stats(1),
			want: []string{"limit is 10 group fields", "(statistics)"}},
		{name: "3,231 groups of 41 values", target: counties + "where=1%3D1&groupByFieldsForStatistics=fid&outStatistics=" + stats(40),
			want: []string{"more than 2439 groups", "(statistics)"}},
		{name: "a result name of 1,000 characters", target: counties + "where=1%3D1&outStatistics=" +
			url.QueryEscape(`[{"statisticType":"max","onStatisticField":"fid","outStatisticFieldName":"`+strings.Repeat("Rn", 500)+`"}]`),
			want: []string{"is 1000 bytes long; the limit is 128 bytes", "(statistics)"}, echo: "Rn"},
		{name: "objectIds of 3 MB", target: counties + "objectIds=" + strings.Repeat("Oi", 1_500_000),
			want: []string{"'objectIds' parameter is invalid"}, echo: "Oi"},
		{name: "geometry of 200 KB", target: counties + "geometryType=esriGeometryPoint&geometry=" + url.QueryEscape(`{"x":1,"y":"`+strings.Repeat("Gq", 100_000)+`"}`),
			want: []string{"'geometry' parameter is invalid: a string at y where a number is expected"}, echo: "Gq"},
		{name: "rings given as a string", target: counties + "geometryType=esriGeometryPolygon&geometry=" + url.QueryEscape(`{"rings":"x"}`),
			want: []string{"'geometry' parameter is invalid: a string at rings where an array is expected"}},
		{name: "malformed geometry JSON", target: counties + "geometryType=esriGeometryPolygon&geometry=" + url.QueryEscape(`{"rings":[[[1,2]]`),
			want: []string{"'geometry' parameter is invalid: malformed JSON"}},
		{name: "export of an extent 2e308 wide", target: "/arcgis/rest/services/world/MapServer/export?bbox=1e308,1e308,-1e308,-1e308&size=10,10&f=json",
			want: []string{"width and height must be finite"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, text, size := restError(t, h, c.target)
			if code != 400 {
				t.Errorf("code %d %.300q; want 400", code, text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("%.500q lacks %q", text, w)
				}
			}
			for _, bad := range []string{"Go struct", "float64", "[]", "jsonGeometry", "json: "} {
				if strings.Contains(text, bad) {
					t.Errorf("%.500q names Go internals (%q)", text, bad)
				}
			}
			if size > 2000 {
				t.Errorf("an error body of %d bytes", size)
			}
			if c.echo != "" && strings.Count(text, c.echo)*len(c.echo) > 2*200 {
				t.Errorf("the answer quotes %d characters of the input", strings.Count(text, c.echo)*len(c.echo))
			}
		})
	}
	// The same groups with fewer values per group are answered.
	v := getJSON(t, h, counties+"where=1%3D1&groupByFieldsForStatistics=fid&outStatistics="+stats(20))
	if fs := features(t, v); len(fs) != 3231 {
		t.Errorf("3,231 groups of 21 values: %d features", len(fs))
	}
}
