package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// A small compact-V2 cache written straight into a disk store: levels 0-2 complete.
func writeCache(t *testing.T, store *blob.Disk, root string) {
	t.Helper()
	ctx := context.Background()
	s := tilecache.WebMercator()
	s.LODs = s.LODs[:3]
	c, err := tilecache.New(store, tilecache.Options{Root: root, Format: tilecache.CompactV2})
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.Black)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	for level := range 3 {
		w, _ := c.NewBundleWriter(tilecache.Bundle{TopLeft: tilecache.Tile{Level: level}})
		for row := range 1 << level {
			for col := range 1 << level {
				if err := w.Put(tilecache.Tile{Level: level, Row: row, Col: col}, buf.Bytes()); err != nil {
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
}

// farmDiskStore configures the farm's store as a disk store in a new directory dir/store, for
// the commands the test runs, and opens it.
func farmDiskStore(t *testing.T) (store *blob.Disk, dir string) {
	t.Helper()
	dir = t.TempDir()
	t.Setenv("MAPFARM_STORE", "disk")
	t.Setenv("MAPFARM_STORE_DIR", filepath.Join(dir, "store"))
	store, err := blob.NewDisk(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	return store, dir
}

// verify, export, import and convert on a disk store configured as the farm's.
func TestStoreCommands(t *testing.T) {
	store, dir := farmDiskStore(t)
	writeCache(t, store, "arcgiscache/world/Layers")
	ctx := context.Background()
	do := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, args, &out, &errb); err != nil {
			t.Fatalf("cachetool %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String()
	}
	if out := do("verify", "-service", "world"); !strings.Contains(out, "3 bundles, 21 tiles decoded, 0 tiles of the area missing, 0 problems") {
		t.Errorf("verify: %s", out)
	}
	exp := filepath.Join(dir, "exported")
	do("export", "-service", "world", "-dir", exp)
	do("import", "-service", "copy", "-dir", exp)
	if out := do("verify", "-service", "copy"); !strings.Contains(out, "21 tiles decoded, 0 tiles of the area missing, 0 problems") {
		t.Errorf("verify of the imported copy: %s", out)
	}
	for _, to := range []string{"exploded", "compact"} {
		root := "converted/" + to
		do("convert", "-service", "world", "-to", to, "-dest-root", root)
		out := do("verify", "-root", root)
		if !strings.Contains(out, "21 tiles decoded, 0 tiles of the area missing, 0 problems") {
			t.Errorf("verify of the %s conversion: %s", to, out)
		}
		info, _, err := tilecache.ReadMetadata(ctx, store, root)
		if err != nil || info.Storage.String() == tilecache.CompactV2.String() {
			t.Errorf("converted metadata: %v %v", info.Storage, err)
		}
	}
	// A corrupt bundle and a missing tile are reported.
	if err := store.Put(ctx, "arcgiscache/world/Layers/_alllayers/L02/R0000C0000.bundle", []byte("junk"), ""); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(ctx, []string{"verify", "-service", "world", "-extent", "-1,-1,1,1"}, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "bundle 2/R0000C0000") || !strings.Contains(out.String(), "is missing") {
		t.Errorf("verify of a corrupt cache: %v\n%s", err, out.String())
	}
}

// deleteTiles removes tiles from the cache writeCache made.
func deleteTiles(t *testing.T, store *blob.Disk, root string, tiles ...tilecache.Tile) {
	t.Helper()
	c, err := tilecache.New(store, tilecache.Options{Root: root, Format: tilecache.CompactV2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tile := range tiles {
		w, err := c.NewBundleWriter(tilecache.BundleOf(tile))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Delete(tile); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// verify -job tells the tiles a seeding job left empty on purpose (skipEmpty) from missing ones
// by the job's own count (issue 26: plain verify said 10,029 "missing" on the sample cache): the
// job's absent tiles must be exactly as many as it counted empty.
func TestVerifyJob(t *testing.T) {
	store, _ := farmDiskStore(t)
	const root = "arcgiscache/world/Layers"
	writeCache(t, store, root)
	// The job left three tiles of level 2 empty: they are not in the cache.
	deleteTiles(t, store, root, tilecache.Tile{Level: 2, Row: 0, Col: 0}, tilecache.Tile{Level: 2, Row: 3, Col: 1}, tilecache.Tile{Level: 2, Row: 3, Col: 3})
	scheme := tilecache.WebMercator()
	scheme.LODs = scheme.LODs[:3]
	spec := &seed.Spec{ID: "job1", Service: "world", Map: "Layers", Root: root, Layers: []seed.Layer{{ID: -1, Folder: tilecache.FusedLayer}},
		Scheme: scheme, Storage: tilecache.CompactV2, Extent: scheme.Extent, Levels: []int{0, 1, 2}, Mode: seed.RecreateAll,
		MetatileSize: 4, PartTiles: 256, SkipEmpty: true}
	tests := []struct {
		name    string
		st      seed.Status
		wantOut string
		wantErr bool
	}{
		{"as many absent as left empty", seed.Status{State: seed.StateDone, Done: 18, Empty: 3},
			"21 tiles planned, 3 absent, 3 of them left empty on purpose; 0 problems", false},
		{"one more absent than left empty", seed.Status{State: seed.StateDone, Done: 19, Empty: 2},
			"3 of the tiles the job planned are absent, but it left 2 empty and failed 0", true},
		{"failed tiles", seed.Status{State: seed.StateDone, Done: 18, Empty: 2, Failed: 1}, "the job failed 1 tiles", true},
		{"still running", seed.Status{State: seed.StateRunning, Done: 10}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st
			st.ID, st.Total, st.Spec = "job1", 21, spec
			api := &fakeAdmin{answers: []func(http.ResponseWriter){func(w http.ResponseWriter) { json.NewEncoder(w).Encode(st) }}}
			srv := httptest.NewServer(api)
			defer srv.Close()
			var out bytes.Buffer
			err := run(context.Background(), []string{"verify", "-job", "job1", "-server", srv.URL}, &out, &bytes.Buffer{})
			if (err != nil) != tc.wantErr || !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("verify -job: %v, want error %v; output:\n%s\nwant it to hold %q", err, tc.wantErr, out.String(), tc.wantOut)
			}
		})
	}
	// Plain verify counts the same three as missing.
	var out bytes.Buffer
	if err := run(context.Background(), []string{"verify", "-service", "world"}, &out, &bytes.Buffer{}); err == nil || !strings.Contains(out.String(), "3 tiles of the area missing") {
		t.Errorf("plain verify: %v\n%s", err, out.String())
	}
}
