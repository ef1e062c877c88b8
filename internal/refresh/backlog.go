package refresh

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"github.com/redis/go-redis/v9"
)

// Entry is one dirty area of a cache waiting for its refresh job.
type Entry struct {
	// At is when it was recorded (kept in the list item's prefix).
	At time.Time `json:"-"`
	// Source is the layer key the change came from, or "expire" for an operator's expire.
	Source string `json:"source"`
	// Envelopes are in the map's spatial reference.
	Envelopes []orb.Bound `json:"envelopes,omitempty"`
	// Polygons are areas in the map's spatial reference whose tiles (their tile cover at
	// every level, not widened) are refreshed: an operator's expire by polygon.
	Polygons []orb.Polygon `json:"polygons,omitempty"`
	// Folders are the cache folders to refresh (the layer's, or the fused one); none: all.
	Folders []string `json:"folders,omitempty"`
	// Whole makes the whole cache dirty (a replaced GeoJSON file, a changelog past its cap).
	Whole bool `json:"whole,omitempty"`
	// Force makes the cache due at once, whatever its refresh policy (an operator's expire).
	Force bool `json:"force,omitempty"`
}

// DefaultCap is the most entries a cache's backlog holds; past it the whole cache is dirty
// (one entry, however many changes follow), so the backlog's size is bounded.
const DefaultCap = 10_000

// Backlog is the dirty areas of every cache, in Redis, waiting for their refresh jobs. It is
// safe for concurrent use; Add may be called by many processes, Take and Done by one
// coordinator at a time per cache (the coordinator's refresh lock).
type Backlog struct {
	rdb redis.UniversalClient
	// Cap is the most entries per cache (default DefaultCap).
	Cap int64
}

// NewBacklog returns the backlog stored in rdb.
func NewBacklog(rdb redis.UniversalClient) *Backlog { return &Backlog{rdb: rdb, Cap: DefaultCap} }

// CacheKey names a map's cache in the backlog: "<service>/<map>".
func CacheKey(service, mapName string) string { return service + "/" + mapName }

const keyCaches = "mapfarm:refresh:caches"

func keyList(cache string) string  { return "mapfarm:refresh:backlog:" + cache }
func keyState(cache string) string { return "mapfarm:refresh:state:" + cache }

// addScript records an entry: past the cap (or for a whole-cache entry) only the state's
// "whole" time is set, once; the cache's oldest time is set if it had none.
var addScript = redis.NewScript(`
if ARGV[5] == '1' or redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  redis.call('HSETNX', KEYS[3], 'whole', ARGV[2])
else
  redis.call('RPUSH', KEYS[1], ARGV[3])
end
if ARGV[6] == '1' then redis.call('HSETNX', KEYS[3], 'force', ARGV[2]) end
redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1])
return 1
`)

// Add records an entry for a cache.
func (b *Backlog) Add(ctx context.Context, cache string, e Entry) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("refresh: encode backlog entry: %w", err)
	}
	ms := e.At.UnixMilli()
	flag := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	item := strconv.FormatInt(ms, 10) + "|" + string(body)
	err = addScript.Run(ctx, b.rdb, []string{keyList(cache), keyCaches, keyState(cache)},
		cache, ms, item, max(b.Cap, 1), flag(e.Whole), flag(e.Force)).Err()
	if err != nil {
		return fmt.Errorf("refresh: add to the backlog of %s: %w", cache, err)
	}
	return nil
}

// Waiting is a cache's backlog as Pending reports it.
type Waiting struct {
	Cache string `json:"cache"`
	// Entries is the number of dirty areas waiting (each one change batch or expire).
	Entries int64 `json:"entries"`
	// Oldest is when the oldest of them was recorded.
	Oldest time.Time `json:"oldest"`
	// Whole: the whole cache is dirty; Forced: an expire made it due at once.
	Whole  bool `json:"whole,omitempty"`
	Forced bool `json:"forced,omitempty"`
	// LastJob is when the cache's last refresh job was submitted (zero: never).
	LastJob time.Time `json:"lastJob,omitzero"`
}

// Pending returns every cache with something waiting, oldest first.
func (b *Backlog) Pending(ctx context.Context) ([]Waiting, error) {
	zs, err := b.rdb.ZRangeWithScores(ctx, keyCaches, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("refresh: list the backlog: %w", err)
	}
	out := make([]Waiting, 0, len(zs))
	for _, z := range zs {
		cache, _ := z.Member.(string)
		w := Waiting{Cache: cache, Oldest: time.UnixMilli(int64(z.Score))}
		pipe := b.rdb.Pipeline()
		n := pipe.LLen(ctx, keyList(cache))
		st := pipe.HGetAll(ctx, keyState(cache))
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, fmt.Errorf("refresh: read the backlog of %s: %w", cache, err)
		}
		w.Entries = n.Val()
		h := st.Val()
		w.Whole, w.Forced = h["whole"] != "", h["force"] != ""
		if ms, err := strconv.ParseInt(h["last"], 10, 64); err == nil {
			w.LastJob = time.UnixMilli(ms)
		}
		out = append(out, w)
	}
	return out, nil
}

// Taken is what Take read of a cache's backlog; nothing is removed until Done.
type Taken struct {
	Entries []Entry
	// Whole: the whole cache is dirty.
	Whole       bool
	whole, done string // the state's "whole" and "force" times as read
	n           int64
}

// Take reads at most max of a cache's oldest entries.
func (b *Backlog) Take(ctx context.Context, cache string, max int64) (*Taken, error) {
	pipe := b.rdb.Pipeline()
	items := pipe.LRange(ctx, keyList(cache), 0, max-1)
	st := pipe.HGetAll(ctx, keyState(cache))
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("refresh: read the backlog of %s: %w", cache, err)
	}
	t := &Taken{n: int64(len(items.Val())), whole: st.Val()["whole"], done: st.Val()["force"]}
	t.Whole = t.whole != ""
	for _, it := range items.Val() {
		ms, body, ok := strings.Cut(it, "|")
		var e Entry
		if !ok || json.Unmarshal([]byte(body), &e) != nil {
			continue // not an entry of this layout: dropped with the others
		}
		at, _ := strconv.ParseInt(ms, 10, 64)
		e.At = time.UnixMilli(at)
		t.Whole = t.Whole || e.Whole
		t.Entries = append(t.Entries, e)
	}
	return t, nil
}

// doneScript removes what was taken: the entries, the whole and force marks if they did not
// change since, and the cache from the set when nothing is left (else its oldest time becomes
// the new head's).
var doneScript = redis.NewScript(`
redis.call('LTRIM', KEYS[1], tonumber(ARGV[2]), -1)
if ARGV[3] ~= '' and redis.call('HGET', KEYS[3], 'whole') == ARGV[3] then redis.call('HDEL', KEYS[3], 'whole') end
if ARGV[4] ~= '' and redis.call('HGET', KEYS[3], 'force') == ARGV[4] then redis.call('HDEL', KEYS[3], 'force') end
redis.call('HSET', KEYS[3], 'last', ARGV[5])
local oldest = nil
local head = redis.call('LINDEX', KEYS[1], 0)
if head then oldest = tonumber(string.match(head, '^(%d+)|')) end
local w = redis.call('HGET', KEYS[3], 'whole')
if w then
  w = tonumber(w)
  if oldest == nil or w < oldest then oldest = w end
end
if oldest == nil then
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[2], oldest, ARGV[1])
end
return 1
`)

// Done removes what t took from a cache's backlog, once its refresh job is stored, and
// records the job's time.
func (b *Backlog) Done(ctx context.Context, cache string, t *Taken, now time.Time) error {
	err := doneScript.Run(ctx, b.rdb, []string{keyList(cache), keyCaches, keyState(cache)},
		cache, t.n, t.whole, t.done, now.UnixMilli()).Err()
	if err != nil {
		return fmt.Errorf("refresh: remove taken entries of %s: %w", cache, err)
	}
	return nil
}
