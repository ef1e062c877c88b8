package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/metrics"
)

// REST requests are counted in /metrics per operation, as SOAP requests are: a query runs
// QueryRowIDs and QueryData (ok), a query with a bad where clause is a client fault, and a
// SOAP call of the same operation lands in the SOAP family under the same name.
func TestRESTMetrics(t *testing.T) {
	m := metrics.New()
	h := sampleAPI(t, func(p *sampleParams) { p.API.Metrics, p.REST.Observe = m, RESTObserver(m) })
	for _, target := range []string{
		"/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&outFields=*",
		"/arcgis/rest/services/world/MapServer/0/query?f=json&where=1%3D1&returnCountOnly=true",
		"/arcgis/rest/services/world/MapServer/0/query?f=json&where=NOPE%3D1",
	} {
		restGet(t, h, target)
	}
	body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="` + testNS + `"><soap:Body>` +
		`<gis:GetDefaultMapName/></soap:Body></soap:Envelope>`
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/arcgis/services/world/MapServer", strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("SOAP GetDefaultMapName: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	text, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`mapfarm_rest_operations_total{operation="QueryRowIDs",outcome="ok"} 1`,
		`mapfarm_rest_operations_total{operation="QueryData",outcome="ok"} 1`,
		`mapfarm_rest_operations_total{operation="QueryRowCount",outcome="ok"} 1`,
		`mapfarm_rest_operations_total{operation="QueryRowIDs",outcome="client_fault"} 1`,
		`mapfarm_rest_operation_duration_seconds_count{operation="QueryData"} 1`,
		`mapfarm_soap_requests_total{operation="GetDefaultMapName",outcome="ok"} 1`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(text), `mapfarm_soap_requests_total{operation="QueryData"`) {
		t.Error("a REST query was counted as a SOAP request")
	}
	if t.Failed() {
		for _, l := range strings.Split(string(text), "\n") {
			if strings.HasPrefix(l, "mapfarm_rest_") || strings.HasPrefix(l, "mapfarm_soap_requests") {
				t.Log(l)
			}
		}
	}
}
