package tilecache_test

import (
	"errors"
	"image"
	"math"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/paulmach/orb"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestWebMercatorScheme(t *testing.T) {
	s := tilecache.WebMercator()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(s.LODs) != 24 || s.LODs[0].LevelID != 0 || s.LODs[23].LevelID != 23 {
		t.Fatalf("levels %v", s.Levels())
	}
	// Values of Esri's sample conf.xml (testdata/sample-conf.xml).
	sample := []tilecache.LOD{
		{LevelID: 0, Scale: 591657527.591555, Resolution: 156543.03392800014},
		{LevelID: 1, Scale: 295828763.79577702, Resolution: 78271.516963999937},
		{LevelID: 10, Scale: 577790.55428899999, Resolution: 152.87405657041106},
		{LevelID: 19, Scale: 1128.4971760000001, Resolution: 0.29858214164761665},
	}
	for _, want := range sample {
		got, ok := s.LOD(want.LevelID)
		if !ok || !near(got.Scale, want.Scale, 1e-9) || !near(got.Resolution, want.Resolution, 1e-9) {
			t.Errorf("LOD %d = %+v, want %+v", want.LevelID, got, want)
		}
		if !near(got.Resolution, got.Scale/(96*39.37), 1e-15) {
			t.Errorf("LOD %d resolution %v != scale/(96·39.37)", got.LevelID, got.Resolution)
		}
	}
	for level, wantN := range map[int]int{0: 1, 1: 2, 8: 256, 23: 1 << 23} {
		rows, cols, err := s.MatrixSize(level)
		if err != nil || rows != wantN || cols != wantN {
			t.Errorf("MatrixSize(%d) = %d×%d, %v; want %d×%d", level, rows, cols, err, wantN, wantN)
		}
	}
	b, err := s.TileBounds(tilecache.Tile{})
	if err != nil {
		t.Fatal(err)
	}
	const h = 20037508.342787
	if !near(b.Min[0], -h, 1e-9) || !near(b.Max[0], h, 1e-9) || !near(b.Min[1], -h, 1e-9) || !near(b.Max[1], h, 1e-9) {
		t.Errorf("TileBounds(0/0/0) = %v, want the world", b)
	}
	b, _ = s.TileBounds(tilecache.Tile{Level: 1, Row: 1, Col: 0})
	if math.Abs(b.Max[1]) > 1e-3 || !near(b.Min[0], -h, 1e-9) || math.Abs(b.Max[0]) > 1e-3 {
		t.Errorf("TileBounds(1/1/0) = %v, want the south-west quarter", b)
	}
	if _, err := s.TileBounds(tilecache.Tile{Level: 30}); !errors.Is(err, tilecache.ErrUnknownLevel) {
		t.Errorf("TileBounds(level 30) error = %v, want ErrUnknownLevel", err)
	}
}

func TestGeographicScheme(t *testing.T) {
	s := tilecache.Geographic()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	rows, cols, _ := s.MatrixSize(0)
	if rows != 1 || cols != 2 {
		t.Fatalf("level 0 is %d×%d tiles, want 1×2", rows, cols)
	}
	l0, _ := s.LOD(0)
	if !near(l0.Scale, 295828763.795777, 1e-9) {
		t.Errorf("level 0 scale %v", l0.Scale)
	}
	b, _ := s.TileBounds(tilecache.Tile{Level: 0, Row: 0, Col: 1})
	if b != (orb.Bound{Min: orb.Point{0, -90}, Max: orb.Point{180, 90}}) {
		t.Errorf("TileBounds(0/0/1) = %v", b)
	}
	r, _ := s.TilesCovering(2, orb.Bound{Min: orb.Point{10, 40}, Max: orb.Point{20, 50}})
	// level 2: 45° tiles; x 10..20 → col 4; y 40..50 → rows 0 and 1.
	want := tilecache.TileRange{Level: 2, MinRow: 0, MaxRow: 1, MinCol: 4, MaxCol: 4}
	if r != want {
		t.Errorf("TilesCovering = %+v, want %+v", r, want)
	}
}

func TestTilesCovering(t *testing.T) {
	s := tilecache.Geographic() // level 3: 22.5° tiles, 4 rows × 8 cols... (8×16)
	tests := []struct {
		name string
		b    orb.Bound
		want tilecache.TileRange
	}{
		{"exact tile", orb.Bound{Min: orb.Point{-180, 67.5}, Max: orb.Point{-157.5, 90}}, tilecache.TileRange{Level: 3, MinRow: 0, MaxRow: 0, MinCol: 0, MaxCol: 0}},
		{"exact 2x2", orb.Bound{Min: orb.Point{0, 0}, Max: orb.Point{45, 45}}, tilecache.TileRange{Level: 3, MinRow: 2, MaxRow: 3, MinCol: 8, MaxCol: 9}},
		{"point inside", orb.Bound{Min: orb.Point{1, 1}, Max: orb.Point{1, 1}}, tilecache.TileRange{Level: 3, MinRow: 3, MaxRow: 3, MinCol: 8, MaxCol: 8}},
		{"world", orb.Bound{Min: orb.Point{-200, -100}, Max: orb.Point{200, 100}}, tilecache.TileRange{Level: 3, MinRow: 0, MaxRow: 7, MinCol: 0, MaxCol: 15}},
		{"outside", orb.Bound{Min: orb.Point{200, 0}, Max: orb.Point{210, 10}}, tilecache.TileRange{Level: 3, MinRow: 0, MaxRow: -1, MinCol: 0, MaxCol: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.TilesCovering(3, tt.b)
			if err != nil || got != tt.want {
				t.Fatalf("TilesCovering(%v) = %+v, %v; want %+v", tt.b, got, err, tt.want)
			}
			if got.Count() != tt.want.Count() {
				t.Fatal("count")
			}
		})
	}
}

func TestMetatileArea(t *testing.T) {
	s := tilecache.WebMercator()
	m, err := s.Metatile(tilecache.Tile{Level: 1, Row: 1, Col: 1}, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Level 1 has 2×2 tiles: the 4×4 metatile is clipped to them.
	if m.TopLeft != (tilecache.Tile{Level: 1}) || m.Rows != 2 || m.Cols != 2 {
		t.Fatalf("Metatile = %v", m)
	}
	a, err := s.MetatileArea(m, 64)
	if err != nil {
		t.Fatal(err)
	}
	if a.Width != 2*256+128 || a.Height != 2*256+128 {
		t.Fatalf("area %d×%d", a.Width, a.Height)
	}
	l1, _ := s.LOD(1)
	wantBuf := 64 * l1.Resolution
	if !near(a.Bound.Min[0], -20037508.342787-wantBuf, 1e-12) || !near(a.Bound.Max[1], 20037508.342787+wantBuf, 1e-12) {
		t.Fatalf("area bound %v", a.Bound)
	}
	// Pixel size of the area equals the resolution.
	if !near((a.Bound.Max[0]-a.Bound.Min[0])/float64(a.Width), l1.Resolution, 1e-12) {
		t.Fatal("area resolution differs from the level's")
	}
	r, ok := a.TileRect(tilecache.Tile{Level: 1, Row: 1, Col: 0})
	if !ok || r != image.Rect(64, 64+256, 64+256, 64+512) {
		t.Fatalf("TileRect = %v, %v", r, ok)
	}
	if _, ok := a.TileRect(tilecache.Tile{Level: 2}); ok {
		t.Fatal("TileRect of a foreign tile")
	}
}

func TestValidateRejects(t *testing.T) {
	for name, mod := range map[string]func(*tilecache.Scheme){
		"no levels":        func(s *tilecache.Scheme) { s.LODs = nil },
		"zero tile size":   func(s *tilecache.Scheme) { s.TileCols = 0 },
		"zero dpi":         func(s *tilecache.Scheme) { s.DPI = 0 },
		"descending level": func(s *tilecache.Scheme) { s.LODs[1].LevelID = 0 },
		"zero resolution":  func(s *tilecache.Scheme) { s.LODs[2].Resolution = 0 },
		"bad format":       func(s *tilecache.Scheme) { s.Format = "GIF" },
		"extent above":     func(s *tilecache.Scheme) { s.Extent.Min[1] = s.Origin[1] + 1 },
	} {
		s := tilecache.WebMercator()
		mod(&s)
		if err := s.Validate(); !errors.Is(err, tilecache.ErrInvalidScheme) {
			t.Errorf("%s: Validate() = %v, want ErrInvalidScheme", name, err)
		}
	}
}
