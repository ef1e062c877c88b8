package worker

import (
	"testing"
	"time"
)

// The release follows the last heavy render of a burst, not each one, and one that comes within
// the interval of the previous release is put off to its end, not dropped.
func TestMemoryReleaser(t *testing.T) {
	freed := make(chan time.Time, 8)
	m := newMemoryReleaser(300*time.Millisecond, func() bool { freed <- time.Now(); return true })
	defer m.stop()
	m.start()
	m.start()
	m.done()
	select {
	case <-freed:
		t.Fatal("memory was released while a heavy render was still in progress")
	case <-time.After(100 * time.Millisecond):
	}
	m.done()
	var first time.Time
	select {
	case first = <-freed:
	case <-time.After(5 * time.Second):
		t.Fatal("no release after the last heavy render ended")
	}
	m.start()
	m.done()
	select {
	case at := <-freed:
		if gap := at.Sub(first); gap < 300*time.Millisecond {
			t.Errorf("two releases %v apart, want at least the interval (300ms)", gap)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a release due within the interval of the last one was dropped")
	}
	if n := m.releases(); n != 2 {
		t.Errorf("%d releases, want 2", n)
	}
	never := newMemoryReleaser(-1, func() bool { t.Error("released with a negative interval"); return true })
	never.start()
	never.done()
	time.Sleep(50 * time.Millisecond)
}

// A worker going to sleep releases at once what a heavy render left, even within the interval,
// and only then.
func TestMemoryReleaserIdle(t *testing.T) {
	freed := make(chan struct{}, 8)
	m := newMemoryReleaser(time.Hour, func() bool { freed <- struct{}{}; return true })
	defer m.stop()
	m.idle()
	if n := m.releases(); n != 0 {
		t.Fatalf("%d releases before any heavy render, want 0", n)
	}
	m.start()
	m.done() // the first release is due at once
	select {
	case <-freed:
	case <-time.After(5 * time.Second):
		t.Fatal("no release after the first heavy render")
	}
	m.start()
	m.done() // the next one is an hour away
	m.idle()
	if n := m.releases(); n != 2 {
		t.Errorf("%d releases after going idle, want 2", n)
	}
	m.idle()
	if n := m.releases(); n != 2 {
		t.Errorf("%d releases after going idle twice with nothing new, want still 2", n)
	}
}
