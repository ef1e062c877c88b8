package rest

import (
	"context"
	"net/http"
	"sort"
)

// visibleKey is the context key of the services a request may see (WithVisible).
type visibleKey struct{}

// WithVisible returns ctx saying that the request it belongs to may see only the services for
// which visible reports true: the catalog (JSON and its HTML page) lists only those. The front
// end sets it from the caller's token, as the SOAP Catalog lists a scoped token's services only.
// Without it every service is listed.
func WithVisible(ctx context.Context, visible func(service string) bool) context.Context {
	return context.WithValue(ctx, visibleKey{}, visible)
}

// visibleIn is the filter WithVisible put in ctx, or one that shows every service.
func visibleIn(ctx context.Context) func(string) bool {
	if v, ok := ctx.Value(visibleKey{}).(func(string) bool); ok && v != nil {
		return v
	}
	return func(string) bool { return true }
}

// writeJSON answers a JSON document in the request's format: f=json compact, f=pjson indented.
func (h *Handler) writeJSON(q *request, w *jsonWriter) error {
	out := w.bytes()
	if q.f == "pjson" {
		out = indent(out)
	}
	q.w.Header().Set("Content-Type", "application/json; charset=utf-8")
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(out)
	return nil
}

// jsonFormat checks that the request asks for JSON (f=json or f=pjson).
func jsonFormat(q *request) error {
	switch q.f {
	case "json", "pjson":
		return nil
	}
	return badRequest("f=%s is not supported here: use f=json or f=pjson", q.f)
}

// writeValue answers v, one of the metadata structs, as writeJSON does.
func (h *Handler) writeValue(q *request, v any) error {
	data, err := encode(v)
	if err != nil {
		return err
	}
	return h.writeJSON(q, &jsonWriter{b: data})
}

// currentVersion is the currentVersion member of a metadata struct.
func (h *Handler) currentVersion() num { return num(h.p.CurrentVersion) }

// infoJSON is /arcgis/rest/info.
type infoJSON struct {
	CurrentVersion num          `json:"currentVersion"`
	FullVersion    text         `json:"fullVersion"`
	SoapURL        text         `json:"soapUrl"`
	SecureSoapURL  null         `json:"secureSoapUrl"`
	AuthInfo       authInfoJSON `json:"authInfo"`
}

type authInfoJSON struct {
	IsTokenBasedSecurity bool `json:"isTokenBasedSecurity"`
	*tokenServicesJSON
}

// tokenServicesJSON is where a token-based server issues its tokens.
type tokenServicesJSON struct {
	TokenServicesURL        text `json:"tokenServicesUrl"`
	ShortLivedTokenValidity int  `json:"shortLivedTokenValidity"`
}

// info answers /arcgis/rest/info: the server's version, its SOAP URL and how it authenticates.
func (h *Handler) info(q *request) error {
	if err := jsonFormat(q); err != nil {
		return err
	}
	v := infoJSON{CurrentVersion: h.currentVersion(), FullVersion: "10.7.1", SoapURL: text(h.p.PublicURL + "/arcgis/services"),
		AuthInfo: authInfoJSON{IsTokenBasedSecurity: h.p.TokenBased}}
	if h.p.TokenBased {
		v.AuthInfo.tokenServicesJSON = &tokenServicesJSON{TokenServicesURL: text(h.p.TokenServicesURL), ShortLivedTokenValidity: 60}
	}
	return h.writeValue(q, v)
}

// catalogJSON is /arcgis/rest/services.
type catalogJSON struct {
	CurrentVersion num                  `json:"currentVersion"`
	Folders        emptyList            `json:"folders"`
	Services       []catalogServiceJSON `json:"services"`
}

type catalogServiceJSON struct {
	Name text `json:"name"`
	Type text `json:"type"`
}

// catalog answers /arcgis/rest/services and its folders: the services the request may see
// (WithVisible), each a MapServer, and a VectorTileServer too when Params.VectorTiles says so
// (ArcGIS lists a service once per type, sorted by name). Services here live in the root folder; there are no subfolders, so a folder
// name is not found.
func (h *Handler) catalog(q *request, folder string) error {
	if folder != "" {
		return &Error{Code: http.StatusNotFound, Message: "Folder not found.", Details: []string{}}
	}
	if err := jsonFormat(q); err != nil {
		return err
	}
	visible := visibleIn(q.ctx)
	var names []string
	for _, s := range h.p.Services.Services() {
		if visible(s.Name) {
			names = append(names, s.Name)
		}
	}
	sort.Strings(names)
	v := catalogJSON{CurrentVersion: h.currentVersion(), Services: make([]catalogServiceJSON, 0, len(names))}
	for _, n := range names {
		v.Services = append(v.Services, catalogServiceJSON{Name: text(n), Type: "MapServer"})
		if h.p.VectorTiles {
			v.Services = append(v.Services, catalogServiceJSON{Name: text(n), Type: "VectorTileServer"})
		}
	}
	return h.writeValue(q, v)
}
