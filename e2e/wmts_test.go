package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// wmtsCapabilities is what the tests read of a WMTS capabilities document.
type wmtsCapabilities struct {
	Layers []struct {
		Identifier string   `xml:"Identifier"`
		Formats    []string `xml:"Format"`
		Links      []struct {
			Set []string `xml:"TileMatrixSet"`
		} `xml:"TileMatrixSetLink"`
		ResourceURL struct {
			Template string `xml:"template,attr"`
		} `xml:"ResourceURL"`
	} `xml:"Contents>Layer"`
	Sets []struct {
		Identifier        string `xml:"Identifier"`
		SupportedCRS      string `xml:"SupportedCRS"`
		WellKnownScaleSet string `xml:"WellKnownScaleSet"`
		Matrices          []struct {
			Identifier       string  `xml:"Identifier"`
			ScaleDenominator float64 `xml:"ScaleDenominator"`
			TopLeftCorner    string  `xml:"TopLeftCorner"`
			TileWidth        int     `xml:"TileWidth"`
			TileHeight       int     `xml:"TileHeight"`
			MatrixWidth      int     `xml:"MatrixWidth"`
			MatrixHeight     int     `xml:"MatrixHeight"`
		} `xml:"TileMatrix"`
	} `xml:"Contents>TileMatrixSet"`
}

// owsException returns the exception code and locator of an OWS exception report.
func owsException(t *testing.T, body []byte) (code, locator string) {
	t.Helper()
	var r struct {
		XMLName   xml.Name `xml:"http://www.opengis.net/ows/1.1 ExceptionReport"`
		Exception struct {
			Code    string `xml:"exceptionCode,attr"`
			Locator string `xml:"locator,attr"`
		} `xml:"Exception"`
	}
	if err := xml.Unmarshal(body, &r); err != nil {
		t.Fatalf("not an OWS exception report: %v: %.300s", err, body)
	}
	return r.Exception.Code, r.Exception.Locator
}

// TestRESTTilesAndWMTS seeds the world map (one fused Web Mercator cache) and world_layers
// (a cache per layer) and reads their tiles through the REST tile resource and WMTS 1.0.0:
// the capabilities describe the stored tiling scheme level by level, every encoding answers
// the bytes MinIO holds, conditional requests get 304, bad requests get ArcGIS errors and OWS
// exception reports, and GDAL's WMTS driver, opened on the capabilities, reads a tile whose
// pixels are the stored tile's.
func TestRESTTilesAndWMTS(t *testing.T) {
	f := startFarm(t, cacheServices(t))
	base := strings.TrimSuffix(f.url, "/")
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{0, 1, 2, 3, 4}, SkipEmpty: &no})
	seedAndWait(t, base, seed.Request{Service: "world_layers", Extent: seedAOI, Levels: []int{0, 1, 2}, SkipEmpty: &no})
	ctx := context.Background()
	info, _, err := tilecache.ReadMetadata(ctx, f.store, seed.CacheRoot("world", "Layers"))
	if err != nil {
		t.Fatal(err)
	}
	fused, _, err := tilecache.Open(ctx, f.store, seed.CacheRoot("world", "Layers"), tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	const level, row, col = 4, 5, 8 // in the seeded area; 4/0/0 is not
	want, err := fused.ReadTile(ctx, tilecache.Tile{Level: level, Row: row, Col: col})
	if err != nil {
		t.Fatal(err)
	}
	svc := base + "/arcgis/rest/services/world/MapServer"

	t.Run("REST tile", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, fmt.Sprintf("%s/tile/%d/%d/%d", svc, level, row, col), "")
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.Header.Get("Content-Type") != "image/png" || etag == "" ||
			!strings.Contains(resp.Header.Get("Cache-Control"), "max-age=") {
			t.Fatalf("tile: %s %s, ETag %q, Cache-Control %q, %d bytes (MinIO holds %d)", resp.Status, resp.Header.Get("Content-Type"),
				etag, resp.Header.Get("Cache-Control"), len(body), len(want))
		}
		resp, body = do(t, http.MethodGet, fmt.Sprintf("%s/tile/%d/%d/%d", svc, level, row, col), "", "If-None-Match", `"other", `+etag)
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match: %s, %d bytes, ETag %q", resp.Status, len(body), resp.Header.Get("ETag"))
		}
		resp, body = do(t, http.MethodHead, fmt.Sprintf("%s/tile/%d/%d/%d", svc, level, row, col), "")
		if resp.StatusCode != 200 || len(body) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(want)) || resp.Header.Get("ETag") != etag {
			t.Errorf("HEAD: %s, %d bytes, Content-Length %s", resp.Status, len(body), resp.Header.Get("Content-Length"))
		}
		// The neighbour differs (another ETag), and a trailing query (ArcGIS JS sends
		// blankTile=false) changes nothing.
		resp, body = do(t, http.MethodGet, fmt.Sprintf("%s/tile/%d/%d/%d?blankTile=false", svc, level, row, col+1), "")
		if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
			t.Errorf("neighbour: %s, ETag %q", resp.Status, resp.Header.Get("ETag"))
		}
		if _, err := png.Decode(bytes.NewReader(body)); err != nil {
			t.Errorf("neighbour: %v", err)
		}
		for _, c := range []struct {
			path   string
			status int
		}{
			{"/tile/4/0/0", 404},  // not seeded
			{"/tile/8/0/0", 404},  // no level 8
			{"/tile/2/4/0", 404},  // outside level 2's 4×4 matrix
			{"/tile/x/0/0", 400},  // not a number
			{"/tile/-1/0/0", 400}, // nor this
		} {
			resp, body := do(t, http.MethodGet, svc+c.path, "")
			var e struct {
				Error struct {
					Code    int      `json:"code"`
					Message string   `json:"message"`
					Details []string `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != c.status || e.Error.Code != c.status || e.Error.Message == "" {
				t.Errorf("%s: %s %s, want %d and an ArcGIS error", c.path, resp.Status, body, c.status)
			}
		}
		if resp, _ := do(t, http.MethodGet, base+"/arcgis/rest/services/nosuch/MapServer/tile/0/0/0", ""); resp.StatusCode != 404 {
			t.Errorf("unknown service: %s", resp.Status)
		}
	})

	var caps wmtsCapabilities
	t.Run("capabilities", func(t *testing.T) {
		resp, body := do(t, http.MethodGet, svc+"/WMTS/1.0.0/WMTSCapabilities.xml", "")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/xml") {
			t.Fatalf("capabilities: %s %s", resp.Status, body)
		}
		if err := xml.Unmarshal(body, &caps); err != nil {
			t.Fatal(err)
		}
		_, kvp := do(t, http.MethodGet, svc+"/WMTS?service=WMTS&request=GetCapabilities&version=1.0.0", "")
		if !bytes.Equal(kvp, body) {
			t.Errorf("KVP GetCapabilities differs from WMTSCapabilities.xml")
		}
		if len(caps.Layers) != 1 || caps.Layers[0].Identifier != "world" || fmt.Sprint(caps.Layers[0].Formats) != "[image/png]" ||
			fmt.Sprint(caps.Layers[0].Links) != "[{[default028mm]} {[GoogleMapsCompatible]}]" ||
			caps.Layers[0].ResourceURL.Template != svc+"/WMTS/tile/1.0.0/world/{Style}/{TileMatrixSet}/{TileMatrix}/{TileRow}/{TileCol}" {
			t.Fatalf("layers: %+v", caps.Layers)
		}
		if len(caps.Sets) != 2 {
			t.Fatalf("%d tile matrix sets", len(caps.Sets))
		}
		// default028mm: one matrix per stored LOD, scale denominator = resolution / 0.28 mm.
		def := caps.Sets[0]
		if def.Identifier != "default028mm" || def.SupportedCRS != "urn:ogc:def:crs:EPSG::3857" || len(def.Matrices) != len(info.Scheme.LODs) {
			t.Fatalf("default028mm: %s %s, %d matrices for %d LODs", def.Identifier, def.SupportedCRS, len(def.Matrices), len(info.Scheme.LODs))
		}
		for i, m := range def.Matrices {
			lod := info.Scheme.LODs[i]
			rows, cols, err := info.Scheme.MatrixSize(lod.LevelID)
			if err != nil {
				t.Fatal(err)
			}
			var x, y float64
			fmt.Sscan(m.TopLeftCorner, &x, &y)
			if m.Identifier != strconv.Itoa(lod.LevelID) || math.Abs(m.ScaleDenominator-lod.Resolution/0.00028) > 1e-6*m.ScaleDenominator ||
				x != info.Scheme.Origin[0] || y != info.Scheme.Origin[1] || m.TileWidth != 256 || m.TileHeight != 256 ||
				m.MatrixWidth != cols || m.MatrixHeight != rows || cols != 1<<lod.LevelID {
				t.Errorf("default028mm matrix %d: %+v; LOD %+v, matrix %d×%d", i, m, lod, cols, rows)
			}
		}
		g := caps.Sets[1]
		if g.Identifier != "GoogleMapsCompatible" || g.WellKnownScaleSet != "urn:ogc:def:wkss:OGC:1.0:GoogleMapsCompatible" || len(g.Matrices) != len(info.Scheme.LODs) {
			t.Fatalf("GoogleMapsCompatible: %+v", g)
		}
		for z, m := range g.Matrices {
			if m.Identifier != strconv.Itoa(z) || math.Abs(m.ScaleDenominator-559082264.0287178/float64(int(1)<<z)) > 1e-6 ||
				m.TopLeftCorner != "-20037508.3427892 20037508.3427892" || m.MatrixWidth != 1<<z || m.MatrixHeight != 1<<z {
				t.Errorf("GoogleMapsCompatible matrix %d: %+v", z, m)
			}
		}
	})

	t.Run("GetTile", func(t *testing.T) {
		for _, url := range []string{
			fmt.Sprintf("%s/WMTS/tile/1.0.0/world/default/default028mm/%d/%d/%d", svc, level, row, col),
			fmt.Sprintf("%s/WMTS/tile/1.0.0/world/default/GoogleMapsCompatible/%d/%d/%d.png", svc, level, row, col),
			fmt.Sprintf("%s/WMTS?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=world&STYLE=default&FORMAT=image/png&TILEMATRIXSET=default028mm&TILEMATRIX=%d&TILEROW=%d&TILECOL=%d", svc, level, row, col),
			fmt.Sprintf("%s/WMTS?service=wmts&request=GetTile&version=1.0.0&layer=world&style=default&format=image/png&tilematrixset=GoogleMapsCompatible&tilematrix=%d&tilerow=%d&tilecol=%d", svc, level, row, col),
		} {
			resp, body := do(t, http.MethodGet, url, "")
			if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.Header.Get("ETag") == "" {
				t.Errorf("%s: %s, %d bytes (MinIO holds %d): %.200s", url, resp.Status, len(body), len(want), body)
			}
		}
		kvp := svc + "/WMTS?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=world&STYLE=default&FORMAT=image/png&TILEMATRIXSET=default028mm"
		for _, c := range []struct {
			url, code, locator string
			status             int
		}{
			{kvp + "&TILEMATRIX=4&TILEROW=5", "MissingParameterValue", "tilecol", 400},
			{kvp + "&TILEMATRIX=4&TILEROW=16&TILECOL=0", "TileOutOfRange", "tilerow", 400},
			{kvp + "&TILEMATRIX=9&TILEROW=0&TILECOL=0", "InvalidParameterValue", "tilematrix", 400},
			{strings.Replace(kvp, "LAYER=world", "LAYER=other", 1) + "&TILEMATRIX=4&TILEROW=5&TILECOL=8", "InvalidParameterValue", "layer", 400},
			{strings.Replace(kvp, "image/png", "image/jpeg", 1) + "&TILEMATRIX=4&TILEROW=5&TILECOL=8", "InvalidParameterValue", "format", 400},
			{kvp + "&TILEMATRIX=4&TILEROW=0&TILECOL=0", "NoApplicableCode", "", 404},
			{svc + "/WMTS?SERVICE=WMTS&REQUEST=GetFeatureInfo", "OperationNotSupported", "request", 501},
			{svc + "/WMTS?REQUEST=GetCapabilities", "MissingParameterValue", "service", 400},
			{svc + "/WMTS?SERVICE=WMTS&REQUEST=GetCapabilities&AcceptVersions=2.0.0", "VersionNegotiationFailed", "acceptversions", 400},
			{svc + "/WMTS/tile/1.0.0/world/default/default028mm/4/5", "InvalidParameterValue", "path", 404},
		} {
			resp, body := do(t, http.MethodGet, c.url, "")
			code, locator := owsException(t, body)
			if resp.StatusCode != c.status || code != c.code || locator != c.locator {
				t.Errorf("%s: %s %s %q, want %d %s %q", c.url, resp.Status, code, locator, c.status, c.code, c.locator)
			}
		}
	})

	t.Run("per-layer caches", func(t *testing.T) {
		lsvc := base + "/arcgis/rest/services/world_layers/MapServer"
		_, body := do(t, http.MethodGet, lsvc+"/WMTS/1.0.0/WMTSCapabilities.xml", "")
		var lc wmtsCapabilities
		if err := xml.Unmarshal(body, &lc); err != nil {
			t.Fatal(err)
		}
		if len(lc.Layers) != 2 || lc.Layers[0].Identifier != "Country points" || lc.Layers[1].Identifier != "Countries" ||
			!strings.Contains(lc.Layers[0].ResourceURL.Template, "/tile/1.0.0/Country%20points/{Style}/") {
			t.Fatalf("layers %+v", lc.Layers)
		}
		stored, _, err := tilecache.Open(ctx, f.store, seed.CacheRoot("world_layers", "Layers"), "Countries", nil)
		if err != nil {
			t.Fatal(err)
		}
		wantLayer, err := stored.ReadTile(ctx, tilecache.Tile{Level: 2, Row: 1, Col: 2})
		if err != nil {
			t.Fatal(err)
		}
		resp, got := do(t, http.MethodGet, lsvc+"/WMTS/tile/1.0.0/Countries/default/default028mm/2/1/2", "")
		if resp.StatusCode != 200 || !bytes.Equal(got, wantLayer) {
			t.Errorf("Countries tile: %s, %d bytes, MinIO holds %d", resp.Status, len(got), len(wantLayer))
		}
		// The REST tile resource serves fused caches only, as in ArcGIS.
		if resp, _ := do(t, http.MethodGet, lsvc+"/tile/2/1/2", ""); resp.StatusCode != 404 {
			t.Errorf("REST tile of a per-layer cache: %s", resp.Status)
		}
	})

	t.Run("GDAL", func(t *testing.T) {
		if _, err := exec.LookPath("gdal_translate"); err != nil {
			if testenv.Required() {
				t.Fatal("gdal_translate (gdal-bin) not installed; scripts/test.sh installs it")
			}
			t.Skip("gdal_translate (gdal-bin) not installed")
		}
		gdalTile(t, svc+"/WMTS/1.0.0/WMTSCapabilities.xml", "world", "default028mm", info.Scheme, want, level, row, col)
		gdalTile(t, svc+"/WMTS/1.0.0/WMTSCapabilities.xml", "world", "GoogleMapsCompatible", info.Scheme, want, level, row, col)
	})
}

// gdalTile opens the capabilities with GDAL's WMTS driver at a tile matrix, cuts the window of
// one tile out of the dataset with gdal_translate and checks its pixels against the stored
// tile's.
func gdalTile(t *testing.T, capsURL, layer, set string, scheme tilecache.Scheme, want []byte, level, row, col int) {
	t.Helper()
	dir := t.TempDir()
	env := append(os.Environ(), "GDAL_ENABLE_WMS_CACHE=NO", "GDAL_HTTP_TIMEOUT=60", "CPL_VSIL_CURL_ALLOWED_EXTENSIONS=.xml,.png",
		"GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR", "GDAL_DEFAULT_WMS_CACHE_PATH="+dir)
	src := fmt.Sprintf("WMTS:%s,layer=%s,tilematrixset=%s,tilematrix=%d", capsURL, layer, set, level)
	cmd := exec.Command("gdalinfo", "-json", src)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdalinfo %s: %v\n%s%s", src, err, out, stderr.Bytes())
	}
	var gi struct {
		Size         []int     `json:"size"`
		GeoTransform []float64 `json:"geoTransform"`
		Bands        []any     `json:"bands"`
	}
	if err := json.Unmarshal(out, &gi); err != nil || len(gi.GeoTransform) != 6 {
		t.Fatalf("gdalinfo: %v\n%s", err, out)
	}
	b, err := scheme.TileBounds(tilecache.Tile{Level: level, Row: row, Col: col})
	if err != nil {
		t.Fatal(err)
	}
	fx := (b.Min[0] - gi.GeoTransform[0]) / gi.GeoTransform[1]
	fy := (b.Max[1] - gi.GeoTransform[3]) / gi.GeoTransform[5]
	x, y := math.Round(fx), math.Round(fy)
	if math.Abs(fx-x) > 0.01 || math.Abs(fy-y) > 0.01 || math.Abs(gi.GeoTransform[1]*256-(b.Max[0]-b.Min[0])) > 1e-6*(b.Max[0]-b.Min[0]) {
		t.Fatalf("GDAL's %s grid (geotransform %v) is not the cache's: tile %d/%d/%d starts at pixel %.4f, %.4f", set, gi.GeoTransform, level, row, col, fx, fy)
	}
	outPath := filepath.Join(dir, "tile.png")
	cmd = exec.Command("gdal_translate", "-q", "-of", "PNG", "-srcwin", strconv.Itoa(int(x)), strconv.Itoa(int(y)), "256", "256", src, outPath)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gdal_translate: %v\n%s", err, out)
	}
	got := testenv.ReadPNG(t, outPath)
	stored, err := png.Decode(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if _, d := diffPixels(got, stored); d != "" {
		t.Errorf("GDAL (%s, %d bands) read tile %d/%d/%d with other pixels than the cache's: %s", set, len(gi.Bands), level, row, col, d)
	}
}
