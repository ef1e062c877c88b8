package legislative

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"time"
)

// DatasetKey is the object key under which Import stores the dataset and
// from which a Reloader reads it by default.
const DatasetKey = "legislative/dataset.json"

// maxDatasetSize bounds what Import reads (the live GA 136 legislation list
// alone is about 4 MB).
const maxDatasetSize = 256 << 20

// DatasetSource is where a Reloader reads the stored dataset from. Get must
// return an error satisfying errors.Is(err, fs.ErrNotExist) when the key is
// missing. The blob store satisfies it.
type DatasetSource interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// DatasetSink is where Import writes a dataset. The blob store satisfies it.
type DatasetSink interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Import reads a dataset document from r, validates it, and only if it is
// valid writes it to dst under DatasetKey. An invalid document is rejected
// whole (the error wraps ErrInvalidDataset) and nothing is written.
func Import(ctx context.Context, dst DatasetSink, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, maxDatasetSize+1))
	if err != nil {
		return fmt.Errorf("legislative: import: read dataset: %w", err)
	}
	if len(data) > maxDatasetSize {
		return fmt.Errorf("%w: larger than %d bytes", ErrInvalidDataset, maxDatasetSize)
	}
	if _, err := ParseDataset(data); err != nil {
		return err // already says "legislative: invalid dataset: ..."
	}
	if err := dst.Put(ctx, DatasetKey, data, "application/json"); err != nil {
		return fmt.Errorf("legislative: import: store dataset: %w", err)
	}
	return nil
}

// ReloaderOptions configure a Reloader.
type ReloaderOptions struct {
	// Key is the object to watch. Default DatasetKey.
	Key string
	// Interval is the time between polls in Run. Default 15 seconds.
	Interval time.Duration
	// Logger receives one line per applied or rejected dataset and per
	// failed poll. Nil means no logging.
	Logger *slog.Logger
}

// Reloader polls a DatasetSource and swaps a Handler's dataset when the
// stored document changes. A document that fails validation is rejected
// whole; the Handler keeps serving what it had.
type Reloader struct {
	h      *Handler
	src    DatasetSource
	key    string
	every  time.Duration
	logger *slog.Logger

	mu       sync.Mutex // serialises polls
	lastSeen string     // digest of the last document applied or rejected
}

// NewReloader returns a Reloader feeding h from src.
func NewReloader(h *Handler, src DatasetSource, opts ReloaderOptions) *Reloader {
	r := &Reloader{h: h, src: src, key: opts.Key, every: opts.Interval, logger: opts.Logger}
	if r.key == "" {
		r.key = DatasetKey
	}
	if r.every <= 0 {
		r.every = 15 * time.Second
	}
	return r
}

// Poll makes one pass: it fetches the stored document and applies it if it
// differs from the one seen last. It reports whether the served dataset
// changed. A missing object is not an error: the Handler keeps its current
// dataset. A rejected document is reported once, not on every poll.
func (r *Reloader) Poll(ctx context.Context) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, err := r.src.Get(ctx, r.key)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("legislative: reload: get %s: %w", r.key, err)
	}
	digest := digestOf(data)
	if digest == r.lastSeen || digest == r.h.Digest() {
		r.lastSeen = digest
		return false, nil
	}
	r.lastSeen = digest
	if err := r.h.LoadJSON(data); err != nil {
		return false, fmt.Errorf("dataset %s rejected, still serving the previous one: %w", r.key, err)
	}
	return true, nil
}

// Run polls until ctx is done, logging what happens. It returns ctx.Err().
func (r *Reloader) Run(ctx context.Context) error {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		changed, err := r.Poll(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			// Stopping: a poll cut short is not a failure.
		case err != nil:
			r.log(ctx, slog.LevelError, "legislative dataset poll failed", "key", r.key, "err", err)
		case changed:
			r.log(ctx, slog.LevelInfo, "legislative dataset reloaded", "key", r.key, "digest", r.h.Digest())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (r *Reloader) log(ctx context.Context, level slog.Level, msg string, args ...any) {
	if r.logger != nil {
		r.logger.Log(ctx, level, msg, args...)
	}
}
