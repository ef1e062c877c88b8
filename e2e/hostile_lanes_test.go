package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
)

// hostileLaneRows are the REST requests whose multipoints cost seconds of CPU (issue 25, 3): they
// go through the api's heavy lane as SOAP's do, and their relations cost O(points × log
// features), so each is answered within the bound.
func hostileLaneRows() []hostileRow {
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}
	query := "/arcgis/rest/services/world/MapServer/1/query"
	return []hostileRow{
		{name: "REST 5,000-point multipoint Within, count only", path: query, header: form,
			body: multipointForm(5_000, "esriSpatialRelWithin", "returnCountOnly=true"), status: 200, want: `"count"`},
		{name: "REST 5,000-point multipoint Intersects, count only", path: query, header: form,
			body: multipointForm(5_000, "esriSpatialRelIntersects", "returnCountOnly=true"), status: 200, want: `"count"`},
		{name: "REST 100,000-point multipoint Within, count only", path: query, header: form,
			body: multipointForm(100_000, "esriSpatialRelWithin", "returnCountOnly=true"), status: 200, want: `"count"`},
		{name: "REST 100,000-point multipoint Intersects, count only", path: query, header: form,
			body: multipointForm(100_000, "esriSpatialRelIntersects", "returnCountOnly=true"), status: 200, want: `"count"`},
		{name: "REST 100,001-point multipoint: over maxVertices", path: query, header: form,
			body: multipointForm(100_001, "esriSpatialRelIntersects", "returnCountOnly=true"), status: 200, want: "maxVertices"},
		{name: "REST 5,000-point multipoint identify", path: "/arcgis/rest/services/world/MapServer/identify", header: form,
			body: multipointForm(5_000, "", "tolerance=2&mapExtent=-2e7,-2e7,2e7,2e7&imageDisplay=800,800,96&layers=all:1"), status: 200, want: `"results"`},
	}
}

// multipointForm is a REST form body with a multipoint of n points spread over the world (Web
// Mercator) as its geometry, the relation rel (none when ""), and the parameters more.
func multipointForm(n int, rel, more string) string {
	rng := rand.New(rand.NewPCG(25, uint64(n)))
	var g strings.Builder
	g.WriteString(`{"points":[`)
	for i := range n {
		if i > 0 {
			g.WriteByte(',')
		}
		fmt.Fprintf(&g, "[%.1f,%.1f]", (rng.Float64()*2-1)*1.9e7, (rng.Float64()*2-1)*1.5e7)
	}
	g.WriteString(`],"spatialReference":{"wkid":3857}}`)
	v := url.Values{"geometry": {g.String()}, "geometryType": {"esriGeometryMultipoint"}, "f": {"json"}}
	if rel != "" {
		v.Set("spatialRel", rel)
	}
	return v.Encode() + "&" + more
}
