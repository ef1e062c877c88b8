package tilecache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
)

var allFormats = []tilecache.StorageFormat{tilecache.Exploded, tilecache.CompactV1, tilecache.CompactV2}

// writeTiles writes tiles through one BundleWriter per bundle.
func writeTiles(t testing.TB, c *tilecache.Cache, tiles map[tilecache.Tile][]byte) {
	t.Helper()
	ctx := context.Background()
	writers := map[tilecache.Bundle]*tilecache.BundleWriter{}
	for tile, data := range tiles {
		b := tilecache.BundleOf(tile)
		w := writers[b]
		if w == nil {
			var err error
			if w, err = c.NewBundleWriter(b); err != nil {
				t.Fatal(err)
			}
			writers[b] = w
		}
		if err := w.Put(tile, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range writers {
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// readTiles checks that every tile of tiles reads back from c as it is in tiles.
func readTiles(t testing.TB, c *tilecache.Cache, tiles map[tilecache.Tile][]byte) {
	t.Helper()
	ctx := context.Background()
	for tile, want := range tiles {
		got, err := c.ReadTile(ctx, tile)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadTile(%v) = %d bytes, %v; want %d bytes", tile, len(got), err, len(want))
		}
	}
}

// sampleTiles returns tiles spread over three bundles of level 9.
func sampleTiles() map[tilecache.Tile][]byte {
	m := map[tilecache.Tile][]byte{}
	for i := range 60 {
		tile := tilecache.Tile{Level: 9, Row: 100 + (i*7)%70, Col: 120 + (i*13)%40}
		m[tile] = fakeTile(tile, 50+i*37)
	}
	m[tilecache.Tile{Level: 9, Row: 511, Col: 511}] = fakeTile(tilecache.Tile{Level: 9, Row: 511, Col: 511}, 5)
	return m
}

func stores(t *testing.T) map[string]tilecache.Store {
	disk, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]tilecache.Store{"mem": newMemStore(), "disk": disk}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	for sname, store := range stores(t) {
		for _, f := range allFormats {
			t.Run(sname+"/"+f.String(), func(t *testing.T) {
				c, err := tilecache.New(store, tilecache.Options{Root: "caches/" + f.String() + "/Layers", Format: f})
				if err != nil {
					t.Fatal(err)
				}
				tiles := sampleTiles()
				writeTiles(t, c, tiles)
				readTiles(t, c, tiles)
				for _, missing := range []tilecache.Tile{
					{Level: 9, Row: 101, Col: 121}, // in a written bundle
					{Level: 9, Row: 0, Col: 0},     // in no bundle
					{Level: 3, Row: 1, Col: 1},     // in no level
				} {
					if _, ok := tiles[missing]; ok {
						continue
					}
					_, err := c.ReadTile(ctx, missing)
					if !errors.Is(err, tilecache.ErrTileNotFound) || !errors.Is(err, fs.ErrNotExist) {
						t.Fatalf("ReadTile(missing %v) error = %v, want ErrTileNotFound", missing, err)
					}
				}
				if _, err := c.ReadTile(ctx, tilecache.Tile{Level: -1}); !errors.Is(err, tilecache.ErrInvalidTile) {
					t.Fatalf("invalid tile: %v", err)
				}
			})
		}
	}
}

func TestKeys(t *testing.T) {
	store := newMemStore()
	tile := tilecache.Tile{Level: 9, Row: 7, Col: 300}
	for _, tt := range []struct {
		f    tilecache.StorageFormat
		want []string
	}{
		{tilecache.Exploded, []string{"c/Layers/_alllayers/L09/R00000007/C0000012c.png"}},
		{tilecache.CompactV1, []string{"c/Layers/_alllayers/L09/R0000C0100.bundle", "c/Layers/_alllayers/L09/R0000C0100.bundlx"}},
		{tilecache.CompactV2, []string{"c/Layers/_alllayers/L09/R0000C0100.bundle"}},
	} {
		store = newMemStore()
		c, _ := tilecache.New(store, tilecache.Options{Root: "c/Layers", Format: tt.f})
		writeTiles(t, c, map[tilecache.Tile][]byte{tile: []byte("x")})
		if got := store.keys(); !slices.Equal(got, tt.want) {
			t.Errorf("%v keys %v, want %v", tt.f, got, tt.want)
		}
	}
	c, _ := tilecache.New(store, tilecache.Options{Root: "c", Format: tilecache.Exploded, TileFormat: "JPEG", Layer: "Roads"})
	if got := c.TileKey(tilecache.Tile{Level: 9, Row: 87654321, Col: 1234567}); got != "c/Roads/L09/R05397fb1/C0012d687.jpg" {
		t.Errorf("per-layer JPEG key %q", got)
	}
}

func TestMergeAndIdempotence(t *testing.T) {
	ctx := context.Background()
	for _, f := range allFormats {
		t.Run(f.String(), func(t *testing.T) {
			store := newMemStore()
			c, _ := tilecache.New(store, tilecache.Options{Root: "m", Format: f})
			b := tilecache.Bundle{TopLeft: tilecache.Tile{Level: 4}}
			a, bb, cc := tilecache.Tile{Level: 4, Row: 1, Col: 1}, tilecache.Tile{Level: 4, Row: 2, Col: 3}, tilecache.Tile{Level: 4, Row: 9, Col: 0}
			w, _ := c.NewBundleWriter(b)
			w.Put(a, []byte("A1"))
			w.Put(bb, []byte("B1"))
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			snapshot := map[string][]byte{}
			for _, k := range store.keys() {
				snapshot[k] = slices.Clone(store.raw(k))
			}
			// Same tiles again: no write, same bytes.
			puts := store.puts.Load()
			w.Put(a, []byte("A1"))
			w.Put(bb, []byte("B1"))
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if f != tilecache.Exploded && store.puts.Load() != puts {
				t.Errorf("rewriting identical tiles wrote %d objects", store.puts.Load()-puts)
			}
			for k, v := range snapshot {
				if !bytes.Equal(store.raw(k), v) {
					t.Errorf("%s changed on identical rewrite", k)
				}
			}
			// Second writer: replace B, add C, delete A; keeps nothing else.
			w2, _ := c.NewBundleWriter(b)
			w2.Put(bb, []byte("B2"))
			w2.Put(cc, []byte("C2"))
			w2.Delete(a)
			if w2.Pending() != 3 {
				t.Fatalf("pending %d", w2.Pending())
			}
			if err := w2.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			check := func(tile tilecache.Tile, want string) {
				t.Helper()
				got, err := c.ReadTile(ctx, tile)
				if want == "" {
					if !errors.Is(err, tilecache.ErrTileNotFound) {
						t.Errorf("tile %v: %q, %v; want not found", tile, got, err)
					}
					return
				}
				if err != nil || string(got) != want {
					t.Errorf("tile %v: %q, %v; want %q", tile, got, err, want)
				}
			}
			check(a, "")
			check(bb, "B2")
			check(cc, "C2")
			// Merge order does not matter: writing B2 and C2 into an empty
			// cache gives the same bundle bytes.
			if f != tilecache.Exploded {
				other := newMemStore()
				c2, _ := tilecache.New(other, tilecache.Options{Root: "m", Format: f})
				writeTiles(t, c2, map[tilecache.Tile][]byte{cc: []byte("C2"), bb: []byte("B2")})
				for _, k := range store.keys() {
					if !bytes.Equal(store.raw(k), other.raw(k)) {
						t.Errorf("%s: merged bytes differ from a fresh write", k)
					}
				}
			}
			// Truncate: only what is put survives.
			w3, _ := c.NewBundleWriter(b)
			w3.Truncate()
			w3.Put(a, []byte("A3"))
			if err := w3.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			check(a, "A3")
			check(bb, "")
			check(cc, "")
			// Deleting the last tile removes the bundle.
			w3.Delete(a)
			if err := w3.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			check(a, "")
			if keys := store.keys(); len(keys) != 0 {
				t.Errorf("objects left after deleting every tile: %v", keys)
			}
			if err := w3.Put(tilecache.Tile{Level: 4, Row: 128}, []byte("x")); !errors.Is(err, tilecache.ErrInvalidTile) {
				t.Errorf("Put outside bundle: %v", err)
			}
		})
	}
}

func TestWarmReadIsOneRangedGet(t *testing.T) {
	ctx := context.Background()
	for _, f := range []tilecache.StorageFormat{tilecache.CompactV1, tilecache.CompactV2} {
		store := newMemStore()
		c, _ := tilecache.New(store, tilecache.Options{Root: "r", Format: f})
		tiles := sampleTiles()
		writeTiles(t, c, tiles)
		for tile := range tiles { // warm every index
			if _, err := c.ReadTile(ctx, tile); err != nil {
				t.Fatal(err)
			}
		}
		g, r, s := store.gets.Load(), store.ranges.Load(), store.stats.Load()
		for tile, want := range tiles {
			got, err := c.ReadTile(ctx, tile)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%v: tile %v: %v", f, tile, err)
			}
		}
		if dg, dr, ds := store.gets.Load()-g, store.ranges.Load()-r, store.stats.Load()-s; dg != 0 || ds != 0 || dr != int64(len(tiles)) {
			t.Errorf("%v: %d warm reads made %d gets, %d stats, %d ranged gets; want 0, 0, %d", f, len(tiles), dg, ds, dr, len(tiles))
		}
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestIndexRevalidation(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	clock := &fakeClock{t: time.Unix(1000, 0)}
	idx := tilecache.NewIndexCache(tilecache.IndexCacheOptions{MaxAge: time.Minute, Now: clock.now})
	reader, _ := tilecache.New(store, tilecache.Options{Root: "v", Index: idx})
	writer, _ := tilecache.New(store, tilecache.Options{Root: "v"}) // own index cache: another process
	tile := tilecache.Tile{Level: 5, Row: 3, Col: 4}
	other := tilecache.Tile{Level: 5, Row: 0, Col: 0}
	writeTiles(t, writer, map[tilecache.Tile][]byte{tile: []byte("one")})
	if got, err := reader.ReadTile(ctx, tile); err != nil || string(got) != "one" {
		t.Fatalf("first read %q, %v", got, err)
	}
	// Another process adds a tile. Within MaxAge the cached index (which
	// lacks it) is trusted; the new tile is not seen yet.
	writeTiles(t, writer, map[tilecache.Tile][]byte{other: []byte("zero")})
	if _, err := reader.ReadTile(ctx, other); !errors.Is(err, tilecache.ErrTileNotFound) {
		t.Fatalf("before MaxAge: %v, want not found from the cached index", err)
	}
	// Old tile still reads right although the bundle was rewritten: the
	// length-word check catches the moved record and reloads.
	if got, err := reader.ReadTile(ctx, tile); err != nil || string(got) != "one" {
		t.Fatalf("read after rewrite %q, %v", got, err)
	}
	clock.t = clock.t.Add(2 * time.Minute)
	if got, err := reader.ReadTile(ctx, other); err != nil || string(got) != "zero" {
		t.Fatalf("after MaxAge %q, %v", got, err)
	}
	st := idx.Stats()
	if st.Checks+st.Invalidated == 0 || st.Loads < 2 {
		t.Errorf("stats %+v: want a reload", st)
	}
	// An unchanged bundle is revalidated with a Stat only.
	clock.t = clock.t.Add(2 * time.Minute)
	loads := idx.Stats().Loads
	if _, err := reader.ReadTile(ctx, other); err != nil {
		t.Fatal(err)
	}
	if st := idx.Stats(); st.Loads != loads || st.Checks == 0 {
		t.Errorf("unchanged bundle reloaded: %+v", st)
	}
	// Explicit invalidation.
	writeTiles(t, writer, map[tilecache.Tile][]byte{{Level: 5, Row: 1, Col: 1}: []byte("new")})
	idx.Invalidate(reader.BundleKey(tilecache.BundleOf(tile)))
	if got, err := reader.ReadTile(ctx, tilecache.Tile{Level: 5, Row: 1, Col: 1}); err != nil || string(got) != "new" {
		t.Fatalf("after Invalidate %q, %v", got, err)
	}
}

func TestIndexCacheBound(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	idx := tilecache.NewIndexCache(tilecache.IndexCacheOptions{MaxBytes: 3 * 140 << 10})
	c, _ := tilecache.New(store, tilecache.Options{Root: "b", Index: idx})
	tiles := map[tilecache.Tile][]byte{}
	for i := range 10 {
		tile := tilecache.Tile{Level: 12, Row: 128 * i, Col: 0}
		tiles[tile] = []byte{byte(i + 1)}
	}
	writeTiles(t, c, tiles)
	for range 2 {
		for tile := range tiles {
			if _, err := c.ReadTile(ctx, tile); err != nil {
				t.Fatal(err)
			}
		}
	}
	st := idx.Stats()
	if st.Entries > 3 || st.Bytes > 3*140<<10 || st.Evictions == 0 {
		t.Errorf("stats %+v: want at most 3 entries within the bound, with evictions", st)
	}
}

func TestMetadataAndOpen(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	s := tilecache.WebMercator()
	s.Format = "JPEG"
	s.CompressionQuality = 80
	for _, layer := range []string{tilecache.FusedLayer, "Rivers"} {
		c, err := tilecache.New(store, tilecache.Options{Root: "svc/Layers", Layer: layer, Format: tilecache.CompactV1, TileFormat: "JPEG"})
		if err != nil {
			t.Fatal(err)
		}
		extent := orb.Bound{Min: orb.Point{-1e6, -1e6}, Max: orb.Point{1e6, 2e6}}
		if err := c.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: s}, extent); err != nil {
			t.Fatal(err)
		}
		writeTiles(t, c, map[tilecache.Tile][]byte{{Level: 2, Row: 1, Col: 1}: []byte("\xff\xd8\xff" + layer)})
	}
	for _, layer := range []string{tilecache.FusedLayer, "Rivers"} {
		c, info, err := tilecache.Open(ctx, store, "svc/Layers", layer, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Format() != tilecache.CompactV1 || info.Scheme.Format != "JPEG" || info.Scheme.CompressionQuality != 80 || len(info.Scheme.LODs) != 24 {
			t.Fatalf("Open: %v %+v", c.Format(), info)
		}
		got, err := c.ReadTile(ctx, tilecache.Tile{Level: 2, Row: 1, Col: 1})
		if err != nil || !strings.HasSuffix(string(got), layer) {
			t.Fatalf("layer %s tile %q, %v", layer, got, err)
		}
		if ok, err := tilecache.HasLayer(ctx, store, "svc/Layers", layer); !ok || err != nil {
			t.Errorf("HasLayer(%s) = %v, %v", layer, ok, err)
		}
	}
	if ok, _ := tilecache.HasLayer(ctx, store, "svc/Layers", "Lakes"); ok {
		t.Error("HasLayer(Lakes)")
	}
	_, _, err := tilecache.Open(ctx, store, "nothing", tilecache.FusedLayer, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open without conf.xml: %v", err)
	}
}

func TestMixedExploded(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	c, _ := tilecache.New(store, tilecache.Options{Root: "mx", Format: tilecache.Exploded, TileFormat: "MIXED"})
	png := []byte("\x89PNG\r\n\x1a\nrest")
	jpg := []byte("\xff\xd8\xffrest")
	tile := tilecache.Tile{Level: 1, Row: 1, Col: 0}
	writeTiles(t, c, map[tilecache.Tile][]byte{tile: jpg})
	if got, err := c.ReadTile(ctx, tile); err != nil || !bytes.Equal(got, jpg) {
		t.Fatalf("jpg: %q, %v", got, err)
	}
	writeTiles(t, c, map[tilecache.Tile][]byte{tile: png})
	if got, err := c.ReadTile(ctx, tile); err != nil || !bytes.Equal(got, png) {
		t.Fatalf("png: %q, %v", got, err)
	}
	if keys := store.keys(); len(keys) != 1 || !strings.HasSuffix(keys[0], ".png") {
		t.Fatalf("keys %v", keys)
	}
}

func TestConcurrentReads(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	idx := tilecache.NewIndexCache(tilecache.IndexCacheOptions{MaxBytes: 2 * 140 << 10})
	c, _ := tilecache.New(store, tilecache.Options{Root: "cr", Index: idx})
	tiles := sampleTiles()
	writeTiles(t, c, tiles)
	list := make([]tilecache.Tile, 0, len(tiles))
	for tile := range tiles {
		list = append(list, tile)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 400 {
				tile := list[(i*(g+3))%len(list)]
				got, err := c.ReadTile(ctx, tile)
				if err == nil && !bytes.Equal(got, tiles[tile]) {
					err = errors.New("wrong bytes for " + tile.String())
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if st := idx.Stats(); st.Entries > 2 {
		t.Errorf("stats %+v exceed the bound", st)
	}
}

func TestCorruptStoredBundle(t *testing.T) {
	ctx := context.Background()
	for _, f := range []tilecache.StorageFormat{tilecache.CompactV1, tilecache.CompactV2} {
		store := newMemStore()
		c, _ := tilecache.New(store, tilecache.Options{Root: "bad", Format: f})
		tile := tilecache.Tile{Level: 3, Row: 2, Col: 2}
		key := c.BundleKey(tilecache.BundleOf(tile))
		if err := store.Put(ctx, key, []byte("not a bundle at all"), ""); err != nil {
			t.Fatal(err)
		}
		store.Put(ctx, strings.TrimSuffix(key, ".bundle")+".bundlx", []byte("nor an index"), "")
		if _, err := c.ReadTile(ctx, tile); !errors.Is(err, tilecache.ErrCorruptBundle) {
			t.Errorf("%v: read from corrupt bundle: %v", f, err)
		}
		w, _ := c.NewBundleWriter(tilecache.BundleOf(tile))
		w.Put(tile, []byte("ok"))
		if err := w.Flush(ctx); !errors.Is(err, tilecache.ErrCorruptBundle) {
			t.Errorf("%v: merge into corrupt bundle: %v", f, err)
		}
		w.Truncate()
		if err := w.Flush(ctx); err != nil {
			t.Fatalf("%v: truncate over corrupt bundle: %v", f, err)
		}
		if got, err := c.ReadTile(ctx, tile); err != nil || string(got) != "ok" {
			t.Errorf("%v: after truncate: %q, %v", f, got, err)
		}
	}
}

func TestStoredTiles(t *testing.T) {
	ctx := context.Background()
	for _, f := range allFormats {
		store := newMemStore()
		c, _ := tilecache.New(store, tilecache.Options{Root: "st", Format: f})
		tiles := sampleTiles()
		writeTiles(t, c, tiles)
		total := 0
		for _, b := range []tilecache.Bundle{
			{TopLeft: tilecache.Tile{Level: 9, Row: 0, Col: 0}},
			{TopLeft: tilecache.Tile{Level: 9, Row: 0, Col: 128}},
			{TopLeft: tilecache.Tile{Level: 9, Row: 128, Col: 0}},
			{TopLeft: tilecache.Tile{Level: 9, Row: 128, Col: 128}},
			{TopLeft: tilecache.Tile{Level: 9, Row: 384, Col: 384}},
			{TopLeft: tilecache.Tile{Level: 2}},
		} {
			got, err := c.StoredTiles(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			for i, tile := range got {
				if _, ok := tiles[tile]; !ok || !b.Contains(tile) {
					t.Errorf("%v: StoredTiles(%v) lists %v", f, b, tile)
				}
				if i > 0 && (tile.Row < got[i-1].Row || tile.Row == got[i-1].Row && tile.Col <= got[i-1].Col) {
					t.Errorf("%v: not row-major", f)
				}
			}
			total += len(got)
		}
		if total != len(tiles) {
			t.Errorf("%v: StoredTiles found %d of %d tiles", f, total, len(tiles))
		}
	}
}

// StoredTilesSince leaves out tiles written before the time: per tile object for the
// exploded layout, per bundle for the compact ones (a bundle is rewritten whole). Objects in a
// row folder whose names are not tile names are not tiles.
func TestStoredTilesSince(t *testing.T) {
	ctx := context.Background()
	b := tilecache.Bundle{TopLeft: tilecache.Tile{Level: 8, Row: 128}}
	old, fresh := tilecache.Tile{Level: 8, Row: 128, Col: 3}, tilecache.Tile{Level: 8, Row: 200, Col: 127}
	for _, f := range allFormats {
		store := newMemStore()
		c, _ := tilecache.New(store, tilecache.Options{Root: "since", Format: f})
		writeTiles(t, c, map[tilecache.Tile][]byte{old: []byte("old")})
		if f == tilecache.Exploded {
			for _, junk := range []string{"/L08/R00000080/Thumbs.db", "/L08/R00000080/C0004.png", "/L08/R00000080/C00000005"} {
				if err := store.Put(ctx, "since/_alllayers"+junk, []byte("x"), "text/plain"); err != nil {
					t.Fatal(err)
				}
			}
		}
		// memStore's clock is its write counter: everything written from now on is newer.
		info, err := store.Stat(ctx, c.TileKey(old))
		if f != tilecache.Exploded {
			info, err = store.Stat(ctx, c.BundleKey(b))
		}
		if err != nil {
			t.Fatal(err)
		}
		since := info.ModTime.Add(1)
		writeTiles(t, c, map[tilecache.Tile][]byte{fresh: []byte("fresh")})
		all, err := c.StoredTilesSince(ctx, b, time.Time{})
		if err != nil || fmt.Sprint(all) != fmt.Sprint([]tilecache.Tile{old, fresh}) {
			t.Errorf("%v: all stored tiles = %v, %v", f, all, err)
		}
		wantNew := []tilecache.Tile{old, fresh} // the bundle was rewritten with both
		if f == tilecache.Exploded {
			wantNew = []tilecache.Tile{fresh}
		}
		if got, err := c.StoredTilesSince(ctx, b, since); err != nil || fmt.Sprint(got) != fmt.Sprint(wantNew) {
			t.Errorf("%v: stored since the first write = %v, %v; want %v", f, got, err, wantNew)
		}
		if got, err := c.StoredTilesSince(ctx, b, time.Unix(0, 1<<62)); err != nil || len(got) != 0 {
			t.Errorf("%v: stored since the future = %v, %v", f, got, err)
		}
		if got, err := c.StoredTilesSince(ctx, tilecache.Bundle{TopLeft: tilecache.Tile{Level: 8}}, since); err != nil || len(got) != 0 {
			t.Errorf("%v: empty bundle = %v, %v", f, got, err)
		}
	}
}
