package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lease settings for RedisDB; see the package documentation.
const (
	firstDB       = 1
	numDBs        = 15
	leaseKeyFmt   = "mapfarm:testenv:db:%d"
	leaseTTL      = 20 * time.Second
	leaseRenew    = 5 * time.Second
	leaseWait     = 2 * time.Minute
	leaseMaxAlive = 6 * time.Hour // renewal stops after this, whatever happens
)

var dbClaim struct {
	sync.Mutex
	addr string
	db   int
}

// RedisDB returns the Redis database number this test binary owns on the
// server from [Redis], claiming and flushing it on the first call. Every call
// in one test binary returns the same number. The scheme is described in the
// package documentation.
func RedisDB(t testing.TB) int {
	t.Helper()
	addr := Redis(t)
	dbClaim.Lock()
	defer dbClaim.Unlock()
	if dbClaim.addr == addr {
		return dbClaim.db
	}
	db, err := claimDB(addr, PreferredDB(packageDir()))
	if err != nil {
		t.Fatalf("testenv: claim a Redis database on %s: %v", addr, err)
	}
	dbClaim.addr, dbClaim.db = addr, db
	return db
}

// PreferredDB is the database number, 1 to 15, that a package in directory
// dir (relative to the module root, slash-separated) tries first.
func PreferredDB(dir string) int {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return firstDB + int(h.Sum32()%numDBs)
}

// packageDir returns the working directory (go test runs each test binary in
// its package's directory) relative to the module root.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return filepath.ToSlash(wd)
			}
			return filepath.ToSlash(rel)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.ToSlash(wd)
		}
		dir = parent
	}
}

// claimDB leases a free database number on addr, starting at preferred, and
// flushes it. A goroutine renews the lease for the life of the process.
func claimDB(addr string, preferred int) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseWait+10*time.Second)
	defer cancel()
	ctl := redis.NewClient(&redis.Options{Addr: addr, DB: 0})
	token := randomHex(8)
	deadline := time.Now().Add(leaseWait)
	for time.Now().Before(deadline) {
		for i := range numDBs {
			db := firstDB + (preferred-firstDB+i)%numDBs
			ok, err := ctl.SetNX(ctx, fmt.Sprintf(leaseKeyFmt, db), token, leaseTTL).Result()
			if err != nil {
				ctl.Close()
				return 0, err
			}
			if !ok {
				continue
			}
			if err := flushDB(ctx, addr, db); err != nil {
				ctl.Del(ctx, fmt.Sprintf(leaseKeyFmt, db))
				ctl.Close()
				return 0, err
			}
			go renewLease(ctl, fmt.Sprintf(leaseKeyFmt, db), token)
			return db, nil
		}
		select {
		case <-ctx.Done():
			ctl.Close()
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	ctl.Close()
	return 0, errors.New("all 15 test databases stayed leased by other test binaries for 2m")
}

func flushDB(ctx context.Context, addr string, db int) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db})
	defer c.Close()
	return c.FlushDB(ctx).Err()
}

// renewScript extends the lease only while this process still holds it.
var renewScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// renewLease keeps the lease alive until the process exits (bounded by
// leaseMaxAlive). Errors are ignored: a lost lease only matters if another
// test binary then claims the same number, and it cannot while Redis is
// unreachable.
func renewLease(ctl *redis.Client, key, token string) {
	defer ctl.Close()
	stop := time.Now().Add(leaseMaxAlive)
	tick := time.NewTicker(leaseRenew)
	defer tick.Stop()
	for range tick.C {
		if time.Now().After(stop) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), leaseRenew)
		renewScript.Run(ctx, ctl, []string{key}, token, leaseTTL.Milliseconds())
		cancel()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
