package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// The api's memory release after large request bodies (docs/limits.md, "What an api process
// needs"): the SOAP decoder charges a request at most maxDecodedBytes, but a burst of 8 MB
// bodies (hostile or not) still takes the heap up by 100 MB or more while it lasts, and Go's
// runtime gives the freed pages back to the operating system only slowly: its background
// scavenger returns memory above about 110% of the heap goal, and the heap goal stays where the
// burst left it until the next collection. An api that has just answered a few such bodies
// therefore kept 110–160 MB of RSS for minutes with 30–40 MB of live heap (BenchmarkSoak).
//
// memoryRelease returns it once per burst: when no body of at least largeBodyBytes has been read
// for releaseQuiet and none is being read, it waits for a moment with no request in flight (at
// most releaseWaitIdle) and calls debug.FreeOSMemory, which collects and returns every free
// page at once. The release costs one full collection of a small heap (a few milliseconds of
// CPU, mostly concurrent) and holds the runtime's heap lock while it returns the pages; waiting
// for no request in flight keeps that pause away from the requests themselves, and ordinary
// traffic (bodies of a few KiB) never calls for a release.
const (
	largeBodyBytes  = 1 << 20
	releaseQuiet    = 2 * time.Second
	releaseWaitIdle = time.Second
	releaseRetry    = 20 * time.Millisecond
)

// memoryRelease is the gin middleware that tracks requests and releases memory after large
// bodies. Its zero value is not usable; see newMemoryRelease.
type memoryRelease struct {
	quiet, waitIdle time.Duration
	// free returns free memory to the OS; debug.FreeOSMemory in a server.
	free   func()
	logger *slog.Logger

	mu         sync.Mutex
	inFlight   int       // requests in progress
	largeNow   int       // requests in progress that have read largeBodyBytes or more
	lastLarge  time.Time // when the last large body was done with
	dirty      bool      // a large body has been read since the last release
	timer      *time.Timer
	waitingFor time.Time // when the release started waiting for no request in flight; zero: not waiting
	released   int       // releases done, for tests
}

func newMemoryRelease(logger *slog.Logger) *memoryRelease {
	return &memoryRelease{quiet: releaseQuiet, waitIdle: releaseWaitIdle, free: debug.FreeOSMemory, logger: logger}
}

// track is the middleware: it counts the request in flight and the bytes its handler reads
// from the body.
func (m *memoryRelease) track(c *gin.Context) {
	var body *countingBody // nil for a request without a body (most GETs): nothing to count
	if b := c.Request.Body; b != nil && b != http.NoBody {
		body = &countingBody{ReadCloser: b, m: m}
		c.Request.Body = body
	}
	m.mu.Lock()
	m.inFlight++
	m.mu.Unlock()
	defer m.end(body)
	c.Next()
}

// countingBody counts what a handler reads and tells memoryRelease when the body has become
// large, so that no release starts while it is still being decoded.
type countingBody struct {
	io.ReadCloser
	m     *memoryRelease
	n     int64
	large bool
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if !b.large && b.n >= largeBodyBytes {
		b.large = true
		b.m.mu.Lock()
		b.m.largeNow++
		b.m.dirty = true
		b.m.mu.Unlock()
	}
	return n, err
}

// end notes a request done, and schedules a release after a large one.
func (m *memoryRelease) end(b *countingBody) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
	if b != nil && b.large {
		m.largeNow--
		m.lastLarge = time.Now()
	}
	if m.dirty && m.timer == nil && m.largeNow == 0 {
		m.timer = time.AfterFunc(m.quiet, m.tryRelease)
	}
}

// tryRelease releases when the burst is over: no large body for quiet and none in flight, and
// no request in flight at all, or none for a moment in waitIdle; otherwise it tries again.
func (m *memoryRelease) tryRelease() {
	m.mu.Lock()
	if m.largeNow > 0 { // its end schedules the next try
		m.timer, m.waitingFor = nil, time.Time{}
		m.mu.Unlock()
		return
	}
	if wait := m.quiet - time.Since(m.lastLarge); wait > 0 {
		m.timer.Reset(wait)
		m.waitingFor = time.Time{}
		m.mu.Unlock()
		return
	}
	now := time.Now()
	if m.waitingFor.IsZero() {
		m.waitingFor = now
	}
	if m.inFlight > 0 && now.Sub(m.waitingFor) < m.waitIdle {
		m.timer.Reset(releaseRetry)
		m.mu.Unlock()
		return
	}
	m.timer, m.waitingFor, m.dirty = nil, time.Time{}, false
	m.released++
	inFlight := m.inFlight
	m.mu.Unlock()

	start := time.Now()
	m.free()
	if m.logger != nil && m.logger.Enabled(context.Background(), slog.LevelDebug) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m.logger.Debug("released memory after large request bodies", "ms", float64(time.Since(start).Microseconds())/1000,
			"in_flight", inFlight, "heap_inuse_mb", ms.HeapInuse>>20, "heap_released_mb", ms.HeapReleased>>20, "sys_mb", ms.Sys>>20)
	}
}

// releases reports how many releases were done.
func (m *memoryRelease) releases() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.released
}
