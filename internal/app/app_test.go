package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/admincred"
	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/app/apptest"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/soap"
)

const namespace = "http://schemas.mapfarm.dev/gis/10.7"

// serve runs the embedded default as `mapfarm serve` does (embedded Redis, a disk store in dir,
// the sample services, seeding at start) until the test ends, and returns its public URL.
func serve(t *testing.T, dir string) string {
	t.Helper()
	cfg := apptest.Config(t, "MAPFARM_STORE_DIR", dir, "MAPFARM_NAMESPACE", namespace, "MAPFARM_STATE_DIR", t.TempDir())
	return apptest.Serve(t, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Hooks{SeedAtStart: true})
}

// startJob waits for the one seeding job the farm submitted at start to end, and returns it.
func startJob(t *testing.T, base string) seed.Status {
	t.Helper()
	cred, _, err := admincred.Find(os.Getenv("MAPFARM_STATE_DIR"), base)
	if err != nil {
		t.Fatal(err)
	}
	getJSON := func(path string, v any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+cred)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list struct{ Jobs []seed.Status }
		getJSON("/admin/seed", &list)
		if len(list.Jobs) > 1 {
			t.Fatalf("%d jobs at start, want 1: %+v", len(list.Jobs), list.Jobs)
		}
		if len(list.Jobs) == 1 {
			var st seed.Status
			getJSON("/admin/seed/"+list.Jobs[0].ID, &st)
			if seed.Terminal(st.State) {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start-up seeding job ended within 2 minutes: %+v", list.Jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSampleLayerCache starts the embedded default and tries the sample per-layer cache
// (world_geographic) through SOAP as a user would: HasLayerCache, GetCacheDescriptionInfo,
// GetCacheName and GetLayerTile, whose PNG must show the layer where it has data. A second
// start on the same store keeps the stored tiles.
func TestSampleLayerCache(t *testing.T) {
	dir := t.TempDir()
	base := serve(t, dir)
	st := startJob(t, base)
	if st.State != seed.StateDone || st.Failed != 0 || st.Done == 0 || st.Spec == nil ||
		st.Spec.Service != "world_geographic" || len(st.Spec.Levels) != 4 || len(st.Spec.Layers) != 2 {
		t.Fatalf("start-up job: %+v", st)
	}
	t.Logf("start-up job %s: %d tiles stored, %d empty, %.1fs", st.ID, st.Done, st.Empty, st.ElapsedSecs)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := func(service string) *soap.Client {
		return &soap.Client{Codec: soap.NewCodec(namespace, soap.Limits{}), Endpoint: base + "/arcgis/services/" + service + "/MapServer"}
	}
	geo := client("world_geographic")
	call := func(op string, req, resp any) {
		t.Helper()
		if err := geo.Call(ctx, op, req, resp); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}

	t.Run("HasLayerCache", func(t *testing.T) {
		for _, tc := range []struct {
			service string
			layer   int
			want    bool
		}{
			{"world_geographic", 0, true},   // Country points
			{"world_geographic", 1, true},   // Countries
			{"world_geographic", -1, false}, // no fused cache: one cache per layer
			{"world", 1, false},             // a fused cache, not seeded at start
		} {
			var resp gisxml.HasLayerCacheResponse
			if err := client(tc.service).Call(ctx, "HasLayerCache", &gisxml.HasLayerCache{MapName: "Layers", LayerID: tc.layer}, &resp); err != nil {
				t.Fatalf("%s HasLayerCache(%d): %v", tc.service, tc.layer, err)
			}
			if resp.Result != tc.want {
				t.Errorf("%s HasLayerCache(%d) = %v, want %v", tc.service, tc.layer, resp.Result, tc.want)
			}
		}
	})

	t.Run("GetCacheDescriptionInfo", func(t *testing.T) {
		var resp gisxml.GetCacheDescriptionInfoResponse
		call("GetCacheDescriptionInfo", &gisxml.GetCacheDescriptionInfo{MapName: "Layers"}, &resp)
		d := resp.Result
		if d.ServiceType != gisxml.IndividualLayerCaches {
			t.Errorf("ServiceType %s, want %s", d.ServiceType, gisxml.IndividualLayerCaches)
		}
		var layers []string
		for _, l := range d.LayerCacheInfos {
			layers = append(layers, fmt.Sprintf("%d:%v", l.LayerID, l.HasCache))
		}
		if got := strings.Join(layers, " "); got != "0:true 1:true" {
			t.Errorf("LayerCacheInfos %s, want 0:true 1:true", got)
		}
		tci := d.TileCacheInfo
		origin, _ := tci.TileOrigin.(*gisxml.PointN)
		if tci.TileCols != 256 || tci.TileRows != 256 || tci.DPI != 96 || origin == nil || origin.X != -180 || origin.Y != 90 {
			t.Errorf("tiles %d×%d px at %d dpi from %+v, want 256×256 at 96 from (-180, 90)", tci.TileCols, tci.TileRows, tci.DPI, tci.TileOrigin)
		}
		if len(tci.LODInfos) != 4 {
			t.Fatalf("%d LODs, want levels 0-3", len(tci.LODInfos))
		}
		for i, l := range tci.LODInfos {
			if want := 0.703125 / float64(int(1)<<i); l.LevelID != i || math.Abs(l.Resolution-want) > 1e-9 {
				t.Errorf("LOD %d: level %d, %v°/px; want level %d, %v°/px", i, l.LevelID, l.Resolution, i, want)
			}
		}
		if d.TileImageInfo.CacheTileFormat != "PNG" {
			t.Errorf("CacheTileFormat %q, want PNG", d.TileImageInfo.CacheTileFormat)
		}
		var csi gisxml.GetCacheStorageInfoResponse
		call("GetCacheStorageInfo", &gisxml.GetCacheStorageInfo{MapName: "Layers"}, &csi)
		if csi.Result.StorageFormat != gisxml.MapCacheStorageModeExploded {
			t.Errorf("StorageFormat %s, want exploded", csi.Result.StorageFormat)
		}
		var name gisxml.GetCacheNameResponse
		call("GetCacheName", &gisxml.GetCacheName{MapName: "Layers", LayerID: 1}, &name)
		if name.Result != "Countries" {
			t.Errorf("GetCacheName(1) = %q, want Countries", name.Result)
		}
	})

	// Tile 2/0/4 spans 0°..45°E, 45°..90°N (45° a tile at level 2): Europe and the Norwegian Sea.
	pixel := func(lon, lat float64) image.Point {
		return image.Pt(int((lon-0)/45*256), int((90-lat)/45*256))
	}
	t.Run("GetLayerTile", func(t *testing.T) {
		for _, tc := range []struct {
			layer     int
			minOpaque float64      // share of pixels drawn
			land      *image.Point // a pixel inside a country
			sea       image.Point  // a pixel of open sea: transparent
		}{
			{layer: 1, minOpaque: 0.3, land: ptr(pixel(40, 55)) /* near Moscow */, sea: pixel(2, 68)},
			{layer: 0, minOpaque: 0.001, sea: pixel(2, 68)},
		} {
			var resp gisxml.GetLayerTileResponse
			call("GetLayerTile", &gisxml.GetLayerTile{MapName: "Layers", LayerID: tc.layer, Level: 2, Row: 0, Column: 4}, &resp)
			img, err := png.Decode(bytes.NewReader(resp.Result))
			if err != nil {
				t.Fatalf("layer %d: GetLayerTile: not a PNG (%d bytes): %v", tc.layer, len(resp.Result), err)
			}
			if b := img.Bounds(); b.Dx() != 256 || b.Dy() != 256 {
				t.Fatalf("layer %d: tile is %v, want 256×256", tc.layer, b)
			}
			opaque := 0
			for y := range 256 {
				for x := range 256 {
					if _, _, _, a := img.At(x, y).RGBA(); a != 0 {
						opaque++
					}
				}
			}
			if share := float64(opaque) / (256 * 256); share < tc.minOpaque {
				t.Errorf("layer %d: %.1f%% of the tile drawn, want at least %.1f%%", tc.layer, 100*share, 100*tc.minOpaque)
			}
			if _, _, _, a := img.At(tc.sea.X, tc.sea.Y).RGBA(); a != 0 {
				t.Errorf("layer %d: sea pixel %v is %v, want transparent", tc.layer, tc.sea, img.At(tc.sea.X, tc.sea.Y))
			}
			if tc.land != nil {
				// The Countries fill, (232, 228, 216), opaque.
				c := color.NRGBAModel.Convert(img.At(tc.land.X, tc.land.Y)).(color.NRGBA)
				if c.A != 255 || absDiff(c.R, 232) > 8 || absDiff(c.G, 228) > 8 || absDiff(c.B, 216) > 8 {
					t.Errorf("layer %d: land pixel %v is %v, want the country fill (232, 228, 216)", tc.layer, *tc.land, c)
				}
			}
		}
	})

	t.Run("restart keeps the tiles", func(t *testing.T) {
		// A second farm on the same store: the start-up job (recreateEmpty) renders no tile again.
		base := serve(t, dir)
		st := startJob(t, base)
		if st.State != seed.StateDone || st.Failed != 0 || st.Done != 0 || st.Kept == 0 {
			t.Errorf("second start-up job: %s, %d rendered, %d kept, %d failed; want done, 0 rendered, some kept", st.State, st.Done, st.Kept, st.Failed)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
