package caches

import (
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

func TestTileMemory(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newTileMemory(100, 10*time.Second)
	m.put("a", make([]byte, 10), now, 0)
	m.put("b", make([]byte, 10), now, 0)
	if _, ok := m.get("a", now.Add(5*time.Second)); !ok {
		t.Fatal("a fresh tile is missing")
	}
	if _, ok := m.get("a", now.Add(11*time.Second)); ok {
		t.Error("a tile older than maxAge was served")
	}
	m.put("big", make([]byte, 50), now, 0)
	if _, ok := m.get("big", now); ok {
		t.Error("a tile over an eighth of the budget was kept")
	}
	for i := range 10 {
		m.put(string(rune('c'+i)), make([]byte, 10), now, 0)
	}
	if b := m.tiles.Stats().Bytes; b > 100 {
		t.Errorf("%d bytes held, budget 100", b)
	}
	if _, ok := m.get("b", now); ok {
		t.Error("the least recently used tile was not evicted")
	}
	if _, ok := m.get(string(rune('c'+9)), now); !ok {
		t.Error("the newest tile was evicted")
	}
	var nilMem *tileMemory
	nilMem.put("x", []byte{1}, now, 0)
	if _, ok := nilMem.get("x", now); ok {
		t.Error("a nil memory holds tiles")
	}
}

func TestTileMemorySize(t *testing.T) {
	for _, tc := range []struct {
		configured int64
		want       int
	}{{0, tileMemoryBytes}, {-1, 0}, {1 << 20, 1 << 20}} {
		if got := tileMemorySize(tc.configured); got != tc.want {
			t.Errorf("tileMemorySize(%d) = %d, want %d", tc.configured, got, tc.want)
		}
	}
	if m := newTileMemory(tileMemorySize(-1), time.Second); m != nil {
		t.Errorf("a memory turned off is %+v, want nil", m)
	}
}

// A tile drawn on demand lives for its cache's onDemandTTL, not the memory's maxAge; an
// invalidation drops exactly the tiles it names, whatever their age.
func TestTileMemoryTTLAndForget(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newTileMemory(1<<20, 10*time.Second)
	root := "arcgiscache/world/Layers/_alllayers/"
	m.put(root+"5/1/1", []byte{1}, now, time.Hour) // on demand
	m.put(root+"5/1/2", []byte{2}, now, 0)         // stored
	m.put(root+"5/9/9", []byte{3}, now, time.Hour)
	if _, ok := m.get(root+"5/1/1", now.Add(time.Minute)); !ok {
		t.Error("an on-demand tile was dropped before its TTL")
	}
	if _, ok := m.get(root+"5/1/2", now.Add(time.Minute)); ok {
		t.Error("a stored tile was served past the memory's maxAge")
	}
	v := refresh.Invalidation{Root: "arcgiscache/world/Layers", Ranges: []tilecache.TileRange{{Level: 5, MinRow: 0, MaxRow: 2, MinCol: 0, MaxCol: 2}}}
	m.forget(v.CoversTileKey)
	if _, ok := m.get(root+"5/1/1", now); ok {
		t.Error("an invalidated tile is still served")
	}
	if _, ok := m.get(root+"5/9/9", now); !ok {
		t.Error("a tile outside the invalidation was dropped")
	}
}
