package logwriter_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/logwriter"
)

type countingBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (c *countingBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.buf.Write(p)
}

// Lines written concurrently all arrive, whole and in their writers' order, in few writes.
func TestBatchesWholeLines(t *testing.T) {
	out := &countingBuffer{}
	w := logwriter.New(out, time.Hour) // only size and Close flush here
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				fmt.Fprintf(w, "writer %d line %d %s\n", g, i, strings.Repeat("x", 50))
			}
		}(g)
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	if len(lines) != 8000 {
		t.Fatalf("%d lines, want 8000", len(lines))
	}
	next := map[int]int{}
	for _, l := range lines {
		var g, i int
		if _, err := fmt.Sscanf(l, "writer %d line %d", &g, &i); err != nil {
			t.Fatalf("mangled line %q", l)
		}
		if i != next[g] {
			t.Fatalf("writer %d: line %d after %d", g, i, next[g]-1)
		}
		next[g]++
	}
	if out.writes > 20 {
		t.Errorf("%d writes for 8000 lines: not batched", out.writes)
	}
}

// The ticker flushes without Close.
func TestFlushesOnInterval(t *testing.T) {
	out := &countingBuffer{}
	w := logwriter.New(out, 10*time.Millisecond)
	defer w.Close()
	w.Write([]byte("hello\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		out.mu.Lock()
		got := out.buf.String()
		out.mu.Unlock()
		if got == "hello\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not flushed: %q", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
