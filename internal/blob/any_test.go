package blob_test

import (
	"context"
	"testing"

	"github.com/mapfarm/mapfarm/internal/blob"
)

func TestAny(t *testing.T) {
	ctx := context.Background()
	d, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, d, "outputs/abc.png", []byte("png"), "image/png")
	mustPut(t, d, "outputs/abd.jpg", []byte("jpg"), "image/jpeg")
	notKey := func(key string) func(blob.Info) bool {
		return func(i blob.Info) bool { return i.Key != key }
	}
	for _, c := range []struct {
		prefix string
		match  func(blob.Info) bool
		want   bool
	}{
		{"outputs/", nil, true},
		{"outputs/abc.", nil, true},
		{"outputs/abc.", notKey("outputs/abc.png"), false},
		{"outputs/ab", notKey("outputs/abc.png"), true},
		{"outputs/zz", nil, false},
		{"other/", nil, false},
	} {
		got, err := blob.Any(ctx, d, c.prefix, c.match)
		if err != nil {
			t.Fatalf("Any(%q): %v", c.prefix, err)
		}
		if got != c.want {
			t.Errorf("Any(%q) = %v, want %v", c.prefix, got, c.want)
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := blob.Any(canceled, d, "outputs/", nil); err == nil {
		t.Error("Any with a canceled context: no error")
	}
}
