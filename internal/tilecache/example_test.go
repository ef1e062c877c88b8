package tilecache_test

import (
	"context"
	"fmt"

	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
)

// Plan a seeding job: the tiles of an envelope at levels 3–4, grouped into
// 4×4 metatiles per bundle, each bundle one work unit.
func ExampleCover_Bundles() {
	s := tilecache.WebMercator()
	aoi := orb.Bound{Min: orb.Point{-2e6, -1e6}, Max: orb.Point{4e6, 3e6}}
	cover, err := s.Cover(aoi, 3, 4)
	if err != nil {
		panic(err)
	}
	total, _ := cover.Count()
	fmt.Println("tiles:", total)
	units, _ := cover.Bundles(4)
	for bundle, metatiles := range units {
		fmt.Println(bundle, metatiles)
	}
	// Output:
	// tiles: 13
	// 3/R0000C0000 [3/0/0+4x4 3/0/4+4x4 3/4/0+4x4 3/4/4+4x4]
	// 4/R0000C0000 [4/4/4+4x4 4/4/8+4x4 4/8/4+4x4 4/8/8+4x4]
}

// Write tiles of one bundle and read one back.
func ExampleBundleWriter() {
	ctx := context.Background()
	store := newMemStore() // any tilecache.Store: blob.NewDisk, blob.NewMinIO
	cache, err := tilecache.New(store, tilecache.Options{Root: "caches/World/Layers", Format: tilecache.CompactV2})
	if err != nil {
		panic(err)
	}
	tile, _ := tilecache.ParseTile("5/12/9")
	w, _ := cache.NewBundleWriter(tilecache.BundleOf(tile))
	w.Put(tile, []byte("png bytes"))
	if err := w.Flush(ctx); err != nil {
		panic(err)
	}
	data, _ := cache.ReadTile(ctx, tile)
	fmt.Println(cache.BundleKey(tilecache.BundleOf(tile)), string(data))
	// Output: caches/World/Layers/_alllayers/L05/R0000C0000.bundle png bytes
}
