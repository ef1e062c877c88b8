package tilecache_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
)

// benchBundle fills one V2 bundle with n tiles of size bytes and returns
// the cache and the tiles.
func benchBundle(b *testing.B, store tilecache.Store, f tilecache.StorageFormat, n, size int) (*tilecache.Cache, []tilecache.Tile) {
	b.Helper()
	c, err := tilecache.New(store, tilecache.Options{Root: "bench", Format: f})
	if err != nil {
		b.Fatal(err)
	}
	tiles := map[tilecache.Tile][]byte{}
	var list []tilecache.Tile
	for i := range n {
		tile := tilecache.Tile{Level: 10, Row: 256 + i/128, Col: 512 + i%128}
		tiles[tile] = fakeTile(tile, size)
		list = append(list, tile)
	}
	writeTiles(b, c, tiles)
	for _, tile := range list { // warm the index
		if _, err := c.ReadTile(context.Background(), tile); err != nil {
			b.Fatal(err)
		}
	}
	return c, list
}

// BenchmarkReadTileWarm reads tiles of a 4096-tile bundle with its index
// cached: one ranged read per tile.
func BenchmarkReadTileWarm(b *testing.B) {
	for _, bc := range []struct {
		name string
		f    tilecache.StorageFormat
		disk bool
	}{
		{"v2/mem", tilecache.CompactV2, false},
		{"v2/disk", tilecache.CompactV2, true},
		{"v1/disk", tilecache.CompactV1, true},
		{"exploded/disk", tilecache.Exploded, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var store tilecache.Store = newMemStore()
			if bc.disk {
				d, err := blob.NewDisk(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				store = d
			}
			c, tiles := benchBundle(b, store, bc.f, 4096, 12<<10)
			ctx := context.Background()
			b.SetBytes(12 << 10)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := c.ReadTile(ctx, tiles[i%len(tiles)]); err != nil {
						b.Error(err)
						return
					}
					i += 7
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tiles/s")
		})
	}
}

// BenchmarkBundleWrite encodes and stores a full-level bundle of 4096 tiles
// (12 KiB each, ~48 MiB), merging with the stored bundle each time.
func BenchmarkBundleWrite(b *testing.B) {
	for _, f := range []tilecache.StorageFormat{tilecache.CompactV2, tilecache.CompactV1} {
		b.Run(f.String(), func(b *testing.B) {
			store := newMemStore()
			c, _ := tilecache.New(store, tilecache.Options{Root: "w", Format: f})
			bundle := tilecache.Bundle{TopLeft: tilecache.Tile{Level: 10, Row: 256, Col: 512}}
			tiles := map[tilecache.Tile][]byte{}
			for i := range 4096 {
				tile := tilecache.Tile{Level: 10, Row: 256 + i/64, Col: 512 + i%64}
				tiles[tile] = fakeTile(tile, 12<<10)
			}
			ctx := context.Background()
			b.SetBytes(4096 * 12 << 10)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				w, _ := c.NewBundleWriter(bundle)
				for tile, data := range tiles {
					if i%2 == 1 { // alternate contents so every flush writes
						data = data[1:]
					}
					if err := w.Put(tile, data); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*4096)/b.Elapsed().Seconds(), "tiles/s")
		})
	}
}

// BenchmarkPlan1e8 streams a 10^8-tile job (10 000 × 10 000 tiles of level
// 14) tile by tile and bundle by bundle, sampling the live heap.
func BenchmarkPlan1e8(b *testing.B) {
	s := tilecache.WebMercator()
	l14, _ := s.LOD(14)
	span := 10000 * 256 * l14.Resolution
	x0, y0 := -5e6, 5e6
	env := orb.Bound{Min: orb.Point{x0, y0 - span}, Max: orb.Point{x0 + span, y0}}
	// A right triangle with legs of 14 142 tiles from the world's top-left
	// corner: 10^8 tiles.
	leg := 14142 * 256 * l14.Resolution
	ox, oy := s.Origin[0]+1, s.Origin[1]-1
	tri := orb.Polygon{{{ox, oy}, {ox + leg, oy}, {ox, oy - leg}, {ox, oy}}}
	for _, bc := range []struct {
		name    string
		aoi     orb.Geometry
		bundles bool
	}{
		{"envelope/tiles", env, false},
		{"envelope/bundles4x4", env, true},
		{"triangle/tiles", tri, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var maxHeap uint64
			sample := func() {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				maxHeap = max(maxHeap, ms.HeapInuse)
			}
			var n int64
			for range b.N {
				c, err := s.Cover(bc.aoi, 14)
				if err != nil {
					b.Fatal(err)
				}
				n = 0
				if bc.bundles {
					seq, _ := c.Bundles(4)
					for _, metas := range seq {
						for _, m := range metas {
							n += int64(m.Rows * m.Cols)
						}
						if n&(1<<22-1) < 16*16*16 {
							sample()
						}
					}
				} else {
					for range c.Tiles() {
						n++
						if n&(1<<22-1) == 0 {
							sample()
						}
					}
				}
			}
			if n < 9e7 {
				b.Fatalf("planned only %d tiles", n)
			}
			b.ReportMetric(float64(n), "tiles/op")
			b.ReportMetric(float64(maxHeap)/(1<<20), "MB-heap-max")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tiles/s")
		})
	}
}
