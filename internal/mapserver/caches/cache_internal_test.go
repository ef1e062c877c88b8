package caches

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// fakeFarm draws metatiles whose tiles hold their own coordinates, after release is closed.
type fakeFarm struct {
	store   tilecache.Store
	release chan struct{}
	// viaStore makes it leave the tiles in the store, as a worker does with a large result.
	viaStore bool

	mu   sync.Mutex
	jobs []task.CacheMetatile
}

func (f *fakeFarm) Export(context.Context, task.ExportMap) (task.Result, error) {
	return task.Result{}, errors.New("fake farm: no ExportMap")
}

func (f *fakeFarm) RenderMetatile(ctx context.Context, job task.CacheMetatile) (task.Result, error) {
	f.mu.Lock()
	f.jobs = append(f.jobs, job)
	f.mu.Unlock()
	select {
	case <-f.release:
	case <-time.After(20 * time.Second):
		return task.Result{}, errors.New("fake farm: never released")
	}
	mt := tilecache.Metatile{TopLeft: tilecache.Tile{Level: job.Level, Row: job.Metatile[0], Col: job.Metatile[1]}, Rows: job.Metatile[2], Cols: job.Metatile[3]}
	var changes []seed.Change
	for t := range mt.Tiles() {
		changes = append(changes, seed.Change{Tile: t, Data: []byte("tile " + t.String())})
	}
	data := seed.EncodeStaging(changes)
	if f.viaStore {
		if err := f.store.Put(ctx, job.Key, data, "application/octet-stream"); err != nil {
			return task.Result{}, err
		}
		return task.Result{Key: job.Key, Size: len(data), Worker: "fake"}, nil
	}
	return task.Result{Data: data, Size: len(data), Worker: "fake"}, nil
}

func (f *fakeFarm) renders() []task.CacheMetatile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]task.CacheMetatile(nil), f.jobs...)
}

// onDemandServer serves the sample catalog with the world map's cache set to onDemand and a
// stored conf.xml (no tiles), drawing through farm. memory is the served-tile memory budget
// (negative: none).
func onDemandServer(t *testing.T, farm *fakeFarm, memory int64) (*Service, *operation.Call) {
	t.Helper()
	cat := catalogtest.Samples(t)
	svc, _ := cat.Service("world")
	m, _ := svc.Map("Layers")
	m.Def.Cache.OnDemand = true
	d, err := seed.DrawingOf(m)
	if err != nil {
		t.Fatal(err)
	}
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	farm.store = store
	c, err := tilecache.New(store, tilecache.Options{Root: seed.CacheRoot("world", "Layers")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMetadata(context.Background(), tilecache.CacheInfo{Scheme: d.Scheme, Storage: tilecache.CompactV2}, orb.Bound{}); err != nil {
		t.Fatal(err)
	}
	var n int
	var mu sync.Mutex
	s := New(Params{Tiles: store, Metatiles: farm, TileMemoryBytes: memory, NewID: func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id%d", n)
	}})
	return s, &operation.Call{Service: svc}
}

// Concurrent requests for the tiles of one metatile share one render of the whole metatile,
// with the cache's metatile size and buffer; each gets its own tile.
func TestOnDemandSharesMetatileRender(t *testing.T) {
	farm := &fakeFarm{release: make(chan struct{})}
	s, c := onDemandServer(t, farm, -1) // no served-tile memory: only the shared render dedupes
	ctx := context.Background()
	// Level 6, rows 20-23, columns 32-35: one 4×4 metatile.
	var tiles []tilecache.Tile
	for r := 20; r < 24; r++ {
		for col := 32; col < 36; col++ {
			tiles = append(tiles, tilecache.Tile{Level: 6, Row: r, Col: col})
		}
	}
	got := make([][]byte, len(tiles))
	errs := make([]error, len(tiles))
	var wg sync.WaitGroup
	for i, tl := range tiles {
		wg.Go(func() {
			resp, err := s.GetMapTile(ctx, c, &gisxml.GetMapTile{MapName: "Layers", Level: tl.Level, Row: tl.Row, Column: tl.Col})
			if err == nil {
				got[i] = resp.Result
			}
			errs[i] = err
		})
	}
	// Release the render once every request waits for it.
	key := seed.CacheRoot("world", "Layers") + "/_alllayers/6/20/32+4x4"
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		waiting := int(s.tiles.waiting.Load())
		if waiting == len(tiles) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests wait for the render of %s", waiting, len(tiles), key)
		}
	}
	close(farm.release)
	wg.Wait()
	for i, tl := range tiles {
		if errs[i] != nil || string(got[i]) != "tile "+tl.String() {
			t.Errorf("tile %v: %q, %v", tl, got[i], errs[i])
		}
	}
	jobs := farm.renders()
	if len(jobs) != 1 {
		t.Fatalf("%d renders for one metatile, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Level != 6 || j.Metatile != [4]int{20, 32, 4, 4} || j.Buffer != 64 || j.LayerID != -1 || j.Scheme.Format != "PNG" || j.Service != "world" || j.Map != "Layers" {
		t.Errorf("render job %+v: want level 6, metatile [20 32 4 4], buffer 64, fused, PNG", j)
	}
	if n := s.tiles.waiting.Load(); n != 0 {
		t.Errorf("%d callers still attached to renders", n)
	}
	// Without memory, the next request renders again; a request of another metatile too.
	if _, err := s.GetMapTile(ctx, c, &gisxml.GetMapTile{MapName: "Layers", Level: 6, Row: 21, Column: 33}); err != nil {
		t.Fatal(err)
	}
	if n := len(farm.renders()); n != 2 {
		t.Errorf("%d renders after a later request, want 2", n)
	}
}

// With the served-tile memory, the neighbours of an on-demand tile come from memory; a worker
// result left in the store is read and deleted; per-layer requests draw that layer alone.
func TestOnDemandMemoryAndStoredResult(t *testing.T) {
	farm := &fakeFarm{release: make(chan struct{}), viaStore: true}
	close(farm.release)
	s, c := onDemandServer(t, farm, 0)
	ctx := context.Background()
	for _, tl := range []tilecache.Tile{{Level: 2, Row: 1, Col: 2}, {Level: 2, Row: 3, Col: 0}, {Level: 2, Row: 0, Col: 3}} {
		resp, err := s.GetMapTile(ctx, c, &gisxml.GetMapTile{MapName: "Layers", Level: tl.Level, Row: tl.Row, Column: tl.Col})
		if err != nil || string(resp.Result) != "tile "+tl.String() {
			t.Fatalf("tile %v: %v", tl, err)
		}
	}
	jobs := farm.renders()
	if len(jobs) != 1 || jobs[0].Metatile != [4]int{0, 0, 4, 4} {
		t.Fatalf("renders %+v, want one of the level-2 metatile [0 0 4 4]", jobs)
	}
	if _, err := farm.store.Get(ctx, jobs[0].Key); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the metatile left in the store at %s was not deleted: %v", jobs[0].Key, err)
	}
	// A layer's tile is drawn on demand only when the cache section defines per-layer caches.
	_, err := s.GetLayerTile(ctx, c, &gisxml.GetLayerTile{MapName: "Layers", LayerID: 1, Level: 0})
	if !errors.Is(err, operation.ErrNotFound) || !strings.Contains(err.Error(), "defines one fused cache") {
		t.Errorf("layer tile of a fused cache: %v", err)
	}
	m, _ := c.Service.Map("Layers")
	m.Def.Cache.LayerCaches = true
	if _, err := s.GetMapTile(ctx, c, &gisxml.GetMapTile{MapName: "Layers", Level: 3, Row: 7, Column: 7}); !errors.Is(err, operation.ErrNotFound) {
		t.Errorf("fused tile of per-layer caches: %v", err)
	}
	// Level 0 has one tile: the metatile is clipped to the matrix.
	if _, err := s.GetLayerTile(ctx, c, &gisxml.GetLayerTile{MapName: "Layers", LayerID: 1, Level: 0}); err != nil {
		t.Fatal(err)
	}
	jobs = farm.renders()
	if last := jobs[len(jobs)-1]; last.Metatile != [4]int{0, 0, 1, 1} || last.LayerID != 1 {
		t.Errorf("level-0 layer tile rendered as %+v, want metatile [0 0 1 1] of layer 1", last)
	}
}

// A tile is not rendered on demand when the cache does not ask for it, or when the stored
// scheme is not the one the definition draws.
func TestOnDemandRefused(t *testing.T) {
	farm := &fakeFarm{release: make(chan struct{})}
	close(farm.release)
	s, c := onDemandServer(t, farm, 0)
	ctx := context.Background()
	m, _ := c.Service.Map("Layers")

	// A stored scheme of 512-pixel tiles.
	d, _ := seed.DrawingOf(m)
	other := d.Scheme
	other.TileCols, other.TileRows = 512, 512
	cc, _ := tilecache.New(s.p.Tiles, tilecache.Options{Root: seed.CacheRoot("world", "Layers")})
	if err := cc.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: other, Storage: tilecache.CompactV2}, orb.Bound{}); err != nil {
		t.Fatal(err)
	}
	s.tiles.roots = map[string]*storedCache{} // forget the conf.xml read before
	_, err := s.GetMapTile(ctx, c, &gisxml.GetMapTile{MapName: "Layers", Level: 3, Row: 1, Column: 1})
	if !errors.Is(err, operation.ErrNotFound) || !strings.Contains(err.Error(), "differs from the service definition") {
		t.Errorf("mismatched scheme: %v", err)
	}

	m.Def.Cache.OnDemand = false
	_, err = s.GetMapTile(ctx, c, &gisxml.GetMapTile{MapName: "Layers", Level: 3, Row: 1, Column: 1})
	if !errors.Is(err, operation.ErrNotFound) || !strings.Contains(err.Error(), "is not in the cache") {
		t.Errorf("onDemand off: %v", err)
	}
	if n := len(farm.renders()); n != 0 {
		t.Errorf("%d renders, want none", n)
	}
}

// A tile from the served-tile memory costs GetMapTile its response alone: the memory's key and
// the stored cache's root are looked up without building strings (bench/tiles.sh's REST route
// answers thousands of these a second per core).
func TestMemoryHitAllocatesTheResponseAlone(t *testing.T) {
	farm := &fakeFarm{release: make(chan struct{})}
	close(farm.release)
	s, c := onDemandServer(t, farm, 0)
	ctx := context.Background()
	req := &gisxml.GetMapTile{MapName: "Layers", Level: 2, Row: 1, Column: 2}
	if _, err := s.GetMapTile(ctx, c, req); err != nil {
		t.Fatal(err)
	}
	var err error
	allocs := testing.AllocsPerRun(200, func() { _, err = s.GetMapTile(ctx, c, req) })
	if err != nil {
		t.Fatal(err)
	}
	if allocs > 1 {
		t.Errorf("a tile from memory costs %.1f allocations, want 1 (the response)", allocs)
	}
	if n := len(farm.renders()); n != 1 {
		t.Errorf("%d renders, want 1: the later reads did not come from memory", n)
	}
}
