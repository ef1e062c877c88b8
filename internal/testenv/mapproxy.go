package testenv

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// EnvMapProxyPython names a python3 that can import mapproxy, when /usr/bin/python3 (where
// Debian's python3-mapproxy installs it) cannot.
const EnvMapProxyPython = "MAPFARM_MAPPROXY_PYTHON"

// MapProxyLevels is the number of levels of the MapProxy grid: the Web Mercator scheme's 0 to 8.
const MapProxyLevels = 9

// mapproxyScript seeds with mapproxy-seed and reads tiles through a cache's own backend.
//
//go:embed testdata/mapproxy_driver.py
var mapproxyScript []byte

// MapProxy runs Debian's MapProxy for the cache interoperability tests (tilecache and e2e): one
// mapproxy.yaml whose grid "mfgrid" is the Web Mercator scheme's first MapProxyLevels levels
// (origin nw, so MapProxy's y is the row), with MapProxy's debug source, which writes each
// tile's bounds into it, so tiles differ.
type MapProxy struct {
	t      testing.TB
	python string
	dir    string
	// Config is the path of mapproxy.yaml.
	Config string
}

// MapProxyCache is one cache of a MapProxy configuration.
type MapProxyCache struct {
	Name string // the cache's name in mapproxy.yaml
	// Backend is the YAML flow map of the cache backend, with %q where its directory goes:
	// "{type: compact, version: 2, directory: %q}".
	Backend string
	Dir     string // the cache's directory (for Esri layouts, the _alllayers folder)
	Seeded  bool   // filled from the debug source; otherwise MapProxy only reads it
}

// MapProxy cache backends of the three Esri layouts.
const (
	MapProxyCompactV2 = "{type: compact, version: 2, directory: %q}"
	MapProxyCompactV1 = "{type: compact, version: 1, directory: %q}"
	MapProxyExploded  = "{type: file, directory_layout: arcgis, directory: %q}"
)

// NewMapProxy writes a mapproxy.yaml with the given caches into dir, or skips or fails t when no
// python3 can import mapproxy.
func NewMapProxy(t testing.TB, dir string, caches []MapProxyCache) *MapProxy {
	t.Helper()
	m := &MapProxy{t: t, python: mapproxyPython(t), dir: dir, Config: filepath.Join(dir, "mapproxy.yaml")}
	if err := os.WriteFile(m.Config, []byte(mapproxyConfig(dir, caches)), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// mapproxyPython returns a python3 that can import mapproxy, or skips or fails t.
func mapproxyPython(t testing.TB) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv(EnvMapProxyPython); p != "" {
		candidates = []string{p}
	}
	for _, c := range candidates {
		path, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = exec.CommandContext(ctx, path, "-c", "import mapproxy.cache.compact, mapproxy.config.loader, mapproxy.seed.script").Run()
		cancel()
		if err == nil {
			return path
		}
	}
	const hint = "python module mapproxy not importable; install it with: apt-get install -y --no-install-recommends mapproxy"
	if Required() {
		t.Fatalf("%s (and %s=1)", hint, EnvRequireServices)
	}
	t.Skip(hint)
	return ""
}

func mapproxyConfig(dir string, caches []MapProxyCache) string {
	s := tilecache.WebMercator()
	var res []string
	for _, l := range s.LODs[:MapProxyLevels] {
		res = append(res, strconv.FormatFloat(l.Resolution, 'g', 17, 64))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `services:
  demo:
layers:
  - name: dbg
    title: dbg
    sources: [dbg]
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
	for _, c := range caches {
		sources := "[]"
		if c.Seeded {
			sources = "[dbg]"
		}
		fmt.Fprintf(&b, "  %s:\n    grids: [mfgrid]\n    sources: %s\n    format: image/png\n    cache: %s\n",
			c.Name, sources, fmt.Sprintf(c.Backend, c.Dir))
	}
	return b.String()
}

// MapProxyCoverage is the area seeded at level 8 by Seed: ±300 km around (0, 0) in Web Mercator
// metres, which spans four bundles.
func MapProxyCoverage() [4]float64 { return [4]float64{-300000, -300000, 300000, 300000} }

// Seed runs mapproxy-seed on the named caches: levels 0–3 of the world and level 8 over
// MapProxyCoverage.
func (m *MapProxy) Seed(caches ...string) {
	m.t.Helper()
	names := strings.Join(caches, ", ")
	c := MapProxyCoverage()
	seed := fmt.Sprintf(`seeds:
  world:
    caches: [%s]
    grids: [mfgrid]
    levels:
      to: 3
  centre:
    caches: [%s]
    grids: [mfgrid]
    levels: [8]
    coverages: [centre]
coverages:
  centre:
    bbox: [%v, %v, %v, %v]
    srs: 'EPSG:3857'
`, names, names, c[0], c[1], c[2], c[3])
	path := filepath.Join(m.dir, "seed.yaml")
	if err := os.WriteFile(path, []byte(seed), 0o644); err != nil {
		m.t.Fatal(err)
	}
	m.run("seed", m.Config, path)
}

// MapProxyTile is what MapProxy read of one tile.
type MapProxyTile struct {
	SHA256 string    `json:"sha256"`
	Len    int       `json:"len"`
	BBox   []float64 `json:"bbox"` // the grid's bounds of the tile
}

// Read asks MapProxy for the tiles of the named caches, read through each cache's own backend:
// per cache, the tiles it holds by tilecache.Tile.String().
func (m *MapProxy) Read(caches []string, tiles []tilecache.Tile) map[string]map[string]MapProxyTile {
	m.t.Helper()
	req := map[string][][3]int{}
	for _, name := range caches {
		for _, tile := range tiles {
			req[name] = append(req[name], [3]int{tile.Col, tile.Row, tile.Level})
		}
	}
	data, err := json.Marshal(req)
	if err != nil {
		m.t.Fatal(err)
	}
	path := filepath.Join(m.dir, "request.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		m.t.Fatal(err)
	}
	var res map[string]map[string]MapProxyTile
	if err := json.Unmarshal(m.run("read", m.Config, path), &res); err != nil {
		m.t.Fatalf("mapproxy read: %v", err)
	}
	return res
}

// run runs the MapProxy script with a time limit and returns what it printed.
func (m *MapProxy) run(args ...string) []byte {
	m.t.Helper()
	script := filepath.Join(m.dir, "mapproxy_driver.py") // not "mapproxy.py", which would shadow the module
	if err := os.WriteFile(script, mapproxyScript, 0o644); err != nil {
		m.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.python, append([]string{script}, args...)...)
	cmd.Dir = m.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		m.t.Fatalf("mapproxy %s: %v\nstderr:\n%s", args[0], err, stderr.String())
	}
	return out
}

// MapProxyTiles are the tiles the interoperability tests compare: all of levels 0–3 and a 16×16
// block of level 8 around the centre, across four bundles (most, not all, seeded by Seed).
func MapProxyTiles() []tilecache.Tile {
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
