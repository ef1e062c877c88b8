package metrics

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// InstrumentStore wraps an object store so that every operation's latency, and every failure
// other than a missing object, is recorded.
func (m *Metrics) InstrumentStore(s blob.Store) blob.Store { return &store{s: s, m: m} }

type store struct {
	s blob.Store
	m *Metrics
}

var _ blob.Store = (*store)(nil)

func (st *store) observe(op string, start time.Time, err error) {
	st.m.StoreDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		st.m.StoreErrors.WithLabelValues(op).Inc()
	}
}

func (st *store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	start := time.Now()
	err := st.s.Put(ctx, key, data, contentType)
	st.observe("put", start, err)
	return err
}

func (st *store) Get(ctx context.Context, key string) ([]byte, error) {
	start := time.Now()
	b, err := st.s.Get(ctx, key)
	st.observe("get", start, err)
	return b, err
}

func (st *store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	start := time.Now()
	b, err := st.s.GetRange(ctx, key, off, n)
	st.observe("get_range", start, err)
	return b, err
}

func (st *store) Open(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	start := time.Now()
	rc, info, err := st.s.Open(ctx, key)
	st.observe("open", start, err)
	return rc, info, err
}

func (st *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	start := time.Now()
	info, err := st.s.Stat(ctx, key)
	st.observe("stat", start, err)
	return info, err
}

func (st *store) Delete(ctx context.Context, key string) error {
	start := time.Now()
	err := st.s.Delete(ctx, key)
	st.observe("delete", start, err)
	return err
}

func (st *store) List(ctx context.Context, prefix string, fn func(blob.Info) error) error {
	start := time.Now()
	err := st.s.List(ctx, prefix, fn)
	st.observe("list", start, err)
	return err
}
