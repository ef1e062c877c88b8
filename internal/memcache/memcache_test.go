package memcache_test

import (
	"fmt"
	"testing"

	"github.com/mapfarm/mapfarm/internal/memcache"
)

func TestBoundedByBytes(t *testing.T) {
	c := memcache.New[string, []byte]("t", 100)
	for i := range 10 {
		c.Add(fmt.Sprint(i), make([]byte, 30), 30)
	}
	st := c.Stats()
	if st.Bytes > 100 || st.Entries != 3 || st.Evictions != 7 {
		t.Fatalf("after 10 × 30 bytes into 100: %+v", st)
	}
	// The three most recent are kept; reading one makes it recent.
	for _, k := range []string{"7", "8", "9"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if _, ok := c.Get("6"); ok {
		t.Error("6 kept")
	}
	c.Get("7")
	c.Add("10", nil, 30)
	if _, ok := c.Get("8"); ok {
		t.Error("8, the least recently used, kept")
	}
	if _, ok := c.Get("7"); !ok {
		t.Error("7, just read, evicted")
	}
	st = c.Stats()
	if st.Hits != 5 || st.Misses != 2 {
		t.Errorf("hits %d misses %d, want 5 and 2", st.Hits, st.Misses)
	}
}

func TestReplaceRemoveAndOversize(t *testing.T) {
	c := memcache.New[int, string]("t", 50)
	c.Add(1, "a", 20)
	c.Add(1, "b", 40) // replaces, not 60 bytes
	if st := c.Stats(); st.Bytes != 40 || st.Entries != 1 || st.Evictions != 0 {
		t.Fatalf("after replacing: %+v", st)
	}
	if v, _ := c.Get(1); v != "b" {
		t.Errorf("got %q", v)
	}
	c.Add(2, "huge", 51)
	if _, ok := c.Get(2); ok {
		t.Error("an entry larger than the cache was kept")
	}
	c.Remove(1)
	c.Add(3, "c", 10)
	c.Add(4, "d", 10)
	c.RemoveIf(func(k int) bool { return k == 3 })
	if st := c.Stats(); st.Bytes != 10 || st.Entries != 1 || st.Evictions != 0 {
		t.Errorf("after removals: %+v (removals are not evictions)", st)
	}
	z := memcache.New[int, int]("zero", 0)
	z.Add(1, 1, 1)
	if _, ok := z.Get(1); ok {
		t.Error("a zero-byte cache kept an entry")
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := memcache.New[int, int]("b", 1<<20)
	for i := range 1000 {
		c.Add(i, i, 64)
	}
	i := 0
	for b.Loop() {
		c.Get(i % 1000)
		i++
	}
}
