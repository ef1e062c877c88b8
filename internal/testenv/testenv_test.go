package testenv

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/redis/go-redis/v9"
)

// fakeTB records Skipf and Fatalf instead of ending the test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

type abort struct{}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return "TestFake" }
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	panic(abort{})
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(abort{})
}

// call runs fn with a fakeTB and reports what it did.
func call(fn func(testing.TB)) (f *fakeTB) {
	f = &fakeTB{}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abort); !ok {
				panic(r)
			}
		}
	}()
	fn(f)
	return f
}

func TestMissingServicesSkipOrFail(t *testing.T) {
	for _, env := range []string{EnvRedis, EnvMinIOEndpoint, EnvMinIOAccessKey, EnvMinIOSecretKey, EnvPython} {
		t.Setenv(env, "")
	}
	helpers := map[string]func(testing.TB){
		"Redis":   func(tb testing.TB) { Redis(tb) },
		"RedisDB": func(tb testing.TB) { RedisDB(tb) },
		"MinIO":   func(tb testing.TB) { MinIO(tb) },
		"Bucket":  func(tb testing.TB) { Bucket(tb) },
		"Python":  func(tb testing.TB) { Python(tb) },
	}
	for name, fn := range helpers {
		t.Setenv(EnvRequireServices, "")
		f := call(fn)
		if f.skipped == "" || f.failed != "" || !strings.Contains(f.skipped, "scripts/test.sh") {
			t.Errorf("%s without services: skipped %q, failed %q; want a skip naming scripts/test.sh", name, f.skipped, f.failed)
		}
		t.Setenv(EnvRequireServices, "1")
		f = call(fn)
		if f.failed == "" || f.skipped != "" || !strings.Contains(f.failed, EnvRequireServices) {
			t.Errorf("%s with %s=1: skipped %q, failed %q; want a failure", name, EnvRequireServices, f.skipped, f.failed)
		}
	}
}

func TestPresentServicesAreReturned(t *testing.T) {
	t.Setenv(EnvRedis, "127.0.0.1:1")
	t.Setenv(EnvMinIOEndpoint, "127.0.0.1:2")
	t.Setenv(EnvMinIOAccessKey, "ak")
	t.Setenv(EnvMinIOSecretKey, "sk")
	t.Setenv(EnvPython, "/usr/bin/python3")
	if got := Redis(t); got != "127.0.0.1:1" {
		t.Errorf("Redis = %q", got)
	}
	if got := MinIO(t); got != (MinIOEndpoint{"127.0.0.1:2", "ak", "sk"}) {
		t.Errorf("MinIO = %+v", got)
	}
	if got := Python(t); got != "/usr/bin/python3" {
		t.Errorf("Python = %q", got)
	}
}

var bucketRE = regexp.MustCompile(`^mft-[a-z0-9]([a-z0-9-]*[a-z0-9])?-[0-9a-f]{8}$`)

func TestBucketName(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range []string{
		"TestX", "TestMinIOConformance/ListPrefix", "Test__weird--Name//x", "ÄÖÜ", "",
		strings.Repeat("TestVeryLongName", 10), "Test-", "a/b/c/d/e/f/g/h/i/j/k/l/m/n",
	} {
		b := BucketName(name)
		if len(b) < 3 || len(b) > 63 || !bucketRE.MatchString(b) || strings.Contains(b, "--") {
			t.Errorf("BucketName(%q) = %q, not a valid bucket name", name, b)
		}
		if seen[b] {
			t.Errorf("BucketName(%q) = %q repeated", name, b)
		}
		seen[b] = true
	}
	if a, b := BucketName("TestX"), BucketName("TestX"); a == b {
		t.Errorf("two calls gave the same name %q", a)
	}
}

func TestPreferredDB(t *testing.T) {
	counts := map[int]int{}
	for i := range 300 {
		db := PreferredDB(fmt.Sprintf("internal/pkg%d", i))
		if db < 1 || db > 15 {
			t.Fatalf("PreferredDB = %d, outside 1..15", db)
		}
		counts[db]++
	}
	if len(counts) != 15 {
		t.Errorf("300 packages used only %d of the 15 numbers", len(counts))
	}
	if PreferredDB("api") != PreferredDB("api") {
		t.Error("PreferredDB is not deterministic")
	}
	if got := packageDir(); got != "internal/testenv" {
		t.Errorf("packageDir() = %q, want internal/testenv", got)
	}
}

// TestRedisDB checks the lease scheme against the real server.
func TestRedisDB(t *testing.T) {
	addr := Redis(t)
	db := RedisDB(t)
	if db < 1 || db > 15 {
		t.Fatalf("RedisDB = %d, outside 1..15", db)
	}
	if again := RedisDB(t); again != db {
		t.Errorf("second RedisDB = %d, want %d", again, db)
	}
	ctl := redis.NewClient(&redis.Options{Addr: addr})
	defer ctl.Close()
	ctx := t.Context()
	ttl, err := ctl.PTTL(ctx, fmt.Sprintf(leaseKeyFmt, db)).Result()
	if err != nil || ttl <= 0 || ttl > leaseTTL {
		t.Errorf("lease on db %d has TTL %v (%v), want 0 < ttl <= %v", db, ttl, err, leaseTTL)
	}
}

// TestClaimDB checks that claimDB skips numbers leased by others, flushes
// the number it takes, and renews its lease.
func TestClaimDB(t *testing.T) {
	addr := Redis(t)
	ctx := t.Context()
	ctl := redis.NewClient(&redis.Options{Addr: addr})
	defer ctl.Close()

	// Lease every free number to a fake "other binary", then give one back
	// with a marker key in it: claimDB must take that one and flush it.
	owner := "other-" + randomHex(4)
	var held []int
	t.Cleanup(func() {
		for _, db := range held {
			ctl.Del(context.Background(), fmt.Sprintf(leaseKeyFmt, db))
		}
	})
	for db := 1; db <= 15; db++ {
		ok, err := ctl.SetNX(ctx, fmt.Sprintf(leaseKeyFmt, db), owner, time.Minute).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			held = append(held, db)
		}
	}
	if len(held) < 2 {
		t.Skip("fewer than 2 of the 15 test databases are free right now")
	}
	free := held[len(held)-1]
	held = held[:len(held)-1]
	c := redis.NewClient(&redis.Options{Addr: addr, DB: free})
	defer c.Close()
	if err := c.Set(ctx, "testenv:marker", "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Del(ctx, fmt.Sprintf(leaseKeyFmt, free)).Err(); err != nil {
		t.Fatal(err)
	}

	got, err := claimDB(addr, held[0])
	if err != nil {
		t.Fatal(err)
	}
	if got != free {
		t.Fatalf("claimDB took db %d, want %d, the only free one", got, free)
	}
	if n, err := c.Exists(ctx, "testenv:marker").Result(); err != nil || n != 0 {
		t.Errorf("claimed db %d still holds the marker (%d, %v): not flushed", got, n, err)
	}
	if o, err := ctl.Get(ctx, fmt.Sprintf(leaseKeyFmt, got)).Result(); err != nil || o == owner {
		t.Errorf("lease of db %d: owner %q, %v; want this process", got, o, err)
	}

	// Renewal brings a shortened TTL back up.
	if err := ctl.PExpire(ctx, fmt.Sprintf(leaseKeyFmt, got), 8*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * leaseRenew)
	for time.Now().Before(deadline) {
		ttl, _ := ctl.PTTL(ctx, fmt.Sprintf(leaseKeyFmt, got)).Result()
		if ttl > 8*time.Second {
			return // renewed
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("lease of db %d was not renewed within %v", got, 3*leaseRenew)
}

// TestBucketCleanup checks that a bucket from Bucket is removed, objects and
// all, when its test ends.
func TestBucketCleanup(t *testing.T) {
	ep := MinIO(t)
	c, err := minio.New(ep.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(ep.AccessKey, ep.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	var name string
	t.Run("uses a bucket", func(t *testing.T) {
		name = Bucket(t)
		if !bucketRE.MatchString(name) {
			t.Errorf("Bucket = %q", name)
		}
		if err := c.MakeBucket(t.Context(), name, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := c.PutObject(t.Context(), name, "a/b", strings.NewReader("x"), 1, minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
	})
	ok, err := c.BucketExists(t.Context(), name)
	if err != nil || ok {
		t.Errorf("bucket %q exists (%v, %v) after its test ended", name, ok, err)
	}
}
