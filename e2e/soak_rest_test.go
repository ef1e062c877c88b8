package e2e

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// normalRESTRequest is one request of the soak's normal HTTP GET traffic beside SOAP's
// (normalRequest), on the same world service and seeded cache (levels 0–3): a 256×256 REST
// export of a random extent (25%), a REST tile (20%), a WMTS GetTile, KVP or RESTful in turn
// (20%), a tile of the virtual cache directory (10%), or a REST query counting the countries
// in a random envelope (25%). op names the kind, for the report; json says the answer is
// ArcGIS JSON, which must hold no error.
func normalRESTRequest(rng *rand.Rand) (op, path string, json bool) {
	size := 2e6 + rng.Float64()*6e6
	x := -2e7 + rng.Float64()*(4e7-size)
	y := -8.5e6 + rng.Float64()*(2e7-size)
	xs := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	bbox := xs(x) + "," + xs(y) + "," + xs(x+size) + "," + xs(y+size)
	level := rng.IntN(4)
	row, col := rng.IntN(1<<level), rng.IntN(1<<level)
	const svc = "/arcgis/rest/services/world/MapServer"
	switch k := rng.IntN(20); {
	case k < 5:
		return "REST export", svc + "/export?bbox=" + bbox + "&bboxSR=3857&size=256,256&format=png&f=image", false
	case k < 9:
		return "REST tile", fmt.Sprintf("%s/tile/%d/%d/%d", svc, level, row, col), false
	case k < 11:
		return "WMTS KVP GetTile", fmt.Sprintf("%s/WMTS?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=world&STYLE=default&FORMAT=image/png&TILEMATRIXSET=default028mm&TILEMATRIX=%d&TILEROW=%d&TILECOL=%d",
			svc, level, row, col), false
	case k < 13:
		return "WMTS RESTful GetTile", fmt.Sprintf("%s/WMTS/tile/1.0.0/world/default/default028mm/%d/%d/%d.png", svc, level, row, col), false
	case k < 15:
		return "directory tile", fmt.Sprintf("/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L%02d/R%08x/C%08x.png", level, row, col), false
	default:
		return "REST query count", svc + "/1/query?f=json&returnCountOnly=true&where=1%3D1&geometryType=esriGeometryEnvelope&inSR=3857&spatialRel=esriSpatialRelIntersects&geometry=" + bbox, true
	}
}

// hostileSurface is the front end a hostile row attacks, for the soak's report: SOAP (the
// world service's endpoint), REST, tiles and WMTS, the virtual cache directory, or another
// HTTP route (health, admin, outputs, the legislative API).
func hostileSurface(r hostileRow) string {
	p := r.path
	switch {
	case p == "" || strings.HasPrefix(p, "/arcgis/services"):
		return "SOAP"
	case strings.HasPrefix(p, "/arcgis/rest/directories/"):
		return "directory"
	case strings.Contains(p, "/MapServer/WMTS") || strings.Contains(p, "/MapServer/tile/"):
		return "tiles/WMTS"
	case strings.HasPrefix(p, "/arcgis/rest/"):
		return "REST"
	default:
		return "other HTTP"
	}
}

// hostileOrder is the order the soak sends rows in: a SOAP row and one of another front end in
// turn while both last, then the rest, so that every mixed window, however short, carries REST,
// WMTS and directory attacks beside SOAP's. Every row comes once in each cycle.
func hostileOrder(rows []hostileRow) []int {
	var soap, other []int
	for i, r := range rows {
		if hostileSurface(r) == "SOAP" {
			soap = append(soap, i)
		} else {
			other = append(other, i)
		}
	}
	order := make([]int, 0, len(rows))
	for i := 0; i < max(len(soap), len(other)); i++ {
		if i < len(soap) {
			order = append(order, soap[i])
		}
		if i < len(other) {
			order = append(order, other[i])
		}
	}
	return order
}
