package e2e

import (
	"net/url"
	"strings"
)

// hostileTokenTwiceRows are requests of TestHostileTokens that give the token parameter twice
// in two letter cases, a valid token of the world service and a forged one (issue 25): each is
// refused, 400 on tiles, WMTS and the cache directory, code 400 in REST's JSON, never let
// through on whichever spelling came first. The same token twice is one value and opens.
func hostileTokenTwiceRows(world string) []hostileRow {
	const dir = "/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L00/R00000000/C00000000.png"
	const tile = "/arcgis/rest/services/world/MapServer/tile/0/0/0"
	const kvp = "/arcgis/rest/services/world/MapServer/WMTS?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=world&STYLE=default&TILEMATRIXSET=default028mm&TILEMATRIX=0&TILEROW=0&TILECOL=0&FORMAT=image/png"
	good := url.QueryEscape(world)
	forged := url.QueryEscape(world[:strings.LastIndexByte(world, '.')] + ".AAAA")
	get := func(name, path string, status int, want string) hostileRow {
		return hostileRow{name: name, method: "GET", path: path, status: status, want: want}
	}
	const twice = "more than once"
	return []hostileRow{
		get("REST tile, token valid and TOKEN forged", tile+"?token="+good+"&TOKEN="+forged, 400, twice),
		get("directory tile, TOKEN valid and Token forged", dir+"?TOKEN="+good+"&Token="+forged, 400, twice),
		get("WMTS KVP tile, Token forged and token valid", kvp+"&Token="+forged+"&token="+good, 400, twice),
		get("REST JSON, TOKEN valid and token forged", "/arcgis/rest/services/world/MapServer?f=json&TOKEN="+good+"&token="+forged, 200, twice),
		get("REST tile, the same token as token and TOKEN", tile+"?token="+good+"&TOKEN="+good, 200, "PNG"),
	}
}
