package soapcatalog_test

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/soapcatalog"
)

const (
	ns        = "http://schemas.mapfarm.dev/gis/10.7"
	publicURL = "https://maps.example.test:8443"
)

type services []*catalog.Service

func (s services) Services() []*catalog.Service { return s }

func service(name, desc string) *catalog.Service {
	return &catalog.Service{Name: name, Def: &servicedef.Service{Name: name, Description: desc}}
}

func newCatalog(p soapcatalog.Params) *soapcatalog.Catalog {
	if p.Services == nil {
		p.Services = services{service("world", "The world"), service("usa", "")}
	}
	p.Codec = soap.NewCodec(ns, soap.Limits{})
	p.PublicURL = publicURL
	return soapcatalog.New(p)
}

// node is a parsed element: its local name, text and children.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []node     `xml:",any"`
}

func (n *node) child(local string) *node {
	for i := range n.Children {
		if n.Children[i].XMLName.Local == local {
			return &n.Children[i]
		}
	}
	return nil
}

func (n *node) names() []string {
	var out []string
	for _, c := range n.Children {
		out = append(out, c.XMLName.Local)
	}
	return out
}

// call posts a request envelope holding body and returns the status and the Body's first child.
func call(t *testing.T, cat *soapcatalog.Catalog, body string, visible soapcatalog.Visible) (int, *node) {
	t.Helper()
	env := `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="` + ns + `"><soap:Body>` + body + `</soap:Body></soap:Envelope>`
	r := httptest.NewRequest(http.MethodPost, "/arcgis/services", strings.NewReader(env))
	w := httptest.NewRecorder()
	cat.Serve(w, r, visible)
	if ct := w.Header().Get("Content-Type"); ct != "text/xml; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	var root node
	if err := xml.Unmarshal(w.Body.Bytes(), &root); err != nil {
		t.Fatalf("response is not XML: %v\n%s", err, w.Body.String())
	}
	b := root.child("Body")
	if b == nil || len(b.Children) != 1 {
		t.Fatalf("response has no Body with one child:\n%s", w.Body.String())
	}
	return w.Code, &b.Children[0]
}

// referenceFields reads the element names of a complex type of the reference Catalog WSDL, in
// order.
func referenceFields(t *testing.T, typ string) []string {
	t.Helper()
	data, err := os.ReadFile("../../e2e/testdata/reference-Catalog-10.7.wsdl")
	if err != nil {
		t.Fatal(err)
	}
	var root node
	if err := xml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	schema := root.child("types").child("schema")
	for _, c := range schema.Children {
		if c.XMLName.Local == "complexType" && attr(&c, "name") == typ {
			var out []string
			for _, e := range c.child("sequence").Children {
				out = append(out, attr(&e, "name"))
			}
			return out
		}
	}
	t.Fatalf("the reference has no complexType %s", typ)
	return nil
}

func attr(n *node, name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// descriptions calls op with body and checks its response, holding ServiceDescriptions and returns each description's
// fields by name, after checking their order against the reference.
func descriptions(t *testing.T, cat *soapcatalog.Catalog, op, body string, visible soapcatalog.Visible) []map[string]string {
	t.Helper()
	status, resp := call(t, cat, body, visible)
	if status != http.StatusOK || resp.XMLName.Local != op+"Response" || resp.XMLName.Space != ns {
		t.Fatalf("status %d, answer {%s}%s; want 200 and {%s}%sResponse", status, resp.XMLName.Space, resp.XMLName.Local, ns, op)
	}
	if got := resp.names(); !slices.Equal(got, []string{"ServiceDescriptions"}) {
		t.Fatalf("%sResponse holds %v, want [ServiceDescriptions]", op, got)
	}
	order := referenceFields(t, "ServiceDescription")
	var out []map[string]string
	for _, sd := range resp.Children[0].Children {
		if sd.XMLName.Local != "ServiceDescription" {
			t.Errorf("array item <%s>, want <ServiceDescription>", sd.XMLName.Local)
		}
		if got := sd.names(); !slices.Equal(got, order) {
			t.Errorf("ServiceDescription fields %v, want the reference's %v", got, order)
		}
		m := map[string]string{}
		for _, f := range sd.Children {
			m[f.XMLName.Local] = f.Text
		}
		out = append(out, m)
	}
	return out
}

func TestGetServiceDescriptions(t *testing.T) {
	cat := newCatalog(soapcatalog.Params{})
	got := descriptions(t, cat, "GetServiceDescriptions", `<tns:GetServiceDescriptions/>`, nil)
	want := []map[string]string{
		{"Name": "world", "Type": "MapServer", "Url": publicURL + "/arcgis/services/world/MapServer", "ParentType": "",
			"Capabilities": "Map,Query,Data", "Description": "The world"},
		{"Name": "usa", "Type": "MapServer", "Url": publicURL + "/arcgis/services/usa/MapServer", "ParentType": "",
			"Capabilities": "Map,Query,Data", "Description": ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d services %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("service %d %s = %q, want %q", i, k, got[i][k], v)
			}
		}
	}

	// A token scoped to some services sees only those.
	only := func(name string) bool { return name == "usa" }
	got = descriptions(t, cat, "GetServiceDescriptions", `<tns:GetServiceDescriptions/>`, only)
	if len(got) != 1 || got[0]["Name"] != "usa" {
		t.Errorf("scoped to usa: %v", got)
	}
}

func TestGetServiceDescriptionsEx(t *testing.T) {
	cat := newCatalog(soapcatalog.Params{Services: services{service("world", ""), service("maps/usa", "USA")}})
	for _, folder := range []string{"", "/"} {
		got := descriptions(t, cat, "GetServiceDescriptionsEx", `<tns:GetServiceDescriptionsEx><FolderName>`+folder+`</FolderName></tns:GetServiceDescriptionsEx>`, nil)
		if len(got) != 1 || got[0]["Name"] != "world" {
			t.Errorf("folder %q: %v, want world only", folder, got)
		}
	}
	got := descriptions(t, cat, "GetServiceDescriptionsEx", `<tns:GetServiceDescriptionsEx><FolderName>MAPS</FolderName></tns:GetServiceDescriptionsEx>`, nil)
	if len(got) != 1 || got[0]["Name"] != "maps/usa" || got[0]["Url"] != publicURL+"/arcgis/services/maps/usa/MapServer" {
		t.Errorf("folder MAPS: %v, want maps/usa", got)
	}
	all := descriptions(t, cat, "GetServiceDescriptions", `<tns:GetServiceDescriptions/>`, nil)
	if len(all) != 2 {
		t.Errorf("GetServiceDescriptions lists %d services, want both folders' 2", len(all))
	}

	status, resp := call(t, cat, `<tns:GetServiceDescriptionsEx><FolderName>nosuch</FolderName></tns:GetServiceDescriptionsEx>`, nil)
	checkFault(t, status, resp, http.StatusInternalServerError, "soap:Client", `folder "nosuch" does not exist`)
}

func TestGetFolders(t *testing.T) {
	for _, tc := range []struct {
		name string
		svcs services
		want []string
	}{
		{"root only", services{service("world", ""), service("usa", "")}, nil},
		{"folders", services{service("a/x", ""), service("world", ""), service("b/y", ""), service("A/z", "")}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp := call(t, newCatalog(soapcatalog.Params{Services: tc.svcs}), `<tns:GetFolders/>`, nil)
			if status != http.StatusOK || resp.XMLName.Local != "GetFoldersResponse" || !slices.Equal(resp.names(), []string{"FolderNames"}) {
				t.Fatalf("status %d, %s holding %v", status, resp.XMLName.Local, resp.names())
			}
			var got []string
			for _, s := range resp.Children[0].Children {
				if s.XMLName.Local != "String" {
					t.Errorf("item <%s>, want <String>", s.XMLName.Local)
				}
				got = append(got, s.Text)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("folders %v, want %v", got, tc.want)
			}
		})
	}
}

// scalar calls an operation without parameters and returns the one child of its response.
func scalar(t *testing.T, cat *soapcatalog.Catalog, op, field string) string {
	t.Helper()
	status, resp := call(t, cat, `<tns:`+op+`/>`, nil)
	if status != http.StatusOK || resp.XMLName.Local != op+"Response" || !slices.Equal(resp.names(), []string{field}) {
		t.Fatalf("%s: status %d, %s holding %v; want 200, %sResponse holding [%s]", op, status, resp.XMLName.Local, resp.names(), op, field)
	}
	return resp.Children[0].Text
}

func TestMessageVersionAndFormats(t *testing.T) {
	cat := newCatalog(soapcatalog.Params{})
	if v := scalar(t, cat, "GetMessageVersion", "MessageVersion"); v != "gisArcGISVersion107" {
		t.Errorf("MessageVersion %q, want gisArcGISVersion107", v)
	}
	if v := scalar(t, cat, "GetMessageFormats", "MessageFormats"); v != "gisServiceCatalogMessageFormatSoap" {
		t.Errorf("MessageFormats %q, want gisServiceCatalogMessageFormatSoap", v)
	}
}

func TestTokens(t *testing.T) {
	const tokens = "https://maps.example.test:8443/arcgis/tokens/"
	for _, tc := range []struct {
		on       bool
		requires string
		url      string
	}{{false, "false", ""}, {true, "true", tokens}} {
		cat := newCatalog(soapcatalog.Params{RequiresTokens: tc.on, TokenServiceURL: tokens})
		if v := scalar(t, cat, "RequiresTokens", "Result"); v != tc.requires {
			t.Errorf("tokens on %v: RequiresTokens %q, want %q", tc.on, v, tc.requires)
		}
		if v := scalar(t, cat, "GetTokenServiceURL", "TokenServiceURL"); v != tc.url {
			t.Errorf("tokens on %v: TokenServiceURL %q, want %q", tc.on, v, tc.url)
		}
	}
}

func checkFault(t *testing.T, status int, resp *node, wantStatus int, code, msg string) {
	t.Helper()
	if status != wantStatus || resp.XMLName.Local != "Fault" {
		t.Fatalf("status %d, <%s>; want %d and a Fault", status, resp.XMLName.Local, wantStatus)
	}
	if c := resp.child("faultcode"); c == nil || c.Text != code {
		t.Errorf("faultcode %v, want %s", c, code)
	}
	if s := resp.child("faultstring"); s == nil || !strings.Contains(s.Text, msg) {
		t.Errorf("faultstring %v, want one containing %q", s, msg)
	}
}

func TestFaults(t *testing.T) {
	cat := newCatalog(soapcatalog.Params{MaxBodyBytes: 2000})
	// A MapServer operation is no operation of the Catalog.
	status, resp := call(t, cat, `<tns:GetMapCount/>`, nil)
	checkFault(t, status, resp, http.StatusInternalServerError, "soap:Client", `unknown operation "GetMapCount"`)
	status, resp = call(t, cat, `<tns:NoSuchOperation/>`, nil)
	checkFault(t, status, resp, http.StatusInternalServerError, "soap:Client", `unknown operation "NoSuchOperation"`)
	status, resp = call(t, cat, `<tns:GetFolders>`, nil)
	checkFault(t, status, resp, http.StatusInternalServerError, "soap:Client", "")
	status, resp = call(t, cat, `<tns:GetServiceDescriptionsEx><FolderName>`+strings.Repeat("x", 3000)+`</FolderName></tns:GetServiceDescriptionsEx>`, nil)
	checkFault(t, status, resp, http.StatusRequestEntityTooLarge, "soap:Client", "larger than the limit of 2000 bytes (maxBodyBytes)")
}

func TestWSDL(t *testing.T) {
	cat := newCatalog(soapcatalog.Params{})
	w := httptest.NewRecorder()
	cat.Serve(w, httptest.NewRequest(http.MethodGet, "/arcgis/services?wsdl", nil), nil)
	var defs struct {
		TargetNamespace string `xml:"targetNamespace,attr"`
		Service         struct {
			Name string `xml:"name,attr"`
			Port struct {
				Address struct {
					Location string `xml:"location,attr"`
				} `xml:"address"`
			} `xml:"port"`
		} `xml:"service"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &defs); err != nil || w.Code != http.StatusOK {
		t.Fatalf("status %d, %v\n%s", w.Code, err, w.Body.String())
	}
	if defs.TargetNamespace != ns || defs.Service.Name != "Catalog" || defs.Service.Port.Address.Location != publicURL+"/arcgis/services" {
		t.Errorf("namespace %q, service %q at %q", defs.TargetNamespace, defs.Service.Name, defs.Service.Port.Address.Location)
	}

	w = httptest.NewRecorder()
	cat.Serve(w, httptest.NewRequest(http.MethodGet, "/arcgis/services", nil), nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "?wsdl") {
		t.Errorf("GET without ?wsdl: %d %q", w.Code, w.Body.String())
	}
}
