package api

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// countingOutputs is an output store that counts the calls it gets.
type countingOutputs struct {
	calls atomic.Int32
	objs  map[string][]byte
}

func (c *countingOutputs) Open(_ context.Context, key string) (io.ReadCloser, blob.Info, error) {
	c.calls.Add(1)
	b, ok := c.objs[key]
	if !ok {
		return nil, blob.Info{}, fs.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(b)), blob.Info{Key: key, Size: int64(len(b)), ContentType: "image/png", ModTime: time.Now()}, nil
}

func (c *countingOutputs) List(_ context.Context, prefix string, fn func(blob.Info) error) error {
	c.calls.Add(1)
	for k, b := range c.objs {
		if strings.HasPrefix(k, prefix) {
			if err := fn(blob.Info{Key: k, Size: int64(len(b))}); err != nil {
				return err
			}
		}
	}
	return nil
}

// An output id the farm did not issue is answered 404 at once without asking the store; an
// issued one that is not stored yet is waited for; a stored one is served.
func TestOutputIDs(t *testing.T) {
	ids, err := NewOutputIDs([]byte("a key of sixteen bytes or more"))
	if err != nil {
		t.Fatal(err)
	}
	stored, pending := ids.NewID(), ids.NewID()
	if !ids.Valid(stored) || len(stored) != 48 {
		t.Fatalf("a fresh id %q is not valid", stored)
	}
	other, _ := NewOutputIDs([]byte("another key of sixteen bytes or more"))
	store := &countingOutputs{objs: map[string][]byte{OutputPrefix + stored + ".png": []byte("png")}}
	h := New(Params{Outputs: store, OutputIDs: ids, OutputTTL: time.Minute, Recent: NewRecentOutputs(-1)}).Handler()
	get := func(name string) (int, time.Duration) {
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/arcgis/output/"+name, nil))
		return rec.Code, time.Since(start)
	}
	forged := stored[:47] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", stored[47])+1)%16])
	for _, name := range []string{
		"0123456789abcdef0123456789abcdef.png", // an unsigned id, as earlier builds made them
		forged + ".png",                        // one tag digit changed
		other.NewID() + ".png",                 // another farm's
		stored[:32] + ".png",                   // no tag
	} {
		before := store.calls.Load()
		if code, took := get(name); code != 404 || took > time.Second { // a real wait polls for 2 s
			t.Errorf("%s: %d after %v, want 404 at once", name, code, took)
		}
		if n := store.calls.Load() - before; n != 0 {
			t.Errorf("%s: %d store calls for an id this farm never issued", name, n)
		}
	}
	if code, _ := get(stored + ".png"); code != 200 {
		t.Errorf("a stored output: %d", code)
	}
	// An issued id in other letter case, or with another extension than the one it was stored
	// under, names nothing: 404 at once, not after the wait for an output on its way.
	for _, name := range []string{strings.ToUpper(stored) + ".png", stored + ".jpg", stored + ".PNG"} {
		if code, took := get(name); code != 404 || took > time.Second {
			t.Errorf("%s: %d after %v, want 404 at once", name, code, took)
		}
	}
	before := store.calls.Load()
	if code, took := get(pending + ".png"); code != 404 || took < time.Second {
		t.Errorf("an issued output not in the store: %d after %v, want 404 after waiting for it", code, took)
	}
	if n := store.calls.Load() - before; n < 2 {
		t.Errorf("an issued output not in the store was looked for %d times, want it waited for", n)
	}
}
