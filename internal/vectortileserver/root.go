package vectortileserver

import (
	"math"
	"net/http"
	"net/url"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// CurrentVersion is the ArcGIS version the root JSON names.
const CurrentVersion = 10.71

// worldHalf is half the width of the Web Mercator world, in metres.
const worldHalf = 20037508.342787

// spatialReference is Web Mercator as ArcGIS writes it.
type spatialReference struct {
	WKID       int `json:"wkid"`
	LatestWKID int `json:"latestWkid"`
}

var webMercator = spatialReference{WKID: proj.EsriWebMercator, LatestWKID: proj.WebMercator}

type extentJSON struct {
	XMin             float64          `json:"xmin"`
	YMin             float64          `json:"ymin"`
	XMax             float64          `json:"xmax"`
	YMax             float64          `json:"ymax"`
	SpatialReference spatialReference `json:"spatialReference"`
}

type lodJSON struct {
	Level      int     `json:"level"`
	Resolution float64 `json:"resolution"`
	Scale      float64 `json:"scale"`
}

type originJSON struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type tileInfoJSON struct {
	Rows             int              `json:"rows"`
	Cols             int              `json:"cols"`
	DPI              int              `json:"dpi"`
	Format           string           `json:"format"`
	Origin           originJSON       `json:"origin"`
	SpatialReference spatialReference `json:"spatialReference"`
	LODs             []lodJSON        `json:"lods"`
}

type rootJSON struct {
	CurrentVersion      float64      `json:"currentVersion"`
	Name                string       `json:"name"`
	CopyrightText       string       `json:"copyrightText"`
	Capabilities        string       `json:"capabilities"`
	Type                string       `json:"type"`
	DefaultStyles       string       `json:"defaultStyles"`
	Tiles               []string     `json:"tiles"`
	ExportTilesAllowed  bool         `json:"exportTilesAllowed"`
	MaxExportTilesCount int          `json:"maxExportTilesCount"`
	InitialExtent       extentJSON   `json:"initialExtent"`
	FullExtent          extentJSON   `json:"fullExtent"`
	MinScale            float64      `json:"minScale"`
	MaxScale            float64      `json:"maxScale"`
	TileInfo            tileInfoJSON `json:"tileInfo"`
	MaxZoom             int          `json:"maxzoom"`
	MinLOD              int          `json:"minLOD"`
	MaxLOD              int          `json:"maxLOD"`
	ResourceInfo        struct {
		StyleVersion    int    `json:"styleVersion"`
		TileCompression string `json:"tileCompression"`
	} `json:"resourceInfo"`
}

// serveRoot answers the service's JSON, whatever f asks (MapLibre and the ArcGIS SDK fetch the
// root without f, or with the style's "../../"): ArcGIS's VectorTileServer root. It names no
// tileMap: a tile map that says which tiles exist to the last level would be as large as the
// tiles are many, and the ArcGIS SDK asks for every tile the index allows when there is none
// (tilemap is still served, to the depth tilemapDepth at a time).
func (h *Handler) serveRoot(w http.ResponseWriter, r *http.Request, svc *catalog.Service) {
	layers, err := h.p.Builder.Layers(svc.Name, "", h.p.Builder.WebMercator())
	if err != nil {
		h.failed(w, r, "the service description", err)
		return
	}
	m := svc.DefaultMap()
	full := dataExtent(layers)
	initial := full
	if m.Def.InitialExtent != nil {
		if b, ok := toWebMercator(m, *m.Def.InitialExtent); ok {
			initial = b
		}
	}
	v := rootJSON{CurrentVersion: CurrentVersion, Name: svc.Name, CopyrightText: copyright(svc),
		Capabilities: "TilesOnly", Type: "indexedVector", DefaultStyles: "resources/styles",
		Tiles: []string{"tile/{z}/{y}/{x}.pbf"}, InitialExtent: extentOf(initial), FullExtent: extentOf(full),
		MaxZoom: h.p.Builder.MaxZoom(), MaxLOD: h.p.Builder.MaxZoom()}
	v.MinScale, v.MaxScale = scaleRange(m)
	v.ResourceInfo.StyleVersion, v.ResourceInfo.TileCompression = 8, "gzip"
	ti := &v.TileInfo
	ti.Rows, ti.Cols, ti.DPI, ti.Format, ti.SpatialReference = vectortile.TileSize, vectortile.TileSize, 96, "pbf", webMercator
	ti.Origin.X, ti.Origin.Y = -worldHalf, worldHalf
	for _, lod := range h.p.Builder.WebMercator().LODs {
		// 512-pixel tiles: half the scale and resolution of the 256-pixel level.
		ti.LODs = append(ti.LODs, lodJSON{Level: lod.LevelID, Resolution: lod.Resolution / 2, Scale: vectorstyle.ZoomZeroScale / math.Exp2(float64(lod.LevelID))})
	}
	writeJSON(w, r, v, "no-cache")
}

func copyright(svc *catalog.Service) string {
	if c := svc.DefaultMap().Def.CopyrightText; c != "" {
		return c
	}
	return svc.Def.CopyrightText
}

// scaleRange is the scales at which the map draws a layer: the widest of its layers' ranges
// in ArcGIS's terms (0: no limit).
func scaleRange(m *catalog.Map) (minScale, maxScale float64) {
	first := true
	for _, l := range m.Layers {
		switch {
		case !l.Def.InVectorTiles():
		case first:
			minScale, maxScale, first = l.MinScale, l.MaxScale, false
		default:
			if minScale != 0 && (l.MinScale == 0 || l.MinScale > minScale) {
				minScale = l.MinScale
			}
			if maxScale != 0 && (l.MaxScale == 0 || l.MaxScale < maxScale) {
				maxScale = l.MaxScale
			}
		}
	}
	return minScale, maxScale
}

// dataExtent is the union of the layers' extents, within the Web Mercator world; the world
// when there is none.
func dataExtent(layers []vectortile.LayerInfo) orb.Bound {
	b := feature.EmptyBound()
	for _, l := range layers {
		if l.Extent.Max[0] >= l.Extent.Min[0] && l.Extent.Max[1] >= l.Extent.Min[1] {
			b = b.Union(l.Extent)
		}
	}
	if b.Max[0] < b.Min[0] || b.Max[1] < b.Min[1] {
		return orb.Bound{Min: orb.Point{-worldHalf, -worldHalf}, Max: orb.Point{worldHalf, worldHalf}}
	}
	return clampWorld(b)
}

func clampWorld(b orb.Bound) orb.Bound {
	for i := 0; i < 2; i++ {
		b.Min[i] = max(-worldHalf, min(worldHalf, b.Min[i]))
		b.Max[i] = max(-worldHalf, min(worldHalf, b.Max[i]))
	}
	return b
}

// toWebMercator returns a bound of map m in Web Mercator.
func toWebMercator(m *catalog.Map, b orb.Bound) (orb.Bound, bool) {
	if m.SR.IsWebMercator() {
		return clampWorld(b), true
	}
	t, err := m.Systems.Transformer(m.SR, proj.SR{WKID: proj.WebMercator})
	if err != nil {
		return orb.Bound{}, false
	}
	out, err := t.Bound(b)
	if err != nil {
		return orb.Bound{}, false
	}
	return clampWorld(out), true
}

func extentOf(b orb.Bound) extentJSON {
	return extentJSON{XMin: b.Min[0], YMin: b.Min[1], XMax: b.Max[0], YMax: b.Max[1], SpatialReference: webMercator}
}

// tilemapDepth is how many levels below the tile it is asked for a tile map describes; the
// nodes below are 2, "defined in another index file": tilemap/<z>/<y>/<x>.
const tilemapDepth = 5

type tilemapJSON struct {
	Index any `json:"index"`
}

// serveTilemap answers tilemap (rooted at tile 0/0/0) and tilemap/<z>/<y>/<x>: ArcGIS's quadtree
// of which tiles exist, each node the array of its four children (north-west, north-east,
// south-west, south-east), 0 where no layer's data reaches (no tile), 1 for a tile of the last
// level (a leaf, overzoomed by clients), 2 past tilemapDepth levels.
func (h *Handler) serveTilemap(w http.ResponseWriter, r *http.Request, svc *catalog.Service, at []string) {
	var z, y, x int
	if len(at) == 3 {
		var n [3]int
		for i, s := range at {
			v, ok := tilecache.ParseIndex(s)
			if !ok {
				writeError(w, http.StatusBadRequest, "Invalid URL", "a tile's level, row and column are whole numbers ≥ 0 written in digits alone, not "+quoted(s))
				return
			}
			n[i] = v
		}
		z, y, x = n[0], n[1], n[2]
		if z > h.p.Builder.MaxZoom() || y >= 1<<z || x >= 1<<z {
			writeError(w, http.StatusNotFound, "Tile not found", "no such tile in the tiling scheme")
			return
		}
	}
	layers, err := h.p.Builder.Layers(svc.Name, "", h.p.Builder.WebMercator())
	if err != nil {
		h.failed(w, r, "the tile map", err)
		return
	}
	var data []orb.Bound
	for _, l := range layers {
		if l.MinZoom <= l.MaxZoom && l.Extent.Max[0] >= l.Extent.Min[0] {
			data = append(data, l.Extent)
		}
	}
	writeJSON(w, r, tilemapJSON{Index: h.node(data, z, y, x, tilemapDepth)}, "no-cache")
}

// node is the tile map's node of tile z/y/x, depth levels deep at most.
func (h *Handler) node(data []orb.Bound, z, y, x, depth int) any {
	size := 2 * worldHalf / math.Exp2(float64(z))
	tb := orb.Bound{Min: orb.Point{-worldHalf + float64(x)*size, worldHalf - float64(y+1)*size},
		Max: orb.Point{-worldHalf + float64(x+1)*size, worldHalf - float64(y)*size}}
	hit := false
	for _, d := range data {
		if d.Intersects(tb) {
			hit = true
			break
		}
	}
	switch {
	case !hit:
		return 0
	case z == h.p.Builder.MaxZoom():
		return 1
	case depth == 0:
		return 2
	}
	return [4]any{
		h.node(data, z+1, 2*y, 2*x, depth-1), h.node(data, z+1, 2*y, 2*x+1, depth-1),
		h.node(data, z+1, 2*y+1, 2*x, depth-1), h.node(data, z+1, 2*y+1, 2*x+1, depth-1),
	}
}

// tileJSON is a TileJSON 3.0.0 document.
type tileJSON struct {
	TileJSON     string        `json:"tilejson"`
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	Attribution  string        `json:"attribution,omitempty"`
	Scheme       string        `json:"scheme"`
	Tiles        []string      `json:"tiles"`
	MinZoom      int           `json:"minzoom"`
	MaxZoom      int           `json:"maxzoom"`
	Bounds       [4]float64    `json:"bounds"`
	Center       [3]float64    `json:"center"`
	VectorLayers []vectorLayer `json:"vector_layers"`
}

type vectorLayer struct {
	ID          string            `json:"id"`
	Fields      map[string]string `json:"fields"`
	Description string            `json:"description,omitempty"`
	MinZoom     int               `json:"minzoom"`
	MaxZoom     int               `json:"maxzoom"`
}

// serveTileJSON answers tiles.json: TileJSON 3.0.0 for MapLibre GL and OpenLayers, the tiles the
// same as the VectorTileServer's (XYZ, {z}/{y}/{x} in the template, with the request's token
// parameter when it has one, as the style), bounds and center in degrees, one vector layer per
// layer the tiles hold with its attributes' types.
func (h *Handler) serveTileJSON(w http.ResponseWriter, r *http.Request, svc *catalog.Service) {
	layers, err := h.p.Builder.Layers(svc.Name, "", h.p.Builder.WebMercator())
	if err != nil {
		h.failed(w, r, "the TileJSON", err)
		return
	}
	b := dataExtent(layers)
	sw, ne := proj.FromMercator(b.Min), proj.FromMercator(b.Max)
	v := tileJSON{TileJSON: "3.0.0", Name: svc.Name, Description: svc.Def.Description, Attribution: copyright(svc), Scheme: "xyz",
		Tiles: []string{h.serviceURL(svc) + "/tile/{z}/{y}/{x}.pbf" + tokenQuery(r)}, MaxZoom: h.p.Builder.MaxZoom(),
		Bounds: [4]float64{round6(sw[0]), round6(sw[1]), round6(ne[0]), round6(ne[1])}, VectorLayers: []vectorLayer{}}
	v.Center = [3]float64{round6((sw[0] + ne[0]) / 2), round6((sw[1] + ne[1]) / 2), 0}
	for _, l := range layers {
		if l.MinZoom > l.MaxZoom {
			continue
		}
		vl := vectorLayer{ID: l.Name, Description: l.Description, Fields: map[string]string{}, MinZoom: l.MinZoom, MaxZoom: l.MaxZoom}
		for _, f := range l.Fields {
			vl.Fields[f.Name] = fieldType(f.Type)
		}
		v.VectorLayers = append(v.VectorLayers, vl)
	}
	writeJSON(w, r, v, "no-cache")
}

// fieldType is a TileJSON field type: Number for numbers and dates (milliseconds, as the tiles
// hold them), String otherwise.
func fieldType(t feature.FieldType) string {
	switch t {
	case feature.FieldOID, feature.FieldInteger, feature.FieldSmallInteger, feature.FieldDouble, feature.FieldSingle, feature.FieldDate:
		return "Number"
	}
	return "String"
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// tokenQuery is "?token=…" for a request with a token parameter, "" otherwise.
func tokenQuery(r *http.Request) string {
	if t := r.URL.Query().Get("token"); t != "" {
		return "?token=" + url.QueryEscape(t)
	}
	return ""
}
