package ogcapi

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// cacheSetID names the tile matrix set of the map's stored cache, its own tiling scheme, as the
// service's WMTS capabilities name it (ArcGIS's "default028mm").
const cacheSetID = "default028mm"

// metresPerDegree is OGC's metres per degree of a geographic system (the WGS 84 equator's).
const metresPerDegree = 2 * math.Pi * 6378137 / 360

// cacheScheme is the tiling scheme of the map's stored cache; ok is false when it has none.
func (s *service) cacheScheme() (sch tilecache.Scheme, ok bool, err error) {
	sch, err = s.families().Caches.Scheme(s.ctx, s.call, s.svc.DefaultMap().Name)
	if errors.Is(err, mapserver.ErrNotFound) {
		return sch, false, nil
	}
	return sch, err == nil, err
}

// cacheCRS is the system of a scheme as the tile matrix set names it, and whether its
// coordinates are written northing first: WGS 84 as CRS84 (longitude first, as the cache's
// origin is), any other system by its EPSG code, a geographic one latitude first.
func cacheCRS(sch tilecache.Scheme) (uri string, northFirst bool) {
	code := sch.SpatialReference.LatestWKID
	if code == 0 {
		code = sch.SpatialReference.WKID
	}
	if code == proj.WGS84 {
		return crs84, false
	}
	return epsgURI(code), sch.SpatialReference.Geographic
}

// cacheTMS is the tile matrix set of a cache's scheme: a tile matrix per level, named by its
// level id, as wide and high as the scheme's extent takes.
func cacheTMS(sch tilecache.Scheme) tileMatrixSetDoc {
	uri, northFirst := cacheCRS(sch)
	axes := []string{"E", "N"}
	origin := [2]float64{sch.Origin[0], sch.Origin[1]}
	perUnit := 1.0
	if sch.SpatialReference.Geographic {
		perUnit = metresPerDegree
		axes = []string{"Lon", "Lat"}
	}
	if northFirst {
		origin = [2]float64{origin[1], origin[0]}
		axes = []string{"Lat", "Lon"}
	}
	d := tileMatrixSetDoc{ID: cacheSetID, Title: "The tiling scheme of the map's cache", CRS: uri, OrderedAxes: axes,
		Type: "TileMatrixSetType", Identifier: cacheSetID, SupportedCRS: uri,
		BoundingBox: boundingBoxV1{Type: "BoundingBoxType", CRS: uri, LowerCorner: [2]float64{sch.Extent.Min[0], sch.Extent.Min[1]}, UpperCorner: [2]float64{sch.Extent.Max[0], sch.Extent.Max[1]}}}
	if northFirst {
		d.BoundingBox.LowerCorner = [2]float64{sch.Extent.Min[1], sch.Extent.Min[0]}
		d.BoundingBox.UpperCorner = [2]float64{sch.Extent.Max[1], sch.Extent.Max[0]}
	}
	for _, l := range sch.LODs {
		rows, cols, err := sch.MatrixSize(l.LevelID)
		if err != nil {
			continue
		}
		id := strconv.Itoa(l.LevelID)
		scale := l.Resolution * perUnit / 0.00028
		d.TileMatrices = append(d.TileMatrices, tileMatrixDoc{ID: id, ScaleDenominator: scale, CellSize: l.Resolution, CornerOfOrigin: "topLeft",
			PointOfOrigin: origin, TileWidth: sch.TileCols, TileHeight: sch.TileRows, MatrixWidth: cols, MatrixHeight: rows})
		d.TileMatrix = append(d.TileMatrix, tileMatrixV1{Type: "TileMatrixType", Identifier: id, ScaleDenominator: scale, TopLeftCorner: origin,
			TileWidth: sch.TileCols, TileHeight: sch.TileRows, MatrixWidth: cols, MatrixHeight: rows})
	}
	return d
}

// hasCacheTiles reports whether the cache holds tiles of the dataset (l nil: its fused folder)
// or of layer l (its own folder), as GetCacheDescriptionInfo describes it.
func (s *service) hasCacheTiles(l *gisxml.MapLayerInfo) (bool, error) {
	if _, ok, err := s.cacheScheme(); !ok || err != nil {
		return false, err
	}
	resp, err := s.families().Caches.GetCacheDescriptionInfo(s.ctx, s.call, &gisxml.GetCacheDescriptionInfo{MapName: s.svc.DefaultMap().Name})
	if err != nil {
		return false, err
	}
	d := resp.Result
	if l == nil {
		return d.ServiceType == gisxml.SingleFusedMapCache, nil
	}
	if d.ServiceType == gisxml.SingleFusedMapCache {
		return false, nil
	}
	for _, lc := range d.LayerCacheInfos {
		if lc.LayerID == l.LayerID {
			return lc.HasCache, nil
		}
	}
	return false, nil
}

// cacheTileset is the tileset of the cache's own scheme, for the list (summary) or whole.
func (s *service) cacheTileset(l *gisxml.MapLayerInfo, sch tilecache.Scheme, mt string, r *http.Request, summary bool) map[string]any {
	uri, _ := cacheCRS(sch)
	href := s.tilesHref(l) + "/" + cacheSetID
	title := s.svc.Name + "'s cache"
	if l != nil {
		title = l.Name + "'s cache"
	}
	links := []link{{Href: href, Rel: "self", Type: mediaJSON, Title: "the tileset"}}
	if !summary {
		links = selfLinks(href, mt, mediaJSON)
		media := cacheMedia(sch.Format)
		if media == "" {
			media = mediaPNG
		}
		tmpl := href + "/{tileMatrix}/{tileRow}/{tileCol}"
		if t := r.URL.Query().Get("token"); t != "" {
			tmpl += "?token=" + url.QueryEscape(t)
		}
		links = append(links, link{Href: tmpl, Rel: "item", Type: media, Title: "the cache's tiles", Templated: true})
	}
	links = append(links, link{Href: s.base + "/tileMatrixSets/" + cacheSetID, Rel: relTilingScheme, Type: mediaJSON, Title: cacheSetID})
	return map[string]any{"title": title, "dataType": "map", "crs": uri, "links": links}
}

// cacheTile answers a tile of the cache's own scheme: GetMapTile (the dataset) or GetLayerTile
// (a collection), read from the store as WMTS reads it (and drawn on demand where the cache's
// definition says so). A tile the cache does not hold, or outside its scheme, is a 404.
func (s *service) cacheTile(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo, z, y, x int) error {
	name := s.svc.DefaultMap().Name
	caches := s.families().Caches
	var (
		data []byte
		err  error
	)
	if l == nil {
		var resp *gisxml.GetMapTileResponse
		if resp, err = caches.GetMapTile(s.ctx, s.call, &gisxml.GetMapTile{MapName: name, Level: z, Row: y, Column: x}); err == nil {
			data = resp.Result
		}
	} else {
		var resp *gisxml.GetLayerTileResponse
		if resp, err = caches.GetLayerTile(s.ctx, s.call, &gisxml.GetLayerTile{MapName: name, LayerID: l.LayerID, Level: z, Row: y, Column: x}); err == nil {
			data = resp.Result
		}
	}
	if errors.Is(err, mapserver.ErrNotFound) || errors.Is(err, mapserver.ErrInvalidArgument) {
		return notFound(err.Error())
	}
	if err != nil {
		return err
	}
	writeBody(w, r, http.StatusOK, http.DetectContentType(data), "public, max-age=60", data)
	return nil
}

// cacheTilesetDoc answers /map/tiles/default028mm.
func (s *service) cacheTilesetDoc(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo) error {
	has, err := s.hasCacheTiles(l)
	if err != nil {
		return err
	}
	if !has {
		return notFound("tileset " + cacheSetID + " does not exist here: no cache holds these tiles")
	}
	sch, _, err := s.cacheScheme()
	if err != nil {
		return err
	}
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	doc := s.cacheTileset(l, sch, mt, r, false)
	links := doc["links"].([]link)
	pg := &page{Title: doc["title"].(string), Description: "The tiles of the map's cache, in its own tiling scheme.", Links: links}
	return writeDoc(w, r, mt, mediaJSON, doc, pg)
}
