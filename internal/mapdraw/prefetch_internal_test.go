package mapdraw

import (
	"context"
	"errors"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/render"
)

// counting scans n features numbered by their X, until told to stop or cancelled, and
// reports whether it saw the cancellation.
func counting(n int, sawCancel *bool) func(context.Context, func(render.Feature) bool) error {
	return func(ctx context.Context, yield func(render.Feature) bool) error {
		for i := range n {
			if ctx.Err() != nil {
				*sawCancel = true
				return ctx.Err()
			}
			if !yield(render.Feature{Geom: orb.Point{float64(i), 0}}) {
				return nil
			}
		}
		return nil
	}
}

func TestPrefetchKeepsOrder(t *testing.T) {
	var got []float64
	var saw bool
	err := prefetch(context.Background(), func(f render.Feature) bool {
		got = append(got, f.Geom.(orb.Point)[0])
		return true
	}, counting(3*prefetchBatch+7, &saw))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3*prefetchBatch+7 {
		t.Fatalf("%d features, want %d", len(got), 3*prefetchBatch+7)
	}
	for i, x := range got {
		if x != float64(i) {
			t.Fatalf("feature %d is %v: out of order", i, x)
		}
	}
}

// A draw that stops early (yield false) ends the scan, which reads no more than the batches
// that may wait, and is not an error.
func TestPrefetchStopCancelsScan(t *testing.T) {
	n, read := 0, 0
	err := prefetch(context.Background(), func(render.Feature) bool {
		n++
		return n < 10
	}, func(ctx context.Context, yield func(render.Feature) bool) error {
		for range 1 << 20 {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			read++
			if !yield(render.Feature{Geom: orb.Point{}}) {
				return nil
			}
		}
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("err %v after %d features", err, n)
	}
	if most := (prefetchDepth + 2) * prefetchBatch; read > most {
		t.Errorf("the scan read %d features after the draw stopped at 10; at most %d may be in flight", read, most)
	}
}

func TestPrefetchErrors(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	err := prefetch(context.Background(), func(render.Feature) bool { n++; return true },
		func(ctx context.Context, yield func(render.Feature) bool) error {
			yield(render.Feature{Geom: orb.Point{}})
			return boom
		})
	if !errors.Is(err, boom) || n != 1 {
		t.Errorf("err %v after %d features, want boom after 1", err, n)
	}
	// The caller's cancellation surfaces as its error, whoever notices it first.
	ctx, cancel := context.WithCancel(context.Background())
	var saw bool
	err = prefetch(ctx, func(render.Feature) bool { cancel(); return true }, counting(1<<20, &saw))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled draw: err %v", err)
	}
}
