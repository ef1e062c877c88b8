package ogcapi

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// WebMercatorQuad, the tile matrix set of OGC 17-083r4 Annex D.1 (Google Maps compatible).
const (
	wmqID     = "WebMercatorQuad"
	wmqURI    = "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"
	wmqOrigin = 20037508.3427892
	// wmqRes0 and wmqScale0 are level 0's metres per pixel and scale denominator.
	wmqRes0   = 156543.03392804097
	wmqScale0 = 559082264.0287178
	// wmqMaxLevel is the deepest level of the definition; wmqMaxDrawn the deepest the
	// tilesets announce (tileMatrixSetLimits) and draw.
	wmqMaxLevel = 24
	wmqMaxDrawn = 20
	tileSize    = 256
)

// tileMatrixDoc is a tile matrix of a TileMatrixSet 2.0 document (OGC 17-083r4).
type tileMatrixDoc struct {
	ID               string     `json:"id"`
	ScaleDenominator float64    `json:"scaleDenominator"`
	CellSize         float64    `json:"cellSize"`
	CornerOfOrigin   string     `json:"cornerOfOrigin"`
	PointOfOrigin    [2]float64 `json:"pointOfOrigin"`
	TileWidth        int        `json:"tileWidth"`
	TileHeight       int        `json:"tileHeight"`
	MatrixWidth      int        `json:"matrixWidth"`
	MatrixHeight     int        `json:"matrixHeight"`
}

// tileMatrixSetDoc is a TileMatrixSet 2.0 document, with the members of the 1.0 encoding
// (OGC 17-083r2: type, identifier, supportedCRS, boundingBox, tileMatrix) beside them: GDAL
// before 3.7 (Debian 12's 3.6) reads only those, and a reader of 2.0 ignores them.
type tileMatrixSetDoc struct {
	ID                string          `json:"id"`
	Title             string          `json:"title"`
	URI               string          `json:"uri,omitempty"`
	CRS               string          `json:"crs"`
	OrderedAxes       []string        `json:"orderedAxes"`
	WellKnownScaleSet string          `json:"wellKnownScaleSet,omitempty"`
	TileMatrices      []tileMatrixDoc `json:"tileMatrices"`

	Type         string         `json:"type"`
	Identifier   string         `json:"identifier"`
	SupportedCRS string         `json:"supportedCRS"`
	BoundingBox  boundingBoxV1  `json:"boundingBox"`
	TileMatrix   []tileMatrixV1 `json:"tileMatrix"`
}

// boundingBoxV1 and tileMatrixV1 are of the 1.0 encoding.
type boundingBoxV1 struct {
	Type        string     `json:"type"`
	CRS         string     `json:"crs"`
	LowerCorner [2]float64 `json:"lowerCorner"`
	UpperCorner [2]float64 `json:"upperCorner"`
}

type tileMatrixV1 struct {
	Type             string     `json:"type"`
	Identifier       string     `json:"identifier"`
	ScaleDenominator float64    `json:"scaleDenominator"`
	TopLeftCorner    [2]float64 `json:"topLeftCorner"`
	TileWidth        int        `json:"tileWidth"`
	TileHeight       int        `json:"tileHeight"`
	MatrixWidth      int        `json:"matrixWidth"`
	MatrixHeight     int        `json:"matrixHeight"`
}

// webMercatorQuad is the WebMercatorQuad definition, levels 0 to 24.
func webMercatorQuad() tileMatrixSetDoc {
	d := tileMatrixSetDoc{ID: wmqID, Title: "Google Maps Compatible for the World", URI: wmqURI, CRS: epsgURI(proj.WebMercator),
		OrderedAxes: []string{"E", "N"}, WellKnownScaleSet: "http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible",
		Type: "TileMatrixSetType", Identifier: wmqID, SupportedCRS: epsgURI(proj.WebMercator),
		BoundingBox: boundingBoxV1{Type: "BoundingBoxType", CRS: epsgURI(proj.WebMercator), LowerCorner: [2]float64{-wmqOrigin, -wmqOrigin}, UpperCorner: [2]float64{wmqOrigin, wmqOrigin}}}
	for z := 0; z <= wmqMaxLevel; z++ {
		n := 1 << z
		origin := [2]float64{-wmqOrigin, wmqOrigin}
		d.TileMatrices = append(d.TileMatrices, tileMatrixDoc{ID: strconv.Itoa(z), ScaleDenominator: wmqScale0 / float64(n), CellSize: wmqRes0 / float64(n),
			CornerOfOrigin: "topLeft", PointOfOrigin: origin, TileWidth: tileSize, TileHeight: tileSize, MatrixWidth: n, MatrixHeight: n})
		d.TileMatrix = append(d.TileMatrix, tileMatrixV1{Type: "TileMatrixType", Identifier: strconv.Itoa(z), ScaleDenominator: wmqScale0 / float64(n),
			TopLeftCorner: origin, TileWidth: tileSize, TileHeight: tileSize, MatrixWidth: n, MatrixHeight: n})
	}
	return d
}

// tileMatrixSets answers /tileMatrixSets.
func (s *service) tileMatrixSets(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	href := s.base + "/tileMatrixSets/" + wmqID
	sets := []map[string]any{{"id": wmqID, "title": "Google Maps Compatible for the World", "uri": wmqURI,
		"links": []link{{Href: href, Rel: "self", Type: mediaJSON, Title: wmqID}}}}
	links := selfLinks(s.base+"/tileMatrixSets", mt, mediaJSON)
	pg := &page{Title: "Tile matrix sets", Links: links, Head: []string{"id", "title"},
		Rows: [][]cell{{{Text: wmqID, Href: href + "?f=html"}, {Text: "Google Maps Compatible for the World"}}}}
	if _, ok, err := s.cacheScheme(); err != nil {
		return err
	} else if ok {
		href := s.base + "/tileMatrixSets/" + cacheSetID
		sets = append(sets, map[string]any{"id": cacheSetID, "title": "The tiling scheme of the map's cache",
			"links": []link{{Href: href, Rel: "self", Type: mediaJSON, Title: cacheSetID}}})
		pg.Rows = append(pg.Rows, []cell{{Text: cacheSetID, Href: href + "?f=html"}, {Text: "The tiling scheme of the map's cache"}})
	}
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"tileMatrixSets": sets, "links": links}, pg)
}

// tileMatrixSet answers /tileMatrixSets/{id}.
func (s *service) tileMatrixSet(w http.ResponseWriter, r *http.Request, id string) error {
	var d tileMatrixSetDoc
	switch sch, ok, err := s.cacheScheme(); {
	case id == wmqID:
		d = webMercatorQuad()
	case err != nil:
		return err
	case id == cacheSetID && ok:
		d = cacheTMS(sch)
	default:
		return notFound("tile matrix set " + quoted(id) + " does not exist")
	}
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	pg := &page{Title: d.Title, Description: d.URI + " in " + d.CRS, Links: selfLinks(s.base+"/tileMatrixSets/"+id, mt, mediaJSON),
		Head: []string{"tile matrix", "scale denominator", "cell size", "matrix width × height"}}
	for _, m := range d.TileMatrices {
		pg.Rows = append(pg.Rows, []cell{{Text: m.ID}, {Text: strconv.FormatFloat(m.ScaleDenominator, 'f', -1, 64)},
			{Text: strconv.FormatFloat(m.CellSize, 'f', -1, 64)}, {Text: strconv.Itoa(m.MatrixWidth) + " × " + strconv.Itoa(m.MatrixHeight)}})
	}
	return writeDoc(w, r, mt, mediaJSON, d, pg)
}

// tilesHref is the URL of the map tilesets of the dataset (l nil) or of a collection.
func (s *service) tilesHref(l *gisxml.MapLayerInfo) string {
	if l == nil {
		return s.base + "/map/tiles"
	}
	return s.base + "/collections/" + strconv.Itoa(l.LayerID) + "/map/tiles"
}

// tilesetSummary is a tileset as the tilesets list names it.
func (s *service) tilesetSummary(l *gisxml.MapLayerInfo) map[string]any {
	href := s.tilesHref(l) + "/" + wmqID
	return map[string]any{"title": s.tilesetTitle(l), "dataType": "map", "crs": epsgURI(proj.WebMercator), "tileMatrixSetURI": wmqURI,
		"links": []link{{Href: href, Rel: "self", Type: mediaJSON, Title: "the tileset"},
			{Href: s.base + "/tileMatrixSets/" + wmqID, Rel: relTilingScheme, Type: mediaJSON, Title: wmqID}}}
}

func (s *service) tilesetTitle(l *gisxml.MapLayerInfo) string {
	if l == nil {
		return s.svc.Name + " in " + wmqID
	}
	return l.Name + " in " + wmqID
}

// tilesets answers /map/tiles: the map tilesets of the dataset or of a collection.
func (s *service) tilesets(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	links := selfLinks(s.tilesHref(l), mt, mediaJSON)
	pg := &page{Title: "Map tilesets", Links: links, Head: []string{"tileset", "tile matrix set"},
		Rows: [][]cell{{{Text: s.tilesetTitle(l), Href: s.tilesHref(l) + "/" + wmqID + "?f=html"}, {Text: wmqURI}}}}
	sets := []map[string]any{s.tilesetSummary(l)}
	if has, err := s.hasCacheTiles(l); err != nil {
		return err
	} else if has {
		sch, _, err := s.cacheScheme()
		if err != nil {
			return err
		}
		set := s.cacheTileset(l, sch, mt, r, true)
		sets = append(sets, set)
		pg.Rows = append(pg.Rows, []cell{{Text: set["title"].(string), Href: s.tilesHref(l) + "/" + cacheSetID + "?f=html"}, {Text: cacheSetID}})
	}
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"tilesets": sets, "links": links}, pg)
}

// tileLimits is the range of tiles of one tile matrix that cover the data.
type tileLimits struct {
	TileMatrix string `json:"tileMatrix"`
	MinTileRow int    `json:"minTileRow"`
	MaxTileRow int    `json:"maxTileRow"`
	MinTileCol int    `json:"minTileCol"`
	MaxTileCol int    `json:"maxTileCol"`
}

// tileset answers /map/tiles/{tileMatrixSetId}.
func (s *service) tileset(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo, tms string) error {
	if tms == cacheSetID {
		return s.cacheTilesetDoc(w, r, l)
	}
	if tms != wmqID {
		return notFound("tileset " + quoted(tms) + " does not exist")
	}
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	href := s.tilesHref(l) + "/" + wmqID
	tmpl := href + "/{tileMatrix}/{tileRow}/{tileCol}"
	token := ""
	if t := r.URL.Query().Get("token"); t != "" {
		token = "&token=" + url.QueryEscape(t)
	}
	links := append(selfLinks(href, mt, mediaJSON),
		link{Href: s.base + "/tileMatrixSets/" + wmqID, Rel: relTilingScheme, Type: mediaJSON, Title: wmqID},
		link{Href: tmpl + "?f=png" + token, Rel: "item", Type: mediaPNG, Title: "PNG tiles", Templated: true},
		link{Href: tmpl + "?f=jpg" + token, Rel: "item", Type: mediaJPEG, Title: "JPEG tiles", Templated: true})
	doc := map[string]any{"title": s.tilesetTitle(l), "dataType": "map", "crs": epsgURI(proj.WebMercator), "tileMatrixSetURI": wmqURI, "links": links}
	// The tiles that cover the data, level by level (none when the extent is unknown).
	ext := s.svc.DefaultMap().FullExtent
	if l != nil {
		if env, ok := l.Extent.(*gisxml.EnvelopeN); ok && env != nil {
			ext = orb.Bound{Min: orb.Point{env.XMin, env.YMin}, Max: orb.Point{env.XMax, env.YMax}}
		}
	}
	if lim, ok := s.limitsOf(ext); ok {
		doc["tileMatrixSetLimits"] = lim
	}
	pg := &page{Title: s.tilesetTitle(l), Description: "Tiles of " + wmqURI + ": " + tmpl, Links: links}
	return writeDoc(w, r, mt, mediaJSON, doc, pg)
}

// limitsOf is the tile range of each level 0 to wmqMaxDrawn covering ext, a box of the map's
// system.
func (s *service) limitsOf(ext orb.Bound) ([]tileLimits, bool) {
	m := s.svc.DefaultMap()
	t, err := m.Systems.Transformer(m.SR, proj.SR{WKID: proj.WebMercator})
	if err != nil || !(ext.Min[0] <= ext.Max[0] && ext.Min[1] <= ext.Max[1]) {
		return nil, false
	}
	b, err := t.Bound(ext)
	if err != nil {
		return nil, false
	}
	var out []tileLimits
	for z := 0; z <= wmqMaxDrawn; z++ {
		n := 1 << z
		span := 2 * wmqOrigin / float64(n)
		idx := func(v float64) int { return min(n-1, max(0, int(math.Floor(v/span)))) }
		out = append(out, tileLimits{TileMatrix: strconv.Itoa(z),
			MinTileCol: idx(b.Min[0] + wmqOrigin), MaxTileCol: idx(b.Max[0] + wmqOrigin),
			MinTileRow: idx(wmqOrigin - b.Max[1]), MaxTileRow: idx(wmqOrigin - b.Min[1])})
	}
	return out, true
}

// tileIndex reads a tile coordinate: a whole number written in digits alone.
func tileIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// tile answers /map/tiles/WebMercatorQuad/{tileMatrix}/{tileRow}/{tileCol}: for the dataset,
// the tile of the map's cache when the cache is of WebMercatorQuad's levels and holds it
// (GetMapTile, as WMTS reads it), else the tile drawn on demand (ExportMapImage, 256 × 256, of
// the tile's extent, under the request policy as any map).
func (s *service) tile(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo, tms, zs, ys, xs string) error {
	z, okz := tileIndex(zs)
	y, oky := tileIndex(ys)
	x, okx := tileIndex(xs)
	if !okz || !oky || !okx {
		return invalid("tile", "tileMatrix, tileRow and tileCol must be whole numbers written in digits alone")
	}
	if tms == cacheSetID {
		has, err := s.hasCacheTiles(l)
		if err != nil {
			return err
		}
		if !has {
			return notFound("tileset " + cacheSetID + " does not exist here: no cache holds these tiles")
		}
		return s.cacheTile(w, r, l, z, y, x)
	}
	if tms != wmqID {
		return notFound("tileset " + quoted(tms) + " does not exist")
	}
	if z > wmqMaxDrawn || y >= 1<<z || x >= 1<<z {
		return notFound("tile " + zs + "/" + ys + "/" + xs + " is outside " + wmqID + " (levels 0 to " + strconv.Itoa(wmqMaxDrawn) + ")")
	}
	mt, err := answerType(r, mediaPNG, mediaJPEG)
	if err != nil {
		return err
	}
	if l == nil {
		if data, ok, err := s.cachedTile(z, y, x, mt); err != nil {
			return err
		} else if ok {
			writeBody(w, r, http.StatusOK, mt, "public, max-age=60", data)
			return nil
		}
	}
	span := 2 * wmqOrigin / float64(int(1)<<z)
	q := &mapQuery{width: tileSize, height: tileSize, mt: mt,
		bbox: orb.Bound{Min: orb.Point{-wmqOrigin + float64(x)*span, wmqOrigin - float64(y+1)*span}, Max: orb.Point{-wmqOrigin + float64(x+1)*span, wmqOrigin - float64(y)*span}}}
	for _, c := range s.systems() {
		if c.sr.WKID == proj.WebMercator {
			q.crs = c
		}
	}
	if q.crs.uri == "" {
		return errors.New("ogcapi: the projection engine does not know Web Mercator")
	}
	if q.visible, err = s.layersToDraw(l); err != nil {
		return err
	}
	img, err := s.export(q)
	if err != nil {
		return err
	}
	writeBody(w, r, http.StatusOK, mt, "public, max-age=60", img)
	return nil
}

// cachedTile reads a WebMercatorQuad tile from the map's stored cache (GetMapTile) when the
// cache's level z is WebMercatorQuad's level z and its tiles are of media type mt; ok is false
// when it is not, or the cache does not hold the tile.
func (s *service) cachedTile(z, y, x int, mt string) ([]byte, bool, error) {
	caches := s.families().Caches
	name := s.svc.DefaultMap().Name
	// The cache's scheme and format (read from its stored metadata, which the caches family
	// keeps for a while), then the tile of its fused folder.
	tci, err := caches.GetTileCacheInfo(s.ctx, s.call, &gisxml.GetTileCacheInfo{MapName: name})
	if errors.Is(err, mapserver.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if tci.Result == nil || !wmqLevel(tci.Result, z) {
		return nil, false, nil
	}
	tii, err := caches.GetTileImageInfo(s.ctx, s.call, &gisxml.GetTileImageInfo{MapName: name})
	if err != nil {
		return nil, false, err
	}
	if tii.Result != nil && cacheMedia(tii.Result.CacheTileFormat) != mt {
		return nil, false, nil
	}
	resp, err := caches.GetMapTile(s.ctx, s.call, &gisxml.GetMapTile{MapName: name, Level: z, Row: y, Column: x})
	if errors.Is(err, mapserver.ErrNotFound) || errors.Is(err, mapserver.ErrInvalidArgument) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return resp.Result, true, nil
}

// cacheMedia is the media type of a cache's tiles ("" for a MIXED cache's, which may be either).
func cacheMedia(format string) string {
	switch f := strings.ToUpper(format); {
	case strings.HasPrefix(f, "PNG"):
		return mediaPNG
	case f == "JPEG" || f == "JPG":
		return mediaJPEG
	}
	return ""
}

// wmqLevel reports whether the cache's level z is WebMercatorQuad's level z: Web Mercator,
// 256 × 256 tiles, the standard origin (to a centimetre; Esri writes it rounded) and
// resolution (to a part in a million).
func wmqLevel(tci *gisxml.TileCacheInfo, z int) bool {
	sr := mapview.SR(tci.SpatialReference)
	o, ok := tci.TileOrigin.(*gisxml.PointN)
	if !sr.IsWebMercator() || !ok || o == nil || tci.TileCols != tileSize || tci.TileRows != tileSize ||
		math.Abs(o.X+wmqOrigin) > 0.01 || math.Abs(o.Y-wmqOrigin) > 0.01 {
		return false
	}
	want := wmqRes0 / float64(int(1)<<z)
	for _, l := range tci.LODInfos {
		if l.LevelID == z {
			return math.Abs(l.Resolution-want) <= want*1e-6
		}
	}
	return false
}
