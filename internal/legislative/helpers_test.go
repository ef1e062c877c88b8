package legislative

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

// noon21Nov is 2026-11-21 12:00 in Columbus.
var noon21Nov = time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// newTestHandler returns a handler serving the dataset in testdata/name
// (or the default dataset when name is empty) at a fixed instant.
func newTestHandler(t testing.TB, name string, now time.Time) *Handler {
	t.Helper()
	h := New(Options{Now: fixedClock(now)})
	if name != "" {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.LoadJSON(data); err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
	}
	return h
}

// do sends one request; hdr alternates header names and values.
func do(h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
