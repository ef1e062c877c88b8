package tilecache_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// memStore is an in-memory tilecache.Store that counts requests, with
// internal/blob's error conventions.
type memStore struct {
	mu      sync.RWMutex
	objs    map[string]memObj
	seq     int64
	gets    atomic.Int64
	ranges  atomic.Int64
	stats   atomic.Int64
	puts    atomic.Int64
	deletes atomic.Int64
}

type memObj struct {
	data []byte
	info blob.Info
}

var _ tilecache.Store = (*memStore)(nil)
var _ tilecache.Store = (*blob.Disk)(nil)
var _ tilecache.Store = (*blob.MinIO)(nil)

func newMemStore() *memStore { return &memStore{objs: map[string]memObj{}} }

func notExist(op, key string) error { return fmt.Errorf("mem: %s %q: %w", op, key, fs.ErrNotExist) }

func (m *memStore) Put(_ context.Context, key string, data []byte, ct string) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	m.puts.Add(1)
	sum := md5.Sum(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	m.objs[key] = memObj{data: slices.Clone(data), info: blob.Info{
		Key: key, Size: int64(len(data)), ContentType: ct,
		ModTime: time.Unix(0, m.seq), ETag: hex.EncodeToString(sum[:]),
	}}
	return nil
}

// object is the object stored under key; op names the operation in the error where there is
// none.
func (m *memStore) object(op, key string) (memObj, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	o, ok := m.objs[key]
	if !ok {
		return memObj{}, notExist(op, key)
	}
	return o, nil
}

func (m *memStore) Get(_ context.Context, key string) ([]byte, error) {
	m.gets.Add(1)
	o, err := m.object("get", key)
	if err != nil {
		return nil, err
	}
	return slices.Clone(o.data), nil
}

func (m *memStore) GetRange(_ context.Context, key string, off, n int64) ([]byte, error) {
	m.ranges.Add(1)
	o, err := m.object("getrange", key)
	if err != nil {
		return nil, err
	}
	if off < 0 || n <= 0 || off >= int64(len(o.data)) {
		return nil, fmt.Errorf("mem: getrange %q: %w", key, blob.ErrInvalidRange)
	}
	end := min(off+n, int64(len(o.data)))
	return slices.Clone(o.data[off:end]), nil
}

func (m *memStore) Stat(_ context.Context, key string) (blob.Info, error) {
	m.stats.Add(1)
	o, err := m.object("stat", key)
	if err != nil {
		return blob.Info{}, err
	}
	return o.info, nil
}

func (m *memStore) Delete(_ context.Context, key string) error {
	m.deletes.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

func (m *memStore) List(_ context.Context, prefix string, fn func(blob.Info) error) error {
	m.mu.RLock()
	var infos []blob.Info
	for k, o := range m.objs {
		if strings.HasPrefix(k, prefix) {
			infos = append(infos, o.info)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(infos, func(a, b blob.Info) int { return strings.Compare(a.Key, b.Key) })
	for _, in := range infos {
		if err := fn(in); err != nil {
			return err
		}
	}
	return nil
}

// keys returns the stored keys, sorted.
func (m *memStore) keys() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var ks []string
	for k := range m.objs {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// raw returns an object's bytes without counting.
func (m *memStore) raw(key string) []byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.objs[key].data
}
