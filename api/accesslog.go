package api

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/bits"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The request log (docs/limits.md, "The request log"). Every request gets one line ("request")
// when it is done, except the tile hits: a GET or HEAD of the REST tile route, WMTS or the
// virtual cache directories answered 200 or 304. A map client asks for tens of tiles a second
// per user, and a line for each cost a cached tile more than the rest of its answer (see
// BenchmarkCachedTiles), so tile hits are aggregated instead: one "tile hits" line a second
// (when there were any) with their counts by route and status, their bytes, and their latency
// quantiles, plus the full line of one hit in tileLogSample (a sample, marked "sampled"). Every
// other answer of those routes (404, 400, 401, 500, a client gone: 499) has its line as before.

// DefaultTileLogSample is how many tile hits go by for one full "request" line of a hit.
const DefaultTileLogSample = 1000

// tileLogWindow is the span of one "tile hits" line.
const tileLogWindow = time.Second

// latency buckets of the tile-hit summary: four a power of two of microseconds, up to about
// 2^26 µs (67 s); a quantile is the upper bound of its bucket, so within 19% above the truth.
const (
	latencySubBuckets = 4
	latencyBuckets    = 27 * latencySubBuckets
)

// tileHits aggregates tile hits into a summary line a second. Its zero value is not usable; see
// newTileHits.
type tileHits struct {
	logger *slog.Logger
	sample uint64 // 1 in sample hits logs its full line; 1: every hit

	seen atomic.Uint64 // hits so far, for the sample

	mu      sync.Mutex
	start   time.Time // of the window; zero: no hit in it yet
	n       int
	byRoute [2]int // familyTiles, familyDirectory
	status  [2]int // 200, 304
	bytes   int64
	max     time.Duration
	buckets [latencyBuckets]uint32
}

func newTileHits(logger *slog.Logger, sample int) *tileHits {
	if sample <= 0 {
		sample = DefaultTileLogSample
	}
	return &tileHits{logger: logger, sample: uint64(sample)}
}

// isTileHit reports whether a request is a tile hit, aggregated rather than logged alone.
func isTileHit(f family, method string, status int) bool {
	return (f == familyTiles || f == familyDirectory) && (method == http.MethodGet || method == http.MethodHead) &&
		(status == http.StatusOK || status == http.StatusNotModified)
}

// add counts a tile hit done at now after took, and reports whether its full line is to be
// logged as the sample.
func (t *tileHits) add(f family, status int, size int, took time.Duration, now time.Time) (sampled bool) {
	t.mu.Lock()
	if !t.start.IsZero() && now.Sub(t.start) >= tileLogWindow {
		t.flushLocked(now)
	}
	if t.start.IsZero() {
		t.start = now
	}
	t.n++
	if f == familyDirectory {
		t.byRoute[1]++
	} else {
		t.byRoute[0]++
	}
	if status == http.StatusNotModified {
		t.status[1]++
	} else {
		t.status[0]++
	}
	if size > 0 {
		t.bytes += int64(size)
	}
	t.max = max(t.max, took)
	t.buckets[latencyBucket(took)]++
	t.mu.Unlock()
	return t.seen.Add(1)%t.sample == 0
}

// flush logs the summary of a window that is over at now (Server.Run calls it every window,
// and when it stops).
func (t *tileHits) flush(now time.Time, force bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.start.IsZero() && (force || now.Sub(t.start) >= tileLogWindow) {
		t.flushLocked(now)
	}
}

func (t *tileHits) flushLocked(now time.Time) {
	t.logger.LogAttrs(context.Background(), slog.LevelInfo, "tile hits",
		slog.Float64("window_s", roundMs(now.Sub(t.start))/1000),
		slog.Int("requests", t.n),
		slog.Int("tile", t.byRoute[0]), slog.Int("directory", t.byRoute[1]),
		slog.Int("status_200", t.status[0]), slog.Int("status_304", t.status[1]),
		slog.Int64("bytes", t.bytes),
		slog.Float64("p50_ms", t.quantileMs(0.50)), slog.Float64("p90_ms", t.quantileMs(0.90)),
		slog.Float64("p99_ms", t.quantileMs(0.99)), slog.Float64("max_ms", roundMs(t.max)),
		slog.Uint64("sample_1_in", t.sample))
	t.start, t.n, t.byRoute, t.status, t.bytes, t.max = time.Time{}, 0, [2]int{}, [2]int{}, 0, 0
	clear(t.buckets[:])
}

// quantileMs is the upper bound of the bucket holding quantile q of the window's latencies,
// never more than the largest.
func (t *tileHits) quantileMs(q float64) float64 {
	rank := uint32(q * float64(t.n))
	var seen uint32
	for i, c := range t.buckets {
		seen += c
		if c > 0 && seen > rank {
			return roundMs(min(latencyBucketTop(i), t.max))
		}
	}
	return roundMs(t.max)
}

// latencyBucket is the bucket of d: the power of two of its microseconds and the next two bits.
func latencyBucket(d time.Duration) int {
	us := uint64(max(d.Microseconds(), 0))
	if us < latencySubBuckets {
		return int(us)
	}
	exp := bits.Len64(us) - 1 // ≥ 2
	sub := int(us>>(exp-2)) & (latencySubBuckets - 1)
	return min((exp-1)*latencySubBuckets+sub, latencyBuckets-1)
}

// latencyBucketTop is the largest latency bucket i holds.
func latencyBucketTop(i int) time.Duration {
	if i < latencySubBuckets {
		return time.Duration(i) * time.Microsecond
	}
	exp := i/latencySubBuckets + 1
	sub := uint64(i % latencySubBuckets)
	lo := uint64(1)<<exp | sub<<(exp-2)
	return time.Duration(lo+uint64(1)<<(exp-2)-1) * time.Microsecond
}

func roundMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// requestIDs makes the ids of requests that come without a usable X-Request-Id: a random
// prefix per process and a counter, 32 hex digits like NewID's. They are unique (the prefix
// tells the api processes apart) but not secret, which a request id need not be, and they cost
// no system call: crypto/rand for every tile was a measurable share of a tile's answer.
type requestIDs struct {
	prefix [8]byte
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	ids := &requestIDs{}
	if _, err := rand.Read(ids.prefix[:]); err != nil {
		panic(fmt.Sprintf("api: crypto/rand failed: %v", err)) // the platform's CSPRNG never fails
	}
	return ids
}

// next returns a new id.
func (ids *requestIDs) next() string {
	var b [16]byte
	copy(b[:8], ids.prefix[:])
	binary.BigEndian.PutUint64(b[8:], ids.n.Add(1))
	var out [32]byte
	hex.Encode(out[:], b[:])
	return string(out[:])
}
