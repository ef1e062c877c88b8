package e2e

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/app/apptest"
	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
)

// storeWrites sums the object store's put and delete operations over the processes of a farm
// (storeOps of each base URL's /metrics).
func storeWrites(t *testing.T, bases ...string) (puts, deletes float64) {
	t.Helper()
	for _, b := range bases {
		ops := storeOps(t, b)
		puts += ops["put"]
		deletes += ops["delete"]
	}
	return puts, deletes
}

// dirDigest is every file under dir with its SHA-256.
func dirDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// hostileAdminForms sends issue 26's hostile admin requests to the api at base, the way a
// browser, a proxy and a rebound DNS name send them, with and without the api's credential,
// and checks each is refused with 401 or 403.
func hostileAdminForms(t *testing.T, base string) {
	t.Helper()
	cred := adminCredential(base)
	if cred == "" {
		t.Fatalf("no admin credential for %s in %s", base, os.Getenv("MAPFARM_STATE_DIR"))
	}
	const del = `{"service":"world","levels":[0],"mode":"delete"}`
	forms := []struct {
		name         string
		method, path string
		host         string // "" leaves the URL's
		header       []string
	}{
		{"the issue's cross-site fetch, as the browser sends it", "POST", "/admin/seed", "",
			[]string{"Content-Type", "text/plain;charset=UTF-8", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"}},
		{"JSON from another origin", "POST", "/admin/seed", "", []string{"Content-Type", "application/json", "Origin", "https://evil.example"}},
		{"a form post", "POST", "/admin/seed", "", []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{"through a proxy on the same host (X-Forwarded-For)", "POST", "/admin/seed", "", []string{"Content-Type", "application/json", "X-Forwarded-For", "203.0.113.7"}},
		{"through a proxy on the same host (Forwarded)", "POST", "/admin/seed", "", []string{"Content-Type", "application/json", "Forwarded", "for=203.0.113.7"}},
		{"DNS rebinding (Host evil.example)", "POST", "/admin/seed", "evil.example", []string{"Content-Type", "application/json"}},
	}
	for _, f := range forms {
		for _, withCred := range []bool{false, true} {
			req, err := http.NewRequest(f.method, base+f.path, strings.NewReader(del))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(f.header); i += 2 {
				req.Header.Set(f.header[i], f.header[i+1])
			}
			if f.host != "" {
				req.Host = f.host + base[strings.LastIndexByte(base, ':'):]
			}
			if withCred {
				req.Header.Set("Authorization", "Bearer "+cred)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 401 && resp.StatusCode != 403 || withCred && resp.StatusCode != 403 {
				t.Errorf("%s (credential %v): HTTP %d %.200s, want 403 (401 without a credential)", f.name, withCred, resp.StatusCode, body)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("%s: an admin answer names an origin: %v", f.name, resp.Header)
			}
		}
	}
}

// checkNothingChanged runs the hostile forms against the api at base between two readings of
// the store (its objects and checksums, and the put and delete counts of the processes at bases), and checks
// that the tile seeded before is still served.
func checkNothingChanged(t *testing.T, base string, digest func() map[string]string, bases ...string) {
	t.Helper()
	seedAndWait(t, base, seed.Request{Service: "world", Levels: []int{0}})
	time.Sleep(time.Second) // the job's last bookkeeping
	before := digest()
	puts, deletes := storeWrites(t, bases...)
	if len(before) == 0 || puts == 0 {
		t.Fatalf("nothing to protect: %d objects, %v puts", len(before), puts)
	}
	hostileAdminForms(t, base)
	time.Sleep(2 * time.Second) // what was accepted would have started by now
	after := digest()
	p2, d2 := storeWrites(t, bases...)
	t.Logf("store: %d objects; puts %v → %v, deletes %v → %v", len(before), puts, p2, deletes, d2)
	if p2 != puts || d2 != deletes {
		t.Errorf("store writes %v → %v, deletes %v → %v across the refused requests", puts, p2, deletes, d2)
	}
	if len(after) != len(before) {
		t.Errorf("%d objects before the refused requests, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("object %s changed: %s → %q", k, v, after[k])
		}
	}
	resp, body := do(t, "GET", base+"/arcgis/rest/services/world/MapServer/tile/0/0/0", "")
	if resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("tile 0/0/0 after the refused requests: HTTP %d", resp.StatusCode)
	}
}

// TestAdminTrustEmbedded: on the embedded default (`mapfarm serve` with nothing configured:
// embedded Redis, a disk store), the hostile admin forms are refused with or without the api's
// credential, and the store sees no write and no delete.
func TestAdminTrustEmbedded(t *testing.T) {
	dir := t.TempDir()
	base := embeddedDefault(t, dir)
	checkNothingChanged(t, base, func() map[string]string { return dirDigest(t, dir) }, base)
}

// embeddedDefault starts the farm `mapfarm serve` runs with nothing configured (embedded Redis,
// a disk store in dir, the sample services) until the test ends, and returns its URL.
func embeddedDefault(t *testing.T, dir string) string {
	t.Helper()
	cfg := apptest.Config(t, "MAPFARM_STORE_DIR", dir)
	return apptest.Serve(t, cfg, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})), app.Hooks{})
}

// TestCORSByDefault: a web app on another origin uses the embedded default as a browser does:
// the preflight of a SOAP ExportMapImage, the request, then the exported image (fetched with
// crossorigin), a tile, WMTS capabilities and the legislative API, each answered
// "Access-Control-Allow-Origin: *"; the admin routes answer that origin nothing.
func TestCORSByDefault(t *testing.T) {
	base := embeddedDefault(t, t.TempDir())
	seedAndWait(t, base, seed.Request{Service: "world", Levels: []int{0}}) // for the tile and WMTS
	const app = "https://app.example.com"
	endpoint := base + "/arcgis/services/world/MapServer"
	pre, _ := do(t, "OPTIONS", endpoint, "", "Origin", app, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type, soapaction")
	if pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("SOAP preflight: %d %v", pre.StatusCode, pre.Header)
	}
	resp, body := do(t, "POST", endpoint, exportBody(256, 256, "96", ""), "Origin", app, "Content-Type", "text/xml; charset=utf-8")
	_, rest, ok := strings.Cut(string(body), "<ImageURL>")
	imageURL, _, _ := strings.Cut(rest, "</ImageURL>")
	if resp.StatusCode != 200 || !ok || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("ExportMapImage from %s: %d %v %.300s", app, resp.StatusCode, resp.Header, body)
	}
	for _, u := range []string{imageURL, base + "/arcgis/rest/services/world/MapServer?f=json", base + "/arcgis/rest/services/world/MapServer/tile/0/0/0",
		base + "/arcgis/rest/services/world/MapServer/WMTS/1.0.0/WMTSCapabilities.xml", base + "/api/v2/"} {
		resp, body := do(t, "GET", u, "", "Origin", app)
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Errorf("GET %s from %s: %d, Access-Control-Allow-Origin %q, credentials %q (%d bytes)", u, app, resp.StatusCode,
				resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Access-Control-Allow-Credentials"), len(body))
		}
	}
	for _, method := range []string{"POST", "GET", "DELETE"} {
		pre, _ := do(t, "OPTIONS", base+"/admin/seed", "", "Origin", app, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", "authorization, content-type")
		resp, _ := do(t, method, base+"/admin/seed", "", "Origin", app, "Authorization", "Bearer "+adminCredential(base), "Content-Type", "application/json")
		for _, r := range []*http.Response{pre, resp} {
			if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" || r.Header.Get("Access-Control-Allow-Methods") != "" {
				t.Errorf("%s /admin/seed from %s (%s): CORS headers %v", r.Request.Method, app, method, r.Header)
			}
		}
		if resp.StatusCode != 403 {
			t.Errorf("%s /admin/seed from %s: %d, want 403", method, app, resp.StatusCode)
		}
	}
}

// TestAdminTrustProcesses: the same on a farm of separate processes (api, coordinator, worker on
// Redis and MinIO), counting the writes and deletes of all three; then cachetool on the same
// machine seeds with no credential configured, from the file the api made.
func TestAdminTrustProcesses(t *testing.T) {
	coordMetrics, workerMetrics := freePort(t), freePort(t)
	bin := buildBinary(t, "github.com/mapfarm/mapfarm")
	addr := freePort(t)
	env := farmEnv(t, addr)
	startProcess(t, bin, "worker", append(env, "MAPFARM_METRICS_LISTEN="+workerMetrics))
	startProcess(t, bin, "coordinator", append(env, "MAPFARM_METRICS_LISTEN="+coordMetrics))
	startProcess(t, bin, "api", env)
	base := "http://" + addr
	waitReady(t, base+"/readyz", 60*time.Second)
	waitReady(t, "http://"+workerMetrics+"/readyz", 60*time.Second)
	f := &farm{url: base, store: minioOf(t, env)}
	checkNothingChanged(t, base, func() map[string]string { return storeDigest(t, f) },
		base, "http://"+coordMetrics, "http://"+workerMetrics)

	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "seed", "-server", base, "-service", "world", "-levels", "0")
	cmd.Env = append(os.Environ(), "MAPFARM_ADMIN_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "submitted") {
		t.Errorf("cachetool seed with no credential configured: %v\n%s", err, out)
	}
}

// minioOf opens the MinIO bucket a farm's settings (farmEnv) name.
func minioOf(t *testing.T, env []string) *blob.MinIO {
	t.Helper()
	get := func(key string) string {
		v := ""
		for _, kv := range env {
			if rest, ok := strings.CutPrefix(kv, key+"="); ok {
				v = rest // a later setting wins, as in the process's environment
			}
		}
		return v
	}
	store, err := blob.NewMinIO(context.Background(), blob.MinIOConfig{Endpoint: get("MAPFARM_MINIO_ENDPOINT"), AccessKey: get("MAPFARM_MINIO_ACCESS_KEY"),
		SecretKey: get("MAPFARM_MINIO_SECRET_KEY"), Bucket: get("MAPFARM_MINIO_BUCKET")})
	if err != nil {
		t.Fatal(err)
	}
	return store
}
