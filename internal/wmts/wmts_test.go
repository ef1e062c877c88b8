package wmts_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/wmts"
)

// fakeOps answers GetCacheDescriptionInfo with a scheme and GetLayerTile with the tile's
// coordinates, and counts the calls.
type fakeOps struct {
	svc    *catalog.Service
	scheme tilecache.Scheme
	calls  map[string]int
	// version, when set, is in every tile's bytes: a re-seeded cache.
	version string
}

func (f *fakeOps) Service(name string) (*catalog.Service, bool) {
	return f.svc, strings.EqualFold(name, f.svc.Name)
}

func (f *fakeOps) GetCacheDescriptionInfo(_ context.Context, _ *mapserver.Call, _ *gisxml.GetCacheDescriptionInfo) (*gisxml.GetCacheDescriptionInfoResponse, error) {
	f.calls["GetCacheDescriptionInfo"]++
	wkid := f.scheme.SpatialReference.WKID
	tci := &gisxml.TileCacheInfo{SpatialReference: &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: &wkid}},
		TileOrigin: &gisxml.PointN{X: f.scheme.Origin[0], Y: f.scheme.Origin[1]}, TileCols: 256, TileRows: 256, DPI: 96}
	for _, l := range f.scheme.LODs {
		tci.LODInfos = append(tci.LODInfos, &gisxml.LODInfo{LevelID: l.LevelID, Scale: l.Scale, Resolution: l.Resolution})
	}
	return &gisxml.GetCacheDescriptionInfoResponse{Result: &gisxml.CacheDescriptionInfo{TileCacheInfo: tci,
		TileImageInfo: &gisxml.TileImageInfo{CacheTileFormat: "PNG"}, ServiceType: gisxml.IndividualLayerCaches,
		LayerCacheInfos: gisxml.ArrayOfLayerCacheInfo{{LayerID: 0, HasCache: false}, {LayerID: 1, HasCache: true}}}}, nil
}

func (f *fakeOps) GetLayerTile(_ context.Context, _ *mapserver.Call, r *gisxml.GetLayerTile) (*gisxml.GetLayerTileResponse, error) {
	f.calls["GetLayerTile"]++
	return &gisxml.GetLayerTileResponse{Result: fmt.Appendf(nil, "layer %d tile %d/%d/%d%s", r.LayerID, r.Level, r.Row, r.Column, f.version)}, nil
}

func (f *fakeOps) GetMapTile(_ context.Context, _ *mapserver.Call, _ *gisxml.GetMapTile) (*gisxml.GetMapTileResponse, error) {
	f.calls["GetMapTile"]++
	return nil, fmt.Errorf("unexpected GetMapTile")
}

func geographicFixture() (*fakeOps, *wmts.Handler) {
	scheme := tilecache.Geographic()
	scheme.LODs = scheme.LODs[:4]
	m := &catalog.Map{Name: "Layers", SR: proj.SR{WKID: 4326}, FullExtent: orb.Bound{Min: orb.Point{-170, -50}, Max: orb.Point{160, 80}},
		Layers: []*catalog.Layer{{ID: 0, Name: "Country points"}, {ID: 1, Name: "Countries"}}}
	ops := &fakeOps{svc: &catalog.Service{Name: "geo", Maps: []*catalog.Map{m}}, scheme: scheme, calls: map[string]int{}}
	return ops, wmts.New(wmts.Params{Services: ops, Caches: ops, PublicURL: "http://farm.test"})
}

func get(h http.HandlerFunc, target string, values ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(values); i += 2 {
		req.SetPathValue(values[i], values[i+1])
	}
	rec := httptest.NewRecorder()
	h(rec, req)
	return rec
}

// A geographic cache of individual layer caches: one WMTS layer per cached layer, the
// default028mm matrices with scale denominators in degrees (OGC's 111319.49 m per degree),
// top-left corners latitude first as EPSG:4326 orders its axes, two columns by one row at
// level 0, and no GoogleMapsCompatible set. GetTile reaches the layer's cache, and the
// contents are reused between requests.
func TestGeographicLayerCaches(t *testing.T) {
	ops, h := geographicFixture()
	rec := get(h.ServeREST, "/", "service", "geo", "path", "1.0.0/WMTSCapabilities.xml")
	if rec.Code != 200 {
		t.Fatalf("capabilities: %d %s", rec.Code, rec.Body)
	}
	var caps struct {
		Layers []struct {
			Identifier string `xml:"Identifier"`
			WGS84      struct {
				Lower string `xml:"LowerCorner"`
			} `xml:"WGS84BoundingBox"`
			BBox struct {
				Lower string `xml:"LowerCorner"`
			} `xml:"BoundingBox"`
		} `xml:"Contents>Layer"`
		Sets []struct {
			Identifier string `xml:"Identifier"`
			CRS        string `xml:"SupportedCRS"`
			Matrices   []struct {
				Scale   float64 `xml:"ScaleDenominator"`
				TopLeft string  `xml:"TopLeftCorner"`
				W       int     `xml:"MatrixWidth"`
				H       int     `xml:"MatrixHeight"`
			} `xml:"TileMatrix"`
		} `xml:"Contents>TileMatrixSet"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &caps); err != nil {
		t.Fatal(err)
	}
	if len(caps.Layers) != 1 || caps.Layers[0].Identifier != "Countries" || caps.Layers[0].WGS84.Lower != "-170 -50" || caps.Layers[0].BBox.Lower != "-50 -170" {
		t.Errorf("layers %+v", caps.Layers)
	}
	if len(caps.Sets) != 1 || caps.Sets[0].Identifier != "default028mm" || caps.Sets[0].CRS != "urn:ogc:def:crs:EPSG::4326" || len(caps.Sets[0].Matrices) != 4 {
		t.Fatalf("sets %+v", caps.Sets)
	}
	for z, m := range caps.Sets[0].Matrices {
		res := ops.scheme.LODs[z].Resolution
		if want := res * 2 * math.Pi * 6378137 / 360 / 0.00028; math.Abs(m.Scale-want) > want*1e-12 || m.TopLeft != "90 -180" || m.W != 2<<z || m.H != 1<<z {
			t.Errorf("matrix %d: %+v (resolution %g°)", z, m, res)
		}
	}
	rec = get(h.ServeREST, "/", "service", "geo", "path", "tile/1.0.0/Countries/default/default028mm/3/7/15.png")
	if rec.Code != 200 || rec.Body.String() != "layer 1 tile 3/7/15" {
		t.Errorf("GetTile: %d %q", rec.Code, rec.Body)
	}
	rec = get(h.ServeREST, "/", "service", "geo", "path", "tile/1.0.0/Countries/default/default028mm/3/8/0")
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `exceptionCode="TileOutOfRange"`) {
		t.Errorf("row 8 of an 8-row matrix: %d %s", rec.Code, rec.Body)
	}
	if ops.calls["GetCacheDescriptionInfo"] != 1 {
		t.Errorf("GetCacheDescriptionInfo called %d times for three requests", ops.calls["GetCacheDescriptionInfo"])
	}
}

// ETags: a matching If-None-Match (in a list, weak or not, or *) gets 304 without a body; a
// different one the tile.
func TestConditionalGetTile(t *testing.T) {
	_, h := geographicFixture()
	path := []string{"service", "geo", "path", "tile/1.0.0/Countries/default/default028mm/0/0/1"}
	first := get(h.ServeREST, "/", path...)
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" || first.Header().Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("%d, ETag %q, Cache-Control %q", first.Code, etag, first.Header().Get("Cache-Control"))
	}
	for _, c := range []struct {
		inm  string
		code int
	}{{etag, 304}, {`"x", W/` + etag, 304}, {"*", 304}, {`"x"`, 200}, {`W/"x", "y"`, 200}} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("If-None-Match", c.inm)
		for i := 0; i < len(path); i += 2 {
			req.SetPathValue(path[i], path[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeREST(rec, req)
		if rec.Code != c.code || (c.code == 304) != (rec.Body.Len() == 0) {
			t.Errorf("If-None-Match %s: %d, %d bytes; want %d", c.inm, rec.Code, rec.Body.Len(), c.code)
		}
	}
}

// A tile's ETag is the hash of the bytes served, kept between requests: when the tile's bytes
// change (the cache re-seeded), so do its ETag and length, and the old ETag no longer gets 304.
func TestETagFollowsTheBytes(t *testing.T) {
	ops, h := geographicFixture()
	path := []string{"service", "geo", "path", "tile/1.0.0/Countries/default/default028mm/0/0/1"}
	etagOf := func(b []byte) string {
		sum := sha256.Sum256(b)
		return `"` + hex.EncodeToString(sum[:16]) + `"`
	}
	for _, version := range []string{"", "", " v2", " v2", " version 3"} {
		ops.version = version
		rec := get(h.ServeREST, "/", path...)
		body := rec.Body.Bytes()
		if want := "layer 1 tile 0/0/1" + version; rec.Code != 200 || string(body) != want {
			t.Fatalf("version %q: %d %q, want %q", version, rec.Code, body, want)
		}
		if got := rec.Header().Get("ETag"); got != etagOf(body) || rec.Header().Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("version %q: ETag %s, Content-Length %s; want %s, %d", version, got, rec.Header().Get("Content-Length"), etagOf(body), len(body))
		}
	}
}

// A Web Mercator cache (WKID 102100) on the standard origin and resolutions gets
// GoogleMapsCompatible beside default028mm, for the levels that are the well-known set's only
// (here level 3 has another resolution), each set in a TileMatrixSetLink of its own.
func TestGoogleMapsCompatibleLevels(t *testing.T) {
	scheme := tilecache.WebMercator()
	scheme.SpatialReference.WKID = 102100
	scheme.LODs = scheme.LODs[:6]
	scheme.LODs[3].Resolution *= 1.001
	m := &catalog.Map{Name: "Layers", SR: proj.SR{WKID: 3857}, Layers: []*catalog.Layer{{ID: 1, Name: "Countries"}}}
	ops := &fakeOps{svc: &catalog.Service{Name: "wm", Maps: []*catalog.Map{m}}, scheme: scheme, calls: map[string]int{}}
	h := wmts.New(wmts.Params{Services: ops, Caches: ops, PublicURL: "http://farm.test"})
	rec := get(h.ServeKVP, "/?service=WMTS&request=GetCapabilities", "service", "wm")
	var caps struct {
		Links []struct {
			Sets []string `xml:"TileMatrixSet"`
		} `xml:"Contents>Layer>TileMatrixSetLink"`
		Sets []struct {
			Identifier string `xml:"Identifier"`
			CRS        string `xml:"SupportedCRS"`
			Matrices   []struct {
				ID      string `xml:"Identifier"`
				TopLeft string `xml:"TopLeftCorner"`
			} `xml:"TileMatrix"`
		} `xml:"Contents>TileMatrixSet"`
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &caps); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if fmt.Sprint(caps.Links) != "[{[default028mm]} {[GoogleMapsCompatible]}]" || len(caps.Sets) != 2 {
		t.Fatalf("links %v, %d sets", caps.Links, len(caps.Sets))
	}
	var ids []string
	for _, m := range caps.Sets[1].Matrices {
		ids = append(ids, m.ID)
	}
	if caps.Sets[0].CRS != "urn:ogc:def:crs:EPSG::3857" || len(caps.Sets[0].Matrices) != 6 || fmt.Sprint(ids) != "[0 1 2 4 5]" ||
		caps.Sets[1].Matrices[0].TopLeft != "-20037508.3427892 20037508.3427892" || caps.Sets[0].Matrices[0].TopLeft != "-20037508.342787 20037508.342787" {
		t.Errorf("sets %+v", caps.Sets)
	}
}
