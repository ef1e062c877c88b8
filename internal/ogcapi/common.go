package ogcapi

import (
	"net/http"
	"strconv"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// Link relations of the OGC API standards that are not IANA's.
const (
	relConformance   = "http://www.opengis.net/def/rel/ogc/1.0/conformance"
	relData          = "http://www.opengis.net/def/rel/ogc/1.0/data"
	relMap           = "http://www.opengis.net/def/rel/ogc/1.0/map"
	relTilesetsMap   = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-map"
	relTilingSchemes = "http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes"
	relTilingScheme  = "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme"
)

// conformanceClasses are the classes every service's API declares (docs/ogcapi.md).
var conformanceClasses = []string{
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/landing-page",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/json",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/html",
	"http://www.opengis.net/spec/ogcapi-common-1/1.0/conf/oas30",
	"http://www.opengis.net/spec/ogcapi-common-2/1.0/conf/collections",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html",
	"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
	"http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/dataset-map",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/collection-map",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/spatial-subsetting",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/scaling",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/crs",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/png",
	"http://www.opengis.net/spec/ogcapi-maps-1/1.0/conf/jpeg",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilesets-list",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/dataset-tilesets",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/png",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/jpeg",
	"http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/oas30",
}

// link is a link of a resource, as the standards write them.
type link struct {
	Href      string `json:"href"`
	Rel       string `json:"rel"`
	Type      string `json:"type,omitempty"`
	Title     string `json:"title,omitempty"`
	Templated bool   `json:"templated,omitempty"`
}

// selfLinks are a resource's self link in the media type answered and its alternate in the
// other (JSON and HTML).
func selfLinks(href, answered, jsonType string) []link {
	if answered == mediaHTML {
		return []link{{Href: href + "?f=html", Rel: "self", Type: mediaHTML, Title: "this document"},
			{Href: href + "?f=json", Rel: "alternate", Type: jsonType, Title: "this document as JSON"}}
	}
	return []link{{Href: href + "?f=json", Rel: "self", Type: jsonType, Title: "this document"},
		{Href: href + "?f=html", Rel: "alternate", Type: mediaHTML, Title: "this document as HTML"}}
}

// writeDoc answers a metadata document: v as JSON of type jsonType, or pg as HTML.
func writeDoc(w http.ResponseWriter, r *http.Request, mt, jsonType string, v any, pg *page) error {
	if mt == mediaHTML {
		b, err := pg.render()
		if err != nil {
			return err
		}
		writeBody(w, r, http.StatusOK, "text/html; charset=utf-8", "public, max-age=60", b)
		return nil
	}
	b, err := marshal(v)
	if err != nil {
		return err
	}
	writeBody(w, r, http.StatusOK, jsonType, "public, max-age=60", b)
	return nil
}

// root answers /ogc: the services' APIs, those the request may see.
func (h *Handler) root(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	href := h.p.PublicURL + Prefix
	links := selfLinks(href, mt, mediaJSON)
	pg := &page{Title: "OGC APIs", Description: "One OGC API (Features, Maps, Tiles) per map service."}
	for _, svc := range h.p.Server.Services() {
		if !visible(r.Context(), svc.Name) {
			continue
		}
		l := link{Href: href + "/" + svc.Name, Rel: "child", Type: mediaJSON, Title: title(svc.Def.DocumentInfo.Title, svc.Name)}
		links = append(links, l)
		pg.Rows = append(pg.Rows, []cell{{Text: svc.Name, Href: l.Href + "?f=html"}, {Text: l.Title}})
	}
	pg.Head = []string{"service", "title"}
	pg.Links = links
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"title": pg.Title, "description": pg.Description, "links": links}, pg)
}

func title(t, name string) string {
	if t != "" {
		return t
	}
	return name
}

// landing answers a service's landing page.
func (s *service) landing(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	links := append(selfLinks(s.base, mt, mediaJSON),
		link{Href: s.base + "/api", Rel: "service-desc", Type: mediaOpenAPI, Title: "the API definition"},
		link{Href: s.base + "/conformance", Rel: "conformance", Type: mediaJSON, Title: "conformance classes"},
		link{Href: s.base + "/conformance", Rel: relConformance, Type: mediaJSON, Title: "conformance classes"},
		link{Href: s.base + "/collections", Rel: "data", Type: mediaJSON, Title: "the collections: the map's layers"},
		link{Href: s.base + "/collections", Rel: relData, Type: mediaJSON, Title: "the collections: the map's layers"},
		link{Href: s.base + "/map", Rel: relMap, Type: mediaPNG, Title: "the map"},
		link{Href: s.base + "/map/tiles", Rel: relTilesetsMap, Type: mediaJSON, Title: "the map's tilesets"},
		link{Href: s.base + "/tileMatrixSets", Rel: relTilingSchemes, Type: mediaJSON, Title: "the tile matrix sets"})
	if s.h.p.VectorTiles != nil {
		links = append(links, link{Href: s.base + "/tiles", Rel: relTilesetsVector, Type: mediaJSON, Title: "the map's vector tilesets"})
	}
	d := s.svc.Def
	t := title(d.DocumentInfo.Title, s.svc.Name)
	pg := &page{Title: t, Description: d.Description, Links: links}
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"title": t, "description": d.Description, "attribution": d.CopyrightText, "links": links}, pg)
}

// conformance answers the conformance declaration.
func (s *service) conformance(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	classes := conformanceClasses
	if s.h.p.VectorTiles != nil {
		classes = append(classes[:len(classes):len(classes)], "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt")
	}
	pg := &page{Title: "Conformance", Links: selfLinks(s.base+"/conformance", mt, mediaJSON), Head: []string{"conformance class"}}
	for _, c := range classes {
		pg.Rows = append(pg.Rows, []cell{{Text: c}})
	}
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"conformsTo": classes}, pg)
}

// collectionDoc is a collection's description.
type collectionDoc struct {
	ID          string   `json:"id"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Extent      *extent  `json:"extent,omitempty"`
	ItemType    string   `json:"itemType,omitempty"`
	CRS         []string `json:"crs"`
	StorageCRS  string   `json:"storageCrs,omitempty"`
	Links       []link   `json:"links"`
}

type extent struct {
	Spatial struct {
		BBox [][4]float64 `json:"bbox"`
		CRS  string       `json:"crs"`
	} `json:"spatial"`
}

// collections answers /collections: one collection per layer of the map.
func (s *service) collections(w http.ResponseWriter, r *http.Request) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	info, err := s.serverInfo()
	if err != nil {
		return err
	}
	docs := make([]collectionDoc, 0, len(info.MapLayerInfos))
	pg := &page{Title: "Collections", Description: "The layers of the map " + info.Name + ".", Head: []string{"id", "title", "type"}}
	for _, l := range info.MapLayerInfos {
		d := s.collectionDoc(l, mediaJSON)
		docs = append(docs, d)
		pg.Rows = append(pg.Rows, []cell{{Text: d.ID, Href: s.base + "/collections/" + d.ID + "?f=html"}, {Text: d.Title}, {Text: l.LayerType}})
	}
	links := selfLinks(s.base+"/collections", mt, mediaJSON)
	pg.Links = links
	return writeDoc(w, r, mt, mediaJSON, map[string]any{"links": links, "collections": docs}, pg)
}

// collection answers /collections/{id}.
func (s *service) collection(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo) error {
	mt, err := answerType(r, mediaJSON, mediaHTML)
	if err != nil {
		return err
	}
	d := s.collectionDoc(l, mt)
	pg := &page{Title: d.Title, Description: d.Description, Links: d.Links, Head: []string{"", ""}}
	pg.Rows = append(pg.Rows, []cell{{Text: "id"}, {Text: d.ID}}, []cell{{Text: "type"}, {Text: l.LayerType}})
	if d.Extent != nil {
		b := d.Extent.Spatial.BBox[0]
		pg.Rows = append(pg.Rows, []cell{{Text: "extent (CRS84)"}, {Text: strconv.FormatFloat(b[0], 'f', -1, 64) + ", " + strconv.FormatFloat(b[1], 'f', -1, 64) + ", " +
			strconv.FormatFloat(b[2], 'f', -1, 64) + ", " + strconv.FormatFloat(b[3], 'f', -1, 64)}})
	}
	return writeDoc(w, r, mt, mediaJSON, d, pg)
}

// collectionDoc describes layer l; its self link is of media type mt.
func (s *service) collectionDoc(l *gisxml.MapLayerInfo, mt string) collectionDoc {
	id := strconv.Itoa(l.LayerID)
	href := s.base + "/collections/" + id
	d := collectionDoc{ID: id, Title: l.Name, Description: l.Description, StorageCRS: s.storageCRS()}
	for _, c := range s.systems() {
		d.CRS = append(d.CRS, c.uri)
	}
	if b, ok := s.crs84Extent(l.Extent); ok {
		d.Extent = &extent{}
		d.Extent.Spatial.BBox = [][4]float64{{b.Min[0], b.Min[1], b.Max[0], b.Max[1]}}
		d.Extent.Spatial.CRS = crs84
	}
	d.Links = selfLinks(href, mt, mediaJSON)
	if l.IsFeatureLayer {
		d.ItemType = "feature"
		d.Links = append(d.Links, link{Href: href + "/items", Rel: "items", Type: mediaGeoJSON, Title: "the features"},
			link{Href: href + "/items?f=html", Rel: "items", Type: mediaHTML, Title: "the features as HTML"})
	}
	d.Links = append(d.Links, link{Href: href + "/map", Rel: relMap, Type: mediaPNG, Title: "a map of the layer"},
		link{Href: href + "/map", Rel: relMap, Type: mediaJPEG, Title: "a map of the layer"},
		link{Href: href + "/map/tiles", Rel: relTilesetsMap, Type: mediaJSON, Title: "the layer's map tilesets"})
	return d
}

// crs84Extent is an envelope of the map's system in CRS84.
func (s *service) crs84Extent(e gisxml.Envelope) (orb.Bound, bool) {
	env, ok := e.(*gisxml.EnvelopeN)
	if !ok || env == nil || !(env.XMin <= env.XMax && env.YMin <= env.YMax) {
		return orb.Bound{}, false
	}
	b := orb.Bound{Min: orb.Point{env.XMin, env.YMin}, Max: orb.Point{env.XMax, env.YMax}}
	m := s.svc.DefaultMap()
	from := m.SR
	if sr := mapview.SR(env.SpatialReference); !sr.IsZero() {
		from = sr
	}
	t, err := m.Systems.Transformer(from, proj.SR{WKID: proj.WGS84})
	if err != nil {
		return orb.Bound{}, false
	}
	out, err := t.Bound(b)
	if err != nil {
		return orb.Bound{}, false
	}
	return out, true
}
