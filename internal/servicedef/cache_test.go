package servicedef_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// The sample world map has a compact-V2 Web Mercator cache of levels 0-7.
func TestSampleCache(t *testing.T) {
	cfg, err := servicedef.Load(filepath.Join("..", "..", "services", "services.yaml"), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Services[0].Maps[0]
	c := m.Cache
	if c == nil {
		t.Fatal("world map has no cache")
	}
	if c.Scheme != servicedef.SchemeWebMercator || c.Storage != tilecache.CompactV2 || c.Format != "PNG" ||
		c.MinLevel != 0 || c.MaxLevel != 7 || c.MetatileSize != 4 || c.Buffer != 64 || !c.SkipEmpty || c.LayerCaches {
		t.Errorf("cache = %+v", *c)
	}
	s, err := c.TileScheme(m.SpatialReference)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Levels(); len(got) != 8 || got[7] != 7 || s.TileCols != 256 || s.DPI != 96 || s.SpatialReference.WKID != 3857 {
		t.Errorf("scheme levels %v, %d px, %d dpi, wkid %d", got, s.TileCols, s.DPI, s.SpatialReference.WKID)
	}
	if c.SeedAtStart {
		t.Error("the world cache is seeded at start; it is seeded on demand (cachetool seed)")
	}
	// The sample per-layer cache: world_geographic, geographic, levels 0-3, exploded, seeded
	// when mapfarm serve starts.
	g := cfg.Services[1].Maps[0].Cache
	if g == nil || g.Scheme != servicedef.SchemeGeographic || g.Storage != tilecache.Exploded || g.MinLevel != 0 || g.MaxLevel != 3 ||
		!g.LayerCaches || !g.SeedAtStart || !g.SkipEmpty {
		t.Errorf("world_geographic cache = %+v", g)
	}
	for _, svc := range cfg.Services[2:] {
		if svc.Maps[0].Cache != nil {
			t.Errorf("%s has a cache it does not define", svc.Name)
		}
	}
}

func TestCacheSection(t *testing.T) {
	const head = `services:
  - name: s
    maps:
      - spatialReference: SR
        cache:
`
	const tail = `        layers:
          - name: A
            source: {geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: countries}
`
	tests := []struct {
		name, sr, cache string
		check           func(t *testing.T, c *servicedef.Cache)
		want            []string // problems, "" for none
	}{
		{name: "defaults", sr: "3857", cache: "          format: png8\n", check: func(t *testing.T, c *servicedef.Cache) {
			if c.Format != "PNG8" || c.MaxLevel != 23 || c.Storage != tilecache.CompactV2 {
				t.Errorf("cache = %+v", *c)
			}
		}},
		{name: "geographic exploded", sr: "4326", cache: "          scheme: geographic\n          storage: exploded\n          maxLevel: 3\n          layerCaches: true\n          seedAtStart: true\n", check: func(t *testing.T, c *servicedef.Cache) {
			if c.Storage != tilecache.Exploded || c.MaxLevel != 3 || !c.LayerCaches || !c.SeedAtStart {
				t.Errorf("cache = %+v", *c)
			}
		}},
		{name: "custom", sr: "3857", cache: "          scheme: custom\n          origin: [-20037508.342787, 20037508.342787]\n          tileSize: 512\n          lods: [{level: 0, resolution: 1000}, {level: 1, scale: 1000000}]\n", check: func(t *testing.T, c *servicedef.Cache) {
			if len(c.LODs) != 2 || c.LODs[1].Resolution < 264 || c.LODs[1].Resolution > 265 || c.TileSize != 512 {
				t.Errorf("lods = %+v", c.LODs)
			}
		}},
		{name: "scheme for another SR", sr: "4326", cache: "          scheme: webMercator\n", want: []string{"6:19: cache scheme webMercator needs a Web Mercator map"}},
		{name: "bad values", sr: "3857", cache: "          format: gif\n          storage: zip\n          metatileSize: 3\n          buffer: -1\n          colour: red\n",
			want: []string{`6:19: cache format "GIF"`, `7:20: cache storage "zip"`, `8:25: cache metatileSize must be a power of two`, `9:19: cache buffer must be from 0 to 512`, `10:11: unknown key "colour" in cache`}},
		{name: "custom without lods", sr: "3857", cache: "          scheme: custom\n", want: []string{`missing required key "origin"`, `missing required key "lods"`}},
		{name: "inverted levels", sr: "3857", cache: "          minLevel: 5\n          maxLevel: 2\n", want: []string{"minLevel 5 and maxLevel 2"}},
		{name: "refresh defaults", sr: "3857", cache: "          maxLevel: 3\n", check: func(t *testing.T, c *servicedef.Cache) {
			if c.Refresh.Mode != servicedef.RefreshImmediate || c.MaxStaleness != 0 || c.OnDemandTTL != servicedef.DefaultOnDemandTTL {
				t.Errorf("refresh %v, maxStaleness %v, onDemandTTL %v", c.Refresh, c.MaxStaleness, c.OnDemandTTL)
			}
		}},
		{name: "refresh every", sr: "3857", cache: "          refresh: every 10m\n          maxStaleness: 1h\n          onDemandTTL: 5m\n", check: func(t *testing.T, c *servicedef.Cache) {
			if c.Refresh != (servicedef.RefreshPolicy{Mode: servicedef.RefreshEvery, Every: 10 * time.Minute}) || c.MaxStaleness != time.Hour || c.OnDemandTTL != 5*time.Minute {
				t.Errorf("refresh %v, maxStaleness %v, onDemandTTL %v", c.Refresh, c.MaxStaleness, c.OnDemandTTL)
			}
		}},
		{name: "refresh manual", sr: "3857", cache: "          refresh: manual\n", check: func(t *testing.T, c *servicedef.Cache) {
			if c.Refresh.Mode != servicedef.RefreshManual {
				t.Errorf("refresh %v", c.Refresh)
			}
		}},
		{name: "bad refresh", sr: "3857", cache: "          refresh: sometimes\n          maxStaleness: soon\n          onDemandTTL: 0s\n",
			want: []string{`6:20: cache refresh "sometimes": want immediate, manual or "every <duration>"`, `7:25: cache maxStaleness "soon"`, `8:24: cache onDemandTTL "0s": want a duration from 1s to 24h0m0s`}},
		{name: "refresh every too often", sr: "3857", cache: "          refresh: every 10ms\n", want: []string{`cache refresh "every 10ms": the period must be a duration from 1s to 168h0m0s`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(head, "SR", tc.sr, 1) + tc.cache + tail
			cfg, err := servicedef.Load(writeConfig(t, body), providers.Registry())
			var ve *servicedef.ValidationError
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, cfg.Services[0].Maps[0].Cache)
				return
			}
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			got := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems lack %q:\n%s", w, got)
				}
			}
		})
	}
}
