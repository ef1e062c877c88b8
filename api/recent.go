package api

import (
	"time"

	"github.com/mapfarm/mapfarm/internal/memcache"
)

// RecentOutputs keeps the bytes of freshly rendered images for a short while, bounded in bytes
// (least recently used out first) and in age, so that their URLs answer at once, before (or
// while) the worker's write to the object store lands. It is an accelerator only: the store is
// always the source of truth.
type RecentOutputs struct {
	ttl     time.Duration
	now     func() time.Time
	outputs *memcache.Cache[string, recentOutput]
}

type recentOutput struct {
	contentType string
	data        []byte
	added       time.Time
}

// DefaultRecentOutputBytes is the recent-output memory of a Server given none (config
// Tiles.RecentBytes has the same default).
const DefaultRecentOutputBytes = 64 << 20

// NewRecentOutputs returns a cache holding at most maxBytes of images (config Tiles.RecentBytes;
// 0 or less keeps none), each for at most a minute: long enough for a client to fetch the URL it
// was just given.
func NewRecentOutputs(maxBytes int64) *RecentOutputs {
	return newRecentOutputs(maxBytes, time.Minute)
}

func newRecentOutputs(maxBytes int64, ttl time.Duration) *RecentOutputs {
	return &RecentOutputs{ttl: ttl, now: time.Now, outputs: memcache.New[string, recentOutput]("recent outputs", maxBytes)}
}

// Cache is the memory's cache, for metrics.
func (r *RecentOutputs) Cache() memcache.Statser { return r.outputs }

// Remember implements mapserver.RecentOutputs.
func (r *RecentOutputs) Remember(key, contentType string, data []byte) {
	r.outputs.Add(key, recentOutput{contentType: contentType, data: data, added: r.now()}, int64(len(data)+len(key)))
}

// get returns a remembered image that is still young.
func (r *RecentOutputs) get(key string) (recentOutput, bool) {
	o, ok := r.outputs.Get(key)
	if ok && r.now().Sub(o.added) > r.ttl {
		r.outputs.Remove(key)
		return recentOutput{}, false
	}
	return o, ok
}
