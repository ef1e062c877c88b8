package tilecache_test

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// minioStore returns a blob.MinIO store on a fresh bucket of the test MinIO
// server (skips or fails like testenv.MinIO when there is none).
func minioStore(tb testing.TB) *blob.MinIO {
	tb.Helper()
	ep := testenv.MinIO(tb)
	ctx := context.Background()
	m, err := blob.NewMinIO(ctx, blob.MinIOConfig{
		Endpoint: ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: ep.SecretKey,
		Bucket: testenv.Bucket(tb), CreateBucket: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestMinIORoundTrip runs the round trip of every layout against a real
// MinIO server, where a warm tile read is one ranged GET request.
func TestMinIORoundTrip(t *testing.T) {
	store := minioStore(t)
	ctx := context.Background()
	for _, f := range allFormats {
		t.Run(f.String(), func(t *testing.T) {
			c, err := tilecache.New(store, tilecache.Options{Root: "rt/" + f.String(), Format: f})
			if err != nil {
				t.Fatal(err)
			}
			tiles := sampleTiles()
			writeTiles(t, c, tiles)
			readTiles(t, c, tiles)
			if _, err := c.ReadTile(ctx, tilecache.Tile{Level: 9, Row: 101, Col: 121}); !errors.Is(err, tilecache.ErrTileNotFound) {
				t.Fatalf("missing tile: %v", err)
			}
			// Merge: replace one tile, keep the others.
			var one tilecache.Tile
			for one = range tiles {
				break
			}
			writeTiles(t, c, map[tilecache.Tile][]byte{one: []byte("replaced")})
			merged := maps.Clone(tiles)
			merged[one] = []byte("replaced")
			readTiles(t, c, merged)
		})
	}
}

// BenchmarkReadTileMinIO reads tiles of one 1024-tile bundle (12 KiB tiles, 12 MiB) on
// MinIO over loopback, 16 concurrent readers, in each layout: exploded (one GET of a tile
// object), and compact V1 and V2 with the bundle index warm (one ranged GET per tile) or cold
// (an IndexCache that keeps nothing, so each read loads the index itself), and compact V2
// through a page cache of 8 MiB (256 KiB pages), each reader going along the bundle's rows from
// its own starting tile, as map clients panning do: a page is fetched once for the ~20 tiles in
// it. It reports tiles/s and the store requests per tile.
//
//	go test ./internal/tilecache -run '^$' -bench ReadTileMinIO -benchtime 3000x -count 3
func BenchmarkReadTileMinIO(b *testing.B) {
	for _, bc := range []struct {
		f     tilecache.StorageFormat
		cold  bool
		pages bool
	}{
		{tilecache.Exploded, false, false},
		{tilecache.CompactV1, false, false}, {tilecache.CompactV1, true, false},
		{tilecache.CompactV2, false, false}, {tilecache.CompactV2, true, false}, {tilecache.CompactV2, false, true},
	} {
		name := bc.f.String() + "/index=warm"
		switch {
		case bc.f == tilecache.Exploded:
			name = bc.f.String() + "/index=none"
		case bc.cold:
			name = bc.f.String() + "/index=cold"
		case bc.pages:
			name += "/pages=8MiB"
		}
		b.Run(name, func(b *testing.B) {
			counted := &countingStore{Store: minioStore(b)}
			c, tiles := benchBundle(b, counted, bc.f, 1024, 12<<10)
			var opts tilecache.IndexCacheOptions
			switch {
			case bc.cold:
				opts.MaxBytes = -1
			case bc.pages:
				opts.PageBytes = 8 << 20
			}
			c, err := tilecache.New(counted, tilecache.Options{Root: c.Root(), Format: bc.f, Index: tilecache.NewIndexCache(opts)})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if !bc.cold { // warm the index
				if _, err := c.ReadTile(ctx, tiles[0]); err != nil {
					b.Fatal(err)
				}
			}
			counted.reset()
			var readers atomic.Int64
			b.SetBytes(12 << 10)
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i, step := int(readers.Add(1))*61, 7
				if bc.pages {
					step = 1
				}
				for pb.Next() {
					if _, err := c.ReadTile(ctx, tiles[i%len(tiles)]); err != nil {
						b.Error(err)
						return
					}
					i += step
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tiles/s")
			b.ReportMetric(float64(counted.gets.Load())/float64(b.N), "GETs/tile")
			b.ReportMetric(float64(counted.stats.Load())/float64(b.N), "stats/tile")
		})
	}
}

// countingStore counts the requests a store serves.
type countingStore struct {
	tilecache.Store
	gets, stats atomic.Int64
}

func (s *countingStore) reset() { s.gets.Store(0); s.stats.Store(0) }

func (s *countingStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

func (s *countingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.gets.Add(1)
	return s.Store.GetRange(ctx, key, off, n)
}

func (s *countingStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, key)
}
