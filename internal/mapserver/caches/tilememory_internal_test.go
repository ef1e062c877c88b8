package caches

import (
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

func TestTileMemory(t *testing.T) {
	now := time.Unix(1000, 0)
	key := func(name string) tileKey { return tileKey{dir: name, tile: tilecache.Tile{Level: 1, Row: 2, Col: 3}} }
	// A 10-byte tile under a one-letter folder counts 10+1+tileKeyBytes = 35 bytes: 5 fit in
	// 200, and a tile over 25 bytes (an eighth) is not kept.
	m := newTileMemory(200, 10*time.Second)
	m.put(key("a"), make([]byte, 10), now, 0)
	m.put(key("b"), make([]byte, 10), now, 0)
	if _, ok := m.get(key("a"), now.Add(5*time.Second)); !ok {
		t.Fatal("a fresh tile is missing")
	}
	if _, ok := m.get(key("a"), now.Add(11*time.Second)); ok {
		t.Error("a tile older than maxAge was served")
	}
	m.put(key("big"), make([]byte, 50), now, 0)
	if _, ok := m.get(key("big"), now); ok {
		t.Error("a tile over an eighth of the budget was kept")
	}
	for i := range 10 {
		m.put(key(string(rune('c'+i))), make([]byte, 10), now, 0)
	}
	if b := m.tiles.Stats().Bytes; b > 200 {
		t.Errorf("%d bytes held, budget 200", b)
	}
	if _, ok := m.get(key("b"), now); ok {
		t.Error("the least recently used tile was not evicted")
	}
	if _, ok := m.get(key(string(rune('c'+9))), now); !ok {
		t.Error("the newest tile was evicted")
	}
	if got := key("arcgiscache/world/Layers/_alllayers").String(); got != "arcgiscache/world/Layers/_alllayers/1/2/3" {
		t.Errorf("the key's store form is %q", got)
	}
	var nilMem *tileMemory
	nilMem.put(key("x"), []byte{1}, now, 0)
	if _, ok := nilMem.get(key("x"), now); ok {
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
	root := "arcgiscache/world/Layers/_alllayers"
	at := func(level, row, col int) tileKey {
		return tileKey{dir: root, tile: tilecache.Tile{Level: level, Row: row, Col: col}}
	}
	m.put(at(5, 1, 1), []byte{1}, now, time.Hour) // on demand
	m.put(at(5, 1, 2), []byte{2}, now, 0)         // stored
	m.put(at(5, 9, 9), []byte{3}, now, time.Hour)
	if _, ok := m.get(at(5, 1, 1), now.Add(time.Minute)); !ok {
		t.Error("an on-demand tile was dropped before its TTL")
	}
	if _, ok := m.get(at(5, 1, 2), now.Add(time.Minute)); ok {
		t.Error("a stored tile was served past the memory's maxAge")
	}
	v := refresh.Invalidation{Root: "arcgiscache/world/Layers", Ranges: []tilecache.TileRange{{Level: 5, MinRow: 0, MaxRow: 2, MinCol: 0, MaxCol: 2}}}
	m.forget(v.CoversTileKey)
	if _, ok := m.get(at(5, 1, 1), now); ok {
		t.Error("an invalidated tile is still served")
	}
	if _, ok := m.get(at(5, 9, 9), now); !ok {
		t.Error("a tile outside the invalidation was dropped")
	}
}
