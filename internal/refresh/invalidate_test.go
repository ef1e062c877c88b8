package refresh_test

import (
	"testing"

	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// The keys every api keeps tiles under (served tiles, directory paths, bundle indexes) are
// matched against a message: only the named root, folders and tile ranges.
func TestInvalidationCoversKeys(t *testing.T) {
	v := refresh.Invalidation{Root: "arcgiscache/world/Layers", Folders: []string{"_alllayers"},
		Ranges: []tilecache.TileRange{{Level: 5, MinRow: 10, MaxRow: 11, MinCol: 20, MaxCol: 20}}}
	for _, tc := range []struct {
		key  string
		f    func(string) bool
		want bool
	}{
		{"arcgiscache/world/Layers/_alllayers/5/10/20", v.CoversTileKey, true},
		{"arcgiscache/world/Layers/_alllayers/5/11/20", v.CoversTileKey, true},
		{"arcgiscache/world/Layers/_alllayers/5/12/20", v.CoversTileKey, false},
		{"arcgiscache/world/Layers/_alllayers/6/10/20", v.CoversTileKey, false},
		{"arcgiscache/world/Layers/Countries/5/10/20", v.CoversTileKey, false},
		{"arcgiscache/world/Layers2/_alllayers/5/10/20", v.CoversTileKey, false},
		{"arcgiscache/world/Layers/_alllayers/L05/R0000000a/C00000014.png", v.CoversTilePath, true},
		{"arcgiscache/world/Layers/_alllayers/L05/R0000000c/C00000014.png", v.CoversTilePath, false},
		{"arcgiscache/world/Layers/_alllayers/L05/R0000C0000.bundle", v.CoversBundleKey, true},
		{"arcgiscache/world/Layers/_alllayers/L05/R0080C0000.bundle", v.CoversBundleKey, false},
		{"arcgiscache/world/Layers/_alllayers/L06/R0000C0000.bundle", v.CoversBundleKey, false},
	} {
		if got := tc.f(tc.key); got != tc.want {
			t.Errorf("%s: covered %v, want %v", tc.key, got, tc.want)
		}
	}
	whole := refresh.Invalidation{Root: "arcgiscache/world/Layers"}
	if !whole.Whole() || !whole.CoversTileKey("arcgiscache/world/Layers/Countries/9/1/2") || whole.CoversTileKey("arcgiscache/other/Layers/Countries/9/1/2") {
		t.Error("a message without folders or ranges must cover every tile of its root, and only of its root")
	}
}
