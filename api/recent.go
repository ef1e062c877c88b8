package api

import (
	"container/list"
	"sync"
	"time"
)

// RecentOutputs keeps the bytes of freshly rendered images for a short while, bounded in bytes
// and age, so that their URLs answer at once, before (or while) the worker's write to the
// object store lands. It is an accelerator only: the store is always the source of truth.
type RecentOutputs struct {
	mu       sync.Mutex
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time
	bytes    int64
	order    *list.List // of *recentOutput, oldest first
	byKey    map[string]*list.Element
}

type recentOutput struct {
	key, contentType string
	data             []byte
	added            time.Time
}

// NewRecentOutputs returns a cache holding at most maxBytes of images (0 means 256 MiB), each
// for at most a minute: long enough for a client to fetch the URL it was just given.
func NewRecentOutputs(maxBytes int64) *RecentOutputs {
	if maxBytes <= 0 {
		maxBytes = 256 << 20
	}
	return newRecentOutputs(maxBytes, time.Minute)
}

func newRecentOutputs(maxBytes int64, ttl time.Duration) *RecentOutputs {
	return &RecentOutputs{maxBytes: maxBytes, ttl: ttl, now: time.Now, order: list.New(), byKey: map[string]*list.Element{}}
}

// Remember implements mapserver.RecentOutputs.
func (r *RecentOutputs) Remember(key, contentType string, data []byte) {
	if int64(len(data)) > r.maxBytes {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.byKey[key]; ok {
		r.remove(el)
	}
	r.byKey[key] = r.order.PushBack(&recentOutput{key: key, contentType: contentType, data: data, added: r.now()})
	r.bytes += int64(len(data))
	r.evict()
}

// get returns a remembered image that is still young.
func (r *RecentOutputs) get(key string) (*recentOutput, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evict()
	el, ok := r.byKey[key]
	if !ok {
		return nil, false
	}
	return el.Value.(*recentOutput), true
}

func (r *RecentOutputs) evict() {
	now := r.now()
	for el := r.order.Front(); el != nil; el = r.order.Front() {
		o := el.Value.(*recentOutput)
		if r.bytes <= r.maxBytes && now.Sub(o.added) <= r.ttl {
			return
		}
		r.remove(el)
	}
}

func (r *RecentOutputs) remove(el *list.Element) {
	o := el.Value.(*recentOutput)
	r.order.Remove(el)
	delete(r.byKey, o.key)
	r.bytes -= int64(len(o.data))
}
