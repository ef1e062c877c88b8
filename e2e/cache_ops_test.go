package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// cacheServices writes a service definition file holding the sample services and two more
// copies of the world map, and returns the startFarm option that serves it:
//
//	world_ondemand  a fused compact-V2 cache with onDemand: true
//	world_layers    one compact-V2 cache per layer (layerCaches: true)
func cacheServices(t *testing.T) func(*config.Config) {
	t.Helper()
	sample, data := sampleServices(t)
	var b strings.Builder
	b.WriteString(sample)
	for _, svc := range []struct{ name, cache string }{
		{"world_ondemand", "onDemand: true"},
		{"world_layers", "layerCaches: true"},
	} {
		// The layers reuse the sample's YAML anchors (renderers, fields, labels).
		fmt.Fprintf(&b, `
  - name: %s
    description: The world map, for cache tests.
    maps:
      - name: Layers
        spatialReference: 3857
        backgroundColor: [198, 219, 239]
        cache: {scheme: webMercator, maxLevel: 7, format: PNG, storage: compactV2, %s}
        layers:
          - id: 0
            name: Country points
            visible: false
            source: {geopackage: %s/sample/world_country_points_50m_3857.gpkg, table: country_points}
            fields: [fid, {name: NAME, alias: Name}, {name: ISO_N3, alias: ISO numeric code}]
            displayField: NAME
            renderer: *pointRenderer
          - id: 1
            name: Countries
            source: {geopackage: %s/sample/world_countries_50m_3857.gpkg, table: countries}
            fields: *countryFields
            displayField: NAME
            renderer: *countryRenderer
            labels: *countryLabels
`, svc.name, svc.cache, data, data)
	}
	return withServices(t, b.String())
}

// zeepCache is what zeep_cache.py prints.
type zeepCache struct {
	Fused         bool `json:"fused"`
	TileCacheInfo struct {
		Cols, Rows, DPI, WKID int
		Origin                []float64
		Levels                []int
	} `json:"tileCacheInfo"`
	Format              string          `json:"format"`
	ClientCaching       bool            `json:"clientCaching"`
	Storage             []any           `json:"storage"`
	CDIClient           string          `json:"cdiClient"`
	StrictCDIError      string          `json:"strictCdiError"`
	ServiceType         string          `json:"serviceType"`
	LayerCaches         [][]any         `json:"layerCaches"`
	CDILevels           []int           `json:"cdiLevels"`
	HasLayerCache       map[string]bool `json:"hasLayerCache"`
	CacheName           string          `json:"cacheName"`
	OtherCacheNameFault string          `json:"otherCacheNameFault"`
	VirtualDirectory    string          `json:"virtualDirectory"`
	VirtualTile         []byte          `json:"virtualTile"`
	VirtualTileType     string          `json:"virtualTileType"`
	Tile                []byte          `json:"tile"`
	MapTileSame         bool            `json:"mapTileSame"`
	MapTileFault        string          `json:"mapTileFault"`
	MissingFault        string          `json:"missingFault"`
}

// TestZeepCacheOperations seeds a fused cache (world) and per-layer caches (world_layers) and
// calls every cache operation on each through zeep clients generated from the served WSDL and
// from the ArcGIS reference WSDL: HasSingleFusedMapCache, GetTileCacheInfo, GetTileImageInfo,
// GetCacheControlInfo, GetCacheStorageInfo, GetCacheDescriptionInfo, HasLayerCache (every
// layer), GetCacheName, GetVirtualCacheDirectory (and a tile fetched from the URL it gives),
// GetLayerTile and GetMapTile, and a missing tile. Tiles are compared with the bytes in MinIO.
//
// GetCacheDescriptionInfo of a map of two layers is the one operation a strict client from the
// reference WSDL cannot read (its schema allows one LayerCacheInfo): the script reads it with a
// lenient client there, and every layer's entry must still come through.
func TestZeepCacheOperations(t *testing.T) {
	testenv.Python(t)
	f := startFarm(t, cacheServices(t))
	base := strings.TrimSuffix(f.url, "/")
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Extent: seedAOI, Levels: []int{0, 1, 2, 3, 4}, SkipEmpty: &no})
	seedAndWait(t, base, seed.Request{Service: "world_layers", Extent: seedAOI, Levels: []int{0, 1, 2, 3, 4}, SkipEmpty: &no})

	// Tile 4/5/8 lies in the area of interest; 4/0/0 far outside it.
	const level, row, col = 4, 5, 8
	tile := tilecache.Tile{Level: level, Row: row, Col: col}
	for _, sc := range []struct {
		service, folder string
		layer           int
	}{
		{"world", tilecache.FusedLayer, -1},
		{"world_layers", "Country points", 0},
	} {
		stored, _, err := tilecache.Open(context.Background(), f.store, seed.CacheRoot(sc.service, "Layers"), sc.folder, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := stored.ReadTile(context.Background(), tile)
		if err != nil {
			t.Fatalf("%s: tile %v not in MinIO: %v", sc.service, tile, err)
		}
		endpoint := base + "/arcgis/services/" + sc.service + "/MapServer"
		t.Run(sc.service, func(t *testing.T) {
			eachClientWSDL(t, endpoint, func(t *testing.T, wsdl string) {
				z := runScript[zeepCache](t, "testdata/zeep_cache.py", wsdl, endpoint, namespace,
					strconv.Itoa(sc.layer), strconv.Itoa(level), strconv.Itoa(row), strconv.Itoa(col))
				t.Logf("GetCacheDescriptionInfo by the %s client: %s %v; HasLayerCache %v; GetCacheName %q; directory %s; tile %d bytes",
					z.CDIClient, z.ServiceType, z.LayerCaches, z.HasLayerCache, z.CacheName, z.VirtualDirectory, len(z.Tile))
				tci := z.TileCacheInfo
				if tci.Cols != 256 || tci.Rows != 256 || tci.DPI != 96 || tci.WKID != 3857 || len(tci.Levels) != 8 || len(z.CDILevels) != 8 || z.Format != "PNG" || !z.ClientCaching {
					t.Errorf("cache info: %+v", z)
				}
				if fmt.Sprint(z.Storage) != "[gisMapCacheStorageModeCompactV2 128]" {
					t.Errorf("storage %v", z.Storage)
				}
				// The served WSDL declares the LayerCacheInfo array repeating; the reference's
				// strict client refuses the second element, its lenient one reads them all.
				wantClient := "lenient"
				if strings.HasSuffix(wsdl, "?wsdl") { // the served WSDL
					wantClient = "strict"
				}
				if z.CDIClient != wantClient || (wantClient == "lenient") != strings.Contains(z.StrictCDIError, "LayerCacheInfo") {
					t.Errorf("GetCacheDescriptionInfo read by the %s client (strict error %q), want %s", z.CDIClient, z.StrictCDIError, wantClient)
				}
				if fmt.Sprint(z.LayerCaches) != "[[0 true] [1 true]]" {
					t.Errorf("LayerCacheInfos %v, want both layers cached", z.LayerCaches)
				}
				if !bytes.Equal(z.Tile, want) {
					t.Errorf("GetLayerTile(%d): %d bytes, MinIO holds %d", sc.layer, len(z.Tile), len(want))
				}
				if _, err := png.Decode(bytes.NewReader(z.Tile)); err != nil {
					t.Errorf("tile: %v", err)
				}
				if !bytes.Equal(z.VirtualTile, want) || z.VirtualTileType != "image/png" {
					t.Errorf("tile from the virtual directory: %d bytes %s, want the %d bytes in MinIO", len(z.VirtualTile), z.VirtualTileType, len(want))
				}
				if !strings.Contains(z.MissingFault, "not in the cache") {
					t.Errorf("missing tile fault %q", z.MissingFault)
				}
				dirSuffix := "/arcgiscache/" + sc.service + "/Layers/" + strings.ReplaceAll(sc.folder, " ", "%20")
				if z.CacheName != sc.folder || !strings.HasSuffix(z.VirtualDirectory, dirSuffix) {
					t.Errorf("cache name %q, directory %q; want %q, …%s", z.CacheName, z.VirtualDirectory, sc.folder, dirSuffix)
				}
				if sc.layer == -1 {
					if !z.Fused || z.ServiceType != "gisSingleFusedMapCache" || fmt.Sprint(z.HasLayerCache) != "map[-1:true 0:false 1:false]" {
						t.Errorf("fused %v, type %s, HasLayerCache %v", z.Fused, z.ServiceType, z.HasLayerCache)
					}
					if !z.MapTileSame || !strings.Contains(z.OtherCacheNameFault, "has no cache of its own") {
						t.Errorf("GetMapTile same as GetLayerTile(-1): %v; GetCacheName(0) fault %q", z.MapTileSame, z.OtherCacheNameFault)
					}
				} else {
					if z.Fused || z.ServiceType != "gisIndividualLayerCaches" || fmt.Sprint(z.HasLayerCache) != "map[-1:false 0:true 1:true]" {
						t.Errorf("fused %v, type %s, HasLayerCache %v", z.Fused, z.ServiceType, z.HasLayerCache)
					}
					if !strings.Contains(z.MapTileFault, "not in the cache") || !strings.Contains(z.OtherCacheNameFault, "has no fused cache") {
						t.Errorf("GetMapTile fault %q, GetCacheName(-1) fault %q", z.MapTileFault, z.OtherCacheNameFault)
					}
				}
			})
		})
	}
}

// TestOnDemandTilesMatchSeeded seeds an area of world_ondemand (whose cache renders missing
// tiles on demand), keeps the seeded tiles, deletes them with a delete job, and asks for each
// with GetMapTile from 8 clients at once: every tile comes back byte-identical to the seeded
// one (the same metatile, buffer and labels), and none is stored.
func TestOnDemandTilesMatchSeeded(t *testing.T) {
	f := startFarm(t, cacheServices(t))
	base := strings.TrimSuffix(f.url, "/")
	// Western Europe and the Mediterranean at level 5: 8 × 6 tiles over 3 × 2 metatiles, with
	// country labels across tile and metatile edges.
	aoi := []float64{-1_500_000, 3_000_000, 6_500_000, 9_000_000}
	no := false
	seedAndWait(t, base, seed.Request{Service: "world_ondemand", Extent: aoi, Levels: []int{5}, SkipEmpty: &no})
	ctx := context.Background()
	cache, _, err := tilecache.Open(ctx, f.store, seed.CacheRoot("world_ondemand", "Layers"), tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	cover, _ := tilecache.WebMercator().Cover(boundOf(aoi), 5)
	seeded := map[tilecache.Tile][]byte{}
	var tiles []tilecache.Tile
	for tl := range cover.Tiles() {
		data, err := cache.ReadTile(ctx, tl)
		if err != nil {
			t.Fatalf("seeded tile %v: %v", tl, err)
		}
		seeded[tl] = data
		tiles = append(tiles, tl)
	}
	if len(tiles) != 48 {
		t.Fatalf("the area covers %d tiles at level 5, want 48", len(tiles))
	}
	del := seedAndWait(t, base, seed.Request{Service: "world_ondemand", Extent: aoi, Levels: []int{5}, Mode: "delete"})
	if del.Done != int64(len(tiles)) || del.Total != del.Done {
		t.Errorf("delete job: done %d of %d, want %d", del.Done, del.Total, len(tiles))
	}
	// A fresh reader: the first one's bundle index is that of before the delete.
	if cache, _, err = tilecache.Open(ctx, f.store, seed.CacheRoot("world_ondemand", "Layers"), tilecache.FusedLayer, nil); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tiles {
		if _, err := cache.ReadTile(ctx, tl); !errors.Is(err, tilecache.ErrTileNotFound) {
			t.Fatalf("tile %v still stored after the delete job: %v", tl, err)
		}
	}

	cl := &soap.Client{Codec: soap.NewCodec(namespace, soap.Limits{}), Endpoint: base + "/arcgis/services/world_ondemand/MapServer"}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	got := make([][]byte, len(tiles))
	errs := make([]error, len(tiles))
	work := make(chan int, len(tiles))
	for i := range tiles {
		work <- i
	}
	close(work)
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		wg.Go(func() {
			for i := range work {
				tl := tiles[i]
				var resp gisxml.GetMapTileResponse
				errs[i] = cl.Call(cctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: tl.Level, Row: tl.Row, Column: tl.Col}, &resp)
				got[i] = resp.Result
			}
		})
	}
	wg.Wait()
	t.Logf("%d on-demand tiles of 6 metatiles in %s", len(tiles), time.Since(start).Round(time.Millisecond))
	same := 0
	for i, tl := range tiles {
		switch {
		case errs[i] != nil:
			t.Errorf("tile %v: %v", tl, errs[i])
		case !bytes.Equal(got[i], seeded[tl]):
			t.Errorf("tile %v: on demand %d bytes, seeded %d; %s", tl, len(got[i]), len(seeded[tl]), pixelDiff(got[i], seeded[tl]))
		default:
			same++
		}
	}
	t.Logf("%d of %d on-demand tiles byte-identical to the seeded ones", same, len(tiles))
	if cache, _, err = tilecache.Open(ctx, f.store, seed.CacheRoot("world_ondemand", "Layers"), tilecache.FusedLayer, nil); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tiles {
		if _, err := cache.ReadTile(ctx, tl); !errors.Is(err, tilecache.ErrTileNotFound) {
			t.Errorf("on-demand tile %v was stored: %v", tl, err)
		}
	}
}

// boundOf turns [xmin, ymin, xmax, ymax] into a bound.
func boundOf(e []float64) orb.Bound {
	return orb.Bound{Min: orb.Point{e[0], e[1]}, Max: orb.Point{e[2], e[3]}}
}

// pixelDiff describes how two PNG tiles differ.
func pixelDiff(a, b []byte) string {
	ia, err1 := png.Decode(bytes.NewReader(a))
	ib, err2 := png.Decode(bytes.NewReader(b))
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("decode: %v, %v", err1, err2)
	}
	_, d := diffPixels(ia, ib)
	return d
}
