package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// A worker on another store than the api's refuses to start, saying which; one on the api's
// store, or one started before any api, runs.
func TestStoreIdentity(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	apiStore, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherStore, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := checkStoreID(ctx, rdb, otherStore, "disk /elsewhere"); err != nil {
		t.Errorf("before any api published an identity: %v", err)
	}
	id, err := publishStoreID(ctx, rdb, apiStore)
	if err != nil || len(id) != 32 {
		t.Fatalf("publish: %q, %v", id, err)
	}
	if again, _ := publishStoreID(ctx, rdb, apiStore); again != id {
		t.Errorf("a second api on the same store published %q, the first %q", again, id)
	}
	if err := checkStoreID(ctx, rdb, apiStore, "disk /same"); err != nil {
		t.Errorf("a worker on the api's store: %v", err)
	}
	err = checkStoreID(ctx, rdb, otherStore, "disk /elsewhere")
	if err == nil || !strings.Contains(err.Error(), "disk /elsewhere") || !strings.Contains(err.Error(), "MAPFARM_STORE") {
		t.Errorf("a worker on another store: %v, want a refusal naming its store and the fix", err)
	}
}

// A worker that starts before its api waits for the api's identity instead of failing.
func TestStoreIdentityWaitsForTheAPI(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	ctx := context.Background()
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, storeIDKey, "left-by-an-earlier-farm", 0)
	go func() {
		time.Sleep(300 * time.Millisecond)
		if _, err := publishStoreID(ctx, rdb, store); err != nil {
			t.Error(err)
		}
	}()
	if err := waitStoreID(ctx, rdb, store, "disk /x", 5*time.Second, slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("a worker started before its api: %v", err)
	}
	other, _ := blob.NewDisk(t.TempDir())
	start := time.Now()
	if err := waitStoreID(ctx, rdb, other, "disk /y", 600*time.Millisecond, slog.New(slog.DiscardHandler)); err == nil || time.Since(start) < 500*time.Millisecond {
		t.Errorf("a worker on another store: %v after %v, want a refusal after the wait", err, time.Since(start))
	}
}
