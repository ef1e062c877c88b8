package refresh_test

import (
	"context"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

func backlog(t *testing.T) *refresh.Backlog {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	return refresh.NewBacklog(rdb)
}

func box(x float64) orb.Bound { return orb.Bound{Min: orb.Point{x, x}, Max: orb.Point{x + 1, x + 1}} }

// Entries wait in order with their age; what Take read leaves only with Done, and an entry
// added between the two stays, with its own age; past the cap the cache is whole.
func TestBacklogTakeDone(t *testing.T) {
	b := backlog(t)
	b.Cap = 3
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000)
	const c = "world/Layers"
	for i := range 2 {
		if err := b.Add(ctx, c, refresh.Entry{At: t0.Add(time.Duration(i) * time.Second), Source: "parcels", Envelopes: []orb.Bound{box(float64(i))}}); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := b.Pending(ctx)
	if err != nil || len(ws) != 1 || ws[0].Cache != c || ws[0].Entries != 2 || !ws[0].Oldest.Equal(t0) || ws[0].Whole || ws[0].Forced {
		t.Fatalf("pending = %+v, %v", ws, err)
	}
	taken, err := b.Take(ctx, c, 10)
	if err != nil || len(taken.Entries) != 2 || taken.Entries[1].Envelopes[0] != box(1) || taken.Whole {
		t.Fatalf("taken = %+v, %v", taken, err)
	}
	late := t0.Add(5 * time.Second)
	if err := b.Add(ctx, c, refresh.Entry{At: late, Source: "expire", Envelopes: []orb.Bound{box(9)}, Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.Done(ctx, c, taken, t0.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	ws, _ = b.Pending(ctx)
	if len(ws) != 1 || ws[0].Entries != 1 || !ws[0].Oldest.Equal(late) || !ws[0].Forced || !ws[0].LastJob.Equal(t0.Add(6*time.Second)) {
		t.Fatalf("after Done, pending = %+v: want the late entry alone, forced", ws)
	}
	// Past the cap: the whole cache.
	for i := range 5 {
		if err := b.Add(ctx, c, refresh.Entry{At: late.Add(time.Duration(i) * time.Millisecond), Source: "parcels", Envelopes: []orb.Bound{box(20)}}); err != nil {
			t.Fatal(err)
		}
	}
	ws, _ = b.Pending(ctx)
	if len(ws) != 1 || ws[0].Entries != 3 || !ws[0].Whole {
		t.Fatalf("past the cap, pending = %+v: want 3 entries and the whole cache", ws)
	}
	taken, _ = b.Take(ctx, c, 10)
	if !taken.Whole {
		t.Fatal("taken past the cap is not whole")
	}
	if err := b.Done(ctx, c, taken, late); err != nil {
		t.Fatal(err)
	}
	if ws, _ = b.Pending(ctx); len(ws) != 0 {
		t.Fatalf("after the last Done, pending = %+v", ws)
	}
}
