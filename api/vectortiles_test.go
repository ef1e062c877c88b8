package api

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/token"
	"github.com/mapfarm/mapfarm/internal/vectorfonts"
	"github.com/mapfarm/mapfarm/internal/vectortile"
	"github.com/mapfarm/mapfarm/internal/vectortileserver"
)

// vectorServer is the api with the VectorTileServer of the sample services alone.
func vectorServer(t *testing.T, sec Security) http.Handler {
	t.Helper()
	cat := catalogtest.Samples(t)
	b, err := vectortile.New(vectortile.Params{Services: cat, Options: mvt.Options{Gzip: true}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	vts := vectortileserver.New(vectortileserver.Params{Services: cat, Builder: b, Glyphs: vectorfonts.New(r.Fonts(), 0), Renderer: r,
		PublicURL: "http://farm.test", Logger: logger})
	return New(Params{PublicURL: "http://farm.test", OutputTTL: time.Minute, Logger: logger, Security: sec, VectorTiles: vts}).Handler()
}

// vectorPaths are a VectorTileServer's resources: the tile and the binary resources (the tiles
// family), and its JSON documents (REST).
var vectorPaths = []string{
	"/arcgis/rest/services/world/VectorTileServer/tile/1/0/1.pbf",
	"/arcgis/rest/services/world/VectorTileServer/resources/fonts/DejaVu%20Sans%20Book/0-255.pbf",
	"/arcgis/rest/services/world/VectorTileServer/resources/sprites/sprite.json",
	"/arcgis/rest/services/world/VectorTileServer",
	"/arcgis/rest/services/world/VectorTileServer/",
	"/arcgis/rest/services/world/VectorTileServer/resources/styles/root.json",
	"/arcgis/rest/services/world/VectorTileServer/tiles.json",
	"/arcgis/rest/services/world/VectorTileServer/tilemap",
}

// The VectorTileServer routes are in the request policy (issue 28, 5): the tile, glyph and sprite
// routes in the tiles family, the JSON in REST, each naming its service; without a token, with a
// forged one or one scoped to another service they answer nothing but the ArcGIS error (with the
// HTTP status on the tiles family, in a 200 on REST's, as ArcGIS); with the world's token, as a
// parameter or a bearer header, the resource, private to shared caches.
func TestVectorTileRoutesNeedTokens(t *testing.T) {
	for i, p := range vectorPaths {
		want := familyREST
		if i < 3 {
			want = familyTiles
		}
		if r := routeOf(p); r.family != want || r.service != "world" {
			t.Errorf("%s: family %d service %q, want %d world", p, r.family, r.service, want)
		}
	}
	signer := testSigner(t)
	world := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	usa := issue(t, signer, token.Grant{Client: "usa", Role: token.RoleRead, Services: []string{"usa"}})
	h := vectorServer(t, Security{Tokens: signer})
	for i, p := range vectorPaths {
		tiles := i < 3 // the tiles family refuses with the HTTP status; REST, as ArcGIS, with 200
		for _, c := range []struct {
			name, target string
			header       []string
			status, code int
		}{
			{"no token", p, nil, 401, 499},
			{"forged token", p + "?token=" + url.QueryEscape(forge(world)), nil, 401, 498},
			{"token of another service", p + "?token=" + url.QueryEscape(usa), nil, 403, 403},
			{"token parameter", p + "?token=" + url.QueryEscape(world), nil, 200, 0},
			{"bearer header", p, []string{"Authorization", "Bearer " + world}, 200, 0},
		} {
			resp, body := tileGet(h, c.target, c.header...)
			if !tiles && c.status != 200 {
				c.status = 200
			}
			if resp.StatusCode != c.status || c.code != 0 && tileErrorCode(t, body) == 0 {
				t.Errorf("%s, %s: %s %.200q; want HTTP %d", p, c.name, resp.Status, body, c.status)
				continue
			}
			if c.code != 0 {
				if code := tileErrorCode(t, body); code != c.code {
					t.Errorf("%s, %s: error code %d, want %d", p, c.name, code, c.code)
				}
				continue
			}
			if cc := resp.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "private") || strings.Contains(cc, "public") {
				t.Errorf("%s, %s: Cache-Control %q, want private", p, c.name, cc)
			}
		}
	}
}

// CORS applies to the VectorTileServer's answers as to every other route: browsers draw vector
// tiles from other origins.
func TestVectorTileRoutesCORS(t *testing.T) {
	const origin = "https://maps.example.org"
	h := vectorServer(t, Security{CORSOrigins: []string{origin}})
	for _, p := range append(vectorPaths, "/arcgis/rest/services/world/VectorTileServer/tile/15/0/0.pbf") {
		resp, body := tileGet(h, p, "Origin", origin, "Accept-Encoding", "gzip")
		if resp.StatusCode != 200 && !strings.Contains(p, "/15/") {
			t.Errorf("%s: %s %.200q", p, resp.Status, body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("%s (%s): Access-Control-Allow-Origin %q, want %q", p, resp.Status, got, origin)
		}
	}
	if resp, _ := tileGet(h, vectorPaths[0], "Origin", "https://evil.example.com"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a foreign origin is allowed: %q", resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
