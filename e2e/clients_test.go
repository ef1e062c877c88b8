package e2e

import (
	"context"
	"encoding/json"
	"image"
	"image/color"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// clientJob is one page of testdata/clients/driver.js: the entry bundle (ol, maplibre) opened
// with params as its query string.
type clientJob struct {
	Name   string            `json:"name"`
	Bundle string            `json:"bundle"`
	Params map[string]string `json:"params"`
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
	Result          json.RawMessage `json:"result"`
}

// clientBundle is how a bundle was had: from the cache, or built in ms milliseconds.
type clientBundle struct {
	Cached bool `json:"cached"`
	MS     int  `json:"ms"`
	Bytes  int  `json:"bytes"`
}

// runClients runs every job in one node process and one headless Chromium (driver.js), the
// screenshots of the maps going to dir/<name>.png. The bundles are kept in
// $MAPFARM_CACHE/node/bundles, beside the node_modules they are built from.
func runClients(t *testing.T, jobs []clientJob, dir string) map[string]clientRun {
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
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	out := outputJSON[struct {
		Bundles map[string]clientBundle `json:"bundles"`
		Runs    map[string]clientRun    `json:"runs"`
	}](t, "driver.js", cmd)
	for name, b := range out.Bundles {
		t.Logf("bundle %s: %d bytes, cached %v, built in %d ms", name, b.Bytes, b.Cached, b.MS)
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
// all in one browser (driver.js): OpenLayers' ImageWMS and TileWMS sources over the world
// service's WMS, in Web Mercator and in EPSG:4326 with WMS 1.3.0's latitude-first axis order.
// Each map is drawn without a console error, a refused request to another origin or a failed
// request to the farm, and its screenshot shows the countries: Brazil drawn, the Pacific not.
func TestWebClients(t *testing.T) {
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	wmsURL := base + "/arcgis/services/world/MapServer/WMSServer"
	wms := func(name, mode, projection string) clientJob {
		return clientJob{Name: name, Bundle: "ol", Params: map[string]string{"farm": base, "mode": mode, "url": wmsURL, "layers": "1", "projection": projection}}
	}
	jobs := []clientJob{
		wms("ol-imagewms", "ImageWMS", "EPSG:3857"),
		wms("ol-tilewms", "TileWMS", "EPSG:3857"),
		wms("ol-imagewms-4326", "ImageWMS", "EPSG:4326"),
	}
	dir := t.TempDir()
	runs := runClients(t, jobs, dir)
	for _, job := range jobs {
		t.Run(job.Name, func(t *testing.T) {
			run, ok := runs[job.Name]
			if !ok {
				t.Fatalf("driver.js ran no page %s", job.Name)
			}
			checkClientRun(t, run, "/arcgis/services/world/MapServer/WMSServer?")
			var res olResult
			if err := json.Unmarshal(run.Result, &res); err != nil || res.Error != "" || len(res.Errors) > 0 || res.Loaded == 0 {
				t.Fatalf("OpenLayers: %s (%v)", run.Result, err)
			}
			if !slices.ContainsFunc(run.Requests, func(r clientRequest) bool { return strings.Contains(r.Path, "REQUEST=GetMap") }) {
				t.Errorf("no GetMap among %v", run.Requests)
			}
			img := readScreenshot(t, dir, job.Name)
			checkWorldDrawn(t, img, job.Params["projection"])
		})
	}
}

// checkClientRun checks what every page must show: no console error, no request to another
// origin, a request below prefix (a path of the farm), and every request to the farm answered
// 200 (or 304).
func checkClientRun(t *testing.T, run clientRun, prefix string) {
	t.Helper()
	if len(run.ConsoleErrors) > 0 || len(run.ForeignRequests) > 0 {
		t.Errorf("console errors %q, requests to other origins %q", run.ConsoleErrors, run.ForeignRequests)
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
// 512×256 in EPSG:4326: more than a sixth of it drawn (not white), a pixel in Brazil drawn and one
// in the South Pacific not.
func checkWorldDrawn(t *testing.T, img image.Image, projection string) {
	t.Helper()
	white := color.NRGBA{255, 255, 255, 255}
	if n, total := countPixels(img, func(c color.NRGBA) bool { return c != white }); n < total/6 {
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
	if c := at(-52, -10); c == white {
		t.Errorf("Brazil (52°W 10°S) is not drawn: %v", c)
	}
	if c := at(-150, -20); c != white {
		t.Errorf("the South Pacific (150°W 20°S) is drawn: %v", c)
	}
}
