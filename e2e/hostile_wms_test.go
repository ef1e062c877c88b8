package e2e

import (
	"net/http"
	"strings"
)

// hostileWMSRows are hostile requests on WMS (internal/wms): sizes over the image limit, NaN
// and huge numbers, a layer list of 6 KB, a parameter given twice: each a 400
// ServiceExceptionReport naming what was wrong, quoting at most 200 characters of the input.
func hostileWMSRows() []hostileRow {
	const base = "/arcgis/services/world/MapServer/WMSServer?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&STYLES=&CRS=EPSG:3857&FORMAT=image/png"
	getMap := base + "&LAYERS=1&BBOX=0,0,1000000,1000000"
	long := strings.Repeat("Lq9z", 1_500) // 6 KB: a longer request line is refused by the HTTP server (431)
	return []hostileRow{
		{name: "WMS GetMap 100000 × 100000", method: http.MethodGet, path: getMap + "&WIDTH=100000&HEIGHT=100000", status: 400, want: "the image size limit"},
		{name: "WMS GetMap 100000 × 100000 INIMAGE", method: http.MethodGet, path: getMap + "&WIDTH=100000&HEIGHT=100000&EXCEPTIONS=INIMAGE", status: 400, want: "the image size limit"},
		{name: "WMS GetMap BBOX NaN", method: http.MethodGet, path: base + "&LAYERS=1&WIDTH=256&HEIGHT=256&BBOX=NaN,0,1,1", status: 400, want: "BBOX must be four numbers"},
		{name: "WMS GetMap BBOX 1e308", method: http.MethodGet, path: base + "&LAYERS=1&WIDTH=256&HEIGHT=256&BBOX=-1e308,-1e308,1e308,1e308", status: 400, want: "ServiceException"},
		{name: "WMS GetMap 6 KB of LAYERS", method: http.MethodGet, path: base + "&WIDTH=256&HEIGHT=256&BBOX=0,0,1,1&LAYERS=" + long, status: 400, want: "LayerNotDefined", echo: "Lq9z"},
		{name: "WMS GetMap LAYERS twice", method: http.MethodGet, path: getMap + "&WIDTH=256&HEIGHT=256&layers=0", status: 400, want: "more than once"},
		{name: "WMS GetFeatureInfo FEATURE_COUNT 1e9", method: http.MethodGet,
			path: strings.Replace(getMap, "GetMap", "GetFeatureInfo", 1) + "&WIDTH=256&HEIGHT=256&QUERY_LAYERS=1&I=1&J=1&INFO_FORMAT=text/plain&FEATURE_COUNT=1000000000", status: 200},
		{name: "WMS GetLegendGraphic patch 100000", method: http.MethodGet, path: "/arcgis/services/world/MapServer/WMSServer?SERVICE=WMS&REQUEST=GetLegendGraphic&LAYER=1&WIDTH=100000", status: 400, want: "at most 256"},
	}
}
