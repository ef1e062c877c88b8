package blob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// newMinIO returns a store on a new bucket of the test MinIO server.
func newMinIO(t testing.TB, transport http.RoundTripper) *blob.MinIO {
	t.Helper()
	ep := testenv.MinIO(t)
	m, err := blob.NewMinIO(t.Context(), blob.MinIOConfig{
		Endpoint:     ep.Endpoint,
		AccessKey:    ep.AccessKey,
		SecretKey:    ep.SecretKey,
		Bucket:       testenv.Bucket(t),
		CreateBucket: true,
		Transport:    transport,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMinIOConformance(t *testing.T) {
	testenv.MinIO(t) // skip or fail once, not per case
	runConformance(t, func(t *testing.T) blob.Store { return newMinIO(t, nil) })
}

// recorder is an http.RoundTripper that records the requests it carries.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []string // "METHOD path Range"
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, fmt.Sprintf("%s %s %s", req.Method, req.URL.Path, req.Header.Get("Range")))
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs := r.reqs
	r.reqs = nil
	return reqs
}

// TestMinIOGetRangeIsOneRequest checks the bundle-read contract: one ranged
// GET per GetRange, even as the first call after NewMinIO.
func TestMinIOGetRangeIsOneRequest(t *testing.T) {
	rec := &recorder{}
	tr, err := minio.DefaultTransport(false)
	if err != nil {
		t.Fatal(err)
	}
	rec.next = tr
	m := newMinIO(t, rec)
	mustPut(t, m, "b/R0000C0000.bundle", pattern(4096, 5), "")
	rec.take()

	m2, err := blob.NewMinIO(t.Context(), blob.MinIOConfig{
		Endpoint: testenv.MinIO(t).Endpoint, AccessKey: testenv.MinIO(t).AccessKey,
		SecretKey: testenv.MinIO(t).SecretKey, Bucket: m.Bucket(), Transport: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec.take()
	for _, s := range []*blob.MinIO{m2, m} {
		got, err := s.GetRange(t.Context(), "b/R0000C0000.bundle", 100, 16)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, pattern(4096, 5)[100:116]) {
			t.Errorf("GetRange returned wrong bytes")
		}
		reqs := rec.take()
		want := fmt.Sprintf("GET /%s/b/R0000C0000.bundle bytes=100-115", m.Bucket())
		if len(reqs) != 1 || reqs[0] != want {
			t.Errorf("GetRange made requests %q, want exactly [%q]", reqs, want)
		}
	}
}

func TestNewMinIOErrors(t *testing.T) {
	ep := testenv.MinIO(t)
	ctx := t.Context()
	missing := testenv.Bucket(t)
	_, err := blob.NewMinIO(ctx, blob.MinIOConfig{
		Endpoint: ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: ep.SecretKey, Bucket: missing,
	})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("NewMinIO on a missing bucket without CreateBucket: %v", err)
	}
	_, err = blob.NewMinIO(ctx, blob.MinIOConfig{
		Endpoint: ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: "wrong-secret", Bucket: missing, CreateBucket: true,
	})
	if err == nil {
		t.Error("NewMinIO with a wrong secret key succeeded")
	}
	// minio-go retries the failed TLS handshake; a short deadline ends it.
	tlsCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = blob.NewMinIO(tlsCtx, blob.MinIOConfig{
		Endpoint: "https://" + ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: ep.SecretKey, Bucket: missing,
	})
	if err == nil {
		t.Error("NewMinIO with https:// against a plain-HTTP server succeeded")
	}
	if _, err := blob.NewMinIO(ctx, blob.MinIOConfig{Bucket: "x"}); err == nil {
		t.Error("NewMinIO without an endpoint succeeded")
	}
	if _, err := blob.NewMinIO(ctx, blob.MinIOConfig{Endpoint: ep.Endpoint}); err == nil {
		t.Error("NewMinIO without a bucket succeeded")
	}
	// A URL-style endpoint is accepted, and CreateBucket is idempotent.
	for range 2 {
		m, err := blob.NewMinIO(ctx, blob.MinIOConfig{
			Endpoint: "http://" + ep.Endpoint + "/", AccessKey: ep.AccessKey, SecretKey: ep.SecretKey,
			Bucket: missing, CreateBucket: true,
		})
		if err != nil {
			t.Fatalf("NewMinIO with an http:// endpoint: %v", err)
		}
		mustPut(t, m, "k", []byte("v"), "")
	}
}

// TestNewMinIOConcurrentCreate checks that processes starting together can
// all ask for the same bucket to be created.
func TestNewMinIOConcurrentCreate(t *testing.T) {
	ep := testenv.MinIO(t)
	bucket := testenv.Bucket(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = blob.NewMinIO(t.Context(), blob.MinIOConfig{
				Endpoint: ep.Endpoint, AccessKey: ep.AccessKey, SecretKey: ep.SecretKey,
				Bucket: bucket, CreateBucket: true,
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("NewMinIO %d: %v", i, err)
		}
	}
}

// TestMinIOBucketGone checks that a bucket removed under a running store
// gives errors, and that a missing bucket is not reported as a missing key.
func TestMinIOBucketGone(t *testing.T) {
	ep := testenv.MinIO(t)
	m := newMinIO(t, nil)
	c, err := minio.New(ep.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(ep.AccessKey, ep.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveBucket(t.Context(), m.Bucket()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := m.Get(ctx, "k"); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get in a removed bucket: %v, want an error other than fs.ErrNotExist", err)
	}
	if err := m.Put(ctx, "k", []byte("v"), ""); err == nil {
		t.Error("Put in a removed bucket succeeded")
	}
	if err := m.Delete(ctx, "k"); err == nil {
		t.Error("Delete in a removed bucket succeeded")
	}
	called := false
	err = m.List(ctx, "", func(blob.Info) error { called = true; return nil })
	if err == nil || called || !strings.Contains(err.Error(), "blob: list") {
		t.Errorf("List in a removed bucket: %v (callback called: %v)", err, called)
	}
}

// TestMinIOListSkipsDirectoryMarkers checks that the empty "dir/" objects
// some S3 tools create are not listed as keys.
func TestMinIOListSkipsDirectoryMarkers(t *testing.T) {
	ep := testenv.MinIO(t)
	m := newMinIO(t, nil)
	c, err := minio.New(ep.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(ep.AccessKey, ep.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(t.Context(), m.Bucket(), "dir/", strings.NewReader(""), 0, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, m, "dir/a", []byte("x"), "")
	if keys := listKeys(t, m, ""); len(keys) != 1 || keys[0] != "dir/a" {
		t.Errorf("List = %q, want only dir/a", keys)
	}
}

// BenchmarkMinIORead reads on MinIO over loopback, 16 concurrent readers: a whole 12 KiB
// object (an exploded tile), 12 KiB ranges of a 128 KiB and of a 16 MiB object (a tile of a
// compact bundle), and 256 KiB and 1 MiB aligned ranges of the 16 MiB object (pages of the
// tile page cache). It mostly measures the MinIO server's cost per request, which depends on
// the object's size more than on the range's (see docs/tile-caches.md).
//
//	go test ./internal/blob -run '^$' -bench MinIORead -benchtime 3000x
func BenchmarkMinIORead(b *testing.B) {
	m := newMinIO(b, nil)
	ctx := context.Background()
	for _, bc := range []struct {
		name         string
		object, read int
	}{
		{"object=12KiB/read=whole", 12 << 10, 12 << 10},
		{"object=128KiB/read=12KiB", 128 << 10, 12 << 10},
		{"object=16MiB/read=12KiB", 16 << 20, 12 << 10},
		{"object=16MiB/read=256KiB", 16 << 20, 256 << 10},
		{"object=16MiB/read=1MiB", 16 << 20, 1 << 20},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := bytes.Repeat([]byte("0123456789abcdef"), bc.object/16)
			if err := m.Put(ctx, "bench/object", data, ""); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(bc.read))
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					var got []byte
					var err error
					if bc.read == bc.object {
						got, err = m.Get(ctx, "bench/object")
					} else {
						// Aligned to the read size: pages; else a tile-like offset.
						off := int64(i*7919*bc.read) % int64(bc.object-bc.read)
						if bc.read >= 256<<10 {
							off = int64(i%(bc.object/bc.read)) * int64(bc.read)
						}
						got, err = m.GetRange(ctx, "bench/object", off, int64(bc.read))
					}
					if err != nil || len(got) != bc.read {
						b.Errorf("read %d bytes, %v", len(got), err)
						return
					}
					i++
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reads/s")
		})
	}
}
