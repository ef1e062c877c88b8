package tilecache_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"
)

// refCovers is a brute-force reference for Cover: does geometry g (already
// in the scheme's coordinates) overlap tile t? It checks tile centre inside
// a polygon, and any edge crossing the tile's interior (sampled finely).
func refCovers(s tilecache.Scheme, g orb.Geometry, tile tilecache.Tile) bool {
	b, _ := s.TileBounds(tile)
	w, h := b.Max[0]-b.Min[0], b.Max[1]-b.Min[1]
	inner := orb.Bound{Min: orb.Point{b.Min[0] + w*1e-6, b.Min[1] + h*1e-6}, Max: orb.Point{b.Max[0] - w*1e-6, b.Max[1] - h*1e-6}}
	segHits := func(p, q orb.Point) bool {
		const n = 4096
		for i := 0; i <= n; i++ {
			f := float64(i) / n
			if inner.Contains(orb.Point{p[0] + (q[0]-p[0])*f, p[1] + (q[1]-p[1])*f}) {
				return true
			}
		}
		return false
	}
	pathHits := func(ls []orb.Point, closed bool) bool {
		for i := 0; i+1 < len(ls); i++ {
			if segHits(ls[i], ls[i+1]) {
				return true
			}
		}
		return closed && len(ls) > 1 && segHits(ls[len(ls)-1], ls[0])
	}
	switch g := g.(type) {
	case orb.Polygon:
		if planar.PolygonContains(g, b.Center()) {
			return true
		}
		for _, r := range g {
			if pathHits(r, true) {
				return true
			}
		}
	case orb.MultiPolygon:
		for _, p := range g {
			if refCovers(s, p, tile) {
				return true
			}
		}
	case orb.LineString:
		return pathHits(g, false)
	}
	return false
}

func TestCoverMatchesReference(t *testing.T) {
	s := tilecache.Geographic()
	tests := []struct {
		name  string
		g     orb.Geometry
		level int
	}{
		{"triangle", orb.Polygon{{{-170, -80}, {150, -10}, {-20, 85}, {-170, -80}}}, 4},
		{"concave with hole", orb.Polygon{
			{{-100, -50}, {100, -50}, {100, 60}, {50, 60}, {50, 0}, {-50, 0}, {-50, 60}, {-100, 60}, {-100, -50}},
			{{-20, -40}, {20, -40}, {20, -10}, {-20, -10}, {-20, -40}},
		}, 5},
		{"multipolygon", orb.MultiPolygon{
			{{{-179, 80}, {-160, 80}, {-160, 60}, {-179, 80}}},
			{{{100, -30}, {140, -30}, {120, -5}, {100, -30}}},
		}, 5},
		{"aligned square", orb.Polygon{{{0, 0}, {45, 0}, {45, 45}, {0, 45}, {0, 0}}}, 3},
		{"line", orb.LineString{{-175, -85}, {0, 3}, {170, 80}}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := s.Cover(tt.g, tt.level)
			if err != nil {
				t.Fatal(err)
			}
			got := map[tilecache.Tile]bool{}
			for tile := range c.Tiles() {
				if got[tile] {
					t.Fatalf("tile %v yielded twice", tile)
				}
				got[tile] = true
			}
			rows, cols, _ := s.MatrixSize(tt.level)
			for r := range rows {
				for col := range cols {
					tile := tilecache.Tile{Level: tt.level, Row: r, Col: col}
					if want := refCovers(s, tt.g, tile); want != got[tile] {
						t.Errorf("tile %v: cover %v, reference %v", tile, got[tile], want)
					}
				}
			}
			total, per := c.Count()
			if total != int64(len(got)) || per[tt.level] != total {
				t.Errorf("Count() = %d %v, iteration gave %d", total, per, len(got))
			}
		})
	}
}

func TestCoverEnvelopeLevels(t *testing.T) {
	s := tilecache.WebMercator()
	aoi := orb.Bound{Min: orb.Point{-1e6, -2e6}, Max: orb.Point{3e6, 1e6}}
	c, err := s.Cover(aoi, 5, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	if lv := c.Levels(); len(lv) != 3 || lv[0] != 3 || lv[2] != 5 {
		t.Fatalf("levels %v", lv)
	}
	var want int64
	for _, level := range []int{3, 4, 5} {
		r, _ := s.TilesCovering(level, aoi)
		want += r.Count()
	}
	var n int64
	last := tilecache.Tile{Level: -1}
	for tile := range c.Tiles() {
		if tile.Level < last.Level || (tile.Level == last.Level && (tile.Row < last.Row || tile.Row == last.Row && tile.Col <= last.Col)) {
			t.Fatalf("order: %v after %v", tile, last)
		}
		last = tile
		n++
	}
	if total, _ := c.Count(); n != want || total != want {
		t.Fatalf("iterated %d, counted %d, want %d", n, total, want)
	}
}

func TestCoverErrors(t *testing.T) {
	s := tilecache.WebMercator()
	if _, err := s.Cover(nil); !errors.Is(err, tilecache.ErrEmptyAOI) {
		t.Errorf("nil AOI: %v", err)
	}
	if _, err := s.Cover(orb.Polygon{}); !errors.Is(err, tilecache.ErrEmptyAOI) {
		t.Errorf("empty polygon: %v", err)
	}
	if _, err := s.Cover(orb.Point{0, 0}, 40); !errors.Is(err, tilecache.ErrUnknownLevel) {
		t.Errorf("level 40: %v", err)
	}
	if _, err := s.Cover(orb.LineString{{0, 0}, {math.NaN(), 1}}, 3); err == nil {
		t.Error("NaN coordinate accepted")
	}
	// Finite, but too far out for a fine level's cells to be finite numbers.
	fine := tilecache.WebMercator()
	fine.LODs = []tilecache.LOD{{LevelID: 0, Scale: 1, Resolution: 1e-6}}
	if _, err := fine.Cover(orb.MultiPoint{{0, 0}, {-1e308, 1e308}}); err == nil || !strings.Contains(err.Error(), "too large for level 0") {
		t.Errorf("AOI of ±1e308 at 1e-6 map units per pixel: %v", err)
	}
	if _, err := s.Cover(orb.Collection{orb.Point{0, 0}, orb.Polygon{{{0, 0}, {1, math.Inf(1)}, {1, 0}}}}, 3); err == nil {
		t.Error("Inf coordinate inside a collection accepted")
	}
	c, err := s.Cover(orb.Point{0, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bundles(3); !errors.Is(err, tilecache.ErrMetatileSize) {
		t.Errorf("Bundles(3): %v", err)
	}
}

func TestBundlesPartitionCover(t *testing.T) {
	s := tilecache.WebMercator()
	poly := orb.Polygon{{{-15e6, -9e6}, {12e6, -3e6}, {2e6, 14e6}, {-15e6, -9e6}}}
	for _, n := range []int{1, 4, 8, 128} {
		c, err := s.Cover(poly, 0, 2, 8, 9)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := c.Bundles(n)
		if err != nil {
			t.Fatal(err)
		}
		bundles := map[tilecache.Bundle]bool{}
		inMeta := map[tilecache.Tile]bool{}
		for b, metas := range seq {
			if bundles[b] {
				t.Fatalf("n=%d: bundle %v yielded twice", n, b)
			}
			bundles[b] = true
			for _, m := range metas {
				if m.Bundle() != b {
					t.Fatalf("n=%d: metatile %v outside bundle %v", n, m, b)
				}
				for tile := range m.Tiles() {
					if inMeta[tile] {
						t.Fatalf("n=%d: tile %v in two metatiles", n, tile)
					}
					if !s.Contains(tile) {
						t.Fatalf("n=%d: metatile %v leaves the matrix", n, m)
					}
					inMeta[tile] = true
				}
			}
		}
		covered := 0
		for tile := range c.Tiles() {
			covered++
			if !inMeta[tile] {
				t.Fatalf("n=%d: tile %v of the cover in no metatile", n, tile)
			}
		}
		if covered == 0 || len(bundles) == 0 {
			t.Fatalf("n=%d: empty plan", n)
		}
	}
}

// TilesIn partitions the cover by bundle: every tile of the cover comes out of exactly the
// bundle holding it, and none of the metatiles' extra tiles outside the AOI do.
func TestCoverTilesIn(t *testing.T) {
	s := tilecache.WebMercator()
	poly := orb.Polygon{{{-15e6, -9e6}, {12e6, -3e6}, {2e6, 14e6}, {-15e6, -9e6}}}
	c, err := s.Cover(poly, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := c.Bundles(8)
	if err != nil {
		t.Fatal(err)
	}
	want := map[tilecache.Tile]bool{}
	for tile := range c.Tiles() {
		want[tile] = true
	}
	got := map[tilecache.Tile]bool{}
	extra := 0 // metatile tiles outside the cover
	for b, metas := range seq {
		for tile := range c.TilesIn(b) {
			if !b.Contains(tile) || got[tile] {
				t.Fatalf("TilesIn(%v) yields %v (in the bundle: %v, seen: %v)", b, tile, b.Contains(tile), got[tile])
			}
			got[tile] = true
		}
		for _, m := range metas {
			for tile := range m.Tiles() {
				if !want[tile] {
					extra++
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("TilesIn over the planned bundles gives %d tiles, the cover has %d", len(got), len(want))
	}
	for tile := range want {
		if !got[tile] {
			t.Errorf("tile %v of the cover not yielded by its bundle", tile)
			break
		}
	}
	if extra == 0 {
		t.Error("the triangle's metatiles hold no tile outside it: the test shows nothing")
	}
	// A bundle the triangle misses, and a level the cover does not have.
	for _, b := range []tilecache.Bundle{{TopLeft: tilecache.Tile{Level: 9, Row: 384, Col: 384}}, {TopLeft: tilecache.Tile{Level: 3}}} {
		for tile := range c.TilesIn(b) {
			t.Errorf("TilesIn(%v) yields %v", b, tile)
			break
		}
	}
}
