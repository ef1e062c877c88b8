package vectortile_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// TestMetatile: the tiles of a metatile, built from one read of each layer, are byte for byte
// the tiles built one by one (so a seeded tile is the tile served on demand), on the sample map
// in 3857 and on the one in 4326 read through reprojection, at a level where countries cross
// the metatile's inner edges.
func TestMetatile(t *testing.T) {
	b, err := vectortile.New(vectortile.Params{Services: catalogtest.Samples(t), Options: mvt.Options{Gzip: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := b.WebMercator()
	for _, service := range []string{"world", "world_geographic"} {
		mt, err := tilecache.MetatileOf(tilecache.Tile{Level: 3, Row: 2, Col: 4}, 4)
		if err != nil {
			t.Fatal(err)
		}
		tiles, err := b.Metatile(ctx, service, "", s, mt)
		if err != nil {
			t.Fatal(err)
		}
		if len(tiles) != 16 {
			t.Fatalf("%s: %d tiles of a 4×4 metatile", service, len(tiles))
		}
		features := 0
		for _, mtt := range tiles {
			one, err := b.Tile(ctx, service, "", s, mtt.Tile)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(one.Data, mtt.Result.Data) || one.Features != mtt.Result.Features {
				t.Errorf("%s tile %v: %d bytes (%d features) from the metatile, %d (%d) alone", service, mtt.Tile,
					len(mtt.Result.Data), mtt.Result.Features, len(one.Data), one.Features)
			}
			features += mtt.Result.Features
		}
		if features < 100 {
			t.Errorf("%s: %d features in the metatile's tiles", service, features)
		}
	}
}
