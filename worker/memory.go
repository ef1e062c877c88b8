package worker

import (
	"sync"
	"time"
)

// memoryReleaser returns the memory freed by heavy renders to the operating system when the
// worker goes to sleep (idle), and, with a positive interval, also once the last heavy render in
// progress has finished, at most once per interval (a release that comes too soon is put off to
// the end of the interval, not dropped, so the last heavy render of a burst is followed by one).
//
// Releases while the worker works are off by default: a release collects (and, with no task in
// progress, returns every free page under the runtime's heap lock), and the ordinary renders
// beside it pay for it: in BenchmarkNormalBesideHeavy their p99 went from about 22 ms to
// 220–300 ms with a release every 10 s. Large images are not pooled, so between releases the
// runtime's own collections and scavenger return the memory of heavy renders over seconds.
//
// Go's runtime gives freed heap back on its own only slowly (its scavenger), and collects only
// when the heap grows or every two minutes, so without this a worker that drew a few
// 4096×4096 images stays at their peak RSS long after. debug.FreeOSMemory collects and returns
// everything free at once; it costs one full collection, a few milliseconds for a worker's heap.
type memoryReleaser struct {
	every time.Duration // not positive: only when idle
	// free releases memory and reports whether it returned all of it to the OS (false: only
	// collected, the runtime returns the rest over time); idle then releases again.
	free func() bool

	mu       sync.Mutex
	active   int // heavy renders in progress
	last     time.Time
	timer    *time.Timer
	stopped  bool
	dirty    bool // a heavy render has ended since the last release
	released int  // releases done, for tests
}

func newMemoryReleaser(every time.Duration, free func() bool) *memoryReleaser {
	return &memoryReleaser{every: every, free: free}
}

// start notes a heavy render starting.
func (m *memoryReleaser) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active++
}

// done notes a heavy render ending, and releases memory (now, or at the end of the interval)
// when it was the last one.
func (m *memoryReleaser) done() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active--
	m.dirty = true
	if m.active > 0 || m.every <= 0 || m.timer != nil || m.stopped {
		return
	}
	m.timer = time.AfterFunc(max(0, m.every-time.Since(m.last)), m.release)
}

// release returns free memory to the OS unless a heavy render has started meanwhile (its end
// will call for a release of its own).
func (m *memoryReleaser) release() {
	m.mu.Lock()
	m.timer = nil
	if m.active > 0 || m.stopped {
		m.mu.Unlock()
		return
	}
	m.last = time.Now()
	m.released++
	m.dirty = false
	m.mu.Unlock()
	if !m.free() {
		m.mu.Lock()
		m.dirty = true
		m.mu.Unlock()
	}
}

// idle releases at once, whatever the interval, when a heavy render has ended since the last
// release: the worker calls it as it goes to sleep, so an idle worker holds no memory of its
// last heavy renders.
func (m *memoryReleaser) idle() {
	m.mu.Lock()
	if !m.dirty || m.active > 0 || m.stopped {
		m.mu.Unlock()
		return
	}
	if m.timer != nil {
		m.timer.Stop()
	}
	m.mu.Unlock()
	m.release()
}

// stop cancels a release that is waiting.
func (m *memoryReleaser) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopped = true
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
}

// releases reports how many releases were done.
func (m *memoryReleaser) releases() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.released
}
