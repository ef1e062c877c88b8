package vectortile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// decode checks a tile with mvtcheck and decodes it.
func decode(t *testing.T, res *mvt.Result) []mvtcheck.Layer {
	t.Helper()
	if probs, _ := mvtcheck.Check(res.Data, mvtcheck.Options{MaxBuffer: mvt.DefaultBuffer}); len(probs) > 0 {
		t.Fatalf("tile breaks the specification: %v", probs)
	}
	data := res.Data
	if res.Gzipped {
		t.Fatal("the builder gzipped a tile it was not asked to")
	}
	layers, err := mvtcheck.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return layers
}

func names(layers []mvtcheck.Layer) []string {
	var out []string
	for _, l := range layers {
		out = append(out, l.Name)
	}
	return out
}

// TestSamples: tiles of the sample services: the hidden layer left out, the attributes the
// display field (and what the style reads), ids the object IDs; a map in 4326 tiled in Web
// Mercator through reprojection gives the same countries as the one stored in 3857; a tile of
// the geographic cache scheme; tiles that do not exist.
func TestSamples(t *testing.T) {
	b, err := vectortile.New(vectortile.Params{Services: catalogtest.Samples(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids := func(service string, z, x, y int) []uint64 {
		res, err := b.WebMercatorTile(ctx, service, "", z, x, y)
		if err != nil {
			t.Fatal(err)
		}
		layers := decode(t, res)
		if got := names(layers); !slices.Equal(got, []string{"Countries"}) {
			t.Fatalf("%s %d/%d/%d: layers %q, want only Countries (Country points is hidden)", service, z, x, y, got)
		}
		var out []uint64
		for _, f := range layers[0].Features {
			var keys []string
			for k := range f.Properties {
				keys = append(keys, k)
			}
			if !f.HasID || !slices.Equal(keys, []string{"NAME"}) {
				t.Fatalf("%s: feature %d (has id %v) attributes %q, want NAME alone", service, f.ID, f.HasID, keys)
			}
			out = append(out, f.ID)
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	// Europe at z3: a few dozen countries.
	mercator := ids("world", 3, 4, 2)
	geographic := ids("world_geographic", 3, 4, 2)
	if len(mercator) < 20 || !slices.Equal(mercator, geographic) {
		t.Errorf("3/4/2: %d countries from the 3857 map, %d from the 4326 one:\n%v\n%v", len(mercator), len(geographic), mercator, geographic)
	}

	// The geographic cache's own scheme: level 1, row 0, col 2 is lon 0..90, lat 0..90.
	svc, _ := catalogtest.Samples(t).Service("world_geographic")
	scheme, err := svc.Maps[0].Def.Cache.TileScheme(svc.Maps[0].SR)
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Tile(ctx, "world_geographic", "Layers", scheme, tilecache.Tile{Level: 1, Row: 0, Col: 2})
	if err != nil {
		t.Fatal(err)
	}
	if layers := decode(t, res); len(layers) != 1 || len(layers[0].Features) < 40 {
		t.Errorf("geographic 1/0/2: %d layers, features %v", len(layers), layers)
	}

	for _, c := range []struct {
		service string
		z, x, y int
	}{{"nosuch", 0, 0, 0}, {"world", 15, 0, 0}, {"world", 2, 4, 0}, {"world", 2, 0, 4}} {
		if _, err := b.WebMercatorTile(ctx, c.service, "", c.z, c.x, c.y); !errors.Is(err, vectortile.ErrNotFound) {
			t.Errorf("%s %d/%d/%d: error %v, want ErrNotFound", c.service, c.z, c.x, c.y, err)
		}
	}
}

// scales is a service whose layers show France at different scales and zooms.
const scales = `services:
  - name: scales
    maps:
      - spatialReference: 3857
        layers:
          - name: France
            source: {geopackage: DATA/world_countries_50m_3857.gpkg, table: countries}
            definitionExpression: "NAME = 'France'"
            vectorTiles: {minZoom: 3, fields: [ISO_N3]}
          - name: Small scales
            source: {geopackage: DATA/world_countries_50m_3857.gpkg, table: countries}
            definitionExpression: "NAME = 'France'"
            maxScale: 20000000
          - name: Large scales
            source: {geopackage: DATA/world_countries_50m_3857.gpkg, table: countries}
            definitionExpression: "NAME = 'France'"
            minScale: 1000000
          - name: Hidden
            visible: false
            source: {geopackage: DATA/world_countries_50m_3857.gpkg, table: countries}
            definitionExpression: "NAME = 'France'"
          - name: Shown
            visible: false
            vectorTiles: {include: true}
            source: {geopackage: DATA/world_countries_50m_3857.gpkg, table: countries}
            definitionExpression: "NAME = 'Spain'"
`

// TestScales: which layers a tile holds by scale range, minZoom and visibility, the last zoom
// holding the larger scales (overzoom), and what the definition expression lets through.
func TestScales(t *testing.T) {
	data, err := filepath.Abs(filepath.Join("..", "..", "data", "sample"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "services.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(scales, "DATA", data)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := vectortile.New(vectortile.Params{Services: catalogtest.Open(t, path), MaxZoom: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Tiles over France (and Spain) from z2 to z5. Small scales: to 1:20M, zoom 3.89. Large
	// scales: from 1:1M, zoom 8.2, past the last zoom. France: from zoom 3.
	for _, c := range []struct {
		z, x, y int
		want    []string
	}{
		{2, 2, 1, []string{"Small scales", "Shown"}},
		{3, 4, 2, []string{"France", "Small scales", "Shown"}},
		{4, 8, 5, []string{"France", "Shown"}},
		{5, 16, 11, []string{"France", "Large scales", "Shown"}},
	} {
		res, err := b.WebMercatorTile(context.Background(), "scales", "", c.z, c.x, c.y)
		if err != nil {
			t.Fatal(err)
		}
		layers := decode(t, res)
		if got := names(layers); !slices.Equal(got, c.want) {
			t.Errorf("%d/%d/%d: layers %q, want %q", c.z, c.x, c.y, got, c.want)
		}
		for _, l := range layers {
			if len(l.Features) != 1 {
				t.Errorf("%d/%d/%d %s: %d features, want the one country", c.z, c.x, c.y, l.Name, len(l.Features))
			}
			if l.Name == "France" {
				if _, ok := l.Features[0].Properties["ISO_N3"]; !ok || len(l.Features[0].Properties) != 1 {
					t.Errorf("France's attributes %v, want ISO_N3 alone", l.Features[0].Properties)
				}
			}
		}
	}
}
