package api

import (
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/token"
)

type catalogServices []*catalog.Service

func (s catalogServices) Services() []*catalog.Service { return s }

// catalogAnswer is what a test reads of a Catalog answer: the listed names, or the fault.
type catalogAnswer struct {
	status int
	header http.Header
	names  []string // GetServiceDescriptions' Name elements
	fault  string
	result string // RequiresTokens' Result
}

func postCatalog(t *testing.T, h http.Handler, op, query string, hdr ...string) catalogAnswer {
	t.Helper()
	body := soapEnvelope(`<tns:` + op + ` xmlns:tns="http://schemas.mapfarm.dev/gis/10.7"/>`)
	r := httptest.NewRequest(http.MethodPost, "/arcgis/services"+query, strings.NewReader(body))
	r.RemoteAddr = "192.0.2.7:4000"
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var env struct {
		Body struct {
			Resp struct {
				Descriptions []struct {
					Name string
				} `xml:"ServiceDescriptions>ServiceDescription"`
				Result string
			} `xml:"GetServiceDescriptionsResponse"`
			Tokens struct {
				Result string
			} `xml:"RequiresTokensResponse"`
			Fault struct {
				String string `xml:"faultstring"`
			}
		}
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("%s: answer is not XML (%v): %s", op, err, w.Body.String())
	}
	a := catalogAnswer{status: w.Code, header: w.Header(), fault: env.Body.Fault.String, result: env.Body.Tokens.Result}
	for _, d := range env.Body.Resp.Descriptions {
		a.names = append(a.names, d.Name)
	}
	return a
}

func catalogServer(t *testing.T, sec Security) http.Handler {
	t.Helper()
	return New(Params{PublicURL: "http://127.0.0.1:1", MaxBodyBytes: 4000, Codec: soap.NewCodec("http://schemas.mapfarm.dev/gis/10.7", soap.Limits{}),
		Security: sec, Catalog: catalogServices{{Name: "world"}, {Name: "usa"}}, Logger: slog.New(slog.DiscardHandler)}).Handler()
}

// TestCatalogSecurity checks that the SOAP Catalog is guarded as the MapServer endpoints are:
// tokens (a scoped token lists only its services), rate limits, CORS and the body limit.
func TestCatalogSecurity(t *testing.T) {
	signer := testSigner(t)
	all := issue(t, signer, token.Grant{Client: "all", Role: token.RoleRead})
	usa := issue(t, signer, token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"USA"}})

	t.Run("tokens", func(t *testing.T) {
		h := catalogServer(t, Security{Tokens: signer})
		if a := postCatalog(t, h, "GetServiceDescriptions", ""); a.status != http.StatusUnauthorized || a.fault != "Token Required" {
			t.Errorf("no token: %d %q, want 401 Token Required", a.status, a.fault)
		}
		if a := postCatalog(t, h, "GetServiceDescriptions", "?token=forged"); a.status != http.StatusUnauthorized || a.fault != "Invalid Token" {
			t.Errorf("forged token: %d %q, want 401 Invalid Token", a.status, a.fault)
		}
		if a := postCatalog(t, h, "GetServiceDescriptions", "?token="+all); a.status != http.StatusOK || strings.Join(a.names, ",") != "world,usa" {
			t.Errorf("token for all: %d %v, want world and usa", a.status, a.names)
		}
		if a := postCatalog(t, h, "GetServiceDescriptions", "", "Authorization", "Bearer "+usa); a.status != http.StatusOK || strings.Join(a.names, ",") != "usa" {
			t.Errorf("token for usa: %d %v, want usa alone", a.status, a.names)
		}
		if a := postCatalog(t, h, "RequiresTokens", "?token="+all); a.result != "true" {
			t.Errorf("RequiresTokens with tokens on: %q", a.result)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/arcgis/services?wsdl", nil))
		if w.Code != http.StatusUnauthorized {
			t.Errorf("WSDL without a token: %d, want 401", w.Code)
		}
	})
	t.Run("tokens off", func(t *testing.T) {
		h := catalogServer(t, Security{})
		if a := postCatalog(t, h, "RequiresTokens", ""); a.status != http.StatusOK || a.result != "false" {
			t.Errorf("RequiresTokens with tokens off: %d %q", a.status, a.result)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/arcgis/services?wsdl", nil))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `location="http://127.0.0.1:1/arcgis/services"`) {
			t.Errorf("WSDL: %d, address missing:\n%s", w.Code, w.Body.String())
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		h := catalogServer(t, Security{RateLimit: 0.001, RateBurst: 2})
		for i := range 2 {
			if a := postCatalog(t, h, "GetFolders", ""); a.status != http.StatusOK {
				t.Fatalf("request %d within the burst: %d", i, a.status)
			}
		}
		if a := postCatalog(t, h, "GetFolders", ""); a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" ||
			!strings.HasPrefix(a.fault, "Rate limit exceeded") {
			t.Errorf("beyond the burst: %d, Retry-After %q, %q", a.status, a.header.Get("Retry-After"), a.fault)
		}
	})
	t.Run("cors", func(t *testing.T) {
		h := catalogServer(t, Security{CORSOrigins: []string{"https://a.example.org"}})
		a := postCatalog(t, h, "GetFolders", "", "Origin", "https://a.example.org")
		if a.status != http.StatusOK || a.header.Get("Access-Control-Allow-Origin") != "https://a.example.org" {
			t.Errorf("allowed origin: %d, Access-Control-Allow-Origin %q", a.status, a.header.Get("Access-Control-Allow-Origin"))
		}
		a = postCatalog(t, h, "GetFolders", "", "Origin", "https://evil.example.com")
		if a.header.Get("Access-Control-Allow-Origin") != "" || !strings.Contains(a.header.Get("Vary"), "Origin") {
			t.Errorf("foreign origin: Access-Control-Allow-Origin %q, Vary %q", a.header.Get("Access-Control-Allow-Origin"), a.header.Get("Vary"))
		}
	})
	t.Run("body limit", func(t *testing.T) {
		h := catalogServer(t, Security{})
		body := soapEnvelope(`<tns:GetServiceDescriptionsEx xmlns:tns="x"><FolderName>` + strings.Repeat("x", 5000) + `</FolderName></tns:GetServiceDescriptionsEx>`)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/arcgis/services", strings.NewReader(body)))
		if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "maxBodyBytes") {
			t.Errorf("body over the limit: %d %s", w.Code, w.Body.String())
		}
	})
}
