package tilecache_test

import (
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

func TestParsePaths(t *testing.T) {
	c, err := tilecache.New(newMemStore(), tilecache.Options{Root: "caches/world", Layer: tilecache.FusedLayer, Format: tilecache.Exploded, TileFormat: "png"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tile := range []tilecache.Tile{{0, 0, 0}, {9, 1234567 % 512, 300}, {19, 0x7ffff, 0x1}} {
		key := c.TileKey(tile)
		rel := strings.TrimPrefix(key, c.Dir()+"/")
		got, ext, err := tilecache.ParseTilePath(rel)
		if err != nil || got != tile || ext != "png" {
			t.Errorf("tilecache.ParseTilePath(%q) = %v %q %v, want %v png", rel, got, ext, err, tile)
		}
		b := tilecache.BundleOf(tile)
		bkey := strings.TrimPrefix(c.BundleKey(b), c.Dir()+"/")
		if gb, err := tilecache.ParseBundlePath(bkey); err != nil || gb != b {
			t.Errorf("tilecache.ParseBundlePath(%q) = %v %v, want %v", bkey, gb, err, b)
		}
	}
	for _, bad := range []string{"", "L01/R00000001", "L1/R00000001/C00000001.png", "L01/R0000000x/C00000001.png", "L01/R00000001/C00000001",
		"L01/R0001C0001.bundle", "L01/R0080C0000.zip", "L01/R0080C0000.bundle/x"} {
		if _, _, err := tilecache.ParseTilePath(bad); err == nil && !strings.HasSuffix(bad, ".bundle") {
			t.Errorf("tilecache.ParseTilePath(%q) accepted", bad)
		}
		if strings.Contains(bad, "bundle") || strings.Contains(bad, "zip") {
			if _, err := tilecache.ParseBundlePath(bad); err == nil {
				t.Errorf("tilecache.ParseBundlePath(%q) accepted", bad)
			}
		}
	}
	// The leading slash of a URL path is accepted, short hex is not.
	if got, ext, err := tilecache.ParseTilePath("/L07/R0000002a/C0000003f.png"); err != nil || got != (tilecache.Tile{Level: 7, Row: 42, Col: 63}) || ext != "png" {
		t.Errorf("URL path: %v %q %v", got, ext, err)
	}
	// Upper-case hex (written by some tools) reads the same.
	if got, _, err := tilecache.ParseTilePath("L07/R0000002A/C0000003F.PNG"); err != nil || got != (tilecache.Tile{Level: 7, Row: 42, Col: 63}) {
		t.Errorf("upper-case hex: %v %v", got, err)
	}
	for _, bad := range []string{"/L07/R2a/C3f.png", "/L07/R0000002g/C0000003f.png", "/L07/R0000002a/C0000003f.", "/L7x/R0000002a/C0000003f.png",
		"/L07/R+000002a/C0000003f.png", "/L07/R0000002a/C80000000.png", "/L07/R0000002a/C0000003f.png/x"} {
		if _, _, err := tilecache.ParseTilePath(bad); err == nil {
			t.Errorf("ParseTilePath(%q) accepted", bad)
		}
	}
}
