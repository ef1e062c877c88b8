package rest

import (
	"net/http"
	"sort"
)

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

func (h *Handler) version(w *jsonWriter) {
	w.key("currentVersion")
	w.float(h.p.CurrentVersion)
}

// info answers /arcgis/rest/info: the server's version, its SOAP URL and how it authenticates.
func (h *Handler) info(q *request) error {
	if err := jsonFormat(q); err != nil {
		return err
	}
	var w jsonWriter
	w.objOpen()
	h.version(&w)
	w.key("fullVersion")
	w.str("10.7.1")
	w.key("soapUrl")
	w.str(h.p.PublicURL + "/arcgis/services")
	w.key("secureSoapUrl")
	w.null()
	w.key("authInfo")
	w.objOpen()
	w.key("isTokenBasedSecurity")
	w.bool(h.p.TokenBased)
	if h.p.TokenBased {
		w.key("tokenServicesUrl")
		w.str(h.p.TokenServicesURL)
		w.key("shortLivedTokenValidity")
		w.int(60)
	}
	w.objClose()
	w.objClose()
	return h.writeJSON(q, &w)
}

// catalog answers /arcgis/rest/services and its folders. Services here live in the root
// folder; there are no subfolders, so a folder name is not found.
func (h *Handler) catalog(q *request, folder string) error {
	if folder != "" {
		return &Error{Code: http.StatusNotFound, Message: "Folder not found.", Details: []string{}}
	}
	if err := jsonFormat(q); err != nil {
		return err
	}
	var names []string
	for _, s := range h.p.Services.Services() {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	var w jsonWriter
	w.objOpen()
	h.version(&w)
	w.key("folders")
	w.arrOpen()
	w.arrClose()
	w.key("services")
	w.arrOpen()
	for _, n := range names {
		w.objOpen()
		w.key("name")
		w.str(n)
		w.key("type")
		w.str("MapServer")
		w.objClose()
	}
	w.arrClose()
	w.objClose()
	return h.writeJSON(q, &w)
}
