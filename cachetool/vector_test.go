package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilearchive"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectortile"
	"github.com/mapfarm/mapfarm/internal/vectortileserver"
)

// vectorServices is a service of the sample countries with a Web Mercator cache of levels 0-3
// that leaves empty tiles out: vector levels 0-2.
const vectorServices = `services:
  - name: vworld
    maps:
      - name: Layers
        spatialReference: 3857
        cache: {scheme: webMercator, maxLevel: 3, format: PNG, storage: compactV2, skipEmpty: true}
        layers:
          - id: 0
            name: Countries
            source: {geopackage: DATA/world_countries_50m_3857.gpkg, table: countries}
            fields: [fid, NAME, ISO_N3]
            displayField: NAME
            renderer: {type: simple, symbol: {type: simpleFill, style: solid, color: [232, 228, 216]}}
`

// TestSeedVectorCache: `cachetool seed -format pbf` seeds a map's vector tile cache with a
// local farm (api, coordinator and worker in this process) on real Redis and MinIO: compact-V2
// bundles of gzipped tiles under arcgiscache/<service>/<map>_vector with a 512-px Web Mercator
// conf.xml of format PBF; every stored tile is a valid vector tile (mvtcheck) whose features
// are countries with their names, byte for byte the tile the VectorTileServer builds on demand; `cachetool verify -vector` finds no problem; the cache
// exports to an MBTiles file that GDAL's MVT driver reads (ogrinfo), and to PMTiles.
func TestSeedVectorCache(t *testing.T) {
	ctx := t.Context()
	ep := testenv.MinIO(t)
	bucket := testenv.Bucket(t)
	store, err := blob.NewMinIO(ctx, blob.MinIOConfig{Endpoint: ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: ep.SecretKey, Bucket: bucket, CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, err := filepath.Abs("../data/sample")
	if err != nil {
		t.Fatal(err)
	}
	services := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(services, []byte(strings.ReplaceAll(vectorServices, "DATA", data)), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"MAPFARM_REDIS_ADDR": testenv.Redis(t), "MAPFARM_REDIS_DB": strconv.Itoa(testenv.RedisDB(t)),
		"MAPFARM_STORE": "minio", "MAPFARM_MINIO_ENDPOINT": ep.Endpoint, "MAPFARM_MINIO_ACCESS_KEY": ep.AccessKey,
		"MAPFARM_MINIO_SECRET_KEY": ep.SecretKey, "MAPFARM_MINIO_BUCKET": bucket,
		"MAPFARM_SERVICES": services, "MAPFARM_STATE_DIR": t.TempDir(), "MAPFARM_ADMIN_TOKEN": "", "MAPFARM_TOKEN_SECRET": "",
	} {
		t.Setenv(k, v)
	}
	out := cachetool(t, "seed", "-service", "vworld", "-format", "pbf")
	if !strings.Contains(out, "done") || !strings.Contains(out, "levels [0 1 2]") {
		t.Fatalf("cachetool seed -format pbf:\n%s", out)
	}
	root := seed.VectorCacheRoot("vworld", "Layers")
	c, info, err := tilecache.Open(ctx, store, root, tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Scheme.TileCols != 512 || info.Scheme.Format != "PBF" || info.Storage != tilecache.CompactV2 || info.Scheme.SpatialReference.WKID != 3857 {
		t.Errorf("conf.xml: %d px, format %s, storage %v, WKID %d", info.Scheme.TileCols, info.Scheme.Format, info.Storage, info.Scheme.SpatialReference.WKID)
	}
	// What the VectorTileServer builds on demand, to compare the seeded tiles with.
	builder, err := vectortile.New(vectortile.Params{Services: catalogtest.Open(t, services), Options: mvt.Options{Gzip: true}})
	if err != nil {
		t.Fatal(err)
	}
	stored, features := 0, 0
	for level := range 3 {
		for row := range 1 << level {
			for col := range 1 << level {
				tile := tilecache.Tile{Level: level, Row: row, Col: col}
				data, err := c.ReadTile(ctx, tile)
				if err != nil {
					continue // an empty tile (skipEmpty)
				}
				stored++
				if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
					t.Errorf("tile %v is not gzipped", tile)
				}
				problems, st := mvtcheck.Check(data, mvtcheck.Options{MaxBuffer: 64})
				if len(problems) > 0 {
					t.Errorf("tile %v: %v", tile, problems)
				}
				if st.Layers != 1 || st.Features["Countries"] == 0 {
					t.Errorf("tile %v holds layers %v, want Countries alone", tile, st.Features)
				}
				features += st.Features["Countries"]
				if res, err := builder.WebMercatorTile(ctx, "vworld", "", level, col, row); err != nil || !bytes.Equal(res.Data, data) {
					t.Errorf("tile %v: the seeded tile is not the one built on demand (%v)", tile, err)
				}
			}
		}
	}
	// The VectorTileServer's reader of seeded caches finds them where seeding put them.
	served := vectortileserver.NewStoreCaches(store, nil)
	want, _ := c.ReadTile(ctx, tilecache.Tile{Level: 2, Row: 1, Col: 2})
	if data, ok, err := served.VectorTile(ctx, "vworld", "Layers", 2, 1, 2); err != nil || !ok || len(want) == 0 || !bytes.Equal(data, want) {
		t.Errorf("the VectorTileServer's store reader: tile 2/1/2: %d bytes (%v, %v), want the %d stored", len(data), ok, err, len(want))
	}
	if stored < 15 || features < 300 {
		t.Errorf("%d of the 21 tiles of levels 0-2 stored, %d features in them", stored, features)
	}
	if out := cachetool(t, "verify", "-service", "vworld", "-vector", "-allow-missing"); !strings.Contains(out, strconv.Itoa(stored)+" tiles decoded") || !strings.Contains(out, " 0 problems") {
		t.Errorf("verify -vector: %s", out)
	}

	mb := filepath.Join(dir, "vworld.mbtiles")
	if out := cachetool(t, "export", "-service", "vworld", "-vector", "-file", mb); !strings.Contains(out, "exported "+strconv.Itoa(stored)+" tiles") {
		t.Errorf("export: %s", out)
	}
	if _, err := exec.LookPath("ogrinfo"); err == nil {
		out, err := exec.Command("ogrinfo", "-ro", "-al", "-so", mb).CombinedOutput()
		if err != nil {
			t.Fatalf("ogrinfo: %v\n%s", err, out)
		}
		for _, want := range []string{"using driver `MBTiles'", "Layer name: Countries", "NAME: String"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("ogrinfo lacks %q:\n%s", want, out)
			}
		}
		if !bytes.Contains(out, []byte("Feature Count: ")) || bytes.Contains(out, []byte("Feature Count: 0\n")) {
			t.Errorf("ogrinfo counts no feature:\n%s", out)
		}
	} else {
		t.Log("no ogrinfo (gdal-bin): the MBTiles file is not read by GDAL")
	}
	pm := filepath.Join(dir, "vworld.pmtiles")
	cachetool(t, "export", "-service", "vworld", "-vector", "-file", pm)
	r, err := tilearchive.Open(pm)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.Metadata()
	if md.Format != "pbf" || len(md.VectorLayers) != 1 || md.VectorLayers[0].ID != "Countries" || md.VectorLayers[0].Fields["NAME"] != "String" || md.MaxZoom != 2 {
		t.Errorf("PMTiles metadata %+v", md)
	}
	n := 0
	for z, data := range r.Tiles() {
		if data == nil {
			break
		}
		n++
		if want, err := c.ReadTile(ctx, tilecache.Tile{Level: z.Z, Row: z.Y, Col: z.X}); err != nil || !bytes.Equal(want, data) {
			t.Errorf("PMTiles tile %v differs from the stored one (%v)", z, err)
		}
	}
	if n != stored || r.Err() != nil {
		t.Errorf("PMTiles holds %d tiles (%v), want %d", n, r.Err(), stored)
	}
	// Imported back, into the vector root of another service: the same bytes, a 512-px scheme.
	if out := cachetool(t, "import", "-service", "vcopy", "-file", pm); !strings.Contains(out, "to arcgiscache/vcopy/Layers_vector/_alllayers") {
		t.Errorf("import: %s", out)
	}
	cp, cinfo, err := tilecache.Open(ctx, store, seed.VectorCacheRoot("vcopy", "Layers"), tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cinfo.Scheme.TileCols != 512 || cinfo.Scheme.Format != "PBF" || cinfo.Scheme.LODs[2].Resolution != info.Scheme.LODs[2].Resolution {
		t.Errorf("imported conf.xml: %d px, %s, %v", cinfo.Scheme.TileCols, cinfo.Scheme.Format, cinfo.Scheme.LODs)
	}
	for z, data := range r.Tiles() {
		tile := tilecache.Tile{Level: z.Z, Row: z.Y, Col: z.X}
		if got, err := cp.ReadTile(ctx, tile); err != nil || !bytes.Equal(got, data) {
			t.Errorf("imported tile %v differs (%v)", tile, err)
		}
	}
}
