package api

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const wmsCaps = "/arcgis/services/world/MapServer/WMSServer?SERVICE=WMS&REQUEST=GetCapabilities"

// WMS is routed beside the SOAP endpoint, not swallowed by it, and follows the request policy
// of the services: with tokens on, no token or one scoped to another service gets a
// ServiceExceptionReport with 401 or 403; the world's token, as a parameter or a bearer
// header, opens it, private; without tokens it is public; any origin may read it. The SOAP endpoint's GET still
// answers as before.
func TestWMSRoutePolicy(t *testing.T) {
	rp := newRoutePolicy(t, wmsCaps, "&")
	open := rp.open
	for _, c := range rp.cases {
		rec, b := serveGet(c.h, c.target, c.header)
		var root struct{ XMLName xml.Name }
		_ = xml.Unmarshal(b, &root)
		want := "WMS_Capabilities"
		if c.status != 200 {
			want = "ServiceExceptionReport"
		}
		if rec.Code != c.status || root.XMLName.Local != want {
			t.Errorf("%s: %d <%s>, want %d <%s>: %.300s", c.name, rec.Code, root.XMLName.Local, c.status, want, b)
		}
		if cc := rec.Header().Get("Cache-Control"); c.status != 200 && cc != "no-store" {
			t.Errorf("%s: Cache-Control %q", c.name, cc)
		}
		checkReadHeaders(t, c, rec)
	}
	rec := httptest.NewRecorder()
	open.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/arcgis/services/world/MapServer?wsdl", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "definitions") {
		t.Errorf("the SOAP endpoint's WSDL: %d %.200s", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	open.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, wmsCaps, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST to WMSServer: %d", rec.Code)
	}
}
