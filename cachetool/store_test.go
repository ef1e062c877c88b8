package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
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

// verify, export, import and convert on a disk store configured as the farm's.
func TestStoreCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MAPFARM_STORE", "disk")
	t.Setenv("MAPFARM_STORE_DIR", filepath.Join(dir, "store"))
	store, err := blob.NewDisk(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
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
	err = run(ctx, []string{"verify", "-service", "world", "-extent", "-1,-1,1,1"}, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(out.String(), "bundle 2/R0000C0000") || !strings.Contains(out.String(), "is missing") {
		t.Errorf("verify of a corrupt cache: %v\n%s", err, out.String())
	}
}
