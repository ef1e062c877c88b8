package legislative

import (
	"bytes"
	"crypto/rand"
	_ "embed"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/template"
)

// The browsable page reproduces the HTML that DRF's BrowsableAPIRenderer
// produced for this API in the probe (../testdata/root_format_api.html),
// with the parts that vary filled in by pageRenderer.
//
//go:embed browsable.html.tmpl
var browsableTemplate string

type pageRenderer struct {
	tmpl   *template.Template
	static string
}

func newPageRenderer(static string) *pageRenderer {
	return &pageRenderer{
		tmpl:   template.Must(template.New("browsable").Parse(browsableTemplate)),
		static: static,
	}
}

// pageData holds already-escaped HTML fragments; the template inserts them
// verbatim (text/template does no escaping of its own).
type pageData struct {
	Name, Static, Crumbs, FullPath, JSONURL, APIURL string
	Description, Method, Status, Headers, Content   string
	CSRF                                            string
}

const pageHeaders = "\n<b>Allow:</b> <span class=\"lit\">GET, HEAD, OPTIONS</span>" +
	"\n<b>Content-Type:</b> <span class=\"lit\">application/json</span>" +
	"\n<b>Vary:</b> <span class=\"lit\">Accept</span>"

func (pr *pageRenderer) render(h *Handler, r *http.Request, rt *route, status int, compact []byte) []byte {
	full := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		full += "?" + r.URL.RawQuery
	}
	// DRF's markup_description without markdown: the docstring escaped, in a paragraph, also
	// when it is empty ("<p></p>").
	desc := "<p>" + strings.ReplaceAll(htmlEscape(rt.view.desc), "\n", "<br />") + "</p>"
	data := pageData{
		Name:        htmlEscape(rt.view.name),
		Static:      htmlEscape(pr.static),
		Crumbs:      h.crumbs(r),
		FullPath:    htmlEscape(full),
		JSONURL:     htmlEscape(replaceFormat(r, "json")),
		APIURL:      htmlEscape(replaceFormat(r, "api")),
		Description: desc,
		Method:      htmlEscape(strings.ToUpper(r.Method)),
		Status:      strconv.Itoa(status) + " " + http.StatusText(status),
		Headers:     pageHeaders,
		Content:     urlize(string(indentJSON(compact, 4))),
		CSRF:        csrfToken(),
	}
	var b bytes.Buffer
	if err := pr.tmpl.Execute(&b, data); err != nil {
		// The template only reads string fields of pageData.
		panic("legislative: browsable page: " + err.Error())
	}
	return b.Bytes()
}

// crumbs builds the breadcrumb list items: every ancestor of the request
// path that is itself a routed URL, as DRF's get_breadcrumbs does.
func (h *Handler) crumbs(r *http.Request) string {
	type crumb struct{ name, url string }
	var list []crumb
	suffix := ""
	if vs := parseQuery(r.URL.RawQuery)["format"]; len(vs) > 0 {
		suffix = "?format=" + queryEscapeDRF(vs[len(vs)-1])
	}
	u := r.URL.Path
	for {
		if rel, ok := strings.CutPrefix(u, mountPath+"/"); ok {
			if rt, _, ok := h.router.match(rel); ok {
				list = append(list, crumb{rt.view.name, u + suffix})
			}
		}
		if u == "" {
			break
		}
		if strings.HasSuffix(u, "/") {
			u = strings.TrimRight(u, "/")
		} else {
			u = u[:strings.LastIndexByte(u, '/')+1]
		}
	}
	var b strings.Builder
	for i := len(list) - 1; i >= 0; i-- {
		b.WriteString("            \n              \n                <li")
		if i == 0 {
			b.WriteString(` class="active"`)
		}
		b.WriteString(`><a href="` + htmlEscape(list[i].url) + `">` + htmlEscape(list[i].name) + "</a></li>\n              \n")
	}
	return b.String()
}

func queryEscapeDRF(s string) string {
	// replace_query_param re-encodes with urlencode, which escapes as
	// url.QueryEscape does.
	return url.QueryEscape(s)
}

// htmlEscape is Django's escape filter.
func htmlEscape(s string) string {
	return htmlReplacer.Replace(s)
}

var htmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;")

// urlize escapes text and turns http(s) URLs in it into links, a subset of
// Django's urlize filter (bare domains and e-mail addresses are not linked).
func urlize(text string) string {
	var b strings.Builder
	for len(text) > 0 {
		i := indexURL(text)
		if i < 0 {
			b.WriteString(htmlEscape(text))
			break
		}
		b.WriteString(htmlEscape(text[:i]))
		j := i
		for j < len(text) && !isURLStop(text[j]) {
			j++
		}
		link := strings.TrimRight(text[i:j], ".,:;!")
		b.WriteString(`<a href="` + htmlEscape(link) + `" rel="nofollow">` + htmlEscape(link) + `</a>`)
		text = text[i+len(link):]
	}
	return b.String()
}

func indexURL(s string) int {
	i := strings.Index(s, "http://")
	if k := strings.Index(s, "https://"); k >= 0 && (i < 0 || k < i) {
		i = k
	}
	for i > 0 && !isURLStop(s[i-1]) {
		// only a URL at the start of a word counts
		next := indexURL(s[i+1:])
		if next < 0 {
			return -1
		}
		i += 1 + next
	}
	return i
}

func isURLStop(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '"' || c == '\'' || c == '<' || c == '>'
}

const csrfAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// csrfToken returns a fresh 64-character token like Django's masked token.
func csrfToken() string {
	var raw [64]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	for i, c := range raw {
		raw[i] = csrfAlphabet[int(c)%len(csrfAlphabet)]
	}
	return string(raw[:])
}
