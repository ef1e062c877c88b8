package soapcatalog_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/soapcatalog"
)

// BenchmarkGetServiceDescriptions serves GetServiceDescriptions over a catalog of 100 services:
// decoding the request, listing and encoding the answer.
func BenchmarkGetServiceDescriptions(b *testing.B) {
	var svcs services
	for i := range 100 {
		svcs = append(svcs, service(fmt.Sprintf("service_%03d", i), "A map service with a description of ordinary length."))
	}
	cat := newCatalog(soapcatalog.Params{Services: svcs})
	env := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="` + ns + `"><soap:Body><tns:GetServiceDescriptions/></soap:Body></soap:Envelope>`
	for b.Loop() {
		w := httptest.NewRecorder()
		cat.Serve(w, httptest.NewRequest(http.MethodPost, "/arcgis/services", strings.NewReader(env)), nil)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
