package tilecache_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// pagedTiles returns a full row of 128 tiles of one level-9 bundle, of varied sizes (so
// that some records straddle page boundaries), and tiles of the next row.
func pagedTiles() (map[tilecache.Tile][]byte, []tilecache.Tile) {
	m := map[tilecache.Tile][]byte{}
	var order []tilecache.Tile
	for r := range 2 {
		for c := range 128 {
			t := tilecache.Tile{Level: 9, Row: 128 + r, Col: 256 + c}
			m[t] = fakeTile(t, 300+(c*97)%900)
			order = append(order, t)
		}
	}
	return m, order
}

// With a page cache, every tile reads back as stored, in both compact layouts, and the
// requests are the pages touched: neighbours of a read tile cost nothing.
func TestPageCacheReads(t *testing.T) {
	ctx := context.Background()
	for _, f := range []tilecache.StorageFormat{tilecache.CompactV1, tilecache.CompactV2} {
		t.Run(f.String(), func(t *testing.T) {
			store := newMemStore()
			tiles, order := pagedTiles()
			w, _ := tilecache.New(store, tilecache.Options{Root: "p", Format: f})
			writeTiles(t, w, tiles)
			const pageSize = 4096
			ic := tilecache.NewIndexCache(tilecache.IndexCacheOptions{PageBytes: 1 << 20, PageSize: pageSize})
			c, _ := tilecache.New(store, tilecache.Options{Root: "p", Format: f, Index: ic})
			if _, err := c.ReadTile(ctx, order[0]); err != nil { // load the index
				t.Fatal(err)
			}
			before := store.ranges.Load()
			for _, tile := range order {
				got, err := c.ReadTile(ctx, tile)
				if err != nil || !bytes.Equal(got, tiles[tile]) {
					t.Fatalf("ReadTile(%v): %d bytes, %v; want %d bytes", tile, len(got), err, len(tiles[tile]))
				}
			}
			var total int
			for _, d := range tiles {
				total += len(d) + 4
			}
			// The tiles were read in storage order: each page was fetched once (give or take
			// the run that a straddling record fetches with the next page).
			pages := int64(total/pageSize) + 2
			if got := store.ranges.Load() - before; got > pages || got < pages/2 {
				t.Errorf("%d ranged GETs for %d tiles over about %d pages", got, len(order), pages)
			}
			s := ic.Stats()
			if s.PageFetches == 0 || s.PageHits < int64(len(order))/2 || s.PageBytes > 1<<20 {
				t.Errorf("stats %+v", s)
			}
			// Reading them all again costs nothing.
			before = store.ranges.Load()
			for _, tile := range order {
				if got, err := c.ReadTile(ctx, tile); err != nil || !bytes.Equal(got, tiles[tile]) {
					t.Fatalf("second ReadTile(%v): %v", tile, err)
				}
			}
			if got := store.ranges.Load() - before; got != 0 {
				t.Errorf("%d ranged GETs reading cached pages again", got)
			}
		})
	}
}

// Pages go with their index: a bundle rewritten by another process is read afresh once the
// index is revalidated (after MaxAge) or invalidated, and a write through the same cache
// drops them at once.
func TestPageCacheInvalidation(t *testing.T) {
	ctx := context.Background()
	for _, f := range []tilecache.StorageFormat{tilecache.CompactV1, tilecache.CompactV2} {
		t.Run(f.String(), func(t *testing.T) {
			store := newMemStore()
			tiles, order := pagedTiles()
			other, _ := tilecache.New(store, tilecache.Options{Root: "p", Format: f}) // another process
			writeTiles(t, other, tiles)
			now := time.Unix(1000, 0)
			ic := tilecache.NewIndexCache(tilecache.IndexCacheOptions{PageBytes: 1 << 20, PageSize: 8192, Now: func() time.Time { return now }})
			c, _ := tilecache.New(store, tilecache.Options{Root: "p", Format: f, Index: ic})
			readAll := func(want map[tilecache.Tile][]byte) {
				t.Helper()
				for _, tile := range order {
					got, err := c.ReadTile(ctx, tile)
					if err != nil || !bytes.Equal(got, want[tile]) {
						t.Fatalf("ReadTile(%v): %q…, %v; want %q…", tile, head(got), err, head(want[tile]))
					}
				}
			}
			readAll(tiles)
			// Same sizes, other bytes: only the pages could tell the old tiles.
			changed := map[tilecache.Tile][]byte{}
			for tile, d := range tiles {
				changed[tile] = bytes.ToUpper(d)
			}
			writeTiles(t, other, changed)
			now = now.Add(tilecache.DefaultIndexMaxAge + time.Second)
			readAll(changed)

			// Invalidate.
			for tile, d := range tiles {
				changed[tile] = bytes.ToLower(d)
			}
			writeTiles(t, other, changed)
			ic.Invalidate(c.BundleKey(tilecache.BundleOf(order[0])))
			if s := ic.Stats(); s.Pages != 0 || s.PageBytes != 0 {
				t.Errorf("after Invalidate, %d pages (%d bytes) are held", s.Pages, s.PageBytes)
			}
			readAll(changed)

			// A write through this cache.
			writeTiles(t, c, tiles)
			readAll(tiles)
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 12)] }

// The page cache stays within its budget, and concurrent readers of the same pages get the
// right bytes (run with -race).
func TestPageCacheBoundAndConcurrency(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	tiles, order := pagedTiles()
	w, _ := tilecache.New(store, tilecache.Options{Root: "p"})
	writeTiles(t, w, tiles)
	const budget = 3 * 4096
	ic := tilecache.NewIndexCache(tilecache.IndexCacheOptions{PageBytes: budget, PageSize: 4096})
	c, _ := tilecache.New(store, tilecache.Options{Root: "p", Index: ic})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				tile := order[(g*31+i*7)%len(order)]
				got, err := c.ReadTile(ctx, tile)
				if err != nil || !bytes.Equal(got, tiles[tile]) {
					errs <- fmt.Errorf("ReadTile(%v): %d bytes, %v", tile, len(got), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := ic.Stats()
	if s.PageBytes > budget || s.Pages > 3 || s.PageEvictions == 0 {
		t.Errorf("stats %+v: budget %d bytes", s, budget)
	}
}

// Without a page cache (the zero value), a warm read is one ranged GET of the tile.
func TestNoPageCacheOneRangedGet(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	tiles, order := pagedTiles()
	c, _ := tilecache.New(store, tilecache.Options{Root: "p"})
	writeTiles(t, c, tiles)
	if _, err := c.ReadTile(ctx, order[0]); err != nil {
		t.Fatal(err)
	}
	before := store.ranges.Load()
	for _, tile := range order[:10] {
		if _, err := c.ReadTile(ctx, tile); err != nil {
			t.Fatal(err)
		}
	}
	if got := store.ranges.Load() - before; got != 10 {
		t.Errorf("%d ranged GETs for 10 warm reads", got)
	}
}
