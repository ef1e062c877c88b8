package e2e

import (
	"net/http"
	"os"
	"strings"

	"github.com/mapfarm/mapfarm/internal/admincred"
)

// adminCredential is the admin credential a client on this machine has for the api at url (any
// URL of it): MAPFARM_ADMIN_TOKEN when the test set one, else the one the api made at start, from
// the state directory as cachetool finds it (MAPFARM_STATE_DIR, set for the package in
// TestMain); "" when there is none.
func adminCredential(url string) string {
	if tok := os.Getenv("MAPFARM_ADMIN_TOKEN"); tok != "" {
		return tok
	}
	cred, _, err := admincred.Find(os.Getenv("MAPFARM_STATE_DIR"), url)
	if err != nil {
		return ""
	}
	return cred
}

// withAdminCredential adds the admin credential of the api at base to an admin request that
// names none: the hostile admin rows are refused whatever their credential.
func withAdminCredential(req *http.Request, base string) {
	if strings.HasPrefix(req.URL.Path, "/admin") && req.Header.Get("Authorization") == "" {
		if cred := adminCredential(base); cred != "" {
			req.Header.Set("Authorization", "Bearer "+cred)
		}
	}
}

// hostileAdminRows are issue 26's hostile admin requests, each with the api's own admin
// credential: a cross-site request as a browser's fetch sends it, forwarded requests from a
// proxy the api does not trust. Each is refused with 403 (TestAdminTrustEmbedded and
// TestAdminTrustProcesses count the store's writes and deletes around them, and try an unknown
// Host, which these rows cannot set).
func hostileAdminRows() []hostileRow {
	const del = `{"service":"world","levels":[0],"mode":"delete"}`
	return []hostileRow{
		{name: "admin: cross-site fetch deleting level 0 (text/plain, Origin https://evil.example)", path: "/admin/seed", body: del,
			header: []string{"Content-Type", "text/plain;charset=UTF-8", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "no-cors"},
			status: 403, want: "cross-site"},
		{name: "admin: JSON from another origin", path: "/admin/seed", body: del, header: []string{"Content-Type", "application/json", "Origin", "https://evil.example"},
			status: 403, want: "cross-site"},
		{name: "admin: a form post", path: "/admin/seed", body: del, header: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 403, want: "application/json"},
		{name: "admin: X-Forwarded-For from an untrusted proxy", path: "/admin/seed", body: del,
			header: []string{"Content-Type", "application/json", "X-Forwarded-For", "203.0.113.7"}, status: 403, want: "forwarded"},
		{name: "admin: Forwarded from an untrusted proxy, cancelling", method: "DELETE", path: "/admin/seed/some-job",
			header: []string{"Forwarded", "for=203.0.113.7;host=maps.example.org"}, status: 403, want: "forwarded"},
		{name: "admin: X-Real-IP from an untrusted proxy, listing", method: "GET", path: "/admin/seed", header: []string{"X-Real-IP", "203.0.113.7"}, status: 403, want: "forwarded"},
		{name: "admin: no credential", method: "GET", path: "/admin/seed", header: []string{"Authorization", "Bearer not-the-credential"}, status: 401, want: "Invalid Token"},
	}
}
