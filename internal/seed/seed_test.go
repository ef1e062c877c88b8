package seed_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

func testSpec(extent orb.Bound, levels ...int) *seed.Spec {
	return &seed.Spec{ID: "j", Layers: []seed.Layer{{ID: -1, Folder: tilecache.FusedLayer}}, Scheme: tilecache.WebMercator(),
		Storage: tilecache.CompactV2, Extent: extent, Levels: levels, Mode: seed.RecreateAll, MetatileSize: 4, Buffer: 64, PartTiles: 64}
}

func TestStagingRoundTrip(t *testing.T) {
	changes := []seed.Change{
		{Tile: tilecache.Tile{Level: 3, Row: 1, Col: 2}, Data: []byte("png bytes")},
		{Tile: tilecache.Tile{Level: 3, Row: 7, Col: 0}},
		{Tile: tilecache.Tile{Level: 3, Row: 5, Col: 5}, Data: []byte{0}},
	}
	b := seed.EncodeStaging(changes)
	if !bytes.Equal(b, seed.EncodeStaging(changes)) {
		t.Fatal("staging bytes are not deterministic")
	}
	got, err := seed.DecodeStaging(3, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(changes) {
		t.Fatalf("%d changes back, want %d", len(got), len(changes))
	}
	for i := range changes {
		if got[i].Tile != changes[i].Tile || !bytes.Equal(got[i].Data, changes[i].Data) || (got[i].Data == nil) != (changes[i].Data == nil) {
			t.Errorf("change %d = %+v, want %+v", i, got[i], changes[i])
		}
	}
	for _, bad := range [][]byte{nil, []byte("MFSP1\n\x01"), append([]byte{}, b[:len(b)-1]...)} {
		if _, err := seed.DecodeStaging(3, bad); !errors.Is(err, seed.ErrBadStaging) {
			t.Errorf("DecodeStaging(%q) = %v, want ErrBadStaging", bad, err)
		}
	}
}

// Every tile of the cover lies in exactly one unit's metatiles, parts split each unit's
// metatiles without gap or overlap, and resuming from a checkpoint yields the same units.
func TestPlan(t *testing.T) {
	sp := testSpec(orb.Bound{Min: orb.Point{-1.5e6, 3e6}, Max: orb.Point{2.5e6, 7e6}}, 0, 3, 6, 8)
	units, err := seed.Plan(sp, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[tilecache.Tile]int{}
	var all []seed.BundleUnit
	for u := range units {
		all = append(all, u)
		next := 0
		for _, p := range u.Parts {
			if p[0] != next || p[1] <= p[0] || (p[1]-p[0])*16 > sp.PartTiles {
				t.Fatalf("unit %d parts %v", u.Seq, u.Parts)
			}
			next = p[1]
		}
		if next != len(u.Metatiles) {
			t.Fatalf("unit %d parts end at %d of %d metatiles", u.Seq, next, len(u.Metatiles))
		}
		for _, m := range u.Metatiles {
			if m.Bundle() != u.Bundle {
				t.Fatalf("metatile %v outside bundle %v", m, u.Bundle)
			}
			for tl := range m.Tiles() {
				seen[tl]++
			}
		}
	}
	cover, _ := sp.Scheme.Cover(sp.AOI(), sp.Levels...)
	for tl := range cover.Tiles() {
		if seen[tl] != 1 {
			t.Fatalf("tile %v planned %d times", tl, seen[tl])
		}
	}
	resumed, _ := seed.Plan(sp, 2)
	i := 2
	for u := range resumed {
		if u.Seq != all[i].Seq || u.Bundle != all[i].Bundle || len(u.Metatiles) != len(all[i].Metatiles) {
			t.Fatalf("resumed unit %d = %v, want %v", i, u.Bundle, all[i].Bundle)
		}
		i++
	}
	if i != len(all) {
		t.Fatalf("resume yielded up to %d of %d units", i, len(all))
	}
}

// A delete job with a polygon plans merges only (no parts), and its units count exactly the
// tiles of the polygon's cover, not those of the metatiles around it.
func TestPlanDeletePolygon(t *testing.T) {
	sp := testSpec(orb.Bound{}, 5, 6)
	sp.Mode = seed.Delete
	sp.Polygon = orb.Polygon{{{-1.5e6, 3e6}, {2.5e6, 3e6}, {-1.5e6, 7e6}, {-1.5e6, 3e6}}}
	units, err := seed.Plan(sp, 0)
	if err != nil {
		t.Fatal(err)
	}
	var planned, inMetatiles int64
	for u := range units {
		if len(u.Parts) != 0 {
			t.Fatalf("delete unit %v has render parts %v", u.Bundle, u.Parts)
		}
		planned += u.Tiles
		for _, m := range u.Metatiles {
			inMetatiles += int64(m.Rows * m.Cols)
		}
	}
	cover, _ := sp.Scheme.Cover(sp.AOI(), sp.Levels...)
	want, _ := cover.Count()
	if planned != want || inMetatiles <= want {
		t.Errorf("delete plans %d tiles, the triangle covers %d (its metatiles %d)", planned, want, inMetatiles)
	}
}

// BenchmarkPlan1e8 plans a job of more than 10^8 tiles (the whole world at levels 0-13 and a
// quarter of level 14) into its render tasks, without Redis, and reports the peak heap.
func BenchmarkPlan1e8(b *testing.B) {
	world := tilecache.WebMercator().Extent
	quarter := orb.Bound{Min: world.Min, Max: orb.Point{world.Min[0] + (world.Max[0]-world.Min[0])/4, world.Max[1]}}
	for b.Loop() {
		var peak uint64
		var tiles, tasks int64
		var ms runtime.MemStats
		for _, job := range []*seed.Spec{testSpec(world, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13), testSpec(quarter, 14)} {
			job.PartTiles = seed.DefaultPartTiles
			units, err := seed.Plan(job, 0)
			if err != nil {
				b.Fatal(err)
			}
			for u := range units {
				tiles += u.Tiles
				for _, p := range u.Parts {
					if _, err := task.NewSeedRender(task.SeedRender{Job: job.ID, Bundle: u.Bundle.TopLeft, Part: p[0], Parts: len(u.Parts),
						Metatiles: task.MetatileList(u.Metatiles[p[0]:p[1]])}); err != nil {
						b.Fatal(err)
					}
					tasks++
				}
				if u.Seq%64 == 0 {
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
			}
		}
		if tiles < 1e8 {
			b.Fatalf("planned %d tiles, want at least 10^8", tiles)
		}
		b.ReportMetric(float64(tiles), "tiles")
		b.ReportMetric(float64(tasks), "tasks")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want string // "" for a valid id, else part of the error
	}{
		{"j1", ""},
		{"2026-11-25_world.Layers", ""},
		{strings.Repeat("a", seed.MaxIDLen), ""},
		{"", "is empty"},
		{strings.Repeat("a", seed.MaxIDLen+1), "is 129 characters long: the limit is 128"},
		{strings.Repeat("a", 100_000), "is 100000 characters long"},
		{".", "start with a letter or digit"},
		{"..", "start with a letter or digit"},
		{"-x", "start with a letter or digit"},
		{"a/b", "only letters, digits"},
		{"a b", "only letters, digits"},
		{"a\x00b", "only letters, digits"},
		{"é", "only letters, digits"},
	}
	for _, tc := range tests {
		err := seed.ValidID(tc.id)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ValidID(%.20q) = %v, want nil", tc.id, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ValidID(%.20q) = %v, want an error with %q", tc.id, err, tc.want)
		case tc.want != "" && (!errors.Is(err, seed.ErrBadRequest) || !errors.Is(err, seed.ErrBadID) || len(err.Error()) > 200):
			t.Errorf("ValidID(%.20q) = %v: want ErrBadRequest and ErrBadID, at most 200 bytes", tc.id, err)
		}
	}
}

// The admin side refuses a malformed id before touching Redis (Jobs is nil here).
func TestAdminRefusesMalformedIDs(t *testing.T) {
	a := &seed.Admin{}
	long := strings.Repeat("x", 100_000)
	if _, err := a.Submit(context.Background(), seed.Request{ID: long, Service: "world"}); !errors.Is(err, seed.ErrBadRequest) {
		t.Errorf("Submit(long id) = %v, want ErrBadRequest", err)
	}
	if _, err := a.Status(context.Background(), long); !errors.Is(err, seed.ErrNoJob) {
		t.Errorf("Status(long id) = %v, want ErrNoJob", err)
	}
	if _, err := a.Cancel(context.Background(), "../x"); !errors.Is(err, seed.ErrNoJob) {
		t.Errorf("Cancel(../x) = %v, want ErrNoJob", err)
	}
	sp := testSpec(orb.Bound{Min: orb.Point{0, 0}, Max: orb.Point{1, 1}}, 0)
	sp.ID = long
	if err := sp.Validate(); err == nil || len(err.Error()) > 300 {
		t.Errorf("Validate(long id) = %.300v, want a short error", err)
	}
}

// A vector job (format pbf) of the world sample: the vector root, the 512-px Web Mercator
// scheme of levels 0-14 with format PBF, by default the vector levels of the raster cache's
// resolutions (raster 0-7: vector 0-6), compact V2, fused; a map in 4326 and an unknown format
// are refused.
func TestNewSpecVector(t *testing.T) {
	cat := catalogtest.Samples(t)
	now := time.Unix(0, 0)
	s, err := seed.NewSpec(cat, seed.Request{Service: "world", Format: "pbf"}, "v1", now)
	if err != nil {
		t.Fatal(err)
	}
	lods := s.Scheme.LODs
	if s.Root != "arcgiscache/world/Layers_vector" || !s.Vector() || s.Scheme.Format != "PBF" || s.Scheme.TileCols != 512 ||
		len(lods) != 15 || lods[0].Resolution != tilecache.WebMercator().LODs[1].Resolution || s.Storage != tilecache.CompactV2 ||
		len(s.Layers) != 1 || s.Layers[0].Folder != tilecache.FusedLayer || !slices.Equal(s.Levels, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("spec: root %s vector %v format %s %d px, %d levels, storage %v, layers %v, levels %v",
			s.Root, s.Vector(), s.Scheme.Format, s.Scheme.TileCols, len(lods), s.Storage, s.Layers, s.Levels)
	}
	raster, err := seed.NewSpec(cat, seed.Request{Service: "world"}, "r1", now)
	if err != nil || raster.Vector() || raster.Root != "arcgiscache/world/Layers" || raster.Scheme.Format != "PNG" {
		t.Errorf("raster spec: %v %+v", err, raster)
	}
	for _, r := range []seed.Request{{Service: "world_geographic", Format: "pbf"}, {Service: "world", Format: "svg"}} {
		if _, err := seed.NewSpec(cat, r, "x", now); !errors.Is(err, seed.ErrBadRequest) {
			t.Errorf("%+v: %v, want a bad request", r, err)
		}
	}
}
