package tilearchive_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilearchive"
)

// The tile ids of the PMTiles specification's examples and of the reference implementation's
// tests, and the inverse over every tile of zooms 0 to 7.
func TestTileID(t *testing.T) {
	for _, tc := range []struct {
		t  tilearchive.ZXY
		id uint64
	}{
		{tilearchive.ZXY{Z: 0}, 0},
		{tilearchive.ZXY{Z: 1, X: 0, Y: 0}, 1},
		{tilearchive.ZXY{Z: 1, X: 0, Y: 1}, 2},
		{tilearchive.ZXY{Z: 1, X: 1, Y: 1}, 3},
		{tilearchive.ZXY{Z: 1, X: 1, Y: 0}, 4},
		{tilearchive.ZXY{Z: 2, X: 0, Y: 0}, 5},
		{tilearchive.ZXY{Z: 12, X: 3423, Y: 1763}, 19078479},
	} {
		if got := tilearchive.TileID(tc.t); got != tc.id {
			t.Errorf("TileID(%v) = %d, want %d", tc.t, got, tc.id)
		}
		if got, ok := tilearchive.TileOf(tc.id); !ok || got != tc.t {
			t.Errorf("TileOf(%d) = %v, %v, want %v", tc.id, got, ok, tc.t)
		}
	}
	next := uint64(0)
	for z := range 8 {
		ids := map[uint64]bool{}
		for x := range 1 << z {
			for y := range 1 << z {
				tile := tilearchive.ZXY{Z: z, X: x, Y: y}
				id := tilearchive.TileID(tile)
				if back, ok := tilearchive.TileOf(id); !ok || back != tile {
					t.Fatalf("TileOf(TileID(%v)) = %v", tile, back)
				}
				ids[id] = true
			}
		}
		// A zoom's ids are exactly the next 4^z numbers.
		for i := range uint64(1) << (2 * z) {
			if !ids[next+i] {
				t.Fatalf("zoom %d lacks id %d", z, next+i)
			}
		}
		next += uint64(1) << (2 * z)
	}
	for _, last := range []tilearchive.ZXY{{Z: 30, X: 1<<30 - 1, Y: 0}, {Z: 30, X: 1<<30 - 1, Y: 1<<30 - 1}} {
		if back, ok := tilearchive.TileOf(tilearchive.TileID(last)); !ok || back != last {
			t.Errorf("TileOf(TileID(%v)) = %v", last, back)
		}
	}
}

// fixture is a set of tiles: zooms 0 to 5 all the same bytes (as ocean tiles are: stored once,
// one run in PMTiles), and one in five tiles of zoom 8 in an irregular pattern, each one of
// 1,000 contents of different lengths picked by a hash of its position (so that directory
// offsets jump back: more directory than fits beside the header, and PMTiles needs leaf
// directories). small keeps only zooms 0 to 5 and the zoom-8 tiles of the top-left
// 8×8.
func fixture(small bool) map[tilearchive.ZXY][]byte {
	tiles := map[tilearchive.ZXY][]byte{}
	same := []byte("ocean tile")
	for z := range 6 {
		for x := range 1 << z {
			for y := range 1 << z {
				tiles[tilearchive.ZXY{Z: z, X: x, Y: y}] = same
			}
		}
	}
	for x := range 256 {
		for y := range 256 {
			if (x*31+y*17)%5 != 0 || small && (x >= 8 || y >= 8) {
				continue
			}
			h := (x*7919 + y*104729) % 1000003 % 1000
			data := binary.LittleEndian.AppendUint32([]byte("tile"), uint32(h))
			tiles[tilearchive.ZXY{Z: 8, X: x, Y: y}] = append(data, bytes.Repeat([]byte{'.'}, h%11)...)
		}
	}
	return tiles
}

// counts returns the distinct contents of a set of tiles and the runs of consecutive tile ids
// with the same content: what a PMTiles header counts as tile contents and entries.
func counts(tiles map[tilearchive.ZXY][]byte) (contents, runs int) {
	distinct := map[string]bool{}
	ids := make([]uint64, 0, len(tiles))
	byID := map[uint64][]byte{}
	for k, v := range tiles {
		distinct[string(v)] = true
		id := tilearchive.TileID(k)
		ids = append(ids, id)
		byID[id] = v
	}
	slices.Sort(ids)
	for i, id := range ids {
		if i == 0 || id != ids[i-1]+1 || !bytes.Equal(byID[id], byID[ids[i-1]]) {
			runs++
		}
	}
	return len(distinct), runs
}

// write puts the tiles in a random order and closes the archive.
func write(t *testing.T, path string, tiles map[tilearchive.ZXY][]byte, md tilearchive.Metadata) {
	t.Helper()
	w, err := tilearchive.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]tilearchive.ZXY, 0, len(tiles))
	for k := range tiles {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b tilearchive.ZXY) int { return int(tilearchive.TileID(a)) - int(tilearchive.TileID(b)) })
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for _, k := range keys {
		if err := w.Put(k, tiles[k]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(md); err != nil {
		t.Fatal(err)
	}
}

// readAll reads every tile of an archive, failing on a tile read twice.
func readAll(t *testing.T, path string) (map[tilearchive.ZXY][]byte, tilearchive.Metadata) {
	t.Helper()
	r, err := tilearchive.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := map[tilearchive.ZXY][]byte{}
	for k, data := range r.Tiles() {
		if data == nil {
			break
		}
		if _, dup := got[k]; dup {
			t.Fatalf("%s: tile %v read twice", path, k)
		}
		got[k] = bytes.Clone(data)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return got, r.Metadata()
}

func sameTiles(t *testing.T, name string, got, want map[tilearchive.ZXY][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d tiles, want %d", name, len(got), len(want))
	}
	bad := 0
	for k, w := range want {
		if g, ok := got[k]; !ok || !bytes.Equal(g, w) {
			if bad++; bad <= 5 {
				t.Errorf("%s: tile %v = %q, want %q", name, k, g, w)
			}
		}
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	md := tilearchive.Metadata{Name: "world/Layers", Format: "png", Description: "test",
		Bounds: [4]float64{-180, -85.0511287, 180, 85.0511287}, Center: [3]float64{10.5, -20.25, 2}}
	for _, tc := range []struct {
		file  string
		small bool
	}{{"a.pmtiles", false}, {"a.mbtiles", true}} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			want := fixture(tc.small)
			write(t, path, want, md)
			got, gmd := readAll(t, path)
			sameTiles(t, tc.file, got, want)
			if gmd.Name != md.Name || gmd.Format != "png" || gmd.MinZoom != 0 || gmd.MaxZoom != 8 || gmd.Center[2] != 2 {
				t.Errorf("metadata %+v", gmd)
			}
			for i := range 4 {
				if d := gmd.Bounds[i] - md.Bounds[i]; d > 1e-7 || d < -1e-7 {
					t.Errorf("bounds %v, want %v", gmd.Bounds, md.Bounds)
				}
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("the archive's mode: %v, %v; want 0644 (a file to share, not a temporary one)", st.Mode(), err)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			if len(entries) != 1 {
				t.Errorf("the folder holds %d files, want the archive alone (spool and temporary files removed)", len(entries))
			}
		})
	}
}

// The PMTiles header and layout: root directory beside the header within 16 KiB, leaf
// directories for the large fixture, ocean tiles stored once, clustered.
func TestPMTilesLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.pmtiles")
	tiles := fixture(false)
	write(t, path, tiles, tilearchive.Metadata{Format: "png"})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	u := func(i int) uint64 { return le.Uint64(b[8+8*i:]) }
	if string(b[:7]) != "PMTiles" || b[7] != 3 {
		t.Fatalf("magic %q version %d", b[:7], b[7])
	}
	rootOff, rootLen, leafLen := u(0), u(1), u(5)
	addressed, entries, contents := u(8), u(9), u(10)
	if rootOff != 127 || rootOff+rootLen > 16384 {
		t.Errorf("root directory at %d, %d bytes: want it within the first 16384 bytes", rootOff, rootLen)
	}
	if leafLen == 0 {
		t.Errorf("no leaf directories for %d tiles (root directory %d bytes)", len(tiles), rootLen)
	}
	wantContents, wantRuns := counts(tiles)
	if addressed != uint64(len(tiles)) || contents != uint64(wantContents) || entries != uint64(wantRuns) {
		t.Errorf("addressed %d, contents %d, entries %d; want %d, %d and %d", addressed, contents, entries, len(tiles), wantContents, wantRuns)
	}
	if b[96] != 1 || b[97] != 2 || b[98] != 1 || b[99] != 2 || b[100] != 0 || b[101] != 8 {
		t.Errorf("clustered %d, internal compression %d, tile compression %d, tile type %d, zooms %d-%d", b[96], b[97], b[98], b[99], b[100], b[101])
	}
}

// nodeModules is the folder holding npm's pmtiles (scripts/install.sh puts it in
// $MAPFARM_CACHE/node), or "" when there is none and the test runner did not promise one.
func nodeModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MAPFARM_TEST_NODE_MODULES")
	promised := dir != ""
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "mapfarm", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, "pmtiles", "package.json")); err != nil {
		if promised {
			t.Fatalf("npm's pmtiles is not in %s (scripts/install.sh installs it): %v", dir, err)
		}
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	return dir
}

// readerJS reads tiles of a PMTiles file with the format's reference reader (npm pmtiles)
// and prints the header and the tiles as JSON.
const readerJS = `
const fs = require("fs");
const { PMTiles } = require(process.env.PMTILES);
const [file, ...want] = process.argv.slice(2);
const fd = fs.openSync(file, "r");
const source = {
  getKey: () => file,
  getBytes: async (offset, length) => {
    const b = Buffer.alloc(length);
    const n = fs.readSync(fd, b, 0, length, offset);
    return { data: b.buffer.slice(b.byteOffset, b.byteOffset + n) };
  },
};
(async () => {
  const p = new PMTiles(source);
  const header = await p.getHeader();
  const metadata = await p.getMetadata();
  const tiles = {};
  for (const t of want) {
    const [z, x, y] = t.split("/").map(Number);
    const r = await p.getZxy(z, x, y);
    tiles[t] = r ? Buffer.from(r.data).toString("base64") : null;
  }
  console.log(JSON.stringify({ header, metadata, tiles }));
})().catch((e) => { console.error(e); process.exit(1); });
`

// npm's pmtiles, the reference reader, finds the tiles this package wrote (a sample of them
// through the leaf directories, and tiles that are not there) and reads the header and
// metadata the same.
func TestPMTilesReferenceReader(t *testing.T) {
	mods := nodeModules(t)
	if mods == "" {
		t.Skip("npm's pmtiles is not installed (scripts/install.sh)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.pmtiles")
	tiles := fixture(false)
	md := tilearchive.Metadata{Name: "ref", Format: "png", Bounds: [4]float64{-10, -20, 30, 40}, Center: [3]float64{1, 2, 3}}
	write(t, path, tiles, md)
	var want []string
	i := 0
	for k := range tiles {
		if i++; i%251 == 0 || k.Z < 2 {
			want = append(want, k.String())
		}
	}
	absent := []string{"8/200/3", "7/0/0", "9/0/0"}
	script := filepath.Join(dir, "read.cjs")
	if err := os.WriteFile(script, []byte(readerJS), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{script, path}, append(want, absent...)...)...)
	cmd.Env = append(os.Environ(), "PMTILES="+filepath.Join(mods, "pmtiles"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var res struct {
		Header struct {
			MinZoom, MaxZoom, CenterZoom   int
			MinLon, MinLat, MaxLon, MaxLat float64
			TileType, NumAddressedTiles    int
			Clustered                      bool
		} `json:"header"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Tiles map[string]*string `json:"tiles"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	h := res.Header
	if h.MinZoom != 0 || h.MaxZoom != 8 || h.CenterZoom != 3 || h.MinLon != -10 || h.MaxLat != 40 || h.TileType != 2 ||
		h.NumAddressedTiles != len(tiles) || !h.Clustered || res.Metadata.Name != "ref" {
		t.Errorf("header %+v, metadata %+v", h, res.Metadata)
	}
	for _, k := range want {
		var z, x, y int
		fmt.Sscanf(k, "%d/%d/%d", &z, &x, &y)
		got := res.Tiles[k]
		if got == nil || *got != base64.StdEncoding.EncodeToString(tiles[tilearchive.ZXY{Z: z, X: x, Y: y}]) {
			t.Errorf("tile %s: the reference reader read %v", k, got)
		}
	}
	for _, k := range absent {
		if res.Tiles[k] != nil {
			t.Errorf("tile %s is not in the archive, but the reference reader read %q", k, *res.Tiles[k])
		}
	}
}

// A tile put twice and a tile outside the grid are refused; a file that is not an archive
// does not open.
func TestArchiveErrors(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.pmtiles", "a.mbtiles"} {
		w, err := tilearchive.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Put(tilearchive.ZXY{Z: 1, X: 2, Y: 0}, []byte("x")); err == nil {
			t.Errorf("%s: a tile outside zoom 1's grid was accepted", name)
		}
		w.Put(tilearchive.ZXY{Z: 1, X: 1, Y: 0}, []byte("x"))
		err = w.Put(tilearchive.ZXY{Z: 1, X: 1, Y: 0}, []byte("y"))
		if err == nil {
			err = w.Close(tilearchive.Metadata{Format: "png"})
		} else {
			w.Abort()
		}
		if err == nil {
			t.Errorf("%s: a tile put twice was accepted", name)
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s: a failed archive was left behind", name)
		}
	}
	junk := filepath.Join(dir, "junk.pmtiles")
	os.WriteFile(junk, bytes.Repeat([]byte("x"), 200), 0o644)
	if _, err := tilearchive.Open(junk); err == nil {
		t.Error("junk opened as PMTiles")
	}
	if _, err := tilearchive.KindOf("a.zip"); err == nil {
		t.Error("a.zip has an archive kind")
	}
}
