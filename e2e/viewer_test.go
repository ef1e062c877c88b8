package e2e

import (
	"context"
	"encoding/json"
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
}

// TestViewerInChromium drives the map viewer of the world service, dynamic (REST export) and then
// cached (REST tiles, once seeded), with playwright-core in Debian's headless chromium: the
// page loads with no console error and nothing from another origin, the map is drawn, switching
// the country points on changes the map, and a click in Brazil pops up identify's answer with the
// country's name.
func TestViewerInChromium(t *testing.T) {
	chromiumPath, nodeModules := viewerTools(t)
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	svc := "/arcgis/rest/services/world/MapServer"
	check := func(t *testing.T, mode, layerRequest string) {
		checkViewer(t, chromiumPath, nodeModules, base+svc+"/viewer", svc, mode, layerRequest)
	}
	// Before its cache is seeded the world map is dynamic: the viewer draws with export.
	t.Run("export", func(t *testing.T) { check(t, "export", "/export?") })
	// Seeded (levels 0-3, the world), the viewer draws the cache's tiles.
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Levels: []int{0, 1, 2, 3}, SkipEmpty: &no})
	waitFusedCache(t, base+svc)
	t.Run("tiles", func(t *testing.T) { check(t, "tiles", "/tile/") })
}

// TestViewerWithTokens: on a farm that needs tokens, the viewer opened with ?token= passes the
// token on to its assets, the service JSON, export and identify.
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
	checkViewer(t, chromiumPath, nodeModules, strings.TrimSuffix(f.url, "/")+svc+"/viewer?token="+url.QueryEscape(tok), svc, "export", "/export?")
}

// checkViewer drives the viewer at viewerURL (service path svc) and checks what the page shows:
// drawn with mode (tiles or export, requesting layerRequest below svc), no console error or
// foreign request, the map drawn, the layer switch changing it, and identify's popup in Brazil.
func checkViewer(t *testing.T, chromiumPath, nodeModules, viewerURL, svc, mode, layerRequest string) {
	t.Helper()
	dir := t.TempDir()
	run := runViewer(t, nodeModules, viewerURL, chromiumPath, dir)
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

func runViewer(t *testing.T, nodeModules, url, chromium, dir string) viewerRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Brazil at 52°W 10°S; layer 0 is the country points, off by default.
	cmd := exec.CommandContext(ctx, "node", "testdata/viewer_playwright.js", url, chromium, dir, "0", "-52", "-10")
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodeModules)
	return outputJSON[viewerRun](t, "viewer_playwright.js", cmd)
}
