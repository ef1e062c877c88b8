package tilecache_test

import (
	"bytes"
	"context"
	"errors"
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
			for tile, want := range tiles {
				got, err := c.ReadTile(ctx, tile)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("ReadTile(%v): %d bytes, %v", tile, len(got), err)
				}
			}
			if _, err := c.ReadTile(ctx, tilecache.Tile{Level: 9, Row: 101, Col: 121}); !errors.Is(err, tilecache.ErrTileNotFound) {
				t.Fatalf("missing tile: %v", err)
			}
			// Merge: replace one tile, keep the others.
			var one tilecache.Tile
			for one = range tiles {
				break
			}
			writeTiles(t, c, map[tilecache.Tile][]byte{one: []byte("replaced")})
			for tile, want := range tiles {
				if tile == one {
					want = []byte("replaced")
				}
				got, err := c.ReadTile(ctx, tile)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("after merge, ReadTile(%v): %q, %v", tile, got, err)
				}
			}
		})
	}
}

// BenchmarkReadTileWarmMinIO reads tiles of a compact V2 bundle on MinIO
// with a warm index: one ranged GET per tile over loopback.
func BenchmarkReadTileWarmMinIO(b *testing.B) {
	store := minioStore(b)
	c, tiles := benchBundle(b, store, tilecache.CompactV2, 1024, 12<<10)
	ctx := context.Background()
	b.SetBytes(12 << 10)
	b.SetParallelism(8)
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
}
