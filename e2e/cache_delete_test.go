package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// TestDeletePolygon seeds an envelope at levels 5 and 6, deletes a triangle inside it, and
// reads MinIO: exactly the tiles of the triangle's cover are gone, every other tile of the
// same bundles keeps its bytes (among them tiles inside the triangle's envelope, which a delete
// by envelope would have removed), and `cachetool verify` finds the rewritten bundles
// consistent.
func TestDeletePolygon(t *testing.T) {
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	f := startFarm(t)
	base := strings.TrimSuffix(f.url, "/")
	envelope := []float64{-1_500_000, 3_000_000, 6_500_000, 9_000_000}
	triangle := [][][2]float64{{{-1_000_000, 3_500_000}, {6_000_000, 3_500_000}, {-1_000_000, 8_500_000}}}
	levels := []int{5, 6}
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Extent: envelope, Levels: levels, SkipEmpty: &no})

	ctx := context.Background()
	cache, _, err := tilecache.Open(ctx, f.store, seed.CacheRoot("world", "Layers"), tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Everything stored in the bundles the envelope touches (its metatiles hold more tiles).
	before := map[tilecache.Tile][]byte{}
	for _, level := range levels {
		b := tilecache.Bundle{TopLeft: tilecache.Tile{Level: level}} // levels 5 and 6 have one bundle
		stored, err := cache.StoredTiles(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range stored {
			if before[tl], err = cache.ReadTile(ctx, tl); err != nil {
				t.Fatal(err)
			}
		}
	}

	scheme := tilecache.WebMercator()
	poly := orb.Polygon{orb.Ring{}}
	for _, p := range triangle[0] {
		poly[0] = append(poly[0], orb.Point(p))
	}
	poly[0] = append(poly[0], poly[0][0])
	inTriangle := coverSet(t, scheme, poly, levels)
	inEnvelope := coverSet(t, scheme, poly.Bound(), levels)
	// Tiles that a delete by the triangle's envelope would take, and the triangle must not.
	spared := 0
	for tl := range inEnvelope {
		if !inTriangle[tl] {
			spared++
		}
		if before[tl] == nil {
			t.Fatalf("tile %v of the triangle's envelope was not seeded", tl)
		}
	}
	if spared == 0 || len(inTriangle) == 0 {
		t.Fatalf("triangle covers %d tiles, its envelope %d more: the test shows nothing", len(inTriangle), spared)
	}

	st := seedAndWait(t, base, seed.Request{Service: "world", Polygon: triangle, Levels: levels, Mode: "delete"})
	if st.Done != int64(len(inTriangle)) || st.Total != st.Done {
		t.Errorf("delete job: done %d of %d, the triangle covers %d tiles", st.Done, st.Total, len(inTriangle))
	}
	// A fresh reader: the first one's bundle indexes are those of before the delete.
	cache, _, err = tilecache.Open(ctx, f.store, seed.CacheRoot("world", "Layers"), tilecache.FusedLayer, nil)
	if err != nil {
		t.Fatal(err)
	}
	removed, kept := 0, 0
	for tl, was := range before {
		data, err := cache.ReadTile(ctx, tl)
		switch {
		case inTriangle[tl] && errors.Is(err, tilecache.ErrTileNotFound):
			removed++
		case inTriangle[tl]:
			t.Errorf("tile %v of the triangle is still there (%d bytes, %v)", tl, len(data), err)
		case err != nil:
			t.Errorf("tile %v outside the triangle: %v", tl, err)
		case !bytes.Equal(data, was):
			t.Errorf("tile %v outside the triangle changed: %d bytes, was %d", tl, len(data), len(was))
		default:
			kept++
		}
	}
	t.Logf("deleted %d tiles of the triangle, kept %d tiles of the same bundles (%d of them inside the triangle's envelope)", removed, kept, spared)
	if removed != len(inTriangle) {
		t.Errorf("removed %d tiles, the triangle covers %d", removed, len(inTriangle))
	}

	cmd := exec.Command(tool, "verify", "-service", "world", "-levels", "5-6", "-allow-missing")
	out, err := cmd.CombinedOutput()
	t.Logf("cachetool verify:\n%s", out)
	if err != nil || !strings.Contains(string(out), " 0 problems") {
		t.Errorf("cachetool verify: %v\n%s", err, out)
	}
}

// coverSet returns the tiles of aoi's cover at levels.
func coverSet(t *testing.T, s tilecache.Scheme, aoi orb.Geometry, levels []int) map[tilecache.Tile]bool {
	t.Helper()
	c, err := s.Cover(aoi, levels...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[tilecache.Tile]bool{}
	for tl := range c.Tiles() {
		out[tl] = true
	}
	return out
}
