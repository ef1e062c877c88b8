package coordinator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// A refresh job (a spec with dirty envelopes, stored in Redis like any job) is planned by the
// runner into exactly DirtyPlan's render parts, metatiles and all, and ends when they are merged.
func TestSeedRunnerPlansARefreshJob(t *testing.T) {
	f := newSeedFixture(t)
	ctx := context.Background()
	envs := []orb.Bound{{Min: orb.Point{1e5, 5e6}, Max: orb.Point{1.1e5, 5.01e6}}, {Min: orb.Point{-1e6, 4e6}, Max: orb.Point{-1e6, 4e6}}}
	sp := &seed.Spec{ID: "refresh-" + testenv.BucketName("j"), Service: "world", Map: "Layers", Layers: []seed.Layer{{ID: -1, Folder: tilecache.FusedLayer}},
		Scheme: tilecache.WebMercator(), Storage: tilecache.CompactV2, Extent: envs[0].Union(envs[1]), Dirty: envs, Reach: 64,
		Levels: []int{0, 2, 4, 6, 8}, Mode: seed.RecreateAll, MetatileSize: 4, Buffer: 64, PartTiles: 16, MaxFailures: 10}
	sp.Root = "arcgiscache/" + sp.ID
	if err := f.jobs.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	for passes := 0; f.status(t, sp.ID).State == seed.StatePlanning; passes++ {
		if passes > 20 {
			t.Fatal("planning did not end in 20 passes")
		}
		f.runner.exec(ctx)
	}
	units, err := seed.DirtyPlan(sp, envs, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	var bundles, tiles int64
	for u := range units {
		bundles++
		tiles += u.Tiles
		for i, p := range u.Parts {
			var metas [][4]int
			for _, m := range u.Metatiles[p[0]:p[1]] {
				metas = append(metas, [4]int{m.TopLeft.Row, m.TopLeft.Col, m.Rows, m.Cols})
			}
			want[fmt.Sprint(u.Bundle.TopLeft, i, metas)] = true
		}
	}
	got := map[string]bool{}
	for _, tk := range f.queue.ids {
		p, err := task.DecodeSeedRender(tk.Payload())
		if err != nil {
			t.Fatal(err)
		}
		got[fmt.Sprint(p.Bundle, p.Part, p.Metatiles)] = true
	}
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Fatalf("enqueued parts:\n%v\nwant DirtyPlan's:\n%v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	st := f.status(t, sp.ID)
	if st.State != seed.StateRunning || st.Bundles != bundles || st.Total != tiles {
		t.Fatalf("planned: %+v, want running with %d bundles and %d tiles", st, bundles, tiles)
	}
	for _, tk := range f.queue.ids {
		p, _ := task.DecodeSeedRender(tk.Payload())
		bid := seed.BundleID(p.Layer, tilecache.Bundle{TopLeft: p.Bundle})
		if _, err := f.jobs.PartDone(ctx, sp.ID, bid, p.Part, seed.PartCounts{Done: int64(p.Tiles())}); err != nil {
			t.Fatal(err)
		}
		if err := f.jobs.MergeDone(ctx, sp.ID, bid, false, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	f.runner.exec(ctx)
	if st := f.status(t, sp.ID); st.State != seed.StateDone || st.Done != st.Total {
		t.Fatalf("after every merge: %+v", st)
	}
}
