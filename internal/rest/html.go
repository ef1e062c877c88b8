package rest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// The services directory: f=html on the catalog, a MapServer, its layers and a layer's query,
// as ArcGIS's directory answers them. A page is drawn from the JSON its resource answers: the
// JSON handler runs into a buffer, the answer is decoded, and a template renders the values, so
// the directory cannot drift from the REST API it shows. Templates are in templates/.

//go:embed templates/*.html
var templateFiles embed.FS

// directory holds the parsed templates of the services directory.
type directory struct {
	t *template.Template
}

func newDirectory() *directory {
	return &directory{t: template.Must(template.New("").Funcs(template.FuncMap{"value": htmlValue}).ParseFS(templateFiles, "templates/*.html"))}
}

// htmlDefault says whether a request without f answers HTML: ArcGIS's directory resources do
// (the catalog, a MapServer, its layers and a layer), operations answer JSON.
func htmlDefault(parts []string) bool {
	switch {
	case len(parts) == 1 && parts[0] == "services":
		return true
	case len(parts) == 3 && parts[0] == "services" && parts[2] == "MapServer":
		return true
	case len(parts) == 4 && parts[0] == "services" && parts[2] == "MapServer":
		if parts[3] == "layers" {
			return true
		}
		_, err := strconv.Atoi(parts[3])
		return err == nil
	}
	return false
}

// bufferWriter collects the JSON answer of a resource that a page shows.
type bufferWriter struct {
	h      http.Header
	status int
	buf    bytes.Buffer
}

func (b *bufferWriter) Header() http.Header         { return b.h }
func (b *bufferWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }
func (b *bufferWriter) WriteHeader(status int)      { b.status = status }

// resourceJSON runs a JSON resource for q (forced to f=json) and decodes its answer.
func resourceJSON(q *request, run func(*request) error) (map[string]any, error) {
	bw := &bufferWriter{h: http.Header{}}
	sub := *q
	sub.f = "json"
	sub.w = bw
	if err := run(&sub); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(&bw.buf)
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding the resource's JSON: %w", err)
	}
	return v, nil
}

// crumb is one step of a page's breadcrumbs.
type crumb struct {
	Name, Href string
}

// page is what every template gets.
type page struct {
	Title   string
	Crumbs  []crumb
	JSONURL string // the same resource as f=pjson
	V       map[string]any
	// Service and Layer pages.
	ServiceURL string
	Layers     []layerLink
	// Query form and result.
	Form   []formField
	Result *queryResult
	Error  *Error
	// Token is the token the page was asked with: Link adds it to the page's links, and the
	// query form sends it, so that a farm that needs tokens can be browsed.
	Token string
}

// Link is href with the page's token, if any.
func (p *page) Link(href string) string {
	if p.Token == "" {
		return href
	}
	sep := "?"
	if strings.Contains(href, "?") {
		sep = "&"
	}
	return href + sep + "token=" + url.QueryEscape(p.Token)
}

type layerLink struct {
	ID   string
	Name string
	Href string
}

// formField is one input of the query form.
type formField struct {
	Name, Label, Value string
	Options            []string // a select when set
}

// queryResult is a query answer as a table.
type queryResult struct {
	Count     string // returnCountOnly
	IDs       []string
	Columns   []string
	Rows      [][]string
	Exceeded  bool
	NFeatures int
}

const servicesPath = "/arcgis/rest/services"

func serviceHref(service string) string {
	return servicesPath + "/" + url.PathEscape(service) + "/MapServer"
}

// serveHTML answers a directory page. The routes are those of ServeHTTP; resources without a
// page answer f=html as ArcGIS does for an unsupported format.
func (h *Handler) serveHTML(q *request, parts []string) error {
	root := []crumb{{Name: "Home", Href: servicesPath}}
	p := page{JSONURL: q.r.URL.Path + "?f=pjson", Token: q.param("token")}
	var name string
	switch {
	case len(parts) == 1 && parts[0] == "info":
		v, err := resourceJSON(q, h.info)
		if err != nil {
			return err
		}
		p.Title, p.V, p.Crumbs, name = "Server Information", v, root, "info"
	case (len(parts) == 1 || len(parts) == 2) && parts[0] == "services":
		folder := ""
		if len(parts) == 2 {
			folder = parts[1]
		}
		v, err := resourceJSON(q, func(q *request) error { return h.catalog(q, folder) })
		if err != nil {
			return err
		}
		p.Title, p.V, p.Crumbs, name = "Folder: /"+folder, v, root, "catalog"
		for _, s := range list(v["services"]) {
			n := fmt.Sprint(s["name"])
			href, typ := serviceHref(n), fmt.Sprint(s["type"])
			if typ == "VectorTileServer" {
				href = servicesPath + "/" + url.PathEscape(n) + "/VectorTileServer" // its JSON: no page of its own
			}
			p.Layers = append(p.Layers, layerLink{Name: n + " (" + typ + ")", Href: href})
		}
	case len(parts) >= 3 && parts[0] == "services" && parts[2] == "MapServer":
		svc, ok := h.p.Ops.Service(parts[1])
		if !ok {
			return notFoundErr("Service %s/MapServer not found", parts[1])
		}
		ms := &mapService{h: h, svc: svc, call: &mapserver.Call{Service: svc, RequestID: requestID(q.r)}}
		p.ServiceURL = serviceHref(parts[1])
		svcCrumbs := append(root, crumb{Name: parts[1] + " (MapServer)", Href: p.ServiceURL})
		rest := parts[3:]
		switch {
		case len(rest) == 0 || (len(rest) == 1 && rest[0] == "layers"):
			v, err := resourceJSON(q, ms.root)
			if err != nil {
				return err
			}
			p.Title, p.V, p.Crumbs, name = parts[1]+" (MapServer)", v, svcCrumbs, "service"
			for _, key := range []string{"layers", "tables"} {
				for _, l := range list(v[key]) {
					id := fmt.Sprint(l["id"])
					p.Layers = append(p.Layers, layerLink{ID: id, Name: fmt.Sprint(l["name"]), Href: p.ServiceURL + "/" + id})
				}
			}
		case len(rest) == 1 || (len(rest) == 2 && rest[1] == "query"):
			id, err := layerID(rest[0])
			if err != nil {
				return err
			}
			lv, err := resourceJSON(q, func(q *request) error { return ms.layer(q, id) })
			if err != nil {
				return err
			}
			p.Crumbs = append(svcCrumbs, crumb{Name: fmt.Sprint(lv["name"]), Href: p.ServiceURL + "/" + rest[0]})
			if len(rest) == 1 {
				p.Title, p.V, name = fmt.Sprintf("Layer: %v (ID: %d)", lv["name"], id), lv, "layer"
				break
			}
			p.Title, name = fmt.Sprintf("Query: %v (ID: %d)", lv["name"], id), "query"
			p.Crumbs = append(p.Crumbs, crumb{Name: "query", Href: p.ServiceURL + "/" + rest[0] + "/query?f=html"})
			p.Form = queryForm(q)
			p.JSONURL = ""
			if hasQuery(q) {
				v, err := resourceJSON(q, func(q *request) error { return ms.query(q, id) })
				if err != nil {
					p.Error = asError(err)
				} else {
					p.Result = tableOf(v)
				}
			}
		default:
			return badRequest("f=html is not supported here")
		}
	default:
		return badRequest("f=html is not supported here")
	}
	return h.renderPage(q, http.StatusOK, name, &p)
}

func (h *Handler) renderPage(q *request, status int, name string, p *page) error {
	var buf bytes.Buffer
	if err := h.dir.t.ExecuteTemplate(&buf, name+".html", p); err != nil {
		return fmt.Errorf("rendering the %s page: %w", name, err)
	}
	q.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	q.w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
	q.w.WriteHeader(status)
	_, _ = q.w.Write(buf.Bytes())
	return nil
}

// writeHTMLError answers an error as a directory page; the status is the error's code.
func (h *Handler) writeHTMLError(q *request, e *Error) {
	status := e.Code
	if status < 400 || status > 599 {
		status = http.StatusBadRequest
	}
	p := page{Title: "Error", Crumbs: []crumb{{Name: "Home", Href: servicesPath}}, Error: e, Token: q.param("token")}
	if err := h.renderPage(q, status, "error", &p); err != nil {
		h.p.Logger.Error("rest html error page", "request_id", requestID(q.r), "path", q.r.URL.Path, "err", err)
	}
}

// queryParams are the query form's inputs, in ArcGIS's order; the select ones list their
// choices.
var queryParams = []formField{
	{Name: "where", Label: "Where"},
	{Name: "objectIds", Label: "Object IDs"},
	{Name: "geometry", Label: "Input Geometry"},
	{Name: "geometryType", Label: "Geometry Type", Options: []string{"esriGeometryEnvelope", "esriGeometryPoint", "esriGeometryPolyline", "esriGeometryPolygon", "esriGeometryMultipoint"}},
	{Name: "inSR", Label: "Input Spatial Reference"},
	{Name: "spatialRel", Label: "Spatial Relationship", Options: []string{"esriSpatialRelIntersects", "esriSpatialRelContains", "esriSpatialRelCrosses", "esriSpatialRelEnvelopeIntersects", "esriSpatialRelIndexIntersects", "esriSpatialRelOverlaps", "esriSpatialRelTouches", "esriSpatialRelWithin"}},
	{Name: "outFields", Label: "Out Fields"},
	{Name: "returnGeometry", Label: "Return Geometry", Options: []string{"true", "false"}},
	{Name: "outSR", Label: "Output Spatial Reference"},
	{Name: "orderByFields", Label: "Order By Fields"},
	{Name: "resultOffset", Label: "Result Offset"},
	{Name: "resultRecordCount", Label: "Result Record Count"},
	{Name: "returnCountOnly", Label: "Return Count Only", Options: []string{"false", "true"}},
	{Name: "returnIdsOnly", Label: "Return IDs Only", Options: []string{"false", "true"}},
	{Name: "returnDistinctValues", Label: "Return Distinct Values", Options: []string{"false", "true"}},
}

// queryForm is the form with the request's values filled in.
func queryForm(q *request) []formField {
	out := make([]formField, len(queryParams))
	for i, f := range queryParams {
		f.Value = q.param(f.Name)
		if f.Value == "" && f.Options != nil {
			f.Value = f.Options[0]
		}
		out[i] = f
	}
	return out
}

// hasQuery says whether the form was submitted with something to query by.
func hasQuery(q *request) bool {
	return q.param("where") != "" || q.param("objectIds") != "" || q.param("geometry") != ""
}

// tableOf lays a query's JSON answer out as a table: a column per field, a row per feature.
func tableOf(v map[string]any) *queryResult {
	r := &queryResult{}
	if c, ok := v["count"]; ok {
		r.Count = fmt.Sprint(c)
		return r
	}
	if ids, ok := v["objectIds"]; ok {
		for _, id := range asSlice(ids) {
			r.IDs = append(r.IDs, fmt.Sprint(id))
		}
		return r
	}
	r.Exceeded = v["exceededTransferLimit"] == true
	for _, f := range list(v["fields"]) {
		r.Columns = append(r.Columns, fmt.Sprint(f["name"]))
	}
	features := list(v["features"])
	r.NFeatures = len(features)
	if len(r.Columns) == 0 && len(features) > 0 {
		// Distinct values and statistics name no fields: take the first feature's.
		for k := range asMap(features[0]["attributes"]) {
			r.Columns = append(r.Columns, k)
		}
		sort.Strings(r.Columns)
	}
	hasGeometry := false
	for _, f := range features {
		if f["geometry"] != nil {
			hasGeometry = true
			break
		}
	}
	if hasGeometry {
		r.Columns = append(r.Columns, "Shape")
	}
	for _, f := range features {
		attrs := asMap(f["attributes"])
		row := make([]string, 0, len(r.Columns))
		for _, c := range r.Columns[:len(r.Columns)-btoi(hasGeometry)] {
			row = append(row, htmlValue(attrs[c]))
		}
		if hasGeometry {
			row = append(row, htmlValue(f["geometry"]))
		}
		r.Rows = append(r.Rows, row)
	}
	return r
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// htmlValue is a JSON value as the directory prints it: strings as they are, null as "Null",
// objects and arrays as compact JSON cut at 200 characters.
func htmlValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "Null"
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// list is a JSON array of objects.
func list(v any) []map[string]any {
	var out []map[string]any
	for _, e := range asSlice(v) {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// isViewer says whether the path is the map viewer's page or an asset of it (served by
// internal/viewer whatever f says).
func isViewer(parts []string) bool {
	return len(parts) >= 4 && parts[0] == "services" && parts[2] == "MapServer" && parts[3] == "viewer"
}
