// Package refresh keeps tile caches true to their data. It holds the two pieces of the change
// driven refresh that sit between the change capture (internal/changes) and seeding
// (internal/seed), so that the Redis layout of both is written down in one place
// (docs/freshness.md):
//
//	mapfarm:refresh:caches              ZSET  "<service>/<map>" → age (unix ms) of its oldest
//	                                          dirty area still waiting
//	mapfarm:refresh:backlog:<s>/<m>     LIST  dirty areas waiting for a refresh job, oldest
//	                                          first, each "<unix ms>|<JSON Entry>"
//	mapfarm:refresh:state:<s>/<m>       HASH  "whole": unix ms since the whole cache is dirty
//	                                          (past the backlog's cap); "force": unix ms of an
//	                                          expire, due whatever the policy; "last": unix ms
//	                                          of the last refresh job submitted
//	mapfarm:tiles:invalidate            pub/sub channel of Invalidation messages
//
// The Backlog is the durable hand-over between a change consumer, which acknowledges its
// changes only once they are in it, and the coordinator's refresh pass, which turns them into
// seeding jobs. The invalidation channel tells every api, at once, which tiles a job (or a
// bundle write) changed, so that none serves a tile it remembered from before.
package refresh

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Channel is the Redis pub/sub channel of Invalidation messages.
const Channel = "mapfarm:tiles:invalidate"

// Invalidation names the tiles of one cache root (seed.CacheRoot) whose stored bytes changed:
// those of Ranges in the cache folders Folders. No folders means every folder of the root, no
// ranges every tile: then the root's metadata (conf.xml) may have changed too.
type Invalidation struct {
	Root    string                `json:"root"`
	Folders []string              `json:"folders,omitempty"`
	Ranges  []tilecache.TileRange `json:"ranges,omitempty"`
}

// MaxRanges bounds the ranges of one message; a longer list is sent as every tile of its
// folders (a superset, so nothing stale is kept).
const MaxRanges = 4096

// folder reports whether the message covers a cache folder.
func (v Invalidation) folder(f string) bool {
	if len(v.Folders) == 0 {
		return true
	}
	for _, x := range v.Folders {
		if x == f {
			return true
		}
	}
	return false
}

// Covers reports whether the message covers tile t of folder f of its root.
func (v Invalidation) Covers(f string, t tilecache.Tile) bool {
	if !v.folder(f) {
		return false
	}
	if len(v.Ranges) == 0 {
		return true
	}
	for _, r := range v.Ranges {
		if r.Contains(t) {
			return true
		}
	}
	return false
}

// CoversBundle reports whether the message covers a tile of bundle b of folder f.
func (v Invalidation) CoversBundle(f string, b tilecache.Bundle) bool {
	if !v.folder(f) {
		return false
	}
	if len(v.Ranges) == 0 {
		return true
	}
	br := tilecache.TileRange{Level: b.TopLeft.Level, MinRow: b.TopLeft.Row, MinCol: b.TopLeft.Col,
		MaxRow: b.TopLeft.Row + tilecache.BundleSize - 1, MaxCol: b.TopLeft.Col + tilecache.BundleSize - 1}
	for _, r := range v.Ranges {
		if r.Level == br.Level && r.MinRow <= br.MaxRow && br.MinRow <= r.MaxRow && r.MinCol <= br.MaxCol && br.MinCol <= r.MaxCol {
			return true
		}
	}
	return false
}

// Whole reports whether the message covers every tile of its root (a truncate of everything,
// a job of the whole map): the root's metadata may have changed too.
func (v Invalidation) Whole() bool { return len(v.Folders) == 0 && len(v.Ranges) == 0 }

// under splits key into the cache folder and the rest when key is "<root>/<folder>/<rest>".
func (v Invalidation) under(key string) (folder, rest string, ok bool) {
	after, ok := strings.CutPrefix(key, v.Root+"/")
	if !ok {
		return "", "", false
	}
	return strings.Cut(after, "/")
}

// CoversTileKey reports whether the message covers a key "<root>/<folder>/<level>/<row>/<col>"
// (the served-tile memory's keys: Cache.Dir and Tile.String).
func (v Invalidation) CoversTileKey(key string) bool {
	f, rest, ok := v.under(key)
	if !ok {
		return false
	}
	t, err := tilecache.ParseTile(rest)
	return err == nil && v.Covers(f, t)
}

// CoversTilePath reports whether the message covers a key "<root>/<folder>/Lnn/Rxxxxxxxx/Cxxxxxxxx.ext"
// (an exploded tile's key, and the directory route's path below its prefix).
func (v Invalidation) CoversTilePath(key string) bool {
	f, rest, ok := v.under(key)
	if !ok {
		return false
	}
	t, _, err := tilecache.ParseTilePath(rest)
	return err == nil && v.Covers(f, t)
}

// CoversBundleKey reports whether the message covers a compact bundle's key
// "<root>/<folder>/Lnn/RrrrrCcccc.bundle" (the bundle-index cache's keys).
func (v Invalidation) CoversBundleKey(key string) bool {
	f, rest, ok := v.under(key)
	if !ok {
		return false
	}
	b, err := tilecache.ParseBundlePath(rest)
	return err == nil && v.CoversBundle(f, b)
}

// Publish sends the message to every subscribed api. Ranges past MaxRanges are dropped for
// every tile of the folders.
func Publish(ctx context.Context, rdb redis.UniversalClient, v Invalidation) error {
	if len(v.Ranges) > MaxRanges {
		v.Ranges = nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("refresh: encode invalidation: %w", err)
	}
	if err := rdb.Publish(ctx, Channel, b).Err(); err != nil {
		return fmt.Errorf("refresh: publish invalidation of %s: %w", v.Root, err)
	}
	return nil
}

// Subscribe calls handle with every message of the channel until ctx ends. ready, when not nil,
// is called once the subscription is confirmed. Messages sent while the subscription's
// connection is down are lost; what an api keeps is then dropped by its own trust windows
// (docs/freshness.md).
func Subscribe(ctx context.Context, rdb redis.UniversalClient, ready func(), handle func(Invalidation)) error {
	sub := rdb.Subscribe(ctx, Channel)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("refresh: subscribe to %s: %w", Channel, err)
	}
	if ready != nil {
		ready()
	}
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case m, ok := <-ch:
			if !ok {
				return nil
			}
			var v Invalidation
			if err := json.Unmarshal([]byte(m.Payload), &v); err != nil || v.Root == "" {
				continue
			}
			handle(v)
		}
	}
}
