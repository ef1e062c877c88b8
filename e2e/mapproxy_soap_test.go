package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// mpLevels is the number of levels of the MapProxy grid: the Web Mercator scheme's 0 to 8.
const mpLevels = 9

// mapproxyConfig returns a mapproxy.yaml whose grid is mapfarm's Web Mercator scheme (origin
// nw, so MapProxy's y is the row) and two caches filled from MapProxy's debug source (which
// writes each tile's bbox into it, so tiles differ): compact V2 in dir/v2/_alllayers and
// compact V1 in dir/v1/_alllayers.
func mapproxyConfig(dir string) string {
	s := tilecache.WebMercator()
	var res []string
	for _, l := range s.LODs[:mpLevels] {
		res = append(res, strconv.FormatFloat(l.Resolution, 'g', 17, 64))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `services:
  demo:
layers:
  - name: dbg
    title: dbg
    sources: [v2]
sources:
  dbg:
    type: debug
grids:
  mfgrid:
    srs: 'EPSG:3857'
    bbox: [%v, %v, %v, %v]
    bbox_srs: 'EPSG:3857'
    origin: 'nw'
    tile_size: [256, 256]
    res: [%s]
globals:
  cache:
    base_dir: %q
    lock_dir: %q
    tile_lock_dir: %q
caches:
`, s.Extent.Min[0], s.Extent.Min[1], s.Extent.Max[0], s.Extent.Max[1], strings.Join(res, ", "),
		filepath.Join(dir, "mpbase"), filepath.Join(dir, "mplocks"), filepath.Join(dir, "mptilelocks"))
	for _, v := range []string{"v1", "v2"} {
		fmt.Fprintf(&b, "  %s:\n    grids: [mfgrid]\n    sources: [dbg]\n    format: image/png\n    cache: {type: compact, version: %s, directory: %q}\n",
			v, v[1:], filepath.Join(dir, v, tilecache.FusedLayer))
	}
	return b.String()
}

// mapproxySeed seeds levels 0–3 of the world and level 8 around (0, 0), which spans four
// bundles.
const mapproxySeed = `seeds:
  world:
    caches: [v2, v1]
    grids: [mfgrid]
    levels:
      to: 3
  centre:
    caches: [v2, v1]
    grids: [mfgrid]
    levels: [8]
    coverages: [centre]
coverages:
  centre:
    bbox: [-300000, -300000, 300000, 300000]
    srs: 'EPSG:3857'
`

// mapproxyCandidates are the tiles compared: all of levels 0–3 and a 16×16 block of level 8
// around the centre (across four bundles), most but not all of them seeded.
func mapproxyCandidates() []tilecache.Tile {
	var tiles []tilecache.Tile
	for level := range 4 {
		for r := range 1 << level {
			for c := range 1 << level {
				tiles = append(tiles, tilecache.Tile{Level: level, Row: r, Col: c})
			}
		}
	}
	for r := 120; r < 136; r++ {
		for c := 120; c < 136; c++ {
			tiles = append(tiles, tilecache.Tile{Level: 8, Row: r, Col: c})
		}
	}
	return tiles
}

type mapproxyTiles map[string]map[string]struct {
	SHA256 string `json:"sha256"`
	Len    int    `json:"len"`
}

// TestMapProxyCacheThroughSOAP lets MapProxy write compact V2 and compact V1 caches, imports
// each with the real `cachetool import` under the world map of a running farm (with a conf.xml
// describing MapProxy's grid), and asks for every candidate tile with GetMapTile over SOAP: each
// tile MapProxy stored comes back byte-identical (MapProxy's own reader gives the reference
// bytes), each tile it did not store is a client fault saying the tile is not in the cache.
func TestMapProxyCacheThroughSOAP(t *testing.T) {
	py := mapproxyPython(t)
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	dir := t.TempDir()
	conf := filepath.Join(dir, "mapproxy.yaml")
	seedConf := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(conf, []byte(mapproxyConfig(dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seedConf, []byte(mapproxySeed), 0o644); err != nil {
		t.Fatal(err)
	}
	runPy[map[string]bool](t, py, "testdata/mapproxy_cache.py", "seed", conf, seedConf)
	candidates := mapproxyCandidates()
	req := map[string][][3]int{}
	for _, v := range []string{"v1", "v2"} {
		for _, tl := range candidates {
			req[v] = append(req[v], [3]int{tl.Col, tl.Row, tl.Level})
		}
	}
	reqData, _ := json.Marshal(req)
	reqFile := filepath.Join(dir, "request.json")
	if err := os.WriteFile(reqFile, reqData, 0o644); err != nil {
		t.Fatal(err)
	}
	mp := runPy[mapproxyTiles](t, py, "testdata/mapproxy_cache.py", "read", conf, reqFile)

	scheme := tilecache.WebMercator()
	scheme.LODs = scheme.LODs[:mpLevels]
	for _, tc := range []struct {
		name    string
		format  tilecache.StorageFormat
		storage gisxml.MapCacheStorageFormat
	}{
		{"v2", tilecache.CompactV2, gisxml.MapCacheStorageModeCompactV2},
		{"v1", tilecache.CompactV1, gisxml.MapCacheStorageModeCompact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := mp[tc.name]
			// Levels 0–3 whole (85 tiles) and at least the 16 tiles of the level-8 coverage.
			if len(stored) < 85+16 || len(stored) == len(candidates) {
				t.Fatalf("MapProxy stored %d of the %d candidate tiles; want levels 0-3, part of level 8", len(stored), len(candidates))
			}
			// conf.xml (and conf.cdi) for MapProxy's grid beside its _alllayers folder.
			local, err := blob.NewDisk(filepath.Join(dir, tc.name))
			if err != nil {
				t.Fatal(err)
			}
			lc, err := tilecache.New(local, tilecache.Options{Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			if err := lc.WriteMetadata(context.Background(), tilecache.CacheInfo{Scheme: scheme, Storage: tc.format}, orb.Bound{Min: orb.Point{-300000, -300000}, Max: orb.Point{300000, 300000}}); err != nil {
				t.Fatal(err)
			}

			f := startFarm(t)
			cmd := exec.Command(tool, "import", "-service", "world", "-dir", filepath.Join(dir, tc.name))
			out, err := cmd.CombinedOutput()
			t.Logf("cachetool import: %s", strings.TrimSpace(lastLine(string(out))))
			if err != nil {
				t.Fatalf("cachetool import: %v\n%s", err, out)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cl := &soap.Client{Codec: soap.NewCodec(namespace, soap.Limits{}), Endpoint: f.url + "/arcgis/services/world/MapServer"}
			var csi gisxml.GetCacheStorageInfoResponse
			if err := cl.Call(ctx, "GetCacheStorageInfo", &gisxml.GetCacheStorageInfo{MapName: "Layers"}, &csi); err != nil {
				t.Fatal(err)
			}
			if csi.Result.StorageFormat != tc.storage || csi.Result.PacketSize != 128 {
				t.Errorf("GetCacheStorageInfo: %+v, want %s, 128", csi.Result, tc.storage)
			}
			same, faults := 0, 0
			for _, tl := range candidates {
				var resp gisxml.GetMapTileResponse
				err := cl.Call(ctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: tl.Level, Row: tl.Row, Column: tl.Col}, &resp)
				want, ok := stored[tl.String()]
				var fault *soap.Fault
				switch {
				case !ok && errors.As(err, &fault) && fault.Code == "soap:Client" && strings.Contains(fault.Error(), "is not in the cache"):
					faults++
				case !ok:
					t.Errorf("tile %v, which MapProxy did not store: %d bytes, %v; want a client fault", tl, len(resp.Result), err)
				case err != nil:
					t.Errorf("tile %v: %v", tl, err)
				case sha(resp.Result) != want.SHA256:
					t.Errorf("tile %v: GetMapTile gave %d bytes, MapProxy stored %d", tl, len(resp.Result), want.Len)
				default:
					same++
				}
			}
			t.Logf("%s: %d MapProxy tiles byte-identical over GetMapTile, %d missing tiles answered with a fault", tc.name, same, faults)
			if same != len(stored) || faults != len(candidates)-len(stored) {
				t.Errorf("%d of %d stored tiles identical, %d of %d missing tiles faulted", same, len(stored), faults, len(candidates)-len(stored))
			}
			// Outside the seeded area and outside the scheme.
			var resp gisxml.GetMapTileResponse
			var fault *soap.Fault
			if err := cl.Call(ctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: 8, Row: 0, Column: 0}, &resp); !errors.As(err, &fault) || !strings.Contains(fault.Error(), "is not in the cache") {
				t.Errorf("tile 8/0/0: %v; want a fault saying it is not in the cache", err)
			}
			if err := cl.Call(ctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: 9, Row: 0, Column: 0}, &resp); !errors.As(err, &fault) || !strings.Contains(fault.Error(), "not in the cache's tiling scheme") {
				t.Errorf("tile 9/0/0: %v; want a fault saying level 9 is not in the tiling scheme", err)
			}
		})
	}
}

// mapproxyPython returns the Python of the zeep clients when it can import mapproxy (Debian
// python3-mapproxy); without it the test skips, or fails under MAPFARM_REQUIRE_SERVICES=1.
func mapproxyPython(t *testing.T) string {
	t.Helper()
	py := testenv.Python(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := exec.CommandContext(ctx, py, "-c", "import mapproxy.cache.compact, mapproxy.seed.script").Run(); err != nil {
		msg := "python module mapproxy is not importable by " + py + " (Debian package python3-mapproxy)"
		if testenv.Required() {
			t.Fatalf("%s, and %s=1", msg, testenv.EnvRequireServices)
		}
		t.Skip(msg)
	}
	return py
}

// runPy runs a Python script with a given interpreter and decodes the JSON it prints.
func runPy[T any](t *testing.T, py, script string, args ...string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, stderr.String())
	}
	var v T
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s output: %v\n%s", script, err, out)
	}
	return v
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// lastLine returns the last non-empty line of s (progress output redraws with \r).
func lastLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}
