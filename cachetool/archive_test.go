package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// tileColour is the colour of every pixel of tile t in colourCache.
func tileColour(t tilecache.Tile) color.NRGBA {
	return color.NRGBA{R: uint8(40 + 60*t.Level), G: uint8(20 + 50*t.Row), B: uint8(20 + 50*t.Col), A: 255}
}

// colourCache writes a compact-V2 cache of scheme s's first three levels, each tile of one
// colour of its own (tileColour), and returns its tiles.
func colourCache(t *testing.T, store tilecache.Store, root string, s tilecache.Scheme) map[tilecache.Tile][]byte {
	t.Helper()
	ctx := context.Background()
	s.LODs = s.LODs[:3]
	c, err := tilecache.New(store, tilecache.Options{Root: root, Format: tilecache.CompactV2})
	if err != nil {
		t.Fatal(err)
	}
	tiles := map[tilecache.Tile][]byte{}
	for level := range 3 {
		w, _ := c.NewBundleWriter(tilecache.Bundle{TopLeft: tilecache.Tile{Level: level}})
		r, _ := s.TilesCovering(level, s.Extent)
		for row := r.MinRow; row <= r.MaxRow; row++ {
			for col := r.MinCol; col <= r.MaxCol; col++ {
				tile := tilecache.Tile{Level: level, Row: row, Col: col}
				// One colour: a paletted image, quick to encode (under the race detector too).
				img := image.NewPaletted(image.Rect(0, 0, s.TileCols, s.TileRows), color.Palette{tileColour(tile)})
				var buf bytes.Buffer
				if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
					t.Fatal(err)
				}
				tiles[tile] = buf.Bytes()
				if err := w.Put(tile, buf.Bytes()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: s, Storage: tilecache.CompactV2}, s.Extent); err != nil {
		t.Fatal(err)
	}
	return tiles
}

// cachetool runs a command, failing the test when it fails.
func cachetool(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("cachetool %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// A Web Mercator cache in the farm's store is exported to PMTiles and to MBTiles (from disk;
// from MinIO to PMTiles); GDAL draws the MBTiles file with every tile where it belongs (rows counted from the
// south in the file); each archive imported back gives a cache whose tiles are byte for byte
// the exported ones, with a scheme of the same levels. A geographic cache is refused.
func TestExportImportArchives(t *testing.T) {
	for _, kind := range []string{"disk", "minio"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			var store tilecache.Store
			if kind == "disk" {
				t.Setenv("MAPFARM_STORE", "disk")
				t.Setenv("MAPFARM_STORE_DIR", filepath.Join(dir, "store"))
				d, err := blob.NewDisk(filepath.Join(dir, "store"))
				if err != nil {
					t.Fatal(err)
				}
				store = d
			} else {
				ep := testenv.MinIO(t)
				bucket := testenv.Bucket(t)
				t.Setenv("MAPFARM_STORE", "minio")
				t.Setenv("MAPFARM_MINIO_ENDPOINT", ep.Endpoint)
				t.Setenv("MAPFARM_MINIO_ACCESS_KEY", ep.AccessKey)
				t.Setenv("MAPFARM_MINIO_SECRET_KEY", ep.SecretKey)
				t.Setenv("MAPFARM_MINIO_BUCKET", bucket)
				m, err := blob.NewMinIO(ctx, blob.MinIOConfig{Endpoint: ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: ep.SecretKey, Bucket: bucket, CreateBucket: true})
				if err != nil {
					t.Fatal(err)
				}
				store = m
			}
			want := colourCache(t, store, seed.CacheRoot("world", "Layers"), tilecache.WebMercator())
			names := []string{"c.pmtiles", "c.mbtiles"}
			if kind == "minio" {
				names = names[:1] // the store is read alike for both formats
			}
			for _, name := range names {
				file := filepath.Join(dir, name)
				if out := cachetool(t, "export", "-service", "world", "-file", file); !strings.Contains(out, "exported 21 tiles") {
					t.Errorf("export: %s", out)
				}
				if strings.HasSuffix(name, ".mbtiles") {
					gdalDraws(t, file, want)
				}
				svc := "copy" + strings.TrimPrefix(filepath.Ext(name), ".")
				cachetool(t, "import", "-service", svc, "-file", file)
				c, info, err := tilecache.Open(ctx, store, seed.CacheRoot(svc, "Layers"), tilecache.FusedLayer, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(info.Scheme.LODs) != 3 || info.Scheme.TileCols != 256 || info.Scheme.LODs[2].Resolution != tilecache.WebMercator().LODs[2].Resolution ||
					info.Storage != tilecache.CompactV2 || info.Scheme.Format != "PNG" {
					t.Errorf("%s: imported scheme %+v storage %v", name, info.Scheme.LODs, info.Storage)
				}
				for tile, data := range want {
					got, err := c.ReadTile(ctx, tile)
					if err != nil || !bytes.Equal(got, data) {
						t.Errorf("%s: imported tile %v: %d bytes, %v; want the %d exported bytes", name, tile, len(got), err, len(data))
					}
				}
			}
			if kind == "disk" {
				geo := tilecache.Geographic()
				c, err := tilecache.New(store, tilecache.Options{Root: seed.CacheRoot("geo", "Layers")})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: geo, Storage: tilecache.CompactV2}, geo.Extent); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				err = run(ctx, []string{"export", "-service", "geo", "-file", filepath.Join(dir, "geo.mbtiles")}, &out, &out)
				if err == nil || !strings.Contains(err.Error(), "only Web Mercator caches") || !strings.Contains(err.Error(), "WKID 4326") {
					t.Errorf("export of a geographic cache: %v", err)
				}
			}
		})
	}
}

// gdalDraws has GDAL's MBTiles driver draw the archive's highest zoom (level 2 of
// colourCache: 4×4 tiles) and checks the middle pixel of every tile.
func gdalDraws(t *testing.T, file string, want map[tilecache.Tile][]byte) {
	t.Helper()
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		t.Skip("no gdal_translate (gdal-bin)")
	}
	img, _ := testenv.GDALTranslatePNG(t, testenv.GDALEnv(t.TempDir()), file, t.TempDir())
	if b := img.Bounds(); b.Dx() != 1024 || b.Dy() != 1024 {
		t.Fatalf("GDAL drew %v, want 1024×1024 (zoom 2 of 256 px tiles)", b)
	}
	n := 0
	for tile := range want {
		if tile.Level != 2 {
			continue
		}
		n++
		got := color.NRGBAModel.Convert(img.At(tile.Col*256+128, tile.Row*256+128)).(color.NRGBA)
		if w := tileColour(tile); got != w {
			t.Errorf("GDAL drew tile %v as %v, want %v", tile, got, w)
		}
	}
	if n != 16 {
		t.Errorf("%d tiles of level 2", n)
	}
}
