package e2e

import (
	"context"
	"encoding/json"
	"image"
	"image/color"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/token"
)

// viewerRun is what testdata/viewer_playwright.js prints.
type viewerRun struct {
	ConsoleErrors   []string `json:"consoleErrors"`
	ForeignRequests []string `json:"foreignRequests"`
	Requests        []string `json:"requests"`
	Popup           string   `json:"popup"`
	PopupVisible    bool     `json:"popupVisible"`
	Mode            string   `json:"mode"`
	Status          string   `json:"status"`
	// Vector mode (asked with vector): the mode the page then says, the pixels of the identify
	// point and of the sea in vector.png, and identify's popup there.
	VectorMode         string `json:"vectorMode"`
	VectorStatus       string `json:"vectorStatus"`
	VectorPoint        [2]int `json:"vectorPoint"`
	VectorSea          [2]int `json:"vectorSea"`
	VectorPopup        string `json:"vectorPopup"`
	VectorPopupVisible bool   `json:"vectorPopupVisible"`
}

// TestViewerInChromium drives the map viewer of the world service, dynamic (REST export) and then
// cached (REST tiles, once seeded), with playwright-core in Debian's headless chromium: the
// page loads with no console error and nothing from another origin, the map is drawn, switching
// the country points on changes the map, and a click in Brazil pops up identify's answer with the
// country's name. In the same browser, switched to vector mode, the viewer draws the service's
// VectorTileServer with its style (the countries' colour in Brazil, the style's sea in the South
// Pacific) and identify still answers Brazil.
func TestViewerInChromium(t *testing.T) {
	chromiumPath, nodeModules := viewerTools(t)
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	svc := "/arcgis/rest/services/world/MapServer"
	check := func(t *testing.T, mode, layerRequest string, vector bool) {
		checkViewer(t, chromiumPath, nodeModules, base+svc+"/viewer", svc, mode, layerRequest, vector)
	}
	// Before its cache is seeded the world map is dynamic: the viewer draws with export; then
	// with the vector tiles.
	t.Run("export", func(t *testing.T) { check(t, "export", "/export?", true) })
	// Seeded (levels 0-3, the world), the viewer draws the cache's tiles.
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Levels: []int{0, 1, 2, 3}, SkipEmpty: &no})
	waitFusedCache(t, base+svc)
	t.Run("tiles", func(t *testing.T) { check(t, "tiles", "/tile/", false) })
}

// TestViewerWithTokens: on a farm that needs tokens, the viewer opened with ?token= passes the
// token on to its assets, the service JSON, export and identify, and in vector mode to the
// VectorTileServer's style, tiles and glyphs.
func TestViewerWithTokens(t *testing.T) {
	chromiumPath, nodeModules := viewerTools(t)
	t.Setenv("MAPFARM_TOKEN_SECRET", testSecret)
	f := startFarm(t)
	signer, err := token.NewSigner([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signer.Issue("viewer", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	svc := "/arcgis/rest/services/world/MapServer"
	checkViewer(t, chromiumPath, nodeModules, strings.TrimSuffix(f.url, "/")+svc+"/viewer?token="+url.QueryEscape(tok), svc, "export", "/export?", true)
}

// checkViewer drives the viewer at viewerURL (service path svc) and checks what the page shows:
// drawn with mode (tiles or export, requesting layerRequest below svc), no console error or
// foreign request, the map drawn, the layer switch changing it, and identify's popup in Brazil;
// with vector, the same page switched to vector mode too (checkVectorMode).
func checkViewer(t *testing.T, chromiumPath, nodeModules, viewerURL, svc, mode, layerRequest string, vector bool) {
	t.Helper()
	dir := t.TempDir()
	run := runViewer(t, nodeModules, viewerURL, chromiumPath, dir, vector)
	if len(run.ConsoleErrors) > 0 || len(run.ForeignRequests) > 0 {
		t.Errorf("console errors %q, requests to other origins %q", run.ConsoleErrors, run.ForeignRequests)
	}
	if run.Mode != mode {
		t.Errorf("viewer draws with %q (status %q), want %q", run.Mode, run.Status, mode)
	}
	if !slices.ContainsFunc(run.Requests, func(u string) bool { return strings.HasPrefix(u, svc+layerRequest) }) {
		t.Errorf("no request to %s%s among %q", svc, layerRequest, run.Requests)
	}
	before, after := testenv.ReadPNG(t, filepath.Join(dir, "before.png")), testenv.ReadPNG(t, filepath.Join(dir, "after.png"))
	// The page is white where the map draws nothing (the export is transparent outside
	// the countries, the tiles have the map's blue sea): the countries cover more than a
	// quarter of the world in Web Mercator.
	if n, total := countPixels(before, func(c color.NRGBA) bool { return c != color.NRGBA{255, 255, 255, 255} }); n < total/4 {
		t.Errorf("the map is blank: %d of %d pixels drawn", n, total)
	}
	if d, _ := diffPixels(before, after); d < 200 {
		t.Errorf("switching the country points on changed %d pixels", d)
	}
	if !run.PopupVisible || !strings.Contains(run.Popup, "Brazil") {
		t.Errorf("identify popup (visible %v): %q", run.PopupVisible, run.Popup)
	}
	if vector {
		checkVectorMode(t, run, svc, testenv.ReadPNG(t, filepath.Join(dir, "vector.png")))
	}
}

// checkVectorMode checks the viewer in vector mode: it says so, it asked the VectorTileServer
// beside svc for its style and tiles, its screenshot shows the world's style (countries
// rgb(232,228,216) on the sea's rgb(198,219,239)): more than a sixth of it not the sea, Brazil
// the countries' colour (the commonest colour of the 9×9 pixels around the point, which a label
// may cross) and the South Pacific the sea's, and identify's popup names Brazil.
func checkVectorMode(t *testing.T, run viewerRun, svc string, img image.Image) {
	t.Helper()
	if run.VectorMode != "vector" {
		t.Errorf("after the vector switch the viewer says mode %q (status %q), want vector", run.VectorMode, run.VectorStatus)
	}
	vts := strings.TrimSuffix(svc, "/MapServer") + "/VectorTileServer"
	for _, want := range []string{vts + "/resources/styles/root.json", vts + "/tile/"} {
		if !slices.ContainsFunc(run.Requests, func(u string) bool { return strings.HasPrefix(u, want) }) {
			t.Errorf("vector mode asked nothing of %s", want)
		}
	}
	land, sea := color.NRGBA{232, 228, 216, 255}, color.NRGBA{198, 219, 239, 255}
	if n, total := countPixels(img, func(c color.NRGBA) bool { return c != sea }); n < total/6 {
		t.Errorf("vector mode: the map is blank: %d of %d pixels drawn", n, total)
	}
	commonest := func(p [2]int) color.NRGBA {
		counts := map[color.NRGBA]int{}
		var best color.NRGBA
		for dy := -4; dy <= 4; dy++ {
			for dx := -4; dx <= 4; dx++ {
				c := color.NRGBAModel.Convert(img.At(img.Bounds().Min.X+p[0]+dx, img.Bounds().Min.Y+p[1]+dy)).(color.NRGBA)
				if counts[c]++; counts[c] > counts[best] {
					best = c
				}
			}
		}
		return best
	}
	if c := commonest(run.VectorPoint); c != land {
		t.Errorf("vector mode: Brazil (pixel %v) is %v, want the countries' %v", run.VectorPoint, c, land)
	}
	if c := commonest(run.VectorSea); c != sea {
		t.Errorf("vector mode: the South Pacific (pixel %v) is %v, want the sea's %v", run.VectorSea, c, sea)
	}
	if !run.VectorPopupVisible || !strings.Contains(run.VectorPopup, "Brazil") {
		t.Errorf("vector mode: identify popup (visible %v): %q", run.VectorPopupVisible, run.VectorPopup)
	}
}

// waitFusedCache waits (up to 20 s) until the service's JSON says it has a fused cache: the farm
// reads a cache's metadata again a few seconds after it last read it.
func waitFusedCache(t *testing.T, svc string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, body := do(t, http.MethodGet, svc+"?f=json", "")
		var v struct {
			SingleFusedMapCache bool `json:"singleFusedMapCache"`
		}
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s?f=json: %s %v", svc, resp.Status, err)
		}
		if v.SingleFusedMapCache {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still says singleFusedMapCache false after seeding", svc)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// viewerTools finds chromium and playwright-core: scripts/test.sh installs both. The test skips
// only when chromium is not installed.
func viewerTools(t *testing.T) (chromium, nodeModules string) {
	t.Helper()
	chromium = os.Getenv("MAPFARM_TEST_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("chromium is not installed (%v): scripts/test.sh installs it with apt", err)
	}
	nodeModules = os.Getenv("MAPFARM_TEST_NODE_MODULES")
	if nodeModules == "" {
		home, _ := os.UserHomeDir()
		nodeModules = filepath.Join(home, ".cache", "mapfarm", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(nodeModules, "playwright-core", "package.json")); err != nil {
		t.Fatalf("playwright-core is not installed in %s (%v): run the test through scripts/test.sh", nodeModules, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node: %v", err)
	}
	return chromium, nodeModules
}

func runViewer(t *testing.T, nodeModules, url, chromium, dir string, vector bool) viewerRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Brazil at 52°W 10°S; layer 0 is the country points, off by default.
	args := []string{"testdata/viewer_playwright.js", url, chromium, dir, "0", "-52", "-10"}
	if vector {
		args = append(args, "vector")
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	return outputJSON[viewerRun](t, "viewer_playwright.js", cmd)
}
