package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

const testNS = "http://www.esri.com/schemas/ArcGIS/10.7"

// exporterFunc is a mapserver.Exporter.
type exporterFunc func(ctx context.Context, job task.ExportMap) (task.Result, error)

func (f exporterFunc) Export(ctx context.Context, job task.ExportMap) (task.Result, error) {
	return f(ctx, job)
}

// countingStore is a store that counts its calls and holds nothing.
type countingStore struct {
	mu    sync.Mutex
	calls int
}

func (s *countingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *countingStore) called() {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
}

func (s *countingStore) Open(context.Context, string) (io.ReadCloser, blob.Info, error) {
	s.called()
	return nil, blob.Info{}, errors.New("store: open outputs/secret-key: connection refused")
}
func (s *countingStore) Get(context.Context, string) ([]byte, error) {
	s.called()
	return nil, errors.New("store: get arcgiscache/secret-key: connection refused")
}
func (s *countingStore) GetRange(context.Context, string, int64, int64) ([]byte, error) {
	s.called()
	return nil, errors.New("store: get arcgiscache/secret-key: connection refused")
}
func (s *countingStore) Stat(context.Context, string) (blob.Info, error) {
	s.called()
	return blob.Info{}, errors.New("store: stat arcgiscache/secret-key: connection refused")
}
func (s *countingStore) Put(context.Context, string, []byte, string) error {
	s.called()
	return errors.New("store: put: connection refused")
}
func (s *countingStore) Delete(context.Context, string) error { s.called(); return nil }
func (s *countingStore) List(context.Context, string, func(blob.Info) error) error {
	s.called()
	return nil
}

// faultFixture is an api on the sample catalog whose renders go to export, with every log line
// kept.
type faultFixture struct {
	h     http.Handler
	store *countingStore
	logs  *testenv.LogBuffer
}

func newFaultFixture(t *testing.T, export exporterFunc, timeout ...time.Duration) *faultFixture {
	t.Helper()
	cat := catalogtest.Samples(t)
	f := &faultFixture{store: &countingStore{}, logs: &testenv.LogBuffer{}}
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ops := mapserver.New(mapserver.Params{Catalog: cat, Exporter: export, Logger: logger, NewID: NewID,
		Limits: mapserver.Limits{MaxImageWidth: 4096, MaxImageHeight: 4096, MaxRecordCount: 1000}})
	f.h = New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 16 << 20, OutputTTL: time.Minute,
		Outputs: f.store, Tiles: f.store, Logger: logger, OperationTimeout: append(timeout, 0)[0]}).Handler()
	return f
}

const exportBody = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + testNS + `"><soap:Body><gis:ExportMapImage>` +
	`<MapDescription><Name>Layers</Name></MapDescription><ImageDescription><ImageType><ImageFormat>gisImagePNG24</ImageFormat>` +
	`<ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType><ImageDisplay><ImageHeight>64</ImageHeight><ImageWidth>64</ImageWidth>` +
	`<ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>`

func (f *faultFixture) export(ctx context.Context) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(ctx, "POST", "/arcgis/services/world/MapServer", strings.NewReader(exportBody))
	req.Header.Set("X-Request-Id", "req-0123456789")
	f.h.ServeHTTP(rec, req)
	return rec
}

// A server-side failure answers soap:Server with a fixed message and the request id; the
// error itself (a store key, an address) is only in the log, at ERROR.
func TestServerFaultHidesInternalErrors(t *testing.T) {
	f := newFaultFixture(t, func(context.Context, task.ExportMap) (task.Result, error) {
		return task.Result{}, errors.New("minio: put outputs/0123.png: dial tcp 10.1.2.3:9000: connection refused")
	})
	rec := f.export(context.Background())
	body := rec.Body.String()
	if rec.Code != 500 || !strings.Contains(body, "<faultcode>soap:Server</faultcode>") || !strings.Contains(body, "request id req-0123456789") {
		t.Errorf("got %d %s, want 500 soap:Server with the request id", rec.Code, body)
	}
	if strings.Contains(body, "10.1.2.3") || strings.Contains(body, "outputs/") {
		t.Errorf("fault names internals: %s", body)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "10.1.2.3") {
		t.Errorf("the cause is not logged at ERROR:\n%s", logs)
	}
}

// A client that goes away mid-render is not a server error: logged at INFO, no fault.
func TestClientCancelIsNotAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := newFaultFixture(t, func(ctx context.Context, _ task.ExportMap) (task.Result, error) {
		cancel() // the client hangs up while the farm renders
		<-ctx.Done()
		return task.Result{}, ctx.Err()
	})
	rec := f.export(ctx)
	logs := f.logs.String()
	if rec.Code != statusClientClosed || strings.Contains(rec.Body.String(), "Fault") {
		t.Errorf("got %d %s, want %d and no fault", rec.Code, rec.Body, statusClientClosed)
	}
	if strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, `level=INFO msg="client went away before the answer"`) {
		t.Errorf("logs:\n%s\nwant an INFO line and no ERROR", logs)
	}
}

// Output names and cache paths that are not well formed get 400 or 404 at once: no store
// call, no ERROR log, no store key in the answer.
func TestMalformedPathsNeverReachTheStore(t *testing.T) {
	f := newFaultFixture(t, nil)
	tests := []struct {
		path string
		code int
	}{
		{"/arcgis/output/0123456789abcdef0123456789abcdef%00.png", 404},
		{"/arcgis/output/0123456789abcdef%2e%2e.png", 404},
		{"/arcgis/output/..png", 404},
		{"/arcgis/output/abc", 404},
		{"/arcgis/output/" + strings.Repeat("a", 65) + ".png", 404},
		{"/arcgis/output/a%20b.png", 404},
		{"/arcgis/output/a.p%0ag", 404},
		{CachePath + "/%2e%2e/Layers/_alllayers/L00/R00000000/C00000000.png", 400},
		{CachePath + "/world/%2e%2e/_alllayers/L00/R00000000/C00000000.png", 400},
		{CachePath + "/world/Layers/%2e/L00/R00000000/C00000000.png", 400},
		{CachePath + "/world/Layers/%2e%2e/L00/R00000000/C00000000.png", 400},
		{CachePath + "/world/Lay%00ers/_alllayers/L00/R00000000/C00000000.png", 400},
		{CachePath + "/world/Layers/_alllayers/L00/R00000000/" + strings.Repeat("C", 10_000) + ".png", 404},
		{CachePath + "/world/Layers/_alllayers/%2e%2e/%2e%2e/conf.xml", 404},
	}
	for _, tc := range tests {
		before := f.store.count()
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		body := rec.Body.String()
		if rec.Code != tc.code || f.store.count() != before || strings.Contains(body, "arcgiscache/") || len(body) > 300 {
			t.Errorf("GET %.120s = %d %.300q with %d store calls, want %d, no store call, no store key", tc.path, rec.Code, body, f.store.count()-before, tc.code)
		}
	}
	if logs := f.logs.String(); strings.Contains(logs, "level=ERROR") {
		t.Errorf("ERROR logged:\n%s", logs)
	}
	// A well-formed name still reaches the store, and its failure is a 503 without the key.
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest("GET", "/arcgis/output/0123456789abcdef0123456789abcdef.png", nil))
	if rec.Code != 503 || f.store.count() == 0 || strings.Contains(rec.Body.String(), "secret-key") {
		t.Errorf("well-formed output name: %d %q after %d store calls, want 503 from the store", rec.Code, rec.Body, f.store.count())
	}
	rec = httptest.NewRecorder()
	f.h.ServeHTTP(rec, httptest.NewRequest("GET", CachePath+"/world/Layers/_alllayers/L00/R00000000/C00000000.png", nil))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "secret-key") || strings.Contains(rec.Body.String(), "arcgiscache/") {
		t.Errorf("cache read failing in the store: %d %q, want 500 without the store key", rec.Code, rec.Body)
	}
}

// Every operation runs under the api's OperationTimeout: a render that would go on is given up
// at it, and its context (the farm's wait, the worker's draw) ends with it.
func TestOperationTimeout(t *testing.T) {
	ended := make(chan error, 1)
	f := newFaultFixture(t, func(ctx context.Context, _ task.ExportMap) (task.Result, error) {
		<-ctx.Done()
		ended <- ctx.Err()
		return task.Result{}, ctx.Err()
	}, 200*time.Millisecond)
	start := time.Now()
	rec := f.export(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the operation took %v, past its 200 ms deadline", took)
	}
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "soap:Server") {
		t.Errorf("got %d %s, want a server fault", rec.Code, rec.Body)
	}
	if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the render's context ended with %v, want its deadline", err)
	}
}
