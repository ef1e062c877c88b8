package api

import (
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/mapfarm/mapfarm/internal/admincred"
)

// adminTrust decides whether an admin request comes from where the operator's tools send
// theirs, before its credential is looked at. A loopback peer is not only the operator: a web
// page in the operator's browser can send a simple cross-site request, a reverse proxy on the
// same host connects from 127.0.0.1, and DNS rebinding points another domain at the api. So,
// whatever the credential, an admin request is refused (403) when
//
//   - it is cross-site: an Origin other than the api's own, a Sec-Fetch-Site other than
//     same-origin or none, or a body that is not application/json (what a page may send without
//     a CORS preflight: text/plain, forms);
//   - it was forwarded (X-Forwarded-For, X-Forwarded-Host, Forwarded, X-Real-IP) by a peer that
//     is not a trusted proxy (Security.TrustedProxies);
//   - its Host is unknown: not the public URL's host, not a loopback name or address, and not
//     one of Security.AdminHosts.
type adminTrust struct {
	hosts   []string       // lower-case host names allowed besides the loopback ones
	origins []string       // the api's own origins, from the public URL
	proxies []netip.Prefix // trusted proxies
}

// forwardHeaders are the headers by which a proxy names the client or the host it was asked for.
var forwardHeaders = []string{"X-Forwarded-For", "X-Forwarded-Host", "Forwarded", "X-Real-Ip"}

func newAdminTrust(publicURL string, sec Security) *adminTrust {
	a := &adminTrust{}
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		a.hosts = append(a.hosts, strings.ToLower(u.Hostname()))
		a.origins = append(a.origins, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	for _, h := range sec.AdminHosts {
		a.hosts = append(a.hosts, strings.ToLower(strings.TrimSpace(h)))
	}
	for _, p := range sec.TrustedProxies {
		if pre, err := netip.ParsePrefix(p); err == nil {
			a.proxies = append(a.proxies, pre.Masked())
		} else if addr, err := netip.ParseAddr(p); err == nil {
			a.proxies = append(a.proxies, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
		}
	}
	return a
}

// refusal is why r may not reach an admin route, or "" when it may.
func (a *adminTrust) refusal(r *http.Request) string {
	if reason := a.forwarded(r); reason != "" {
		return reason
	}
	host := hostOnly(r.Host)
	if !a.knownHost(host) {
		return "the admin routes do not answer for host " + quoteShort(host) + ": use the public URL's host or a loopback address, or list it in MAPFARM_ADMIN_HOSTS"
	}
	return a.crossSite(r)
}

func (a *adminTrust) forwarded(r *http.Request) string {
	named := slices.ContainsFunc(forwardHeaders, func(h string) bool { return len(r.Header.Values(h)) > 0 })
	if !named {
		return ""
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err == nil {
		if addr, err := netip.ParseAddr(host); err == nil {
			addr = addr.Unmap()
			if slices.ContainsFunc(a.proxies, func(p netip.Prefix) bool { return p.Contains(addr) }) {
				return ""
			}
		}
	}
	return "the admin routes refuse forwarded requests from a proxy that is not trusted (MAPFARM_TRUSTED_PROXIES)"
}

func (a *adminTrust) knownHost(host string) bool {
	if host == "" {
		return false
	}
	return admincred.IsLoopbackHost(host) || slices.Contains(a.hosts, strings.ToLower(host))
}

func (a *adminTrust) crossSite(r *http.Request) string {
	const refused = "the admin routes refuse cross-site requests"
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return refused + " (Sec-Fetch-Site " + quoteShort(r.Header.Get("Sec-Fetch-Site")) + ")"
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		o := strings.ToLower(origins[0])
		self := []string{"http://" + strings.ToLower(r.Host), "https://" + strings.ToLower(r.Host)}
		if len(origins) > 1 || !slices.Contains(a.origins, o) && !slices.Contains(self, o) {
			return refused + " (Origin " + quoteShort(origins[0]) + ")"
		}
	}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 || r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return refused + ": a request body must be application/json"
		}
	}
	return ""
}

// hostOnly is the host of a Host header, without port or IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// quoteShort quotes s for an error message, cut to 100 bytes: hostile input is not echoed whole.
func quoteShort(s string) string {
	if len(s) > 100 {
		s = strings.ToValidUTF8(s[:100], "") + "…"
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < ' ' || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, s) + `"`
}
