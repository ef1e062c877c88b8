package vectortile_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
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
		mt, err := tilecache.MetatileOf(tilecache.Tile{Level: 3, Row: 2, Col: 4}, 2)
		if err != nil {
			t.Fatal(err)
		}
		tiles, err := b.Metatile(ctx, service, "", s, mt)
		if err != nil {
			t.Fatal(err)
		}
		if len(tiles) != 4 {
			t.Fatalf("%s: %d tiles of a 2×2 metatile", service, len(tiles))
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
		if features < 40 {
			t.Errorf("%s: %d features in the metatile's tiles", service, features)
		}
	}
}

// edge is a map of two points in the north-west metatile of zoom 3 (rows 0-3, columns 0-3,
// west of Greenwich): one inside, one just east of it (longitude 0.5°), within the buffer of
// the tiles of column 3 (64 of 4,096 units of a 45° tile: 0.7°) but outside the metatile.
const edge = `services:
  - name: edge
    maps:
      - spatialReference: 4326
        layers:
          - name: Points
            source: {geojson: FILE}
`

const edgePoints = `{"type": "FeatureCollection", "features": [
  {"type": "Feature", "properties": {"NAME": "inside"}, "geometry": {"type": "Point", "coordinates": [-10, 50]}},
  {"type": "Feature", "properties": {"NAME": "buffer"}, "geometry": {"type": "Point", "coordinates": [0.5, 50]}}]}`

// TestMetatileBuffer: a feature outside a metatile but within its edge tiles' buffer is read
// with the metatile, so the edge tile holds it as the tile built alone does.
func TestMetatileBuffer(t *testing.T) {
	dir := t.TempDir()
	points := filepath.Join(dir, "points.geojson")
	path := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(points, []byte(edgePoints), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(edge, "FILE", points)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := vectortile.New(vectortile.Params{Services: catalogtest.Open(t, path)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := b.WebMercator()
	tiles, err := b.Metatile(ctx, "edge", "", s, tilecache.Metatile{TopLeft: tilecache.Tile{Level: 3}, Rows: 4, Cols: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, mtt := range tiles {
		if mtt.Tile != (tilecache.Tile{Level: 3, Row: 3, Col: 3}) && mtt.Tile != (tilecache.Tile{Level: 3, Row: 2, Col: 3}) {
			continue
		}
		one, err := b.Tile(ctx, "edge", "", s, mtt.Tile)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one.Data, mtt.Result.Data) {
			t.Errorf("tile %v: %d features from the metatile, %d alone", mtt.Tile, mtt.Result.Features, one.Features)
		}
		if mtt.Tile.Row == 2 && mtt.Result.Features != 2 {
			t.Errorf("tile 3/2/3 (row 2, column 3) holds %d points, want the one inside and the one in its buffer", mtt.Result.Features)
		}
	}
}
