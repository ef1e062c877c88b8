package api

import (
	"testing"
	"time"
)

func TestRecentOutputsBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newRecentOutputs(12, time.Minute)
	r.now = func() time.Time { return now }
	r.Remember("a", "image/png", []byte("12345"))
	r.Remember("b", "image/png", []byte("12345"))
	if _, ok := r.get("a"); !ok { // a is now the most recently used
		t.Fatal("a forgotten while within bounds")
	}
	r.Remember("c", "image/png", []byte("1")) // 14 bytes with the keys: the least recently used goes
	if _, ok := r.get("b"); ok {
		t.Fatal("b kept past the byte budget")
	}
	if o, ok := r.get("c"); !ok || string(o.data) != "1" {
		t.Fatal("c lost")
	}
	now = now.Add(2 * time.Minute)
	if _, ok := r.get("a"); ok {
		t.Fatal("a kept past its age")
	}
	r.Remember("big", "image/png", make([]byte, 11))
	if _, ok := r.get("big"); ok {
		t.Fatal("an image larger than the whole budget was kept")
	}
	off := NewRecentOutputs(-1)
	off.Remember("x", "image/png", []byte("1"))
	if _, ok := off.get("x"); ok {
		t.Error("a memory turned off kept an image")
	}
}
