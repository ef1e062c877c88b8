package coordinator

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// One reaper pass deletes the outputs older than their time to live and keeps the rest and
// everything outside the outputs prefix.
func testReaper(t *testing.T, store interface {
	Store
	Put(ctx context.Context, key string, data []byte, contentType string) error
	Get(ctx context.Context, key string) ([]byte, error)
}) {
	ctx := context.Background()
	for _, k := range []string{"outputs/a.png", "outputs/b.png", "caches/keep.png"} {
		if err := store.Put(ctx, k, []byte("x"), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	r := &outputReaper{store: store, prefix: "outputs/", ttl: time.Minute, logger: slog.Default()}
	if n := r.exec(ctx, time.Now()); n != 0 {
		t.Fatalf("fresh outputs: deleted %d, want 0", n)
	}
	if n := r.exec(ctx, time.Now().Add(2*time.Minute)); n != 2 {
		t.Fatalf("expired outputs: deleted %d, want 2", n)
	}
	for _, k := range []string{"outputs/a.png", "outputs/b.png"} {
		if _, err := store.Get(ctx, k); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there (%v)", k, err)
		}
	}
	if _, err := store.Get(ctx, "caches/keep.png"); err != nil {
		t.Errorf("a cache object was deleted: %v", err)
	}
}

func TestReaperDisk(t *testing.T) {
	d, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testReaper(t, d)
}

func TestReaperMinIO(t *testing.T) {
	mi := testenv.MinIO(t)
	m, err := blob.NewMinIO(context.Background(), blob.MinIOConfig{Endpoint: mi.Endpoint, AccessKey: mi.AccessKey, SecretKey: mi.SecretKey, Bucket: testenv.Bucket(t), CreateBucket: true})
	if err != nil {
		t.Fatal(err)
	}
	testReaper(t, m)
}
