package wmts_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/wmts"
)

// readOps answers GetMapTile with its read function.
type readOps struct {
	svc  *catalog.Service
	read func(ctx context.Context) ([]byte, error)
}

func (o *readOps) Service(name string) (*catalog.Service, bool) {
	return o.svc, strings.EqualFold(name, o.svc.Name)
}

func (o *readOps) GetMapTile(ctx context.Context, _ *mapserver.Call, _ *gisxml.GetMapTile) (*gisxml.GetMapTileResponse, error) {
	b, err := o.read(ctx)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetMapTileResponse{Result: b}, nil
}

func (o *readOps) GetLayerTile(context.Context, *mapserver.Call, *gisxml.GetLayerTile) (*gisxml.GetLayerTileResponse, error) {
	return nil, errors.New("unexpected GetLayerTile")
}

func (o *readOps) GetCacheDescriptionInfo(context.Context, *mapserver.Call, *gisxml.GetCacheDescriptionInfo) (*gisxml.GetCacheDescriptionInfoResponse, error) {
	return nil, errors.New("unexpected GetCacheDescriptionInfo")
}

func tileHandler(timeout time.Duration, read func(ctx context.Context) ([]byte, error)) *wmts.Handler {
	ops := &readOps{svc: &catalog.Service{Name: "world", Maps: []*catalog.Map{{Name: "Layers"}}}, read: read}
	return wmts.New(wmts.Params{Services: ops, Caches: ops, Timeout: timeout, Logger: slog.New(slog.DiscardHandler)})
}

func serveTile(h *wmts.Handler) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeTileAt(rec, httptest.NewRequest(http.MethodGet, "/", nil), "world", "0", "0", "0")
	return rec
}

// A tile read that takes too long ends at the handler's Timeout, whether it waits on the
// context's Done channel (a store's network read) or only asks its Err now and then, and gets
// 500; a read in time sees the deadline and gets its tile.
func TestTileReadTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, c := range []struct {
		name string
		read func(ctx context.Context) ([]byte, error)
	}{
		{"waits on Done", func(ctx context.Context) ([]byte, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Second):
				return []byte("late"), nil
			}
		}},
		{"asks Err", func(ctx context.Context) ([]byte, error) {
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
				if err := ctx.Err(); err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Err after the timeout: %v, want DeadlineExceeded", err)
					}
					return nil, err
				}
			}
			return []byte("late"), nil
		}},
	} {
		start := time.Now()
		rec := serveTile(tileHandler(timeout, c.read))
		if took := time.Since(start); rec.Code != http.StatusInternalServerError || took > 2*time.Second {
			t.Errorf("%s: %d after %v, want 500 after the %v timeout", c.name, rec.Code, took, timeout)
		}
	}
	rec := serveTile(tileHandler(timeout, func(ctx context.Context) ([]byte, error) {
		d, ok := ctx.Deadline()
		if !ok || time.Until(d) > timeout || ctx.Err() != nil {
			t.Errorf("a read in time: deadline %v (%v), err %v", d, ok, ctx.Err())
		}
		return []byte("tile"), nil
	}))
	if rec.Code != 200 || rec.Body.String() != "tile" {
		t.Errorf("a read in time: %d %q", rec.Code, rec.Body)
	}
}

// The timeout costs a tile read that never waits (one from the served-tile memory) no timer
// and no allocation: the deadline is made with the operation's Call and request, in one
// allocation (context.WithTimeout's context, timer and cancel function were three, and a tenth
// of a cached tile's answer with the request's context's bookkeeping).
func TestTimeoutCostsAFastReadNoTimer(t *testing.T) {
	read := func(context.Context) ([]byte, error) { return []byte("tile"), nil }
	allocs := func(h *wmts.Handler) float64 {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		rec := httptest.NewRecorder()
		return testing.AllocsPerRun(200, func() {
			rec.Body.Reset()
			clear(rec.HeaderMap)
			h.ServeTileAt(rec, req, "world", "0", "0", "0")
		})
	}
	without, with := allocs(tileHandler(0, read)), allocs(tileHandler(time.Minute, read))
	t.Logf("a tile read from memory: %v allocations with a timeout, %v without", with, without)
	if with > without {
		t.Errorf("a tile read from memory: %v allocations with a timeout, %v without; want no more", with, without)
	}
}
