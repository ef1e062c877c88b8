package viewer_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/viewer"
)

// The assets are served with their content types and a validator; names that are not assets,
// paths among them, are 404s.
func TestServeAsset(t *testing.T) {
	h := viewer.New()
	for name, ctype := range map[string]string{"viewer.js": "text/javascript", "viewer.css": "text/css", "fonts.css": "text/css", "THIRD-PARTY.md": ""} {
		rec := httptest.NewRecorder()
		h.ServeAsset(rec, httptest.NewRequest(http.MethodGet, "/x", nil), name)
		if rec.Code != 200 || rec.Body.Len() == 0 || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) || rec.Header().Get("Last-Modified") == "" {
			t.Errorf("%s: %d, %q, %d bytes, Last-Modified %q", name, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len(), rec.Header().Get("Last-Modified"))
		}
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		req.Header.Set("If-Modified-Since", rec.Header().Get("Last-Modified"))
		rec = httptest.NewRecorder()
		h.ServeAsset(rec, req, name)
		if rec.Code != http.StatusNotModified {
			t.Errorf("%s again: %d, want 304", name, rec.Code)
		}
	}
	for _, name := range []string{"../viewer.go", "assets/viewer.js", "viewer.html", ""} {
		rec := httptest.NewRecorder()
		h.ServeAsset(rec, httptest.NewRequest(http.MethodGet, "/x", nil), name)
		if rec.Code != http.StatusNotFound {
			t.Errorf("%q: %d, want 404", name, rec.Code)
		}
	}
}

// The page names the service escaped and allows only the farm's own resources.
func TestServePage(t *testing.T) {
	rec := httptest.NewRecorder()
	viewer.New().ServePage(rec, viewer.Page{Service: "<b>x</b>", ServiceURL: "/arcgis/rest/services/x/MapServer"})
	body := rec.Body.String()
	if strings.Contains(body, "<b>x</b>") || !strings.Contains(body, "&lt;b&gt;x&lt;/b&gt;") {
		t.Errorf("service name not escaped: %s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if !strings.Contains(body, `<script src="/arcgis/rest/services/x/MapServer/viewer/viewer.js"></script>`) {
		t.Errorf("no viewer script in %s", body)
	}
}
