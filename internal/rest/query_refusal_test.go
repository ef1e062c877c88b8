package rest_test

import (
	"testing"
)

// A query with no where, objectIds, geometry or text is refused as ArcGIS refuses it (code 400,
// "Unable to complete operation.", the missing 'where' parameter, then "Unable to complete Query
// operation."), on layers and tables; each of the filters alone, or outStatistics, is enough.
func TestQueryWithoutFilterRefused(t *testing.T) {
	h := newHandler(t)
	for _, target := range []string{
		"/arcgis/rest/services/world/MapServer/0/query?f=json",
		"/arcgis/rest/services/world/MapServer/0/query?f=json&outFields=*&returnGeometry=false",
		"/arcgis/rest/services/world/MapServer/0/query?f=geojson&returnCountOnly=true",
	} {
		v := getJSON(t, h, target)
		e, ok := v["error"].(map[string]any)
		d, _ := e["details"].([]any)
		if !ok || e["code"] != 400.0 || e["message"] != "Unable to complete operation." || len(d) != 2 ||
			d[0] != "'where' parameter not specified" || d[1] != "Unable to complete Query operation." {
			t.Errorf("GET %s: %v; want ArcGIS's 400 naming the 'where' parameter", target, v)
		}
	}
	for _, filter := range []string{"where=1%3D1", "objectIds=1,2", "geometry=-180,-90,180,90&inSR=4326", "text=a",
		`outStatistics=[{"statisticType":"count","onStatisticField":"NAME","outStatisticFieldName":"n"}]`} {
		target := "/arcgis/rest/services/world/MapServer/0/query?f=json&returnCountOnly=true&" + filter
		if v := getJSON(t, h, target); v["error"] != nil {
			t.Errorf("GET %s: %v", target, v)
		}
	}
}
