package tilecache_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
)

// mapproxyPython returns a python3 that can import mapproxy (Debian package
// mapproxy, which installs python3-mapproxy for /usr/bin/python3). Without
// one the test is skipped, or fails when MAPFARM_REQUIRE_SERVICES=1.
func mapproxyPython(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("MAPFARM_MAPPROXY_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err = exec.CommandContext(ctx, path, "-c", "import mapproxy.cache.compact, mapproxy.config.loader").Run()
		cancel()
		if err == nil {
			return path
		}
	}
	const hint = "python module mapproxy not importable; install it with: apt-get install -y --no-install-recommends mapproxy"
	if testenv.Required() {
		t.Fatalf("%s (and %s=1)", hint, testenv.EnvRequireServices)
	}
	t.Skip(hint)
	return ""
}

// mpScript drives MapProxy: "seed" runs mapproxy-seed; "read" loads the
// MapProxy configuration, takes each named cache's tile manager (its
// configured cache backend and grid) and reports, for every requested
// MapProxy tile coordinate (x=col, y=row, z), the SHA-256 of the stored
// tile bytes and the grid's bbox of the tile.
const mpScript = `
import hashlib, json, sys
mode = sys.argv[1]
if mode == 'seed':
    from mapproxy.seed.script import main
    sys.argv = ['mapproxy-seed', '-f', sys.argv[2], '-s', sys.argv[3], '-c', '1']
    sys.exit(main())
from mapproxy.config.loader import load_configuration
from mapproxy.cache.tile import Tile
conf = load_configuration(sys.argv[2])
req = json.load(open(sys.argv[3]))
out = {}
for name, coords in req.items():
    [(grid, extent, mgr)] = conf.caches[name].caches()
    res = {}
    for x, y, z in coords:
        t = Tile((x, y, z))
        if not mgr.cache.load_tile(t):
            continue
        buf = t.source.as_buffer()
        buf.seek(0)
        data = buf.read()
        res['%d/%d/%d' % (z, y, x)] = {'sha256': hashlib.sha256(data).hexdigest(), 'len': len(data), 'bbox': list(grid.tile_bbox((x, y, z)))}
    out[name] = res
json.dump(out, sys.stdout)
`

// mpLevels are the levels of the MapProxy grid: the Web Mercator scheme's
// levels 0 to 8.
const mpLevels = 9

// mpConfig returns a mapproxy.yaml with a grid matching the Web Mercator
// scheme (origin nw, so MapProxy's y is the row) and six caches: mp_* are
// filled by MapProxy from its debug source, mf_* only read what mapfarm
// wrote. Each pair has compact V2, compact V1 and the exploded ArcGIS
// layout.
func mpConfig(dir string) string {
	s := tilecache.WebMercator()
	var res []string
	for _, l := range s.LODs[:mpLevels] {
		res = append(res, strconv.FormatFloat(l.Resolution, 'g', 17, 64))
	}
	ext := s.Extent
	var b strings.Builder
	fmt.Fprintf(&b, `services:
  demo:
layers:
  - name: dbg
    title: dbg
    sources: [mp_v2]
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
`, ext.Min[0], ext.Min[1], ext.Max[0], ext.Max[1], strings.Join(res, ", "),
		filepath.Join(dir, "mpbase"), filepath.Join(dir, "mplocks"), filepath.Join(dir, "mptilelocks"))
	for _, who := range []string{"mp", "mf"} {
		sources := "[dbg]"
		if who == "mf" {
			sources = "[]"
		}
		for name, cache := range map[string]string{
			"v2":     "{type: compact, version: 2, directory: %q}",
			"v1":     "{type: compact, version: 1, directory: %q}",
			"arcgis": "{type: file, directory_layout: arcgis, directory: %q}",
		} {
			fmt.Fprintf(&b, "  %s_%s:\n    grids: [mfgrid]\n    sources: %s\n    format: image/png\n    cache: %s\n",
				who, name, sources, fmt.Sprintf(cache, filepath.Join(dir, who, name, tilecache.FusedLayer)))
		}
	}
	return b.String()
}

// mpSeedConfig seeds levels 0–3 of the world and level 8 around (0, 0),
// which spans four bundles.
const mpSeedConfig = `seeds:
  world:
    caches: [mp_v2, mp_v1, mp_arcgis]
    grids: [mfgrid]
    levels:
      to: 3
  centre:
    caches: [mp_v2, mp_v1, mp_arcgis]
    grids: [mfgrid]
    levels: [8]
    coverages: [centre]
coverages:
  centre:
    bbox: [-300000, -300000, 300000, 300000]
    srs: 'EPSG:3857'
`

// mpTiles are the tiles both directions compare: all of levels 0–3 and a
// block of level 8 around the centre, across four bundles.
func mpTiles() []tilecache.Tile {
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

// pngTile returns a distinct 256×256 PNG for a tile.
func pngTile(t testing.TB, tile tilecache.Tile) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		for x := range 256 {
			img.Set(x, y, color.NRGBA{uint8(tile.Row*16 + x/16), uint8(tile.Col*16 + y/16), uint8(tile.Level * 20), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type mpResult map[string]map[string]struct {
	SHA256 string    `json:"sha256"`
	Len    int       `json:"len"`
	BBox   []float64 `json:"bbox"`
}

// runPython runs the MapProxy script with a time limit.
func runPython(t *testing.T, py, dir string, args ...string) []byte {
	t.Helper()
	script := filepath.Join(dir, "mpcheck.py")
	if err := os.WriteFile(script, []byte(mpScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{script}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	return out
}

// mpRead asks MapProxy for the tiles of the named caches.
func mpRead(t *testing.T, py, dir, conf string, caches []string, tiles []tilecache.Tile) mpResult {
	t.Helper()
	req := map[string][][3]int{}
	for _, name := range caches {
		for _, tile := range tiles {
			req[name] = append(req[name], [3]int{tile.Col, tile.Row, tile.Level})
		}
	}
	reqData, _ := json.Marshal(req)
	reqFile := filepath.Join(dir, "request.json")
	if err := os.WriteFile(reqFile, reqData, 0o644); err != nil {
		t.Fatal(err)
	}
	var res mpResult
	if err := json.Unmarshal(runPython(t, py, dir, "read", conf, reqFile), &res); err != nil {
		t.Fatal(err)
	}
	return res
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
	py := mapproxyPython(t)
	dir := t.TempDir()
	store, err := blob.NewDisk(dir)
	if err != nil {
		t.Fatal(err)
	}
	tiles := mpTiles()
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
	conf := filepath.Join(dir, "mapproxy.yaml")
	if err := os.WriteFile(conf, []byte(mpConfig(dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Ask MapProxy for one tile more than was written, in a written bundle.
	absent := tilecache.Tile{Level: 8, Row: 140, Col: 140}
	res := mpRead(t, py, dir, conf, []string{"mf_v2", "mf_v1", "mf_arcgis"}, append(tiles, absent))
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
	py := mapproxyPython(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "mapproxy.yaml")
	seed := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(conf, []byte(mpConfig(dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(seed, []byte(mpSeedConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	runPython(t, py, dir, "seed", conf, seed)
	tiles := mpTiles()
	res := mpRead(t, py, dir, conf, []string{"mp_v2", "mp_v1", "mp_arcgis"}, tiles)

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
