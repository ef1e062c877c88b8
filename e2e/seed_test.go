package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// seedAOI is a small area of interest (western Europe and north-west Africa) in Web Mercator.
var seedAOI = []float64{-1_500_000, 3_000_000, 2_500_000, 7_000_000}

// adminDo sends an admin request as cachetool does, with the admin token of
// MAPFARM_ADMIN_TOKEN when the test set one, else the one the api made at start (adminCredential).
func adminDo(method, url string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if tok := adminCredential(url); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return http.DefaultClient.Do(req)
}

// submitSeed posts a seeding request to the admin API and returns the job id.
func submitSeed(t testing.TB, base string, req seed.Request) string {
	t.Helper()
	b, _ := json.Marshal(req)
	resp, err := adminDo(http.MethodPost, base+"/admin/seed", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /admin/seed: %s: %s", resp.Status, body)
	}
	var st seed.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	return st.ID
}

func jobStatus(t testing.TB, base, id string) seed.Status {
	t.Helper()
	resp, err := adminDo(http.MethodGet, base+"/admin/seed/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st seed.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// waitJob polls a job until it ends (bounded by limit) and returns its last status.
func waitJob(t testing.TB, base, id string, limit time.Duration, each func(seed.Status) bool) seed.Status {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st := jobStatus(t, base, id)
		if seed.Terminal(st.State) {
			return st
		}
		if each != nil && !each(st) {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
	st := jobStatus(t, base, id)
	t.Fatalf("job %s did not end within %s: %+v", id, limit, st)
	return st
}

// cacheObjects reads every object of the world map's cache into memory.
func cacheObjects(t testing.TB, store *blob.MinIO) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	var keys []string
	if err := store.List(ctx, seed.CacheRoot("world", "Layers")+"/", func(i blob.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		b, err := store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = b
	}
	return out
}

// checkCacheOperations calls every cache operation; tile (level, row, col) is seeded, missing
// (level, row, col) is not.
func checkCacheOperations(t *testing.T, endpoint string, level int, missing [3]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := &soap.Client{Codec: soap.NewCodec(namespace, soap.Limits{}), Endpoint: endpoint}
	call := func(op string, req, resp any) {
		t.Helper()
		if err := cl.Call(ctx, op, req, resp); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	var fused gisxml.HasSingleFusedMapCacheResponse
	call("HasSingleFusedMapCache", &gisxml.HasSingleFusedMapCache{MapName: "Layers"}, &fused)
	if !fused.Result {
		t.Error("HasSingleFusedMapCache = false")
	}
	var tci gisxml.GetTileCacheInfoResponse
	call("GetTileCacheInfo", &gisxml.GetTileCacheInfo{MapName: "Layers"}, &tci)
	if tci.Result.TileCols != 256 || tci.Result.DPI != 96 || len(tci.Result.LODInfos) != 8 {
		t.Errorf("GetTileCacheInfo: %d px, %d dpi, %d LODs; want 256, 96, 8", tci.Result.TileCols, tci.Result.DPI, len(tci.Result.LODInfos))
	}
	var tii gisxml.GetTileImageInfoResponse
	call("GetTileImageInfo", &gisxml.GetTileImageInfo{MapName: "Layers"}, &tii)
	if tii.Result.CacheTileFormat != "PNG" {
		t.Errorf("CacheTileFormat %q", tii.Result.CacheTileFormat)
	}
	var cci gisxml.GetCacheControlInfoResponse
	call("GetCacheControlInfo", &gisxml.GetCacheControlInfo{MapName: "Layers"}, &cci)
	var csi gisxml.GetCacheStorageInfoResponse
	call("GetCacheStorageInfo", &gisxml.GetCacheStorageInfo{MapName: "Layers"}, &csi)
	if csi.Result.StorageFormat != gisxml.MapCacheStorageModeCompactV2 || csi.Result.PacketSize != 128 {
		t.Errorf("GetCacheStorageInfo: %+v", csi.Result)
	}
	var cdi gisxml.GetCacheDescriptionInfoResponse
	call("GetCacheDescriptionInfo", &gisxml.GetCacheDescriptionInfo{MapName: "Layers"}, &cdi)
	if cdi.Result.ServiceType != gisxml.SingleFusedMapCache || len(cdi.Result.LayerCacheInfos) != 2 {
		t.Errorf("GetCacheDescriptionInfo: %s, %d layer infos", cdi.Result.ServiceType, len(cdi.Result.LayerCacheInfos))
	}
	var hlc gisxml.HasLayerCacheResponse
	call("HasLayerCache", &gisxml.HasLayerCache{MapName: "Layers", LayerID: -1}, &hlc)
	if !hlc.Result {
		t.Error("HasLayerCache(-1) = false")
	}
	call("HasLayerCache", &gisxml.HasLayerCache{MapName: "Layers", LayerID: 1}, &hlc)
	if hlc.Result {
		t.Error("HasLayerCache(1) = true for a fused cache")
	}
	var name gisxml.GetCacheNameResponse
	call("GetCacheName", &gisxml.GetCacheName{MapName: "Layers", LayerID: -1}, &name)
	if name.Result != "_alllayers" {
		t.Errorf("GetCacheName = %q", name.Result)
	}
	var dir gisxml.GetVirtualCacheDirectoryResponse
	call("GetVirtualCacheDirectory", &gisxml.GetVirtualCacheDirectory{MapName: "Layers", LayerID: -1}, &dir)
	if !strings.HasSuffix(dir.Result, "/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers") {
		t.Errorf("GetVirtualCacheDirectory = %q", dir.Result)
	}
	// A tile inside the AOI at the level, by SOAP and through the virtual directory.
	size := 40075016.685578488 / float64(int(1)<<level)
	row, col := int((20037508.342789244-5e6)/size), int((500000+20037508.342789244)/size)
	var tile gisxml.GetMapTileResponse
	call("GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: level, Row: row, Column: col}, &tile)
	if _, err := png.Decode(bytes.NewReader(tile.Result)); err != nil {
		t.Errorf("GetMapTile: not a PNG: %v", err)
	}
	var ltile gisxml.GetLayerTileResponse
	call("GetLayerTile", &gisxml.GetLayerTile{MapName: "Layers", LayerID: -1, Level: level, Row: row, Column: col}, &ltile)
	if !bytes.Equal(ltile.Result, tile.Result) {
		t.Error("GetLayerTile(-1) differs from GetMapTile")
	}
	resp, err := http.Get(fmt.Sprintf("%s/L%02d/R%08x/C%08x.png", dir.Result, level, row, col))
	if err != nil {
		t.Fatal(err)
	}
	vb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(vb, tile.Result) {
		t.Errorf("virtual directory tile: %s, %d bytes (want the GetMapTile bytes)", resp.Status, len(vb))
	}
	// A tile that was not seeded is missing: a client fault.
	err = cl.Call(ctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: missing[0], Row: missing[1], Column: missing[2]}, &tile)
	var f *soap.Fault
	if !errors.As(err, &f) || !strings.Contains(f.Error(), "not in the cache") {
		t.Errorf("missing tile: %v, want a fault saying it is not in the cache", err)
	}
}

// TestSeedInProcess seeds a small AOI on an in-process farm and calls every cache operation.
func TestSeedInProcess(t *testing.T) {
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	no := false
	id := submitSeed(t, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{0, 1, 2, 3, 4, 5}, SkipEmpty: &no})
	st := waitJob(t, base, id, 3*time.Minute, nil)
	t.Logf("job %s: %+v", id, st)
	if st.State != seed.StateDone || st.Failed != 0 || st.Done != st.Total || st.Total == 0 {
		t.Fatalf("job ended %s: done %d failed %d of %d (%s)", st.State, st.Done, st.Failed, st.Total, st.Error)
	}
	objs := cacheObjects(t, f.store)
	var keys []string
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("cache objects: %v", keys)
	checkCacheOperations(t, base+"/arcgis/services/world/MapServer", 5, [3]int{5, 0, 0}) // outside the AOI

	// An uncached map: false for the Has… operations, a client fault for the others.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := &soap.Client{Codec: soap.NewCodec(namespace, soap.Limits{}), Endpoint: base + "/arcgis/services/usa_geographic/MapServer"}
	var fused gisxml.HasSingleFusedMapCacheResponse
	if err := cl.Call(ctx, "HasSingleFusedMapCache", &gisxml.HasSingleFusedMapCache{MapName: "Layers"}, &fused); err != nil || fused.Result {
		t.Errorf("uncached HasSingleFusedMapCache = %v, %v", fused.Result, err)
	}
	var tci gisxml.GetTileCacheInfoResponse
	err := cl.Call(ctx, "GetTileCacheInfo", &gisxml.GetTileCacheInfo{MapName: "Layers"}, &tci)
	var fault *soap.Fault
	if !errors.As(err, &fault) || !strings.Contains(fault.Error(), "has no tile cache") {
		t.Errorf("uncached GetTileCacheInfo: %v, want a fault saying the map has no tile cache", err)
	}
}

// TestSeedSurvivesWorkerKill seeds a small AOI over several levels with two worker processes,
// kills one with SIGKILL mid-job (and the coordinator, replaced by a new one), and checks that the job finishes with every bundle
// byte-identical to a seed by the one remaining worker, and that cachetool verify is clean.
func TestSeedSurvivesWorkerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("about 90 s: asynq gives a killed worker's task back a minute after its death")
	}
	// Beside the other long waits (TestSeedSurvivesRedisRestart, its own Redis): the only
	// parallel test on the package's Redis database.
	t.Parallel()
	bin := buildBinary(t, "github.com/mapfarm/mapfarm")
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	addr := freePort(t)
	env := farmEnv(t, addr)
	victim := startKillableProcess(t, bin, "worker", env)
	startProcess(t, bin, "worker", env)
	coord := startKillableProcess(t, bin, "coordinator", env)
	startProcess(t, bin, "api", env)
	base := "http://" + addr
	waitReady(t, base+"/readyz", 60*time.Second)

	no := false
	// The whole world to level 5 (1,365 tiles in parts of 16): the polls below (every 200 ms) see the
	// job under way, and the killed worker's part comes back only after its lease expires.
	req := seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1, 2, 3, 4, 5}, SkipEmpty: &no, PartTiles: 16}
	id := submitSeed(t, base, req)
	killed := false
	st := waitJob(t, base, id, 5*time.Minute, func(st seed.Status) bool {
		if !killed && st.Done >= 48 {
			if err := victim.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
			t.Logf("killed worker %d at %d/%d tiles", victim.Process.Pid, st.Done, st.Total)
			// The coordinator too: a new one takes the job over from Redis.
			if err := coord.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			startProcess(t, bin, "coordinator", env)
			// A supervisor (systemd, Kubernetes) starts the worker again at once. The part the
			// killed one held comes back when a recoverer (asynq's: at a worker's start, then
			// every minute) finds its 30 s lease more than 30 s past: the new worker's runs
			// a minute from now; the survivor's may come first. It is tried again a second later
			// (retryDelay in worker/), not after asynq's 15–45 s backoff.
			startProcess(t, bin, "worker", env)
		}
		return true
	})
	if !killed {
		t.Fatalf("the job ended before a worker could be killed: %+v", st)
	}
	t.Logf("two workers, one killed and started again: %s, %d/%d tiles, %d bundles, %.0f tiles/s", st.State, st.Done, st.Total, st.Merged, st.RatePerSec)
	if st.State != seed.StateDone || st.Failed != 0 || st.Done != st.Total {
		t.Fatalf("job ended %s: done %d failed %d of %d (%s)", st.State, st.Done, st.Failed, st.Total, st.Error)
	}
	store := minioStore(t, env)
	first := cacheObjects(t, store)

	// The same job again, by the one worker left: every object must be the same bytes.
	req.ID = "single-" + id
	id2 := submitSeed(t, base, req)
	st2 := waitJob(t, base, id2, 5*time.Minute, nil)
	if st2.State != seed.StateDone || st2.Failed != 0 {
		t.Fatalf("single-worker job ended %s: %+v", st2.State, st2)
	}
	second := cacheObjects(t, store)
	if len(first) != len(second) || len(first) < int(st.Merged) {
		t.Fatalf("%d objects after the first seed, %d after the second", len(first), len(second))
	}
	for k, b := range first {
		if !bytes.Equal(b, second[k]) {
			t.Errorf("%s differs between the two-worker and the single-worker seed", k)
		}
	}

	// verify: every tile of the AOI at the levels present and decodable, bundles consistent.
	cmd := exec.Command(tool, "verify", "-service", "world", "-levels", "0-5")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("cachetool verify:\n%s", out)
	if err != nil {
		t.Fatalf("cachetool verify: %v", err)
	}
	if !strings.Contains(string(out), " 0 tiles of the area missing, 0 problems") {
		t.Errorf("verify output lacks a clean summary")
	}
	checkCacheOperations(t, base+"/arcgis/services/world/MapServer", 5, [3]int{6, 0, 0}) // level 6 was not seeded
}

// minioStore opens the bucket a farm started with env uses.
func minioStore(t testing.TB, env []string) *blob.MinIO {
	t.Helper()
	mi := testenv.MinIO(t)
	bucket := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MAPFARM_MINIO_BUCKET="); ok {
			bucket = v
		}
	}
	store, err := blob.NewMinIO(context.Background(), blob.MinIOConfig{Endpoint: mi.Endpoint, AccessKey: mi.AccessKey, SecretKey: mi.SecretKey, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// startKillableProcess is startProcess for a process the test may kill: at the end it is
// stopped if still running, and its exit status is not checked.
func startKillableProcess(t testing.TB, bin, role string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, role)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}
