package seed_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// dirtySpec is a cache over 0…1024 in both axes with 256-px tiles: level 0 is one tile, level 1
// 4×4 tiles of 256 units, level 2 128×128 of 8 (one bundle), level 3 256×256 of 4 (2×2
// bundles, the bundle seams at x = 512 and y = 512). Metatiles are 4×4.
func dirtySpec() *seed.Spec {
	sch := tilecache.Scheme{Origin: orb.Point{0, 1024}, Extent: orb.Bound{Max: orb.Point{1024, 1024}},
		TileCols: 256, TileRows: 256, DPI: 96, Format: "PNG",
		LODs: []tilecache.LOD{{LevelID: 0, Scale: 1, Resolution: 4}, {LevelID: 1, Scale: 1, Resolution: 1},
			{LevelID: 2, Scale: 1, Resolution: 1.0 / 32}, {LevelID: 3, Scale: 1, Resolution: 1.0 / 64}}}
	return &seed.Spec{ID: "refresh", Layers: []seed.Layer{{ID: -1, Folder: tilecache.FusedLayer}}, Scheme: sch,
		Storage: tilecache.CompactV2, Mode: seed.RecreateAll, MetatileSize: 4, Buffer: 64, PartTiles: 16}
}

func tiles(t *testing.T, sp *seed.Spec, envs []orb.Bound, reach int) []string {
	t.Helper()
	seq, err := seed.DirtyTiles(sp, envs, reach)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for tile := range seq {
		out = append(out, fmt.Sprintf("L%d R%d C%d", tile.Level, tile.Row, tile.Col))
	}
	return out
}

// The exact dirty tiles of an envelope at every level, without reach and widened by it.
func TestDirtyTilesWidenedByReach(t *testing.T) {
	sp := dirtySpec()
	env := []orb.Bound{{Min: orb.Point{101, 101}, Max: orb.Point{102, 102}}}
	if got, want := tiles(t, sp, env, 0), []string{"L0 R0 C0", "L1 R3 C0", "L2 R115 C12", "L3 R230 C25"}; !slices.Equal(got, want) {
		t.Errorf("reach 0: %v\nwant %v", got, want)
	}
	// 128 px: 128 units at level 1 (clipped by the matrix), 4 at level 2, 2 at level 3.
	want := []string{"L0 R0 C0", "L1 R3 C0",
		"L2 R114 C12", "L2 R114 C13", "L2 R115 C12", "L2 R115 C13",
		"L3 R230 C24", "L3 R230 C25", "L3 R231 C24", "L3 R231 C25"}
	if got := tiles(t, sp, env, 128); !slices.Equal(got, want) {
		t.Errorf("reach 128: %v\nwant %v", got, want)
	}
	// A point (a zero-area envelope) still dirties its tile; two envelopes in one tile count once.
	pts := []orb.Bound{{Min: orb.Point{101.5, 101.5}, Max: orb.Point{101.5, 101.5}}, {Min: orb.Point{101, 101}, Max: orb.Point{102, 102}}}
	if got, want := tiles(t, sp, pts, 0), []string{"L0 R0 C0", "L1 R3 C0", "L2 R115 C12", "L3 R230 C25"}; !slices.Equal(got, want) {
		t.Errorf("point: %v\nwant %v", got, want)
	}
	sp.Levels = []int{3}
	if got, want := tiles(t, sp, env, 0), []string{"L3 R230 C25"}; !slices.Equal(got, want) {
		t.Errorf("level 3 only: %v\nwant %v", got, want)
	}
	if _, err := seed.DirtyTiles(sp, env, -1); err == nil {
		t.Error("a negative reach was accepted")
	}
}

// Dirty tiles across a bundle seam are merged into one unit per bundle, each with the metatiles
// holding its dirty tiles, in seeding's parts.
func TestDirtyPlanMergesByBundleAndMetatile(t *testing.T) {
	sp := dirtySpec()
	sp.Layers = append(sp.Layers, seed.Layer{ID: 0, Folder: "parcels"})
	envs := []orb.Bound{
		{Min: orb.Point{510, 510}, Max: orb.Point{514, 514}}, // across both seams at level 3
		{Min: orb.Point{530, 530}, Max: orb.Point{531, 531}}, // another metatile at level 2
	}
	units, err := seed.DirtyPlan(sp, envs, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for u := range units {
		s := fmt.Sprintf("#%d layer %d bundle L%d R%d C%d tiles %d parts %v:", u.Seq, u.Layer,
			u.Bundle.TopLeft.Level, u.Bundle.TopLeft.Row, u.Bundle.TopLeft.Col, u.Tiles, u.Parts)
		for _, m := range u.Metatiles {
			s += fmt.Sprintf(" R%dC%d/%dx%d", m.TopLeft.Row, m.TopLeft.Col, m.Rows, m.Cols)
		}
		got = append(got, s)
	}
	// Level 2 (8 units a tile): tiles R63–64 C63–64 and R61 C66 (530/8 = 66.25, (1024-531)/8 = 61.6);
	// level 3 (4 units): R127–128 C127–128, one in each bundle, and R123 C132 ((1024-531)/4 = 123.25).
	var want []string
	for layer := range 2 {
		base := layer * 7
		want = append(want,
			fmt.Sprintf("#%d layer %d bundle L0 R0 C0 tiles 1 parts [[0 1]]: R0C0/1x1", base, layer),
			fmt.Sprintf("#%d layer %d bundle L1 R0 C0 tiles 16 parts [[0 1]]: R0C0/4x4", base+1, layer),
			fmt.Sprintf("#%d layer %d bundle L2 R0 C0 tiles 64 parts [[0 1] [1 2] [2 3] [3 4]]: R60C60/4x4 R60C64/4x4 R64C60/4x4 R64C64/4x4", base+2, layer),
			fmt.Sprintf("#%d layer %d bundle L3 R0 C0 tiles 16 parts [[0 1]]: R124C124/4x4", base+3, layer),
			fmt.Sprintf("#%d layer %d bundle L3 R0 C128 tiles 32 parts [[0 1] [1 2]]: R120C132/4x4 R124C128/4x4", base+4, layer),
			fmt.Sprintf("#%d layer %d bundle L3 R128 C0 tiles 16 parts [[0 1]]: R128C124/4x4", base+5, layer),
			fmt.Sprintf("#%d layer %d bundle L3 R128 C128 tiles 16 parts [[0 1]]: R128C128/4x4", base+6, layer),
		)
	}
	if !slices.Equal(got, want) {
		t.Errorf("units:\n%s\nwant:\n%s", join(got), join(want))
	}
	// Resumed from a checkpoint: the same units from that number on.
	resumed, err := seed.DirtyPlan(sp, envs, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for u := range resumed {
		seqs = append(seqs, u.Seq)
	}
	if want := []int64{9, 10, 11, 12, 13}; !slices.Equal(seqs, want) {
		t.Errorf("resumed at 9: units %v, want %v", seqs, want)
	}
	sp.Mode = seed.Delete
	if _, err := seed.DirtyPlan(sp, envs, 0, 0); err == nil {
		t.Error("a dirty plan of a delete job was accepted")
	}
}

func join(s []string) string {
	out := ""
	for _, l := range s {
		out += l + "\n"
	}
	return out
}

// A job whose spec carries dirty envelopes (stored as JSON, as in Redis) is planned as a refresh
// by the coordinator's Plan, checkpoint and all, and counted by its dirty tiles.
func TestPlanOfARefreshJob(t *testing.T) {
	sp := dirtySpec()
	envs := []orb.Bound{{Min: orb.Point{101, 101}, Max: orb.Point{102, 102}}, {Min: orb.Point{510, 510}, Max: orb.Point{514, 514}}}
	sp.Dirty, sp.Reach = envs, 128
	sp.Extent = envs[0].Union(envs[1])
	raw, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	var back seed.Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	units, err := seed.Plan(&back, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := seed.DirtyPlan(sp, envs, 128, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got, exp []string
	for u := range units {
		got = append(got, fmt.Sprint(u))
	}
	for u := range want {
		exp = append(exp, fmt.Sprint(u))
	}
	if len(got) == 0 || !slices.Equal(got, exp) {
		t.Fatalf("Plan of a refresh job:\n%s\nwant DirtyPlan's:\n%s", join(got), join(exp))
	}
	dirty, err := seed.DirtyTiles(sp, envs, 128)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for range dirty {
		n++
	}
	if c, err := seed.Count(&back); err != nil || c != n {
		t.Fatalf("Count = %d, %v; want the %d dirty tiles", c, err, n)
	}
}

// An expired polygon (Spec.DirtyPolygons) dirties exactly the tiles it touches at each level,
// not those of its envelope and not widened by the reach: a right triangle of legs 42 at level
// 3 (tiles of 4 units) touches the 66 tiles of column c and row-from-the-bottom r with
// c + r ≤ 10, of the 121 of its envelope. A spec of polygons alone is a refresh, planned and
// counted by them.
func TestDirtyPolygonsByTheirCover(t *testing.T) {
	sp := dirtySpec()
	sp.Levels = []int{3}
	tri := orb.Polygon{{{0, 0}, {42, 0}, {0, 42}, {0, 0}}}
	sp.DirtyPolygons = []orb.Polygon{tri}
	sp.Extent = tri.Bound()
	seq, err := seed.DirtyTiles(sp, nil, 128)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for tile := range seq {
		if c, r := tile.Col, 255-tile.Row; c+r > 10 || tile.Level != 3 {
			t.Errorf("tile %v is not touched by the triangle", tile)
		}
		n++
	}
	if n != 66 {
		t.Fatalf("%d dirty tiles, want the triangle's 66 (its envelope has 121)", n)
	}
	// With an envelope beside it, the envelope alone is widened (128 px: 2 units at level 3).
	env := []orb.Bound{{Min: orb.Point{101, 101}, Max: orb.Point{102, 102}}}
	if got := tiles(t, sp, env, 128); len(got) != 66+4 {
		t.Fatalf("triangle and an envelope: %d tiles, want 66 + 4", len(got))
	}
	raw, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	var back seed.Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Refresh() {
		t.Fatal("a spec of dirty polygons is not a refresh")
	}
	if c, err := seed.Count(&back); err != nil || c != 66 {
		t.Fatalf("Count = %d, %v; want 66", c, err)
	}
	units, err := seed.Plan(&back, 0)
	if err != nil {
		t.Fatal(err)
	}
	var planned int64
	for u := range units {
		planned += u.Tiles
	}
	// Whole 4×4 metatiles: those holding a tile with c + r ≤ 10 (metatile columns and rows
	// from the bottom m, n of 0–2 with 4m + 4n ≤ 10: 6 metatiles).
	if planned != 6*16 {
		t.Fatalf("planned %d tiles, want 6 metatiles of 16", planned)
	}
}
