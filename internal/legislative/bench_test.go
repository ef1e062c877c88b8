package legislative

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// discardWriter is a minimal ResponseWriter, so the benchmarks measure the
// handler rather than httptest's recorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

func benchPath(b *testing.B, target string, hdr ...string) {
	h := New(Options{})
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d", target, rec.Code)
	}
	b.ReportAllocs()
	b.SetBytes(int64(rec.Body.Len()))
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			clear(w.h)
			h.ServeHTTP(w, req)
		}
	})
}

func BenchmarkSessionList(b *testing.B)   { benchPath(b, "/api/v2/") }
func BenchmarkSessionDetail(b *testing.B) { benchPath(b, "/api/v2/general_assembly_136/") }
func BenchmarkSessionListBrowsable(b *testing.B) {
	benchPath(b, "/api/v2/?format=api")
}
func BenchmarkSessionListIndented(b *testing.B) {
	benchPath(b, "/api/v2/", "Accept", "application/json; indent=4")
}

// TestLegServe is the server bench/legislative.sh runs wrk against. It does
// nothing unless LEGSERVE_ADDR is set (for example 127.0.0.1:18080); then it
// serves the default dataset on that address for LEGSERVE_FOR (default 60s).
func TestLegServe(t *testing.T) {
	addr := os.Getenv("LEGSERVE_ADDR")
	if addr == "" {
		t.Skip("LEGSERVE_ADDR not set; this is the load-test server of bench/legislative.sh")
	}
	d := time.Minute
	if s := os.Getenv("LEGSERVE_FOR"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("LEGSERVE_FOR: %v", err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: New(Options{}), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Logf("serving on http://%s for %s", ln.Addr(), d)
	select {
	case err := <-done:
		t.Fatal(err)
	case <-time.After(d):
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
}
