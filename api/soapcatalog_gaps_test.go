package api

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// With tokens on, the Catalog answers RequiresTokens and GetTokenServiceURL without a token, as
// ArcGIS does (a client asks them before it has one); every other operation, and the WSDL,
// still needs one (401 Token Required).
func TestCatalogOpenOperationsWithoutToken(t *testing.T) {
	signer := testSigner(t)
	h := catalogServer(t, Security{Tokens: signer})
	if a := postCatalog(t, h, "RequiresTokens", ""); a.status != http.StatusOK || a.result != "true" || a.fault != "" {
		t.Errorf("RequiresTokens without a token: %d %q %q, want 200 true", a.status, a.result, a.fault)
	}
	if a := postCatalog(t, h, "GetTokenServiceURL", ""); a.status != http.StatusOK || a.fault != "" {
		t.Errorf("GetTokenServiceURL without a token: %d %q, want 200", a.status, a.fault)
	}
	for _, op := range []string{"GetServiceDescriptions", "GetServiceDescriptionsEx", "GetFolders", "GetMessageVersion", "GetMessageFormats"} {
		if a := postCatalog(t, h, op, ""); a.status != http.StatusUnauthorized || a.fault != "Token Required" {
			t.Errorf("%s without a token: %d %q, want 401 Token Required", op, a.status, a.fault)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/arcgis/services?wsdl", nil))
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "Token Required") {
		t.Errorf("WSDL without a token: %d %.200s, want 401 Token Required", rec.Code, rec.Body)
	}
	// A MapServer operation posted here is unknown to the Catalog, token or not.
	if a := postCatalog(t, h, "ExportMapImage", ""); a.status != http.StatusInternalServerError || a.fault != `unknown operation "ExportMapImage"` {
		t.Errorf("ExportMapImage without a token: %d %q, want 500 unknown operation", a.status, a.fault)
	}
	// Tokens off: RequiresTokens answers false.
	if a := postCatalog(t, catalogServer(t, Security{}), "RequiresTokens", ""); a.status != http.StatusOK || a.result != "false" {
		t.Errorf("RequiresTokens with tokens off: %d %q, want 200 false", a.status, a.result)
	}
}

// The MapServer endpoint answers a Catalog operation as an unknown operation (a soap:Client
// fault naming it), as an ArcGIS MapServer endpoint does, not as one it has not implemented.
func TestMapServerRefusesCatalogOperations(t *testing.T) {
	h, _ := restServer(t, Security{})
	for _, op := range []string{"GetServiceDescriptions", "GetServiceDescriptionsEx", "GetFolders", "GetMessageVersion",
		"GetMessageFormats", "RequiresTokens", "GetTokenServiceURL"} {
		body := soapEnvelope(`<tns:` + op + ` xmlns:tns="` + testNS + `"/>`)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/arcgis/services/world/MapServer", strings.NewReader(body)))
		var env struct {
			Fault struct {
				Code   string `xml:"faultcode"`
				String string `xml:"faultstring"`
			} `xml:"Body>Fault"`
		}
		if err := xml.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s: %v in %.300s", op, err, rec.Body)
		}
		code, msg := env.Fault.Code, env.Fault.String
		if rec.Code != http.StatusInternalServerError || code != "soap:Client" || msg != `unknown operation "`+op+`"` {
			t.Errorf("%s on the MapServer endpoint: %d %s %q, want 500 soap:Client unknown operation", op, rec.Code, code, msg)
		}
	}
	// A MapServer operation still runs there.
	body := soapEnvelope(`<tns:GetDefaultMapName xmlns:tns="` + testNS + `"/>`)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/arcgis/services/world/MapServer", strings.NewReader(body)))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "GetDefaultMapNameResponse") {
		t.Errorf("GetDefaultMapName: %d %.300s", rec.Code, rec.Body)
	}
}
