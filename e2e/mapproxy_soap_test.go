package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os/exec"
	"path/filepath"
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

// TestMapProxyCacheThroughSOAP lets MapProxy write compact V2, compact V1 and exploded (its
// "arcgis" directory layout) caches, imports each with the real `cachetool import` under the
// world map of a running farm (with a conf.xml describing MapProxy's grid), and asks for every candidate tile with GetMapTile over SOAP: each
// tile MapProxy stored comes back byte-identical (MapProxy's own reader gives the reference
// bytes), each tile it did not store is a client fault saying the tile is not in the cache.
func TestMapProxyCacheThroughSOAP(t *testing.T) {
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	dir := t.TempDir()
	layouts := []struct {
		name    string
		backend string
		format  tilecache.StorageFormat
		storage gisxml.MapCacheStorageFormat
		packet  int // rows and columns of a bundle; none for exploded caches
	}{
		{"v2", testenv.MapProxyCompactV2, tilecache.CompactV2, gisxml.MapCacheStorageModeCompactV2, 128},
		{"v1", testenv.MapProxyCompactV1, tilecache.CompactV1, gisxml.MapCacheStorageModeCompact, 128},
		{"exploded", testenv.MapProxyExploded, tilecache.Exploded, gisxml.MapCacheStorageModeExploded, 0},
	}
	var caches []testenv.MapProxyCache
	var names []string
	for _, l := range layouts {
		caches = append(caches, testenv.MapProxyCache{Name: l.name, Backend: l.backend, Dir: filepath.Join(dir, l.name, tilecache.FusedLayer), Seeded: true})
		names = append(names, l.name)
	}
	mapproxy := testenv.NewMapProxy(t, dir, caches)
	mapproxy.Seed(names...)
	candidates := testenv.MapProxyTiles()
	mp := mapproxy.Read(names, candidates)

	scheme := tilecache.WebMercator()
	scheme.LODs = scheme.LODs[:testenv.MapProxyLevels]
	cov := testenv.MapProxyCoverage()
	for _, tc := range layouts {
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
			if err := lc.WriteMetadata(context.Background(), tilecache.CacheInfo{Scheme: scheme, Storage: tc.format}, orb.Bound{Min: orb.Point{cov[0], cov[1]}, Max: orb.Point{cov[2], cov[3]}}); err != nil {
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
			if csi.Result.StorageFormat != tc.storage || csi.Result.PacketSize != tc.packet {
				t.Errorf("GetCacheStorageInfo: %+v, want %s, %d", csi.Result, tc.storage, tc.packet)
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
