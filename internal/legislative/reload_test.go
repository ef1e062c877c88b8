package legislative

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// memStore is an in-memory stand-in for the blob store, with its method
// signatures.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
	types   map[string]string
	getErr  error
}

func newMemStore() *memStore {
	return &memStore{objects: map[string][]byte{}, types: map[string]string{}}
}

func (m *memStore) Put(_ context.Context, key string, data []byte, contentType string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[key] = append([]byte(nil), data...)
	m.types[key] = contentType
	return nil
}

func (m *memStore) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.getErr != nil {
		return nil, m.getErr
	}
	b, ok := m.objects[key]
	if !ok {
		return nil, fmt.Errorf("memstore: %s: %w", key, fs.ErrNotExist)
	}
	return append([]byte(nil), b...), nil
}

var (
	_ DatasetSource = (*memStore)(nil)
	_ DatasetSink   = (*memStore)(nil)
)

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestImport(t *testing.T) {
	ctx := context.Background()
	store := newMemStore()
	full := mustRead(t, "full_dataset.json")
	if err := Import(ctx, store, strings.NewReader(string(full))); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Get(ctx, DatasetKey); string(got) != string(full) || store.types[DatasetKey] != "application/json" {
		t.Errorf("stored %d bytes as %q", len(got), store.types[DatasetKey])
	}

	bad := newMemStore()
	err := Import(ctx, bad, strings.NewReader(`{"sessions":[{"id":"general_assembly_9","start":"x","end":"1821-12-31","type":"Regular Session"}]}`))
	if !errors.Is(err, ErrInvalidDataset) || !strings.Contains(err.Error(), `sessions[0].start: "x" is not a date`) {
		t.Errorf("invalid import: %v", err)
	}
	if len(bad.objects) != 0 {
		t.Errorf("an invalid dataset was stored")
	}
	if err := Import(ctx, bad, failingReader{}); err == nil || errors.Is(err, ErrInvalidDataset) || len(bad.objects) != 0 {
		t.Errorf("read failure: %v", err)
	}
}

func TestReloaderPoll(t *testing.T) {
	ctx := context.Background()
	h := newTestHandler(t, "", noon21Nov)
	defaultList := do(h, "GET", "/api/v2/").Body.String()
	store := newMemStore()
	r := NewReloader(h, store, ReloaderOptions{})

	steps := []struct {
		name    string
		put     []byte // nil: leave the store as it is
		changed bool
		errPart string
		list    string // "default", "full" or "probe": what /api/v2/ serves after
	}{
		{"nothing stored", nil, false, "", "default"},
		{"first import", mustRead(t, "full_dataset.json"), true, "", "full"},
		{"unchanged", nil, false, "", "full"},
		{"broken import", []byte(`{"sessions":[{"id":"general_assembly_1"}]}`), false, "rejected", "full"},
		{"broken reported once", nil, false, "", "full"},
		{"next good import", mustRead(t, "probe_dataset.json"), true, "", "probe"},
		{"back to the default", DefaultDatasetJSON(), true, "", "default"},
	}
	lists := map[string]string{"default": defaultList}
	for _, name := range []string{"full", "probe"} {
		hh := newTestHandler(t, name+"_dataset.json", noon21Nov)
		lists[name] = do(hh, "GET", "/api/v2/").Body.String()
	}
	for _, st := range steps {
		if st.put != nil {
			_ = store.Put(ctx, DatasetKey, st.put, "application/json")
		}
		changed, err := r.Poll(ctx)
		if changed != st.changed {
			t.Errorf("%s: changed %v, want %v", st.name, changed, st.changed)
		}
		if (err == nil) != (st.errPart == "") || (err != nil && !strings.Contains(err.Error(), st.errPart)) {
			t.Errorf("%s: error %v, want one containing %q", st.name, err, st.errPart)
		}
		if err != nil && !errors.Is(err, ErrInvalidDataset) {
			t.Errorf("%s: %v does not wrap ErrInvalidDataset", st.name, err)
		}
		if got := do(h, "GET", "/api/v2/").Body.String(); got != lists[st.list] {
			t.Errorf("%s: serving %.120s, want the %s list", st.name, got, st.list)
		}
	}

	store.getErr = errors.New("connection refused")
	if changed, err := r.Poll(ctx); changed || err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("store failure: %v %v", changed, err)
	}
}

func TestReloaderRunStopsWithContext(t *testing.T) {
	h := newTestHandler(t, "", noon21Nov)
	store := newMemStore()
	_ = store.Put(context.Background(), "other/key.json", mustRead(t, "probe_dataset.json"), "application/json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := NewReloader(h, store, ReloaderOptions{Key: "other/key.json"})
	if err := r.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v", err)
	}
	// Run polls once before it looks at the context.
	if got := do(h, "GET", "/api/v2/").Body.String(); !strings.Contains(got, "general_assembly_135") || strings.Contains(got, "general_assembly_136") {
		t.Errorf("Run did not apply the stored dataset: %.100s", got)
	}
}

// TestReloadUnderLoad swaps between two datasets while clients hammer the
// API over loopback, and checks that every response is exactly one of the
// two datasets' responses (body and ETag together), never a mixture.
func TestReloadUnderLoad(t *testing.T) {
	const (
		clients    = 8
		perClient  = 150
		reloads    = 200
		listPath   = "/api/v2/"
		detailPath = "/api/v2/general_assembly_135/"
	)
	ctx := context.Background()
	docs := [][]byte{mustRead(t, "probe_dataset.json"), mustRead(t, "full_dataset.json")}

	// What each dataset serves, taken from handlers that never reload.
	type answer struct {
		status     int
		body, etag string
	}
	want := map[string][2]answer{}
	for _, p := range []string{listPath, detailPath} {
		var a [2]answer
		for i, doc := range docs {
			hh := newTestHandler(t, "", noon21Nov)
			if err := hh.LoadJSON(doc); err != nil {
				t.Fatal(err)
			}
			rec := do(hh, "GET", p)
			a[i] = answer{rec.Code, rec.Body.String(), rec.Header().Get("ETag")}
		}
		if a[0] == a[1] {
			t.Fatalf("%s is the same in both datasets; the test would prove nothing", p)
		}
		want[p] = a
	}

	h := newTestHandler(t, "", noon21Nov)
	store := newMemStore()
	r := NewReloader(h, store, ReloaderOptions{})
	_ = store.Put(ctx, DatasetKey, docs[0], "application/json")
	if _, err := r.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the reloader: alternate the stored dataset
		defer wg.Done()
		for i := 1; i <= reloads; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = store.Put(ctx, DatasetKey, docs[i%2], "application/json")
			if _, err := r.Poll(ctx); err != nil {
				t.Errorf("poll: %v", err)
				return
			}
		}
	}()

	errs := make(chan error, clients*perClient)
	var seen [2]int64
	var mu sync.Mutex
	var cwg sync.WaitGroup
	for c := 0; c < clients; c++ {
		cwg.Add(1)
		go func(c int) {
			defer cwg.Done()
			for i := 0; i < perClient; i++ {
				p := listPath
				if (c+i)%2 == 1 {
					p = detailPath
				}
				resp, err := srv.Client().Get(srv.URL + p)
				if err != nil {
					errs <- err
					return
				}
				body, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err != nil {
					errs <- err
					return
				}
				got := answer{resp.StatusCode, string(body), resp.Header.Get("ETag")}
				switch got {
				case want[p][0], want[p][1]:
					mu.Lock()
					if got == want[p][0] {
						seen[0]++
					} else {
						seen[1]++
					}
					mu.Unlock()
				default:
					errs <- fmt.Errorf("GET %s: response matches neither dataset: %d %q %.200s", p, got.status, got.etag, got.body)
				}
			}
		}(c)
	}
	cwg.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if seen[0]+seen[1] != clients*perClient {
		t.Errorf("%d consistent responses, want %d", seen[0]+seen[1], clients*perClient)
	}
	t.Logf("responses from dataset A: %d, from dataset B: %d", seen[0], seen[1])
}
