package ogcapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// mediaMVT is the media type of Mapbox vector tiles.
const mediaMVT = "application/vnd.mapbox-vector-tile"

// relTilesetsVector links a dataset's vector tilesets.
const relTilesetsVector = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector"

// vectorResource answers /tiles and what is under it: the dataset's vector tilesets, one in
// WebMercatorQuad, its tiles built on demand by Params.VectorTiles.
func (s *service) vectorResource(w http.ResponseWriter, r *http.Request, segs []string) error {
	switch len(segs) {
	case 0:
		return s.vectorTilesets(w, r)
	case 1:
		if segs[0] != wmqID {
			return notFound("tileset " + quoted(segs[0]) + " does not exist: " + wmqID)
		}
		return s.vectorTileset(w, r)
	case 4:
		if segs[0] != wmqID {
			return notFound("tileset " + quoted(segs[0]) + " does not exist: " + wmqID)
		}
		return s.vectorTile(w, r, segs[1], segs[2], segs[3])
	}
	return notFound("no such resource")
}

func (s *service) vectorTitle() string { return s.svc.Name + " vector tiles in " + wmqID }

func (s *service) vectorTilesets(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	href := s.base + "/tiles/" + wmqID
	links := selfLinks(s.base+"/tiles", mt, mediaJSON)
	set := map[string]any{"title": s.vectorTitle(), "dataType": "vector", "crs": epsgURI(proj.WebMercator), "tileMatrixSetURI": wmqURI,
		"links": []link{{Href: href, Rel: "self", Type: mediaJSON, Title: "the tileset"},
			{Href: s.base + "/tileMatrixSets/" + wmqID, Rel: relTilingScheme, Type: mediaJSON, Title: wmqID}}}
	pg := &page{Title: "Vector tilesets", Links: links, Head: []string{"tileset", "tile matrix set"},
		Rows: [][]cell{{{Text: s.vectorTitle(), Href: href + "?f=html"}, {Text: wmqURI}}}}
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"tilesets": []any{set}, "links": links}, pg)
}

func (s *service) vectorTileset(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	href := s.base + "/tiles/" + wmqID
	tmpl := href + "/{tileMatrix}/{tileRow}/{tileCol}?f=mvt"
	if t := r.URL.Query().Get("token"); t != "" {
		tmpl += "&token=" + url.QueryEscape(t)
	}
	links := append(selfLinks(href, mt, mediaJSON),
		link{Href: s.base + "/tileMatrixSets/" + wmqID, Rel: relTilingScheme, Type: mediaJSON, Title: wmqID},
		link{Href: tmpl, Rel: "item", Type: mediaMVT, Title: "Mapbox vector tiles", Templated: true})
	doc := map[string]any{"title": s.vectorTitle(), "dataType": "vector", "crs": epsgURI(proj.WebMercator), "tileMatrixSetURI": wmqURI, "links": links}
	if lim, ok := s.limitsOf(s.svc.DefaultMap().FullExtent); ok {
		doc["tileMatrixSetLimits"] = lim[:min(len(lim), s.h.p.VectorTiles.MaxZoom()+1)]
	}
	info, err := s.serverInfo()
	if err != nil {
		return err
	}
	var layers []map[string]any
	for _, l := range info.MapLayerInfos {
		if l.IsFeatureLayer {
			layers = append(layers, map[string]any{"id": l.Name, "title": l.Name, "dataType": "vector"})
		}
	}
	doc["layers"] = layers
	pg := &page{Title: s.vectorTitle(), Description: "Tiles of " + wmqURI + ": " + tmpl, Links: links}
	return writeDoc(w, r, mt, mediaJSON, doc, pg)
}

// vectorTile answers /tiles/WebMercatorQuad/{tileMatrix}/{tileRow}/{tileCol}: the tile
// Params.VectorTiles builds, gzip-encoded when it is (Content-Encoding says so). Levels past
// its last zoom are 404: clients overzoom the last.
func (s *service) vectorTile(w http.ResponseWriter, r *http.Request, zs, ys, xs string) error {
	vt := s.h.p.VectorTiles
	z, okz := tileIndex(zs)
	y, oky := tileIndex(ys)
	x, okx := tileIndex(xs)
	if !okz || !oky || !okx {
		return invalid("tile", "tileMatrix, tileRow and tileCol must be whole numbers written in digits alone")
	}
	if z > vt.MaxZoom() || z > wmqMaxLevel || y >= 1<<z || x >= 1<<z {
		return notFound("tile " + zs + "/" + ys + "/" + xs + " is outside " + wmqID + " (levels 0 to " + strconv.Itoa(vt.MaxZoom()) + ")")
	}
	p, err := params(r, nil)
	if err != nil {
		return err
	}
	fValues := map[string]bool{"": true, "mvt": true}
	if !fValues[p["f"]] {
		return invalid("f", quoted(p["f"])+" is not offered here: mvt")
	}
	ctx := s.ctx
	if s.h.p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.h.p.Timeout)
		defer cancel()
	}
	var res *mvt.Result
	build := func() { res, err = vt.WebMercatorTile(ctx, s.svc.Name, s.svc.DefaultMap().Name, z, x, y) }
	if tb := s.h.p.TileBuild; tb != nil {
		tb(build)
	} else {
		build()
	}
	if err != nil {
		return err
	}
	if res.Gzipped {
		w.Header().Set("Content-Encoding", "gzip")
	}
	writeBody(w, r, http.StatusOK, mediaMVT, "public, max-age=60", res.Data)
	return nil
}
