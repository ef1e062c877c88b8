package legislative

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSessionID sends arbitrary session id segments to the detail route and
// a sub-collection route and checks what a client sees: a known id gets its
// own detail, any other single segment the DRF 404, and anything with a
// slash in it one of the answers Django's routing can give.
func FuzzSessionID(f *testing.F) {
	for _, seed := range []string{
		"general_assembly_136", "general_assembly_135_special_1", "general_assembly_999", "", "x", "..", "%2F",
		"general_assembly_136/committees", "general_assembly_136/committees/meetings/house/2026-01-01", "é\u2028", "\x00", "a?b", "a#b",
	} {
		f.Add(seed)
	}
	h := newTestHandler(f, "", noon21Nov)
	known := map[string]bool{}
	for id := range h.snap.Load().sessions {
		known[id] = true
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, suffix := range []string{"/", "/legislators/"} {
			req := &http.Request{
				Method: "GET",
				URL:    &url.URL{Path: "/api/v2/" + id + suffix},
				Header: http.Header{},
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			ct := rec.Header().Get("Content-Type")
			body := rec.Body.Bytes()
			if rec.Header().Get("Content-Length") != itoa(len(body)) && rec.Code != http.StatusMovedPermanently {
				t.Fatalf("%q: Content-Length %s for %d bytes", id, rec.Header().Get("Content-Length"), len(body))
			}
			single := id != "" && !strings.Contains(id, "/")
			switch {
			case single && known[id]:
				if rec.Code != http.StatusOK || ct != "application/json" {
					t.Fatalf("known id %q: %d %s", id, rec.Code, ct)
				}
				if suffix == "/" && !bytes.HasPrefix(body, []byte(`[{"id":"`+id+`",`)) {
					t.Fatalf("known id %q: body %.100s", id, body)
				}
			case single:
				if rec.Code != http.StatusNotFound || ct != "application/json" || string(body) != `{"detail":"Not found."}` {
					t.Fatalf("unknown id %q: %d %s %s", id, rec.Code, ct, body)
				}
				if rec.Header().Get("Vary") != "Accept" || rec.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
					t.Fatalf("unknown id %q: headers %v", id, rec.Header())
				}
			default:
				switch {
				case rec.Code == http.StatusOK && ct == "application/json":
				case rec.Code == http.StatusNotFound && ct == "application/json" && string(body) == `{"detail":"Not found."}`:
				case rec.Code == http.StatusNotFound && ct == "text/html" && bytes.Equal(body, bodyHTML404):
				case rec.Code == http.StatusMovedPermanently && strings.HasSuffix(rec.Header().Get("Location"), "/"):
				default:
					t.Fatalf("id %q%s: unexpected %d %s %.100s", id, suffix, rec.Code, ct, body)
				}
			}
			if ct == "application/json" && !utf8.Valid(body) {
				t.Fatalf("id %q: body is not UTF-8", id)
			}
		}
	})
}
