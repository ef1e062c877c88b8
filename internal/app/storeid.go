package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The store identity: a random id kept in the store (storeIDObject) and published in Redis
// (storeIDKey) by the api. A worker or coordinator reads both at start and refuses to run on a
// store that is not the api's: a worker writing to its local disk while the api reads MinIO
// would answer every render with an image URL that is a 404.
const (
	storeIDObject = "mapfarm/store-id"
	storeIDKey    = "mapfarm:store-id"
)

// idStore is what the identity check needs of a store.
type idStore interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// publishStoreID makes sure the store holds an identity and publishes it in Redis (the api).
func publishStoreID(ctx context.Context, rdb redis.UniversalClient, store idStore) (string, error) {
	id, err := store.Get(ctx, storeIDObject)
	if errors.Is(err, fs.ErrNotExist) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		id = []byte(hex.EncodeToString(b))
		if err := store.Put(ctx, storeIDObject, id, "text/plain"); err != nil {
			return "", fmt.Errorf("store identity: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("store identity: %w", err)
	}
	// Publish what the store holds now: of two apis starting on an empty store together, the
	// later write wins in the store, and each publishes what it reads back.
	if id, err = store.Get(ctx, storeIDObject); err != nil {
		return "", fmt.Errorf("store identity: %w", err)
	}
	if err := rdb.Set(ctx, storeIDKey, id, 0).Err(); err != nil {
		return "", fmt.Errorf("store identity: %w", err)
	}
	return string(id), nil
}

// waitStoreID checks the store identity until it matches or wait has passed: the processes of a
// farm start in any order, and an identity left in Redis by an earlier farm is replaced when this
// farm's api starts. A mismatch that lasts is the error checkStoreID gives.
func waitStoreID(ctx context.Context, rdb redis.UniversalClient, store idStore, where string, wait time.Duration, logger *slog.Logger) error {
	deadline := time.Now().Add(wait)
	for logged := false; ; logged = true {
		err := checkStoreID(ctx, rdb, store, where)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		if !logged {
			logger.Warn("waiting for the api to publish this store's identity", "store", where, "wait", wait.String(), "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkStoreID refuses a store that is not the one the farm's api published (a worker or
// coordinator). Before any api has published one there is nothing to check.
func checkStoreID(ctx context.Context, rdb redis.UniversalClient, store idStore, where string) error {
	want, err := rdb.Get(ctx, storeIDKey).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store identity: %w", err)
	}
	got, err := store.Get(ctx, storeIDObject)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store identity: %w", err)
	}
	if strings.TrimSpace(string(got)) != want {
		return fmt.Errorf("this process's store (%s) is not the farm's: the api's store holds identity %s, this one %q; "+
			"give every process the same MAPFARM_STORE and its settings (a worker on another store answers every render with a missing image)",
			where, want, strings.TrimSpace(string(got)))
	}
	return nil
}
