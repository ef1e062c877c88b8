package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/token"
)

// restQuery is a REST query of the world's countries.
const restQuery = "/arcgis/rest/services/world/MapServer/1/query"

// hostileRESTBodyRows are REST bodies TestHostile's farm (no tokens) must refuse without
// holding them (issue 25, 4): a form over the body limit (413, as SOAP bodies), a multipart body
// (415, read no further: nothing is spooled to disk).
func hostileRESTBodyRows() []hostileRow {
	form := []string{"Content-Type", "application/x-www-form-urlencoded"}
	return []hostileRow{
		{name: "REST form over 8 MiB", path: restQuery + "?f=json", header: form, body: "where=1%3D1&f=json&filler=" + strings.Repeat("a", 9<<20),
			status: 413, want: "maxBodyBytes"},
		{name: "REST form over 8 MiB, f=json only in the body", path: restQuery, header: form, body: "where=1%3D1&f=json&filler=" + strings.Repeat("a", 9<<20),
			status: 413, want: "maxBodyBytes"},
		{name: "REST multipart body", path: restQuery + "?f=json", header: []string{"Content-Type", "multipart/form-data; boundary=xyz"},
			body:   "--xyz\r\nContent-Disposition: form-data; name=\"where\"\r\n\r\n1=1\r\n--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\"\r\n\r\n" + strings.Repeat("b", 1<<20) + "\r\n--xyz--\r\n",
			status: 415, want: "multipart"},
	}
}

// hostileTokenRows are the requests of issue 25 for a farm that needs tokens: the cache
// directory, REST tiles, WMTS and the REST API, without a token, with a forged one, with one
// of another service, and with good ones however sent. world opens every service, usa only usa.
func hostileTokenRows(world, usa string) []hostileRow {
	const dir = "/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L00/R00000000/C00000000.png"
	const tile = "/arcgis/rest/services/world/MapServer/tile/0/0/0"
	const caps = "/arcgis/rest/services/world/MapServer/WMTS/1.0.0/WMTSCapabilities.xml"
	const kvp = "/arcgis/rest/services/world/MapServer/WMTS?SERVICE=WMTS&REQUEST=GetTile&VERSION=1.0.0&LAYER=world&STYLE=default&TILEMATRIXSET=default028mm&TILEMATRIX=0&TILEROW=0&TILECOL=0&FORMAT=image/png"
	forged := world[:strings.LastIndexByte(world, '.')] + ".AAAA"
	get := func(name, path string, header []string, status int, want string) hostileRow {
		return hostileRow{name: name, method: "GET", path: path, header: header, status: status, want: want}
	}
	bearer := func(scheme, tok string) []string { return []string{"Authorization", scheme + " " + tok} }
	q := func(tok string) string { return "token=" + url.QueryEscape(tok) }
	return []hostileRow{
		get("directory tile without a token", dir, nil, 401, "Token Required"),
		get("directory tile with a forged token", dir+"?"+q(forged), nil, 401, "Invalid Token"),
		get("directory tile with another service's token", dir+"?"+q(usa), nil, 403, "Token Not Valid For This Service"),
		get("directory tile with another service's bearer", dir, bearer("Bearer", usa), 403, "Token Not Valid For This Service"),
		get("directory tile with a token", dir+"?"+q(world), nil, 200, "PNG"),
		get("directory tile with a lower-case bearer", dir, bearer("bearer", world), 200, "PNG"),
		get("REST tile without a token", tile, nil, 401, "Token Required"),
		get("REST tile with another service's token", tile+"?"+q(usa), nil, 403, "Token Not Valid For This Service"),
		get("REST tile with a lower-case bearer", tile, bearer("bearer", world), 200, "PNG"),
		get("WMTS capabilities without a token", caps, nil, 401, "Token Required"),
		get("WMTS capabilities with another service's token", caps+"?"+q(usa), nil, 403, "Token Not Valid For This Service"),
		get("WMTS capabilities with a token", caps+"?"+q(world), nil, 200, "<Capabilities"),
		get("WMTS KVP tile with a token", kvp+"&"+q(world), nil, 200, "PNG"),
		get("REST catalog with a usa token", "/arcgis/rest/services?f=json&"+q(usa), nil, 200, `"services":[{"name":"usa","type":"MapServer"},{"name":"usa","type":"VectorTileServer"}]}`),
		get("REST service with a BEARER header", "/arcgis/rest/services/world/MapServer?f=json", bearer("BEARER", world), 200, `"mapName":"Layers"`),
		get("REST service with another service's token", "/arcgis/rest/services/world/MapServer?f=json&"+q(usa), nil, 200, `"code":403`),
		{name: "REST form with a bad bearer", path: restQuery + "?f=json", header: append([]string{"Content-Type", "application/x-www-form-urlencoded"}, bearer("Bearer", "bad")...),
			body: "where=1%3D1&filler=" + strings.Repeat("a", 4<<20), status: 200, want: `"code":498`},
		{name: "REST form with its token among the fields", path: restQuery, header: []string{"Content-Type", "application/x-www-form-urlencoded"},
			body: "where=1%3D1&returnCountOnly=true&f=json&" + q(world), status: 200, want: `"count":`},
		{name: "REST form over 8 MiB, its token among the fields", path: restQuery + "?f=json", header: []string{"Content-Type", "application/x-www-form-urlencoded"},
			body: "where=1%3D1&" + q(world) + "&filler=" + strings.Repeat("a", 9<<20), status: 413, want: "maxBodyBytes"},
	}
}

// streamBody is a request body of unknown length (sent chunked): head, then n bytes of filler,
// made as it is read.
type streamBody struct {
	head string
	n    int64
	off  int64
}

func (b *streamBody) Read(p []byte) (int, error) {
	total := int64(len(b.head)) + b.n
	if b.off >= total {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && b.off < total {
		if b.off < int64(len(b.head)) {
			c := copy(p[k:], b.head[b.off:])
			k += c
			b.off += int64(c)
			continue
		}
		m := min(int64(len(p)-k), total-b.off)
		for i := range m {
			p[k+int(i)] = 'z'
		}
		k += int(m)
		b.off += m
	}
	return k, nil
}

// TestHostileTokens sends issue 25's requests to a farm that needs tokens (api, coordinator and
// worker in this process): every answer within hostileBound with its status, no tile or
// capabilities without a token of their service, token-gated answers private and every answer
// nosniff. Then 200 MB chunked bodies, the token bad or good, the body multipart or a form: each
// is refused within the bound having read at most the body limit, puts no multipart file in the
// temp directory while it is sent, and the process's RSS grows by less than rssBound over them
// all.
func TestHostileTokens(t *testing.T) {
	const adminToken = "e2e-admin-token-e2e-admin-token-e2e-admin"
	t.Setenv("MAPFARM_TOKEN_SECRET", testSecret)
	t.Setenv("MAPFARM_ADMIN_TOKEN", adminToken)
	logs := &testenv.LogBuffer{}
	base := startLoggedFarm(t, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))).url
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1}, SkipEmpty: &no})
	signer, _ := token.NewSigner([]byte(testSecret))
	world, _ := signer.Issue("e2e", time.Now().Add(time.Hour))
	usa, _ := signer.IssueGrant(token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"usa"}}, time.Now().Add(time.Hour))
	transport := &http.Transport{MaxIdleConnsPerHost: 4}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	for i, r := range slices.Concat(hostileTokenRows(world, usa), hostileTokenTwiceRows(world)) { // hostile_tokentwice_test.go
		t.Run(r.name, func(t *testing.T) {
			a := r.send(client, base, fmt.Sprintf("hostile-token-%03d", i))
			t.Logf("HTTP %d %.120q in %v (err %v)", a.status, a.body, a.took.Round(time.Millisecond), a.err)
			for _, b := range r.check(a) {
				t.Error(b)
			}
		})
	}

	// Headers: token-gated answers are private, whichever way the token came; all say nosniff;
	// HTML pages may not be framed.
	for _, c := range []struct{ path, header string }{
		{"/arcgis/rest/services/world/MapServer/tile/0/0/0?token=" + url.QueryEscape(world), ""},
		{"/arcgis/rest/services/world/MapServer/tile/0/0/0", "Bearer " + world},
		{"/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L00/R00000000/C00000000.png?token=" + url.QueryEscape(world), ""},
		{"/arcgis/rest/services/world/MapServer/WMTS/1.0.0/WMTSCapabilities.xml?token=" + url.QueryEscape(world), ""},
		{"/arcgis/rest/services/world/MapServer?f=json", "Bearer " + world},
		{"/arcgis/rest/services?token=" + url.QueryEscape(world), ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+c.path, nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		h := resp.Header
		if cc := h.Get("Cache-Control"); resp.StatusCode != 200 || !strings.HasPrefix(cc, "private") || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s (%s): %s, Cache-Control %q, X-Content-Type-Options %q; want 200, private, nosniff", c.path, c.header, resp.Status, cc, h.Get("X-Content-Type-Options"))
		}
		if strings.HasPrefix(h.Get("Content-Type"), "text/html") && (h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'")) {
			t.Errorf("%s: an HTML page that may be framed: %v", c.path, h)
		}
	}

	// 200 MB bodies, streamed.
	const rssBound = 48 // MB
	spooled := func() []string {
		m, _ := filepath.Glob(filepath.Join(os.TempDir(), "multipart-*"))
		return m
	}
	before := spooled()
	// Go's multipart reader removes its files when the request ends: look for them while the
	// bodies are sent.
	stop, seen := make(chan struct{}), make(chan []string, 1)
	go func() {
		var found []string
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				seen <- found
				return
			case <-tick.C:
				for _, f := range spooled() {
					if !slices.Contains(before, f) && !slices.Contains(found, f) {
						found = append(found, f)
					}
				}
			}
		}
	}()
	runtime.GC()
	rss0, ok := testenv.ProcStatusMB(0, "VmRSS")
	if !ok {
		close(stop)
		t.Skip("no /proc/self/status")
	}
	const big = 200 << 20
	multipart := "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\"\r\nContent-Type: application/octet-stream\r\n\r\n"
	for _, c := range []struct {
		name, query, contentType, header, head string
		status                                 int
		want                                   string
	}{
		{"bad token parameter, multipart", "?f=json&token=bad", "multipart/form-data; boundary=xyz", "", multipart, 200, `"code":498`},
		{"bad bearer, form", "?f=json", "application/x-www-form-urlencoded", "Bearer bad", "where=1%3D1&filler=", 200, `"code":498`},
		{"good token, multipart", "?f=json&token=" + url.QueryEscape(world), "multipart/form-data; boundary=xyz", "", multipart, 415, `"code":415`},
		{"no token, multipart", "?f=json", "multipart/form-data; boundary=xyz", "", multipart, 415, `"code":415`},
		{"good token, form", "?f=json&token=" + url.QueryEscape(world), "application/x-www-form-urlencoded", "", "where=1%3D1&filler=", 413, `"code":413`},
		{"token among the form's fields", "?f=json", "application/x-www-form-urlencoded", "", "token=" + url.QueryEscape(world) + "&filler=", 413, `"code":413`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*hostileBound)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+restQuery+c.query, &streamBody{head: c.head, n: big})
		req.Header.Set("Content-Type", c.contentType)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		start := time.Now()
		resp, err := client.Do(req)
		var body []byte
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		took := time.Since(start)
		cancel()
		switch {
		case err != nil:
			t.Errorf("200 MB, %s: no answer after %v: %v", c.name, took.Round(time.Millisecond), err)
		case resp.StatusCode != c.status || !strings.Contains(string(body), c.want) || took > hostileBound:
			t.Errorf("200 MB, %s: HTTP %d %.200q in %v; want HTTP %d with %s within %v", c.name, resp.StatusCode, body, took.Round(time.Millisecond), c.status, c.want, hostileBound)
		default:
			t.Logf("200 MB, %s: HTTP %d %.100q in %v", c.name, resp.StatusCode, body, took.Round(time.Millisecond))
		}
	}
	runtime.GC()
	rss1, _ := testenv.ProcStatusMB(0, "VmRSS")
	t.Logf("RSS %.1f MB before the 200 MB bodies, %.1f MB after (%+.1f MB)", rss0, rss1, rss1-rss0)
	if rss1-rss0 > rssBound {
		t.Errorf("RSS grew by %.1f MB over the 200 MB bodies, more than %d MB", rss1-rss0, rssBound)
	}
	close(stop)
	if found := <-seen; len(found) > 0 {
		t.Errorf("multipart files spooled to %s while the bodies were sent: %v", os.TempDir(), found)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") || strings.Contains(strings.ToLower(line), "panic") {
			t.Errorf("logged: %.500s", line)
		}
	}
}
