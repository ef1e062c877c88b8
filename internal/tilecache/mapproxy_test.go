package tilecache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"image"
	"image/png"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
)

// pngTile returns a distinct 256×256 PNG for a tile.
func pngTile(t testing.TB, tile tilecache.Tile) []byte {
	// A tile of its own colours, made a row at a time (a pixel at a time, through image.Set,
	// took seconds of the race-built test binary for the 341 tiles).
	img := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		row := img.Pix[y*img.Stride : y*img.Stride+256*4]
		if y%16 != 0 {
			copy(row, img.Pix[(y-1)*img.Stride:])
			continue
		}
		for x := range 256 {
			copy(row[4*x:], []byte{uint8(tile.Row*16 + x/16), uint8(tile.Col*16 + y/16), uint8(tile.Level * 20), 255})
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// mpCaches are the caches of both tests: mp_* filled by MapProxy from its debug source, mf_*
// only read what mapfarm wrote, each in compact V2, compact V1 and the ArcGIS exploded layout.
func mpCaches(dir string) []testenv.MapProxyCache {
	var caches []testenv.MapProxyCache
	for _, who := range []string{"mp", "mf"} {
		for name, backend := range map[string]string{"v2": testenv.MapProxyCompactV2, "v1": testenv.MapProxyCompactV1, "arcgis": testenv.MapProxyExploded} {
			caches = append(caches, testenv.MapProxyCache{Name: who + "_" + name, Backend: backend,
				Dir: filepath.Join(dir, who, name, tilecache.FusedLayer), Seeded: who == "mp"})
		}
	}
	return caches
}

var mpFormats = map[string]tilecache.StorageFormat{"v2": tilecache.CompactV2, "v1": tilecache.CompactV1, "arcgis": tilecache.Exploded}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestMapProxyReadsMapfarm writes caches with mapfarm's writer and reads
// every tile back through MapProxy's configured compact V2, compact V1 and
// ArcGIS-exploded caches: bytes and tile bounds must match.
func TestMapProxyReadsMapfarm(t *testing.T) {
	dir := t.TempDir()
	mp := testenv.NewMapProxy(t, dir, mpCaches(dir))
	store, err := blob.NewDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	tiles := testenv.MapProxyTiles()
	want := map[tilecache.Tile][]byte{}
	for _, tile := range tiles {
		want[tile] = pngTile(t, tile)
	}
	for name, f := range mpFormats {
		c, err := tilecache.New(store, tilecache.Options{Root: "mf/" + name, Format: f})
		if err != nil {
			t.Fatal(err)
		}
		writeTiles(t, c, want)
		if err := c.WriteMetadata(context.Background(), tilecache.CacheInfo{Scheme: tilecache.WebMercator()}, orb.Bound{}); err != nil {
			t.Fatal(err)
		}
	}
	// Ask MapProxy for one tile more than was written, in a written bundle.
	absent := tilecache.Tile{Level: 8, Row: 140, Col: 140}
	res := mp.Read([]string{"mf_v2", "mf_v1", "mf_arcgis"}, append(tiles, absent))
	s := tilecache.WebMercator()
	for name := range mpFormats {
		got := res["mf_"+name]
		if len(got) != len(tiles) {
			t.Errorf("%s: MapProxy found %d tiles, mapfarm wrote %d", name, len(got), len(tiles))
		}
		for _, tile := range tiles {
			r, ok := got[tile.String()]
			if !ok {
				t.Errorf("%s: MapProxy misses tile %v", name, tile)
				continue
			}
			if r.SHA256 != sha(want[tile]) || r.Len != len(want[tile]) {
				t.Errorf("%s: tile %v: MapProxy read %d bytes %s, mapfarm wrote %d", name, tile, r.Len, r.SHA256[:12], len(want[tile]))
			}
			b, _ := s.TileBounds(tile)
			if len(r.BBox) != 4 || !near(r.BBox[0], b.Min[0], 1e-9) || !near(r.BBox[1], b.Min[1], 1e-9) || !near(r.BBox[2], b.Max[0], 1e-9) || !near(r.BBox[3], b.Max[1], 1e-9) {
				t.Errorf("%s: tile %v: MapProxy bbox %v, mapfarm %v", name, tile, r.BBox, b)
			}
		}
		if _, ok := got[absent.String()]; ok {
			t.Errorf("%s: MapProxy found a tile mapfarm never wrote", name)
		}
	}
}

// TestMapfarmReadsMapProxy lets mapproxy-seed fill compact V2, compact V1
// and ArcGIS-exploded caches from its debug source, then reads every tile
// with mapfarm's reader and compares with what MapProxy itself reads.
func TestMapfarmReadsMapProxy(t *testing.T) {
	dir := t.TempDir()
	mapproxy := testenv.NewMapProxy(t, dir, mpCaches(dir))
	mapproxy.Seed("mp_v2", "mp_v1", "mp_arcgis")
	tiles := testenv.MapProxyTiles()
	res := mapproxy.Read([]string{"mp_v2", "mp_v1", "mp_arcgis"}, tiles)

	store, err := blob.NewDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, f := range mpFormats {
		mp := res["mp_"+name]
		// Levels 0–3 are seeded whole (85 tiles); level 8 at least the
		// tiles of the coverage.
		if len(mp) < 85+16 {
			t.Fatalf("%s: MapProxy seeded only %d of the compared tiles", name, len(mp))
		}
		c, err := tilecache.New(store, tilecache.Options{Root: "mp/" + name, Format: f})
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, tile := range tiles {
			data, err := c.ReadTile(ctx, tile)
			r, inMP := mp[tile.String()]
			switch {
			case errors.Is(err, tilecache.ErrTileNotFound):
				if inMP {
					t.Errorf("%s: mapfarm misses tile %v that MapProxy has", name, tile)
				}
			case err != nil:
				t.Errorf("%s: tile %v: %v", name, tile, err)
			case !inMP:
				t.Errorf("%s: mapfarm reads tile %v that MapProxy does not have", name, tile)
			case sha(data) != r.SHA256:
				t.Errorf("%s: tile %v: mapfarm read %d bytes, MapProxy %d", name, tile, len(data), r.Len)
			default:
				found++
				if !bytes.HasPrefix(data, []byte("\x89PNG")) {
					t.Errorf("%s: tile %v is not a PNG", name, tile)
				}
			}
		}
		if found != len(mp) {
			t.Errorf("%s: mapfarm read %d tiles, MapProxy has %d", name, found, len(mp))
		}
		// The debug source writes each tile's bbox into it, so tiles differ
		// and a tile read from the wrong place would not match.
		distinct := map[string]bool{}
		for _, r := range mp {
			distinct[r.SHA256] = true
		}
		if len(distinct) < len(mp)*9/10 {
			t.Errorf("%s: only %d distinct tiles among %d", name, len(distinct), len(mp))
		}
		// The bundle index (or listing) agrees with MapProxy on which tiles
		// exist.
		compared := map[tilecache.Tile]bool{}
		bundles := map[tilecache.Bundle]bool{}
		for _, tile := range tiles {
			compared[tile] = true
			bundles[tilecache.BundleOf(tile)] = true
		}
		stored := 0
		for b := range bundles {
			list, err := c.StoredTiles(ctx, b)
			if err != nil {
				t.Fatalf("%s: StoredTiles(%v): %v", name, b, err)
			}
			for _, tile := range list {
				if !compared[tile] {
					continue
				}
				stored++
				if _, ok := mp[tile.String()]; !ok {
					t.Errorf("%s: StoredTiles lists %v, which MapProxy does not have", name, tile)
				}
			}
		}
		if stored != len(mp) {
			t.Errorf("%s: StoredTiles lists %d of MapProxy's %d tiles", name, stored, len(mp))
		}
		t.Logf("%s: %d MapProxy tiles read back byte-identical", name, found)
	}
}
