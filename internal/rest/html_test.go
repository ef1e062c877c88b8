package rest_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// htmlPage is a parsed directory page.
type htmlPage struct {
	root *html.Node
}

// getHTML sends a GET that must answer 200 text/html and parses the page.
func getHTML(t *testing.T, h http.Handler, target string) *htmlPage {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s %.300s", target, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	doc, err := html.Parse(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return &htmlPage{root: doc}
}

// all returns the elements with this tag (and class, when not "").
func (p *htmlPage) all(tag, class string) []*html.Node {
	var out []*html.Node
	for n := range p.root.Descendants() {
		if n.Type == html.ElementNode && n.Data == tag && (class == "" || slices.Contains(strings.Fields(attr(n, "class")), class)) {
			out = append(out, n)
		}
	}
	return out
}

// links maps each link's text to its href.
func (p *htmlPage) links() map[string]string {
	m := map[string]string{}
	for _, a := range p.all("a", "") {
		m[text(a)] = attr(a, "href")
	}
	return m
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// tableRows returns a table's rows as cell texts (header row included).
func tableRows(table *html.Node) [][]string {
	var rows [][]string
	for tr := range table.Descendants() {
		if tr.Type != html.ElementNode || tr.Data != "tr" {
			continue
		}
		var row []string
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
				row = append(row, text(c))
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// The directory walks from the catalog to a service, its layers and a layer's fields, by the
// links on each page; without f these resources answer the same HTML.
func TestDirectoryPages(t *testing.T) {
	h := newHandler(t)
	info := getHTML(t, h, "/arcgis/rest/info?f=html")
	links := info.links()
	soapURL := ""
	for text, href := range links {
		if strings.HasSuffix(text, "/arcgis/services") && href == "/arcgis/services?wsdl" {
			soapURL = text
		}
	}
	if links["Home"] != "/arcgis/rest/services" || soapURL == "" {
		t.Errorf("info page: links %v, want Home and the SOAP URL to the Catalog's WSDL", links)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/arcgis/rest/services/nofolder?f=html", nil))
	if rec.Code != http.StatusNotFound || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Errorf("a folder that does not exist: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, target := range []string{"/arcgis/rest/services?f=html", "/arcgis/rest/services"} {
		links := getHTML(t, h, target).links()
		if links["world (MapServer)"] != "/arcgis/rest/services/world/MapServer" || links["usa (MapServer)"] != "/arcgis/rest/services/usa/MapServer" {
			t.Fatalf("%s: links %v", target, links)
		}
	}
	svc := getHTML(t, h, "/arcgis/rest/services/world/MapServer")
	links = svc.links()
	if links["Countries"] != "/arcgis/rest/services/world/MapServer/1" || links["Country points"] != "/arcgis/rest/services/world/MapServer/0" {
		t.Errorf("service page: layer links %v", links)
	}
	if links["Map viewer"] != "/arcgis/rest/services/world/MapServer/viewer" || links["View In JSON"] != "/arcgis/rest/services/world/MapServer?f=pjson" {
		t.Errorf("service page: viewer and JSON links %v", links)
	}
	if len(svc.all("script", "")) != 0 {
		t.Error("the service page has a script")
	}

	layer := getHTML(t, h, "/arcgis/rest/services/world/MapServer/1?f=html")
	tables := layer.all("table", "fields")
	if len(tables) != 1 {
		t.Fatalf("layer page: %d fields tables", len(tables))
	}
	rows := tableRows(tables[0])
	want := [][]string{{"Name", "Type", "Alias", "Length"}, {"fid", "esriFieldTypeOID", "fid", ""}, {"NAME", "esriFieldTypeString", "Name", "255"}}
	if len(rows) < 3 || !slices.Equal(rows[0], want[0]) || !slices.Equal(rows[1], want[1]) || !slices.Equal(rows[2], want[2]) {
		t.Errorf("layer fields: %q", rows)
	}
	if q := layer.links()["Query"]; q != "/arcgis/rest/services/world/MapServer/1/query?f=html" {
		t.Errorf("layer page: query link %q", q)
	}
	// A token the page is asked with goes on in every link and in the query form.
	const tok = "t&k"
	for _, target := range []string{"/arcgis/rest/services", "/arcgis/rest/services/world/MapServer", "/arcgis/rest/services/world/MapServer/1",
		"/arcgis/rest/services/world/MapServer/1/query?f=html"} {
		p := getHTML(t, h, target+map[bool]string{true: "&", false: "?"}[strings.Contains(target, "?")]+"token="+url.QueryEscape(tok))
		for name, href := range p.links() {
			if u, err := url.Parse(href); err != nil || u.Query().Get("token") != tok {
				t.Errorf("%s: link %q to %q has no token", target, name, href)
			}
		}
	}
	form := getHTML(t, h, "/arcgis/rest/services/world/MapServer/1/query?f=html&token="+url.QueryEscape(tok))
	if !slices.ContainsFunc(form.all("input", ""), func(n *html.Node) bool { return attr(n, "name") == "token" && attr(n, "value") == tok }) {
		t.Error("the query form does not send the token")
	}

	// The JSON of the same resources is unchanged with f=json.
	if v := getJSON(t, h, "/arcgis/rest/services/world/MapServer/1?f=json"); v["name"] != "Countries" {
		t.Errorf("layer JSON: name %v", v["name"])
	}
}

// The query form runs the query it is submitted with and shows the records as a table (and the
// count, and the error, when that is what the query answers); it echoes the inputs escaped.
func TestDirectoryQueryForm(t *testing.T) {
	h := newHandler(t)
	base := "/arcgis/rest/services/world/MapServer/1/query?f=html"

	form := getHTML(t, h, base)
	if len(form.all("form", "query")) != 1 || len(form.all("table", "result")) != 0 {
		t.Fatalf("empty form: %d forms, %d result tables", len(form.all("form", "query")), len(form.all("table", "result")))
	}

	p := getHTML(t, h, base+"&"+url.Values{"where": {"NAME IN ('Brazil','Chile')"}, "outFields": {"NAME,ISO_N3"},
		"orderByFields": {"NAME"}, "returnGeometry": {"false"}}.Encode())
	tables := p.all("table", "result")
	if len(tables) != 1 {
		t.Fatalf("query: %d result tables", len(tables))
	}
	rows := tableRows(tables[0])
	want := [][]string{{"NAME", "ISO_N3"}, {"Brazil", "076"}, {"Chile", "152"}}
	if len(rows) != len(want) {
		t.Fatalf("query rows %q, want %q", rows, want)
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, rows[i], want[i])
		}
	}
	for _, in := range p.all("input", "") {
		if attr(in, "name") == "where" && attr(in, "value") != "NAME IN ('Brazil','Chile')" {
			t.Errorf("where input echoes %q", attr(in, "value"))
		}
	}

	count := getHTML(t, h, base+"&where=1%3D1&returnCountOnly=true")
	if c := count.all("span", "count"); len(c) != 1 || text(c[0]) != jsonCount(t, h) {
		t.Errorf("count: %v, JSON says %s", c, jsonCount(t, h))
	}

	// A bad where clause is the query's error on the page, and the hostile input stays text.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+"&where="+url.QueryEscape("<script>alert(1)</script>"), nil))
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, `class="error"`) || strings.Contains(body, "<script>") {
		t.Errorf("bad where: %d %s", rec.Code, body)
	}
}

func jsonCount(t *testing.T, h http.Handler) string {
	t.Helper()
	v := getJSON(t, h, "/arcgis/rest/services/world/MapServer/1/query?f=json&where=1%3D1&returnCountOnly=true")
	c, ok := v["count"].(float64)
	if !ok || c < 100 {
		t.Fatalf("count %v", v["count"])
	}
	return strconv.Itoa(int(c))
}

// The viewer page loads its assets from the farm, and the assets are served.
func TestViewerRoutes(t *testing.T) {
	h := newHandler(t)
	p := getHTML(t, h, "/arcgis/rest/services/world/MapServer/viewer")
	var srcs []string
	for _, s := range p.all("script", "") {
		srcs = append(srcs, attr(s, "src"))
	}
	if !slices.Equal(srcs, []string{"/arcgis/rest/services/world/MapServer/viewer/viewer.js"}) {
		t.Errorf("viewer scripts %q", srcs)
	}
	for _, c := range []struct{ path string }{{"viewer.js"}, {"viewer.css"}} {
		code, body := get(t, h, "/arcgis/rest/services/world/MapServer/viewer/"+c.path)
		if code != 200 || len(body) < 1000 {
			t.Errorf("%s: %d, %d bytes", c.path, code, len(body))
		}
	}
	if code, _ := get(t, h, "/arcgis/rest/services/world/MapServer/viewer/nosuch.js"); code != 404 {
		t.Errorf("missing asset: %d", code)
	}

	// The token the page is opened with goes on to its assets and its script, escaped.
	tok := `a"b<c>&d`
	p = getHTML(t, h, "/arcgis/rest/services/world/MapServer/viewer?token="+url.QueryEscape(tok))
	scripts := p.all("script", "")
	if len(scripts) != 1 {
		t.Fatalf("%d scripts", len(scripts))
	}
	src, err := url.Parse(attr(scripts[0], "src"))
	if err != nil || src.Query().Get("token") != tok {
		t.Errorf("script src %q (%v)", attr(scripts[0], "src"), err)
	}
	if body := p.all("body", ""); len(body) != 1 || attr(body[0], "data-token") != tok {
		t.Errorf("body data-token: %v", body)
	}
}
