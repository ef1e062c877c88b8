// Package logwriter batches log lines on their way to a file (stderr): the api writes one
// structured line per request, and one write system call per line costs more than the request
// itself at tens of thousands of requests a second. A Writer copies each line into a buffer and
// writes the buffer out when it fills, every FlushInterval, and on Close. Lines are never split
// or reordered; a process killed outright loses at most the last interval's lines.
package logwriter

import (
	"io"
	"sync"
	"time"
)

// Defaults for New.
const (
	FlushInterval = 100 * time.Millisecond
	bufferSize    = 64 << 10
)

// Writer is a batching io.Writer, safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	out    io.Writer
	buf    []byte
	stop   chan struct{}
	done   chan struct{}
	closed bool
}

// New returns a Writer to out that flushes at least every interval (0 means FlushInterval).
func New(out io.Writer, interval time.Duration) *Writer {
	if interval <= 0 {
		interval = FlushInterval
	}
	w := &Writer{out: out, buf: make([]byte, 0, bufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop(interval)
	return w
}

// Write buffers p (one or more whole log lines). A line larger than the buffer goes straight
// out.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Write(p)
	}
	if len(w.buf)+len(p) > cap(w.buf) {
		if err := w.flushLocked(); err != nil {
			return 0, err
		}
		if len(p) > cap(w.buf) {
			return w.out.Write(p)
		}
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *Writer) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Flush writes out what is buffered.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) loop(interval time.Duration) {
	defer close(w.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.Flush()
		}
	}
}

// Close flushes and stops the background flushing; later writes go straight out.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	err := w.flushLocked()
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	return err
}
