//go:build proj

package mapdraw

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
)

// TestMapInOtherSystemTiles: a map whose own system (5070) is not its data's (the US counties,
// stored in Web Mercator), with a tile cache in a custom 5070 tiling scheme. Its tiles draw
// from the stored data clipped and projected as any drawing in another system; the scheme
// reports 5070.
func TestMapInOtherSystemTiles(t *testing.T) {
	gpkg, err := filepath.Abs(filepath.Join("..", "..", "data", "sample", "us_counties_10m_3857.gpkg"))
	if err != nil {
		t.Fatal(err)
	}
	yaml := `services:
  - name: albers
    maps:
      - name: Layers
        spatialReference: 5070
        backgroundColor: [255, 255, 255]
        cache:
          scheme: custom
          origin: [-3000000, 4000000]
          lods: [{level: 0, resolution: 8000}, {level: 1, resolution: 4000}, {level: 2, resolution: 2000}]
        layers:
          - id: 0
            name: Counties
            source: {geopackage: ` + gpkg + `, table: counties}
            renderer:
              type: simple
              symbol: {type: simpleFill, color: [200, 30, 30], outline: {color: [0, 0, 0], width: 0.4}}
`
	path := filepath.Join(t.TempDir(), "services.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	c := catalogtest.Open(t, path)
	svc, _ := c.Service("albers")
	m, _ := svc.Map("Layers")
	scheme, err := m.Def.Cache.TileScheme(m.SR)
	if err != nil || scheme.SpatialReference.WKID != 5070 {
		t.Fatalf("tiling scheme in WKID %d, %v; want 5070", scheme.SpatialReference.WKID, err)
	}
	// The level-2 tile (2000 m a pixel) holding Kansas.
	to5070, err := c.Systems().Transformer(proj.SR{WKID: 4326}, proj.SR{WKID: 5070})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := to5070.Point(orb.Point{-98.5, 38.5})
	const res, size = 2000.0, 256
	col, row := math.Floor((k[0]+3000000)/(size*res)), math.Floor((4000000-k[1])/(size*res))
	x0, y1 := -3000000+col*size*res, 4000000-row*size*res
	ext := orb.Bound{Min: orb.Point{x0, y1 - size*res}, Max: orb.Point{x0 + size*res, y1}}
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Draw(context.Background(), r, Request{Map: m, View: render.View{Extent: ext, Width: size, Height: size, DPI: 96},
		Layers: []LayerState{{ID: 0, Visible: true}}, Format: render.PNG})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	px, py := int((k[0]-x0)/res), int((y1-k[1])/res)
	red := 0
	for y := py - 3; y <= py+3; y++ {
		for x := px - 3; x <= px+3; x++ {
			if r, g, _, _ := img.At(x, y).RGBA(); r>>8 > 150 && g>>8 < 80 {
				red++
			}
		}
	}
	if red < 25 {
		t.Errorf("Kansas at pixel (%d, %d) of tile %v/%v: %d of 49 pixels red, want the counties' fill", px, py, row, col, red)
	}
}
