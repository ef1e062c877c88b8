package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// clientJob is one page of testdata/clients/driver.js: the entry (ol, maplibre, arcgis) opened
// with params as its query string.
type clientJob struct {
	Name      string            `json:"name"`
	Bundle    string            `json:"bundle"`
	Params    map[string]string `json:"params"`
	TimeoutMS int               `json:"timeoutMs,omitempty"` // for the page to finish; 60 s when 0
}

// clientRequest is a request a page made to the farm, with the answer's status (0: it failed).
type clientRequest struct {
	Path   string `json:"path"`
	Status int    `json:"status"`
}

// clientRun is what driver.js reports of one page.
type clientRun struct {
	ConsoleErrors   []string        `json:"consoleErrors"`
	ForeignRequests []string        `json:"foreignRequests"`
	Requests        []clientRequest `json:"requests"`
	PageFiles       int             `json:"pageFiles"`    // files the page loaded from the driver's server
	PageFailures    []string        `json:"pageFailures"` // of those, the ones answered 4xx or 5xx
	Result          json.RawMessage `json:"result"`
	MS              int             `json:"ms"` // the page's time, from opening it to its screenshot
}

// clientBundle is how a bundle was had: from the cache, or built in ms milliseconds.
type clientBundle struct {
	Cached bool `json:"cached"`
	MS     int  `json:"ms"`
	Bytes  int  `json:"bytes"`
}

// runClients runs every job in one node process and one headless Chromium (driver.js), the
// screenshots of the maps going to dir/<name>.png; the npm packages come from the test's
// node_modules and the extra folders. The bundles are kept in $MAPFARM_CACHE/node/bundles,
// beside the node_modules they are built from.
func runClients(t *testing.T, jobs []clientJob, dir string, extraModules ...string) map[string]clientRun {
	t.Helper()
	chromium, nodeModules := viewerTools(t)
	jobsJSON, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cache := filepath.Join(filepath.Dir(nodeModules), "bundles")
	cmd := exec.CommandContext(ctx, "node", "testdata/clients/driver.js", chromium, cache, dir, string(jobsJSON))
	// The extra folders first: the import map of an unbundled page takes each package from the
	// first folder holding it, and the SDK's dependencies must be its own versions.
	cmd.Env = append(os.Environ(), "NODE_PATH="+strings.Join(append(extraModules, nodeModules), string(filepath.ListSeparator)))
	out := outputJSON[struct {
		Bundles       map[string]clientBundle `json:"bundles"`
		Runs          map[string]clientRun    `json:"runs"`
		LaunchMS      int                     `json:"launchMs"`
		ChromiumCPUMS int                     `json:"chromiumCPUms"`
	}](t, "driver.js", cmd)
	for name, b := range out.Bundles {
		t.Logf("bundle %s: %d bytes, cached %v, built in %d ms", name, b.Bytes, b.Cached, b.MS)
	}
	t.Logf("chromium launched in %d ms, took %d ms of CPU in all", out.LaunchMS, out.ChromiumCPUMS)
	for _, j := range jobs {
		t.Logf("page %s: %d ms, %d files from the page's server", j.Name, out.Runs[j.Name].MS, out.Runs[j.Name].PageFiles)
	}
	return out.Runs
}

// olResult is what ol.js reports.
type olResult struct {
	Error  string   `json:"error"`
	Loaded int      `json:"loaded"`
	Errors []string `json:"errors"`
}

// TestWebClients draws the farm's services with web map clients in Debian's headless Chromium,
// all in one browser (driver.js), on one farm:
//   - OpenLayers' TileWMS source over the world service's WMS in Web Mercator, and its ImageWMS
//     source in EPSG:4326 with WMS 1.3.0's latitude-first axis order;
//   - OpenLayers' OGCMapTile source over the OGC API map tileset (WebMercatorQuad);
//   - OpenLayers' VectorTile source with the MVT format over the VectorTileServer's XYZ tiles;
//   - MapLibre GL JS with the VectorTileServer's style (resources/styles/root.json), as it is and
//     with its source replaced by the TileJSON;
//   - the ArcGIS Maps SDK for JavaScript (@arcgis/core, its own ES modules unbundled, its assets
//     served by the test) with a VectorTileLayer of the VectorTileServer's URL in a MapView.
//
// Each map is drawn without a console error, a refused request to another origin or a failed
// request to the farm, and its screenshot shows the countries: Brazil drawn, the South Pacific
// not (the map's background there). MapLibre draws labels (its glyph requests answer 200) and
// queryRenderedFeatures in Brazil returns Brazil with its object id and name; the SDK loads the
// style and glyphs. Then Mapbox's own decoder (decode_tiles.mjs) reads every tile of a level as
// mvtcheck does.
func TestWebClients(t *testing.T) {
	arcgis := arcgisModules(t)
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	wmsURL := base + "/arcgis/services/world/MapServer/WMSServer"
	vts := base + "/arcgis/rest/services/world/VectorTileServer"
	ol := func(name, mode, url, projection string) clientJob {
		return clientJob{Name: name, Bundle: "ol", Params: map[string]string{"farm": base, "mode": mode, "url": url, "layers": "1", "projection": projection}}
	}
	maplibre := func(name, tilejson string) clientJob {
		p := map[string]string{"farm": base, "style": vts + "/resources/styles/root.json", "lon": "0", "lat": "0", "zoom": "0", "qlon": "-52", "qlat": "-10"}
		if tilejson != "" {
			p["tilejson"] = tilejson
		}
		return clientJob{Name: name, Bundle: "maplibre", Params: p}
	}
	jobs := []clientJob{
		ol("ol-tilewms", "TileWMS", wmsURL, "EPSG:3857"),
		ol("ol-imagewms-4326", "ImageWMS", wmsURL, "EPSG:4326"),
		ol("ol-ogcmaptile", "OGCMapTile", base+"/ogc/world/map/tiles/WebMercatorQuad", "EPSG:3857"),
		ol("ol-mvt", "MVT", vts+"/tile/{z}/{y}/{x}.pbf", "EPSG:3857"),
		maplibre("maplibre-style", ""),
		maplibre("maplibre-tilejson", vts+"/tiles.json"),
		{Name: "arcgis-vectortilelayer", Bundle: "arcgis", TimeoutMS: 120000, Params: map[string]string{"farm": base, "url": vts, "projection": "EPSG:3857"}},
	}
	// The sea: white where the map is transparent (WMS with TRANSPARENT, OpenLayers' own styling
	// of the tiles), the map's blue elsewhere.
	white, blue := color.NRGBA{255, 255, 255, 255}, color.NRGBA{198, 219, 239, 255}
	sea := map[string]color.NRGBA{"ol-ogcmaptile": blue, "maplibre-style": blue, "maplibre-tilejson": blue, "arcgis-vectortilelayer": blue}
	tiles := "/arcgis/rest/services/world/VectorTileServer/tile/"
	prefix := map[string]string{
		"ol-ogcmaptile": "/ogc/world/map/tiles/WebMercatorQuad/", "ol-mvt": tiles,
		"maplibre-style": tiles, "maplibre-tilejson": tiles, "arcgis-vectortilelayer": tiles,
	}
	brazil := brazilID(t, base)
	dir := t.TempDir()
	runs := runClients(t, jobs, dir, arcgis)
	for _, job := range jobs {
		t.Run(job.Name, func(t *testing.T) {
			run, ok := runs[job.Name]
			if !ok {
				t.Fatalf("driver.js ran no page %s", job.Name)
			}
			p, ok := prefix[job.Name]
			if !ok {
				p = "/arcgis/services/world/MapServer/WMSServer?"
			}
			checkClientRun(t, run, p)
			switch job.Bundle {
			case "maplibre":
				checkMapLibre(t, run, brazil)
			case "arcgis":
				checkArcGIS(t, run)
			default:
				var res olResult
				if err := json.Unmarshal(run.Result, &res); err != nil || res.Error != "" || len(res.Errors) > 0 || res.Loaded == 0 {
					t.Fatalf("OpenLayers: %s (%v)", run.Result, err)
				}
			}
			bg, ok := sea[job.Name]
			if !ok {
				bg = white
			}
			checkWorldDrawn(t, readScreenshot(t, dir, job.Name), job.Params["projection"], bg)
		})
	}
	t.Run("mapbox-vector-tile", func(t *testing.T) { checkSecondDecoder(t, vts+"/tile/{z}/{y}/{x}.pbf", 3) })
}

// arcgisModules is the node_modules holding the ArcGIS Maps SDK (@arcgis/core and the packages it
// loads), which scripts/install.sh unpacks into $MAPFARM_CACHE/node-arcgis;
// MAPFARM_TEST_ARCGIS_MODULES names another.
func arcgisModules(t *testing.T) string {
	t.Helper()
	_, nodeModules := viewerTools(t)
	arcgis := os.Getenv("MAPFARM_TEST_ARCGIS_MODULES")
	if arcgis == "" {
		arcgis = filepath.Join(filepath.Dir(filepath.Dir(nodeModules)), "node-arcgis", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(arcgis, "@arcgis", "core", "package.json")); err != nil {
		t.Fatalf("@arcgis/core is not installed in %s (%v): run the test through scripts/test.sh, or scripts/install.sh arcgis", arcgis, err)
	}
	return arcgis
}

// checkArcGIS: the SDK's VectorTileLayer loaded the style (its layers) and the glyphs it labels
// with, and every module and asset the page asked of the test's server was there.
func checkArcGIS(t *testing.T, run clientRun) {
	t.Helper()
	var res struct {
		Error       string `json:"error"`
		Title       string `json:"title"`
		StyleLayers int    `json:"styleLayers"`
	}
	if err := json.Unmarshal(run.Result, &res); err != nil || res.Error != "" || res.StyleLayers < 2 {
		t.Fatalf("ArcGIS Maps SDK: %s (%v)", run.Result, err)
	}
	if !slices.ContainsFunc(run.Requests, func(r clientRequest) bool {
		return strings.Contains(r.Path, "/VectorTileServer/resources/fonts/") && r.Status == 200
	}) {
		t.Errorf("the SDK loaded no glyphs: %v", run.Requests)
	}
}

// brazilID is the object id of Brazil in the world service's countries (REST query).
func brazilID(t *testing.T, base string) float64 {
	t.Helper()
	_, body := do(t, "GET", base+"/arcgis/rest/services/world/MapServer/1/query?where=NAME%3D%27Brazil%27&outFields=fid&returnGeometry=false&f=json", "")
	var q struct {
		Features []struct {
			Attributes map[string]any `json:"attributes"`
		} `json:"features"`
	}
	if err := json.Unmarshal(body, &q); err != nil || len(q.Features) != 1 {
		t.Fatalf("query Brazil: %v %s", err, body)
	}
	id, ok := q.Features[0].Attributes["fid"].(float64)
	if !ok {
		t.Fatalf("query Brazil: %s", body)
	}
	return id
}

// mapLibreResult is what maplibre.js reports.
type mapLibreResult struct {
	Error    string            `json:"error"`
	Errors   []string          `json:"errors"`
	Features []mapLibreFeature `json:"features"`
	Symbols  int               `json:"symbols"`
}

// mapLibreFeature is a feature queryRenderedFeatures returned.
type mapLibreFeature struct {
	Layer       string         `json:"layer"`
	SourceLayer string         `json:"sourceLayer"`
	ID          float64        `json:"id"`
	Properties  map[string]any `json:"properties"`
}

// checkMapLibre: MapLibre reported no error, placed labels whose glyphs it loaded from the
// farm, and found Brazil (its object id and name) at the query point.
func checkMapLibre(t *testing.T, run clientRun, brazil float64) {
	t.Helper()
	var res mapLibreResult
	if err := json.Unmarshal(run.Result, &res); err != nil || res.Error != "" || len(res.Errors) > 0 {
		t.Fatalf("MapLibre: %s (%v)", run.Result, err)
	}
	if res.Symbols == 0 {
		t.Errorf("MapLibre placed no label")
	}
	if !slices.ContainsFunc(run.Requests, func(r clientRequest) bool {
		return strings.Contains(r.Path, "/VectorTileServer/resources/fonts/") && r.Status == 200
	}) {
		t.Errorf("MapLibre loaded no glyphs: %v", run.Requests)
	}
	found := slices.ContainsFunc(res.Features, func(f mapLibreFeature) bool {
		return f.SourceLayer == "Countries" && f.ID == brazil && f.Properties["NAME"] == "Brazil"
	})
	if !found {
		t.Errorf("queryRenderedFeatures at 52°W 10°S: %+v; want Countries feature %v, NAME Brazil", res.Features, brazil)
	}
}

// checkClientRun checks what every page must show: no console error, no request to another
// origin, no file the page asked of the test's server missing, a request below prefix (a path of the farm), and every request to the farm answered
// 200 (or 304).
func checkClientRun(t *testing.T, run clientRun, prefix string) {
	t.Helper()
	if len(run.ConsoleErrors) > 0 || len(run.ForeignRequests) > 0 || len(run.PageFailures) > 0 {
		t.Errorf("console errors %q, requests to other origins %q, files the page's server lacks %q", run.ConsoleErrors, run.ForeignRequests, run.PageFailures)
	}
	if !slices.ContainsFunc(run.Requests, func(r clientRequest) bool { return strings.HasPrefix(r.Path, prefix) }) {
		t.Errorf("no request to %s among %v", prefix, run.Requests)
	}
	for _, r := range run.Requests {
		if r.Status != 200 && r.Status != 304 {
			t.Errorf("%s answered %d", r.Path, r.Status)
		}
	}
}

func readScreenshot(t *testing.T, dir, name string) image.Image {
	t.Helper()
	return testenv.ReadPNG(t, filepath.Join(dir, name+".png"))
}

// checkWorldDrawn checks a screenshot of the whole world in projection: 512×512 in EPSG:3857,
// 512×256 in EPSG:4326: more than a sixth of it drawn (not the sea's colour), a pixel in Brazil
// drawn and one in the South Pacific the sea's.
func checkWorldDrawn(t *testing.T, img image.Image, projection string, sea color.NRGBA) {
	t.Helper()
	if n, total := countPixels(img, func(c color.NRGBA) bool { return c != sea }); n < total/6 {
		t.Errorf("the map is blank: %d of %d pixels drawn", n, total)
	}
	px := func(lon, lat float64) (int, int) {
		if projection == "EPSG:4326" {
			return int(256 + lon*512/360), int(128 - lat*512/360)
		}
		y := math.Log(math.Tan(math.Pi/4+lat*math.Pi/360)) / (2 * math.Pi)
		return int(256 + lon*512/360), int(256 - y*512)
	}
	at := func(lon, lat float64) color.NRGBA {
		x, y := px(lon, lat)
		return color.NRGBAModel.Convert(img.At(img.Bounds().Min.X+x, img.Bounds().Min.Y+y)).(color.NRGBA)
	}
	if c := at(-52, -10); c == sea {
		t.Errorf("Brazil (52°W 10°S) is not drawn: %v", c)
	}
	if c := at(-120, -40); c != sea {
		t.Errorf("the South Pacific (120°W 40°S) is drawn: %v, want the sea's %v", c, sea)
	}
}

// decodedLayer is what decode_tiles.mjs reports of a layer of a tile.
type decodedLayer struct {
	Version  int      `json:"version"`
	Extent   int      `json:"extent"`
	Features int      `json:"features"`
	IDs      []uint64 `json:"ids"`
	Types    []int    `json:"types"`
	Points   int      `json:"points"`
}

// checkSecondDecoder decodes every tile of level z of the XYZ template with Mapbox's
// @mapbox/vector-tile (decode_tiles.mjs, one node process), and each tile again with the
// project's validator (mvtcheck): every tile answers 200, passes mvtcheck, and Mapbox's decoder
// reads the same layers with the same feature ids, every feature of a known type with points.
func checkSecondDecoder(t *testing.T, template string, z int) {
	t.Helper()
	_, nodeModules := viewerTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "testdata/clients/decode_tiles.mjs", template, strconv.Itoa(z))
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	tiles := outputJSON[map[string]struct {
		Status int                     `json:"status"`
		Layers map[string]decodedLayer `json:"layers"`
	}](t, "decode_tiles.mjs", cmd)
	n := 1 << z
	if len(tiles) != n*n {
		t.Fatalf("decode_tiles.mjs read %d tiles, want %d", len(tiles), n*n)
	}
	features := 0
	for x := range n {
		for y := range n {
			key := fmt.Sprintf("%d/%d/%d", z, x, y)
			got := tiles[key]
			url := strings.NewReplacer("{z}", strconv.Itoa(z), "{x}", strconv.Itoa(x), "{y}", strconv.Itoa(y)).Replace(template)
			resp, body := do(t, "GET", url, "")
			if got.Status != 200 || resp.StatusCode != 200 {
				t.Errorf("%s: decode_tiles.mjs got %d, Go %s", key, got.Status, resp.Status)
				continue
			}
			if problems, _ := mvtcheck.Check(body, mvtcheck.Options{}); len(problems) > 0 {
				t.Errorf("%s: mvtcheck: %v", key, problems)
			}
			layers, err := mvtcheck.Decode(body)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			if len(layers) != len(got.Layers) {
				t.Errorf("%s: Mapbox's decoder read %d layers, mvtcheck %d", key, len(got.Layers), len(layers))
			}
			for _, l := range layers {
				d, ok := got.Layers[l.Name]
				var ids []uint64
				for _, f := range l.Features {
					ids = append(ids, f.ID)
				}
				if !ok || d.Version != int(l.Version) || d.Extent != int(l.Extent) || !slices.Equal(d.IDs, ids) {
					t.Errorf("%s layer %s: Mapbox's decoder read %+v; mvtcheck version %d, extent %d, ids %v", key, l.Name, d, l.Version, l.Extent, ids)
				}
				if slices.ContainsFunc(d.Types, func(ty int) bool { return ty < 1 || ty > 3 }) || (d.Features > 0 && d.Points < d.Features) {
					t.Errorf("%s layer %s: types %v, %d points for %d features", key, l.Name, d.Types, d.Points, d.Features)
				}
				features += d.Features
			}
		}
	}
	if features == 0 {
		t.Fatalf("level %d has no feature", z)
	}
	t.Logf("level %d: %d tiles, %d features, read alike by @mapbox/vector-tile and mvtcheck", z, n*n, features)
}
