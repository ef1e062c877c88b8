package legislative

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	_ "time/tzdata" // the legislature's time zone must load without system tzdata
)

// Options configure a Handler. The zero value is ready to use.
type Options struct {
	// Now returns the current time; it decides the date in the
	// pending-meetings links and the current/active flags. Default time.Now.
	Now func() time.Time
	// Location is the legislature's time zone. Default America/New_York.
	Location *time.Location
	// GzipMinSize is the smallest JSON body served gzip-compressed to
	// clients that accept it. Zero means 4096 bytes; negative disables
	// compression.
	GzipMinSize int
	// StaticURL prefixes the browsable page's CSS and script links, like
	// Django's STATIC_URL. Empty means "/static/".
	StaticURL string
}

// defaultGzipMinSize keeps the session list and details (about 2.5 KB)
// uncompressed, so their headers are exactly those of the live service, and
// compresses the large sub-collections.
const defaultGzipMinSize = 4096

// Handler serves the legislative-data API under /api/v2/. It expects the full
// original URL path (starting with /api/v2) and does not depend on any router.
type Handler struct {
	snap    atomic.Pointer[snapshot]
	router  *router
	now     func() time.Time
	loc     *time.Location
	gzipMin int
	static  string
	page    *pageRenderer
	// realClock is true when Options.Now was not set.
	realClock bool
}

// New returns a Handler serving the default dataset.
func New(opts Options) *Handler {
	h := &Handler{
		router:  newRouter(),
		now:     opts.Now,
		loc:     opts.Location,
		gzipMin: opts.GzipMinSize,
		static:  opts.StaticURL,
	}
	if h.now == nil {
		h.now = time.Now
		h.realClock = true
	}
	if h.loc == nil {
		h.loc = legislatureLocation()
	}
	if h.gzipMin == 0 {
		h.gzipMin = defaultGzipMinSize
	}
	if h.static == "" {
		h.static = "/static/"
	}
	h.page = newPageRenderer(h.static)
	if err := h.LoadJSON(defaultDatasetJSON); err != nil {
		// The embedded dataset is checked by the package tests.
		panic(fmt.Sprintf("legislative: embedded dataset: %v", err))
	}
	return h
}

func legislatureLocation() *time.Location {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		// Unreachable: time/tzdata is linked in. Eastern Standard Time is
		// the least wrong fallback.
		return time.FixedZone("EST", -5*60*60)
	}
	return loc
}

// LoadJSON validates a dataset document and, if it is valid, replaces the
// served dataset with it in one atomic step. An invalid document changes
// nothing and the error wraps ErrInvalidDataset.
func (h *Handler) LoadJSON(data []byte) error {
	ds, err := ParseDataset(data)
	if err != nil {
		return err
	}
	h.swap(ds, digestOf(data))
	return nil
}

// SetDataset validates ds and, if it is valid, serves it from now on.
func (h *Handler) SetDataset(ds *Dataset) error {
	if err := ds.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(ds)
	if err != nil {
		return fmt.Errorf("legislative: encode dataset: %w", err)
	}
	h.swap(ds, digestOf(data))
	return nil
}

// Digest returns the sha256 (hex) of the dataset document being served.
func (h *Handler) Digest() string { return h.snap.Load().digest }

func (h *Handler) swap(ds *Dataset, digest string) {
	h.snap.Store(compile(ds, digest, h.router, h.loc, h.gzipMin, h.realClock))
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Shared header values; never modified.
var (
	hvJSON       = []string{"application/json"}
	hvHTML       = []string{"text/html; charset=utf-8"}
	hvHTMLPlain  = []string{"text/html"}
	hvVary       = []string{"Accept"}
	hvVaryGzip   = []string{"Accept, Accept-Encoding"}
	hvAllow      = []string{"GET, HEAD, OPTIONS"}
	hvGzip       = []string{"gzip"}
	hvZero       = []string{"0"}
	bodyNotFound = []byte(`{"detail":"Not found."}`)
	bodyNotAcc   = []byte(`{"detail":"Could not satisfy the request Accept header."}`)
	// Django's own page for a URL no pattern matches.
	bodyHTML404 = []byte("\n<!doctype html>\n<html lang=\"en\">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n")
)

const mountPath = "/api/v2"

// resolves reports whether path is routed (Django's is_valid_path).
func (h *Handler) resolves(path string) bool {
	rel, ok := strings.CutPrefix(path, mountPath+"/")
	if !ok {
		return false
	}
	_, _, ok = h.router.match(rel)
	return ok
}

// ServeHTTP implements http.Handler. The method is read in upper case, whatever case the
// client sent, as Django's request.method is: "get" is a GET.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m := strings.ToUpper(r.Method); m != r.Method {
		r = r.Clone(r.Context())
		r.Method = m
	}
	path := r.URL.Path
	snap := h.snap.Load()
	var (
		rt  *route
		p   params
		res *resource
	)
	rel, ok := strings.CutPrefix(path, mountPath+"/")
	if ok {
		if res, ok = snap.static[rel]; ok {
			rt = res.route
			if res.sid != "" {
				res = snap.dayFor(h.now).details[res.sid]
			}
		} else {
			rt, p, ok = h.router.match(rel)
		}
	}
	if !ok {
		if !strings.HasSuffix(path, "/") && h.resolves(path+"/") {
			h.redirectSlash(w, r)
			return
		}
		h.writeHTML404(w, r)
		return
	}

	format, accept, hasAccept := requestFormat(r)
	neg, failure := negotiate(format, accept, hasAccept)
	switch failure {
	case negUnknownFormat:
		h.writeJSON(w, r, http.StatusNotFound, bodyNotFound, negotiated{})
		return
	case negNotAcceptable:
		h.writeJSON(w, r, http.StatusNotAcceptable, bodyNotAcc, negotiated{})
		return
	}

	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if res == nil {
			res = h.dynamic(snap, rt, p)
		}
		if res == nil {
			h.respond(w, r, rt, http.StatusNotFound, bodyNotFound, neg)
			return
		}
		if neg.renderer == renderJSON && neg.indent == 0 {
			h.writeResource(w, r, res)
			return
		}
		h.respond(w, r, rt, http.StatusOK, res.body, neg)
	case http.MethodOptions:
		h.respond(w, r, rt, http.StatusOK, metadataBody(rt), neg)
	default:
		body := encodeJSON(map[string]string{"detail": `Method "` + strings.ToUpper(r.Method) + `" not allowed.`})
		h.respond(w, r, rt, http.StatusMethodNotAllowed, body, neg)
	}
}

// requestFormat returns the ?format= value (the last one, as Django's
// QueryDict.get does, read as Django reads it: parseQuery) and the Accept header.
func requestFormat(r *http.Request) (format, accept string, hasAccept bool) {
	if r.URL.RawQuery != "" {
		if vs := parseQuery(r.URL.RawQuery)["format"]; len(vs) > 0 {
			format = vs[len(vs)-1]
		}
	}
	vals, hasAccept := r.Header["Accept"]
	if hasAccept {
		accept = strings.Join(vals, ",")
	}
	return format, accept, hasAccept
}

// dynamic answers the views whose body depends on the request: the session
// detail (today's date) and the pending meetings (date in the path). It
// returns nil for anything unknown, which the caller answers with 404.
func (h *Handler) dynamic(snap *snapshot, rt *route, p params) *resource {
	cs, ok := snap.sessions[p.sid]
	if !ok {
		return nil
	}
	switch rt.kind {
	case kSessionDetail:
		return snap.dayFor(h.now).details[p.sid]
	case kPendingMeetings:
		return snap.pending(rt, cs, rt.chamber, p.date)
	}
	return nil
}

func (h *Handler) setDRFHeaders(hdr http.Header, ct []string, vary []string) {
	hdr["Content-Type"] = ct
	hdr["Vary"] = vary
	hdr["Allow"] = hvAllow
}

// writeResource serves a pre-rendered compact JSON body with conditional
// GET and, for large bodies, gzip.
func (h *Handler) writeResource(w http.ResponseWriter, r *http.Request, res *resource) {
	hdr := w.Header()
	body, etag, length := res.body, res.etag, res.length
	vary := hvVary
	if res.gz != nil {
		vary = hvVaryGzip
		if ae, ok := r.Header["Accept-Encoding"]; ok && acceptsGzip(ae) {
			body, etag, length = res.gz, res.gzEtag, res.gzLen
			hdr["Content-Encoding"] = hvGzip
		}
	}
	if inm, ok := r.Header["If-None-Match"]; ok && etagMatch(inm, etag[0]) {
		// As Django's ConditionalGetMiddleware: only validators and Vary.
		hdr["Etag"] = etag
		hdr["Vary"] = vary
		delete(hdr, "Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.setDRFHeaders(hdr, hvJSON, vary)
	hdr["Etag"] = etag
	hdr["Content-Length"] = length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // a failed write means the client went away
	}
}

// respond renders a DRF view response (data already compact JSON) with the
// negotiated renderer.
func (h *Handler) respond(w http.ResponseWriter, r *http.Request, rt *route, status int, compact []byte, neg negotiated) {
	if neg.renderer == renderHTML {
		h.writeBody(w, r, status, hvHTML, h.page.render(h, r, rt, status, compact))
		return
	}
	h.writeJSON(w, r, status, compact, neg)
}

func (h *Handler) writeJSON(w http.ResponseWriter, r *http.Request, status int, compact []byte, neg negotiated) {
	body := compact
	if neg.indent > 0 {
		body = indentJSON(compact, neg.indent)
	}
	h.writeBody(w, r, status, hvJSON, body)
}

// writeBody writes status and body, of content type ct, with DRF's headers (no body for HEAD).
func (h *Handler) writeBody(w http.ResponseWriter, r *http.Request, status int, ct []string, body []byte) {
	hdr := w.Header()
	h.setDRFHeaders(hdr, ct, hvVary)
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func indentJSON(compact []byte, n int) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", strings.Repeat(" ", n)); err != nil {
		return compact // our bodies are valid JSON; keep them as they are
	}
	return b.Bytes()
}

// redirectSlash answers like Django's CommonMiddleware with APPEND_SLASH.
func (h *Handler) redirectSlash(w http.ResponseWriter, r *http.Request) {
	loc := r.URL.EscapedPath() + "/"
	if r.URL.RawQuery != "" {
		loc += "?" + r.URL.RawQuery
	}
	hdr := w.Header()
	hdr["Content-Type"] = hvHTML
	hdr["Location"] = []string{loc}
	hdr["Content-Length"] = hvZero
	w.WriteHeader(http.StatusMovedPermanently)
}

func (h *Handler) writeHTML404(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr["Content-Type"] = hvHTMLPlain
	hdr["Content-Length"] = []string{strconv.Itoa(len(bodyHTML404))}
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = w.Write(bodyHTML404)
	}
}

// metadata is DRF's SimpleMetadata answer to OPTIONS on a read-only view.
type metadata struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Renders     []string `json:"renders"`
	Parses      []string `json:"parses"`
}

func metadataBody(rt *route) []byte {
	return encodeJSON(metadata{
		Name:        rt.view.name,
		Description: rt.view.desc,
		Renders:     []string{"application/json", "text/html"},
		Parses:      []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"},
	})
}

// replaceFormat returns the request's full path with its format parameter
// set to value and the query re-encoded with sorted keys, as DRF's
// replace_query_param does (its parse_qs reads the query as parseQuery does).
func replaceFormat(r *http.Request, value string) string {
	q := parseQuery(r.URL.RawQuery)
	q["format"] = []string{value}
	return r.URL.EscapedPath() + "?" + q.Encode()
}
