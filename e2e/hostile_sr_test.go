package e2e

import (
	"encoding/json"
	"net/url"
)

// esriWebMercatorWKT is the Esri WKT of Web Mercator (102100) that the ArcGIS Maps SDK for
// JavaScript sends as {"wkt":…}, and that a SOAP client copies from a service's description.
const esriWebMercatorWKT = `PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",` +
	`SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],` +
	`PROJECTION["Mercator_Auxiliary_Sphere"],PARAMETER["False_Easting",0.0],PARAMETER["False_Northing",0.0],` +
	`PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",0.0],PARAMETER["Auxiliary_Sphere_Type",0.0],UNIT["Meter",1.0]]`

// hostileSRRows are spatial references that are not ones (issue 25, 10): text given as a WKT
// must parse as a WKT (PROJ took "foo" for Amersfoort and the answer was labelled
// {"wkt":"foo"}); and the Web Mercator WKT clients send, which must be drawn (issue 26, 3).
func hostileSRRows() []hostileRow {
	const query = "/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&resultRecordCount=1&outSR="
	const export = "/arcgis/rest/services/world/MapServer/export?bbox=-1e7,-5e6,1e7,5e6&size=256,128&f=image&bboxSR="
	var rows []hostileRow
	for _, sr := range []string{`{"wkt":"foo"}`, `zz`, `WGS`, `{"wkt":"zz"}`, `{"wkt":"WGS"}`} {
		rows = append(rows, hostileRow{name: "query outSR " + sr, method: "GET", path: query + url.QueryEscape(sr),
			status: 200, want: `"code":400,"message":"Invalid spatial reference"`})
	}
	sdk, _ := json.Marshal(map[string]string{"wkt": esriWebMercatorWKT}) // a map of strings always marshals
	soapSR := func(wkt string) string {
		return extent("-1e7", "-5e6", "1e7", "5e6") + `<SpatialReference xsi:type="gis:ProjectedCoordinateSystem"><WKT>` + wkt + `</WKT></SpatialReference>`
	}
	return append(rows,
		hostileRow{name: `export bboxSR {"wkt":"foo"}, f=image`, method: "GET", path: export + url.QueryEscape(`{"wkt":"foo"}`),
			status: 400, want: `"message":"Invalid spatial reference"`},
		hostileRow{name: "export bboxSR and imageSR as the SDK's Web Mercator WKT", method: "GET",
			path: export + url.QueryEscape(string(sdk)) + "&imageSR=" + url.QueryEscape(string(sdk)), status: 200, want: "\x89PNG"},
		hostileRow{name: "SOAP ExportMapImage in the WKT foo", body: exportBody(256, 128, "96", soapSR("foo")),
			status: 500, fault: "soap:Client", want: "invalid spatial reference"},
		hostileRow{name: "SOAP ExportMapImage in Esri's Web Mercator WKT", body: exportBody(256, 128, "96", soapSR(esriWebMercatorWKT)),
			status: 200, want: "ImageURL"},
	)
}
