package e2e

import (
	"fmt"
	"net/url"
	"strings"
)

// restError400 is the start of an ArcGIS REST error answer with code 400 (HTTP 200: ArcGIS
// answers f=json errors in the body) and message; a row's want goes on with the first detail.
func restError400(message string) string {
	return `{"error":{"code":400,"message":"` + message + `","details":["`
}

// outStatistics is an outStatistics parameter of n statistics on the counties' fid.
func outStatistics(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"statisticType":"max","onStatisticField":"fid","outStatisticFieldName":"statistic_number_%d"}`, i)
	}
	return url.QueryEscape(b.String() + "]")
}

// hostileRESTRows are the hostile requests of issue 25 on the REST API, WMTS and the services
// directory (items 2, 5, 8, 9 and the small ones): each a 400 naming what was wrong or the limit
// it is over, in the bound TestHostile applies, echoing at most 200 characters of the input.
func hostileRESTRows() []hostileRow {
	const query = "/arcgis/rest/services/usa/MapServer/1/query"
	const counties = query + "?f=json&"
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}
	const invalid, unable = "Invalid or missing input parameters.", "Unable to complete operation."
	tiles := "/arcgis/rest/services/world/MapServer/"
	kvpTile := tiles + "WMTS?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=world&STYLE=default&FORMAT=image/png&TILEMATRIXSET=default028mm&TILEMATRIX=0&TILECOL=0"
	return []hostileRow{
		// Item 2: statistics bounded before the work.
		{name: "REST 5,000 statistics grouped by five fields (644 KB)", path: query, header: form,
			body:   "f=json&where=1%3D1&groupByFieldsForStatistics=STATE,NAME,STATEFP,fid,NAME&outStatistics=" + outStatistics(5_000),
			status: 200, want: restError400(unable) + "StatisticsRequest/StatisticDescriptions: 5000 statistics is more than the limit of 100 a request (statistics)"},
		{name: "SOAP QueryDataStatistics with 5,000 statistics", body: soapEnv(`<gis:QueryDataStatistics><MapName>Layers</MapName><MapTableDescription><LayerID>1</LayerID></MapTableDescription>` +
			`<StatisticsRequest><StatisticDescriptions>` + strings.Repeat(`<StatisticDescription><StatisticFieldName>NAME</StatisticFieldName><StatisticType>gisDataStatTypeMax</StatisticType></StatisticDescription>`, 5_000) +
			`</StatisticDescriptions></StatisticsRequest></gis:QueryDataStatistics>`),
			status: 500, fault: "soap:Client", want: "StatisticsRequest/StatisticDescriptions: 5000 statistics is more than the limit of 100 a request (statistics)"},
		{name: "REST 3,231 groups of 41 values", method: "GET", path: counties + "where=1%3D1&groupByFieldsForStatistics=fid&outStatistics=" + outStatistics(40),
			status: 200, want: restError400(unable) + "GroupByFields: more than 2439 groups"},
		{name: "REST 11 group fields", method: "GET", path: counties + "where=1%3D1&groupByFieldsForStatistics=" + strings.Repeat("STATE,", 11) + "&outStatistics=" + outStatistics(1),
			status: 200, want: restError400(unable) + "StatisticsRequest/GroupByFields: more than 10 fields; the limit is 10 group fields a request (statistics)"},
		{name: "REST statistic named by 60 KB", method: "POST", path: query, header: form,
			body:   "f=json&where=1%3D1&outStatistics=" + url.QueryEscape(`[{"statisticType":"max","onStatisticField":"fid","outStatisticFieldName":"`+strings.Repeat("Sn4k", 15_000)+`"}]`),
			status: 200, want: "the limit is 128 bytes (statistics)", echo: "Sn4k"},

		// Item 5: parameters that differ only in letter case.
		{name: "REST where and WHERE", method: "GET", path: counties + "where=1%3D1&WHERE=fid%3D1&returnCountOnly=true",
			status: 200, want: restError400(invalid) + "the parameter WHERE is given more than once with different values (as WHERE, where)"},
		{name: "REST f=json and F=html", method: "GET", path: "/arcgis/rest/services/world/MapServer?f=json&F=html",
			status: 200, want: restError400(invalid) + "the parameter F is given more than once"},
		{name: "REST directory f=html and F=json", method: "GET", path: "/arcgis/rest/services?f=html&F=json",
			status: 200, want: restError400(invalid) + "the parameter F is given more than once"},
		{name: "REST same value twice in query and body", method: "POST", path: counties + "returnCountOnly=true", header: []string{"Content-Type", "application/x-www-form-urlencoded"},
			body: "F=json&where=fid%3D1", status: 200, want: `{"count":1}`},
		{name: "WMTS TILEROW and tilerow", method: "GET", path: kvpTile + "&TILEROW=0&tilerow=x", status: 400, want: "the parameter TILEROW is given more than once"},

		// Item 8: client mistakes that were 500s.
		{name: "REST LIKE pattern of 50,010 %", path: query, header: form, body: "f=json&where=" + url.QueryEscape("NAME LIKE '"+strings.Repeat("%", 50_010)+"'"),
			status: 200, want: restError400(unable) + "WhereClause: where: over a limit at position 10: a LIKE pattern of 50010 bytes is longer than the limit of 10000 bytes (whereClause)"},
		{name: "REST text of 50,001 characters", method: "GET", path: counties + "text=" + strings.Repeat("Tq7w", 12_500) + "T",
			status: 200, want: "a LIKE pattern of 50003 bytes is longer than the limit of 10000 bytes (whereClause)", echo: "Tq7w"},
		{name: "REST export of an extent 2e308 wide", method: "GET", path: tiles + "export?bbox=1e308,1e308,-1e308,-1e308&size=10,10&f=json",
			status: 200, want: restError400(unable) + "MapArea/Extent: the width and height must be finite numbers"},

		// Item 9 and the small ones: echoes, Go types, HEAD, tile coordinates.
		{name: "REST objectIds of 3 MB", method: "POST", path: query, header: form,
			body: "f=json&objectIds=" + strings.Repeat("Oq", 1_500_000), status: 200, want: restError400(unable) + `'objectIds' parameter is invalid: \"OqOq`, echo: "Oq"},
		{name: "REST geometry of 200 KB", method: "POST", path: query, header: form,
			body:   "f=json&geometryType=esriGeometryPolygon&geometry=" + url.QueryEscape(`{"rings":[[[0,0],[1,"`+strings.Repeat("Gz5p", 50_000)+`"]]]}`),
			status: 200, want: restError400(unable) + "'geometry' parameter is invalid: a string at rings where a number is expected", echo: "Gz5p"},
		{name: "REST rings as a string names no Go type", method: "GET", path: counties + "geometryType=esriGeometryPolygon&geometry=" + url.QueryEscape(`{"rings":"x"}`),
			status: 200, want: "'geometry' parameter is invalid: a string at rings where an array is expected"},
		{name: "REST HEAD of a layer", method: "HEAD", path: "/arcgis/rest/services/usa/MapServer/1?f=json", status: 200},
		{name: "REST HEAD of the services directory", method: "HEAD", path: "/arcgis/rest/services", status: 200},
		{name: "REST HEAD of the viewer", method: "HEAD", path: tiles + "viewer", status: 200},
		{name: "REST tile 0/-0/+0", method: "GET", path: tiles + "tile/0/-0/+0", status: 400, want: "the tile's row must be a whole number ≥ 0 written in digits alone"},
		{name: "REST tile row of 20,000 digits", method: "GET", path: tiles + "tile/0/" + strings.Repeat("97", 10_000) + "/0", status: 400, want: "written in digits alone", echo: "97"},
		{name: "WMTS TILEROW=+0", method: "GET", path: kvpTile + "&TILEROW=%2B0", status: 400, want: "TileRow must be a whole number ≥ 0 written in digits alone"},
	}
}
