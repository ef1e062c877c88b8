package wmts

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// WMTS 1.0.0 expresses a tile matrix's resolution as a scale denominator for a standardized
// pixel of 0.28 mm (OGC 07-057r7 §6.1): denominator = resolution · metres per unit / 0.00028.
// ArcGIS names the set of its cache's levels so computed "default028mm".
const (
	pixelSize = 0.00028
	// metresPerDegree is OGC's metres per degree of a geographic system: the WGS 84
	// equator's, 2π·6378137/360.
	metresPerDegree = 2 * math.Pi * 6378137 / 360

	defaultSet = "default028mm"
	googleSet  = "GoogleMapsCompatible"
	// googleWKSS is the well-known scale set GoogleMapsCompatible tile matrix sets name.
	googleWKSS = "urn:ogc:def:wkss:OGC:1.0:GoogleMapsCompatible"
	// googleScale0 and googleOrigin are GoogleMapsCompatible's level 0 scale denominator and
	// top-left corner (OGC 07-057r7 Annex E.4).
	googleScale0 = 559082264.0287178
	googleOrigin = 20037508.3427892
	// googleRes0 is GoogleMapsCompatible's level 0 resolution in metres per pixel.
	googleRes0 = 156543.0339280410
)

// tileMatrix is one level of a tile matrix set, as the capabilities publish it.
type tileMatrix struct {
	ID               string
	Level            int // the cache level whose tiles it serves
	ScaleDenominator float64
	TopLeft          [2]float64 // in the CRS's axis order
	TileWidth        int
	TileHeight       int
	MatrixWidth      int
	MatrixHeight     int
}

// tileMatrixSet is a named set of tile matrices.
type tileMatrixSet struct {
	ID, Title, Abstract string
	CRS                 string // urn:ogc:def:crs:EPSG::<code>
	WellKnownScaleSet   string
	Matrices            []tileMatrix
}

func (s *tileMatrixSet) matrix(id string) (tileMatrix, bool) {
	for _, m := range s.Matrices {
		if m.ID == id {
			return m, true
		}
	}
	return tileMatrix{}, false
}

// wmtsLayer is one WMTS layer: the fused cache of a service (LayerID -1), or the cache of one
// of its layers.
type wmtsLayer struct {
	ID, Title string
	LayerID   int
	Format    string // the MIME type of its tiles
	// WGS84 is the layer's extent in longitude/latitude (empty when the cache's system is
	// neither geographic nor Web Mercator); Native in the cache's system.
	WGS84, Native orb.Bound
}

// contents is what a service's capabilities describe: its cached layers and tile matrix sets.
type contents struct {
	Layers []wmtsLayer
	Sets   []tileMatrixSet
	// LatFirst is set when the cache's system lists latitude first (EPSG's geographic
	// systems): corners are written y x.
	LatFirst bool
}

func (c *contents) layer(id string) (wmtsLayer, bool) {
	for _, l := range c.Layers {
		if strings.EqualFold(l.ID, id) {
			return l, true
		}
	}
	return wmtsLayer{}, false
}

func (c *contents) set(id string) (*tileMatrixSet, bool) {
	for i := range c.Sets {
		if strings.EqualFold(c.Sets[i].ID, id) {
			return &c.Sets[i], true
		}
	}
	return nil, false
}

// srOf returns the system of a gisxml spatial reference (its latest WKID, or its WKT).
func srOf(v gisxml.SpatialReference) proj.SR {
	if v == nil {
		return proj.SR{}
	}
	f := v.SpatialReferencePart()
	var sr proj.SR
	if f.LatestWKID != nil && *f.LatestWKID != 0 {
		sr.WKID = *f.LatestWKID
	} else if f.WKID != nil {
		sr.WKID = *f.WKID
	}
	if sr.WKID == 0 && f.WKT != nil {
		sr.Text = *f.WKT
	}
	return sr
}

// mimeType names a CacheTileFormat as ArcGIS's WMTS does.
func mimeType(cacheFormat string) string {
	switch strings.ToUpper(cacheFormat) {
	case "JPEG", "JPG":
		return "image/jpeg"
	case "MIXED":
		return "image/jpgpng"
	}
	return "image/png"
}

// buildContents turns a map's cache description into WMTS layers and tile matrix sets: the
// default028mm set of every level of the cache's scheme, and GoogleMapsCompatible for the
// levels that are that well-known set's (a Web Mercator cache of 256×256 tiles on the
// standard origin and resolutions). A level's matrix is as wide and high as it takes to cover
// the scheme's extent from the origin: the whole world for Web Mercator and WGS 84 caches,
// as the cache itself counts them (tilecache.Scheme), else the map's full extent.
func buildContents(svc *catalog.Service, d *gisxml.CacheDescriptionInfo) (*contents, error) {
	m := svc.Maps[0]
	tci := d.TileCacheInfo
	if tci == nil {
		return nil, fmt.Errorf("wmts: cache of %s has no tiling scheme", svc.Name)
	}
	origin, ok := tci.TileOrigin.(*gisxml.PointN)
	if !ok || origin == nil {
		return nil, fmt.Errorf("wmts: cache of %s has no tile origin", svc.Name)
	}
	sr := srOf(tci.SpatialReference)
	scheme := tilecache.Scheme{Origin: orb.Point{origin.X, origin.Y}, TileCols: tci.TileCols, TileRows: tci.TileRows}
	for _, l := range tci.LODInfos {
		scheme.LODs = append(scheme.LODs, tilecache.LOD{LevelID: l.LevelID, Scale: l.Scale, Resolution: l.Resolution})
	}
	switch {
	case sr.IsWebMercator():
		scheme.Extent = tilecache.WebMercator().Extent
	case sr.WKID == proj.WGS84:
		scheme.Extent = tilecache.Geographic().Extent
	default:
		scheme.Extent = m.FullExtent
	}
	perUnit := 1.0
	if sr.IsGeographic() {
		perUnit = metresPerDegree
	}
	crs := "urn:ogc:def:crs:EPSG::" + strconv.Itoa(sr.LatestWKID())
	def := tileMatrixSet{ID: defaultSet, Title: "Default TileMatrix using 0.28mm", CRS: crs,
		Abstract: "The tile matrix set whose scale denominators are computed for the standardized 0.28 mm pixel of the OGC specification, one tile matrix per level of the cache."}
	var google []tileMatrix
	for _, l := range scheme.LODs {
		rows, cols, err := scheme.MatrixSize(l.LevelID)
		if err != nil {
			return nil, fmt.Errorf("wmts: cache of %s: %w", svc.Name, err)
		}
		topLeft := [2]float64{origin.X, origin.Y}
		if sr.IsGeographic() {
			// EPSG's geographic systems list latitude first.
			topLeft = [2]float64{origin.Y, origin.X}
		}
		def.Matrices = append(def.Matrices, tileMatrix{ID: strconv.Itoa(l.LevelID), Level: l.LevelID,
			ScaleDenominator: l.Resolution * perUnit / pixelSize, TopLeft: topLeft,
			TileWidth: tci.TileCols, TileHeight: tci.TileRows, MatrixWidth: cols, MatrixHeight: rows})
		if googleLevel(sr, scheme, l) {
			n := 1 << l.LevelID
			google = append(google, tileMatrix{ID: strconv.Itoa(l.LevelID), Level: l.LevelID,
				ScaleDenominator: googleScale0 / float64(n), TopLeft: [2]float64{-googleOrigin, googleOrigin},
				TileWidth: 256, TileHeight: 256, MatrixWidth: n, MatrixHeight: n})
		}
	}
	c := &contents{Sets: []tileMatrixSet{def}, LatFirst: sr.IsGeographic()}
	if len(google) > 0 {
		c.Sets = append(c.Sets, tileMatrixSet{ID: googleSet, Title: googleSet, CRS: "urn:ogc:def:crs:EPSG::3857", WellKnownScaleSet: googleWKSS,
			Abstract: "The levels of the cache that are those of the well-known scale set GoogleMapsCompatible.", Matrices: google})
	}
	var native, wgs84 orb.Bound
	if m.SR.Same(sr) {
		native = m.FullExtent
		wgs84 = toWGS84(sr, native)
	}
	format := "image/png"
	if d.TileImageInfo != nil {
		format = mimeType(d.TileImageInfo.CacheTileFormat)
	}
	if d.ServiceType == gisxml.SingleFusedMapCache {
		c.Layers = append(c.Layers, wmtsLayer{ID: svc.Name, Title: svc.Name, LayerID: -1, Format: format, WGS84: wgs84, Native: native})
		return c, nil
	}
	for _, lc := range d.LayerCacheInfos {
		if !lc.HasCache {
			continue
		}
		for _, l := range m.Layers {
			if l.ID == lc.LayerID {
				c.Layers = append(c.Layers, wmtsLayer{ID: l.Name, Title: l.Name, LayerID: l.ID, Format: format, WGS84: wgs84, Native: native})
			}
		}
	}
	return c, nil
}

// googleLevel reports whether a level of the scheme is level LevelID of GoogleMapsCompatible:
// Web Mercator, 256×256 tiles, the standard origin (to a centimetre; Esri writes it rounded)
// and resolution (to a part in a million).
func googleLevel(sr proj.SR, s tilecache.Scheme, l tilecache.LOD) bool {
	if !sr.IsWebMercator() || s.TileCols != 256 || s.TileRows != 256 || l.LevelID < 0 || l.LevelID > 30 {
		return false
	}
	if math.Abs(s.Origin[0]+googleOrigin) > 0.01 || math.Abs(s.Origin[1]-googleOrigin) > 0.01 {
		return false
	}
	want := googleRes0 / float64(int(1)<<l.LevelID)
	return math.Abs(l.Resolution-want) <= want*1e-6
}

// toWGS84 returns an extent in longitude/latitude, for geographic and Web Mercator systems
// (empty for others).
func toWGS84(sr proj.SR, b orb.Bound) orb.Bound {
	switch {
	case b == (orb.Bound{}):
		return orb.Bound{}
	case sr.WKID == proj.WGS84:
		return b
	case sr.IsWebMercator():
		const r = 6378137.0
		lon := func(x float64) float64 { return x / r * 180 / math.Pi }
		lat := func(y float64) float64 { return (2*math.Atan(math.Exp(y/r)) - math.Pi/2) * 180 / math.Pi }
		return orb.Bound{Min: orb.Point{lon(b.Min[0]), lat(b.Min[1])}, Max: orb.Point{lon(b.Max[0]), lat(b.Max[1])}}
	}
	return orb.Bound{}
}
