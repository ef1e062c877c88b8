package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/token"
)

// A token parameter given twice in two letter cases with different values, one of them valid
// (token=<valid>&TOKEN=bad), is refused every time, on every gated route, whichever order Go's
// map gives the spellings in (issue 25): read from the map, it let the request through about
// half the time. The same token under both spellings is one value and opens the route.
func TestTokenGivenTwiceIsRefused(t *testing.T) {
	signer := testSigner(t)
	good := url.QueryEscape(issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead}))
	h, _ := policyServer(t, Security{Tokens: signer})
	const tries = 40 // two spellings: each order comes up in 40 tries but for a chance of 2⁻³⁹
	twice := []string{"token=" + good + "&TOKEN=bad", "TOKEN=" + good + "&token=bad", "Token=bad&token=" + good}
	for _, q := range twice {
		for range tries {
			for _, path := range []string{"/arcgis/rest/services/world/MapServer/tile/0/0/0?", directoryTile + "?"} {
				if resp, body := tileGet(h, path+q); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "more than once") {
					t.Fatalf("GET %s%s: %s %.200s; want 400", path, q, resp.Status, body)
				}
			}
			if resp, v := restGet(t, h, "/arcgis/rest/services/world/MapServer?f=json&"+q); errorCode(v) != 400 || !strings.Contains(v["error"].(map[string]any)["message"].(string), "more than once") {
				t.Fatalf("REST with %s: HTTP %d %v; want code 400, the token given more than once", q, resp.StatusCode, v)
			}
			req := httptest.NewRequest(http.MethodPost, "/arcgis/rest/services/world/MapServer/1/query", strings.NewReader("where=1%3D1&returnCountOnly=true&f=json&"+q))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if !strings.Contains(rec.Body.String(), `"code":400`) || !strings.Contains(rec.Body.String(), "more than once") {
				t.Fatalf("REST form with %s: HTTP %d %.300s; want code 400", q, rec.Code, rec.Body)
			}
		}
	}
	same := "token=" + good + "&TOKEN=" + good
	if resp, v := restGet(t, h, "/arcgis/rest/services/world/MapServer?f=json&"+same); resp.StatusCode != 200 || errorCode(v) != 0 {
		t.Errorf("REST with the same token twice: HTTP %d %v", resp.StatusCode, v)
	}
	if resp, body := tileGet(h, "/arcgis/rest/services/world/MapServer/tile/0/0/0?"+same); resp.StatusCode != 200 {
		t.Errorf("tile with the same token twice: %s %.200s", resp.Status, body)
	}
}
