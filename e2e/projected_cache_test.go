//go:build proj

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// albersServices is a service whose map is in US National Albers (EPSG:5070) over the states
// stored in Web Mercator, with a tile cache in a custom 5070 tiling scheme.
const albersServices = `services:
  - name: albers
    maps:
      - name: Layers
        spatialReference: 5070
        backgroundColor: [255, 255, 255]
        cache:
          scheme: custom
          origin: [-3000000, 4000000]
          lods: [{level: 0, resolution: 8000}, {level: 1, resolution: 4000}, {level: 2, resolution: 2000}]
          format: PNG
        layers:
          - id: 0
            name: States
            source: {geopackage: %s, table: states}
            renderer:
              type: simple
              symbol: {type: simpleFill, color: [200, 30, 30], outline: {color: [0, 0, 0], width: 0.4}}
`

// TestSeedProjectedCache: cachetool seeds a cache whose tiling scheme is in EPSG:5070 into
// MinIO through the farm; GetTileCacheInfo describes the scheme in 5070 (WKID and PROJ's Esri
// WKT); GetMapTile returns the seeded tiles, and each decodes to the same picture as an
// ExportMapImage of the tile's extent and size in 5070 (pixels within 24 a channel, at most 1%
// of them off: the tile is cut from a metatile's drawing); a tile outside the seeded area is
// not in the cache.
func TestSeedProjectedCache(t *testing.T) {
	gpkg, err := filepath.Abs("../data/sample/us_states_10m_3857.gpkg")
	if err != nil {
		t.Fatal(err)
	}
	tool := buildBinary(t, "github.com/mapfarm/mapfarm/cachetool")
	f := startFarm(t, withServices(t, fmt.Sprintf(albersServices, gpkg)))
	base := strings.TrimSuffix(f.url, "/")

	// Level 2 (2000 m a pixel, tiles 512 km wide) over the middle of the country: the 5070
	// extent of Kansas and its neighbours.
	const res, size, level = 2000.0, 256, 2
	const x0, y0, x1, y1 = -600_000.0, 1_500_000.0, 400_000.0, 2_100_000.0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "seed", "-server", base, "-service", "albers", "-levels", "2",
		"-extent", fmt.Sprintf("%g,%g,%g,%g", x0, y0, x1, y1), "-skip-empty", "false")
	out, err := cmd.CombinedOutput()
	t.Logf("cachetool seed:\n%s", out)
	if err != nil {
		t.Fatalf("cachetool seed: %v", err)
	}

	cl := &soap.Client{Codec: soap.NewCodec(namespace, soap.Limits{}), Endpoint: base + "/arcgis/services/albers/MapServer"}
	call := func(op string, req, resp any) {
		t.Helper()
		if err := cl.Call(ctx, op, req, resp); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	var tci gisxml.GetTileCacheInfoResponse
	call("GetTileCacheInfo", &gisxml.GetTileCacheInfo{MapName: "Layers"}, &tci)
	sr := tci.Result.SpatialReference.SpatialReferencePart()
	if sr.WKID == nil || *sr.WKID != 5070 || sr.WKT == nil || !strings.HasPrefix(*sr.WKT, `PROJCS["NAD_1983_Contiguous_USA_Albers"`) {
		t.Errorf("GetTileCacheInfo spatial reference: WKID %v, WKT %v; want 5070 and its Esri WKT", sr.WKID, sr.WKT)
	}
	if len(tci.Result.LODInfos) != 3 || tci.Result.LODInfos[level].Resolution != res {
		t.Fatalf("GetTileCacheInfo: %d LODs; want 3, level 2 at %g m", len(tci.Result.LODInfos), res)
	}

	// The tiles of the area, as a client finds them from the scheme GetTileCacheInfo reports.
	origin := tci.Result.TileOrigin.(*gisxml.PointN)
	ox, oy := origin.X, origin.Y
	span := float64(tci.Result.TileCols) * tci.Result.LODInfos[level].Resolution
	t.Logf("scheme: origin %g, %g; %d px tiles; level %d at %g m", ox, oy, tci.Result.TileCols, level, tci.Result.LODInfos[level].Resolution)
	if ox != -3_000_000 || oy != 4_000_000 || tci.Result.TileCols != size {
		t.Errorf("scheme origin %g, %g, %d px tiles; want -3000000, 4000000, %d px", ox, oy, tci.Result.TileCols, size)
	}
	var found, missing [][2]int
	for row := int((oy - y1) / span); row <= int((oy-y0)/span); row++ {
		for col := int((x0 - ox) / span); col <= int((x1-ox)/span); col++ {
			var tile gisxml.GetMapTileResponse
			if err := cl.Call(ctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: level, Row: row, Column: col}, &tile); err != nil {
				missing = append(missing, [2]int{row, col})
				t.Logf("tile %d/%d/%d: %v", level, row, col, err)
				continue
			}
			found = append(found, [2]int{row, col})
			got, err := png.Decode(bytes.NewReader(tile.Result))
			if err != nil {
				t.Fatalf("tile %d/%d/%d: %v", level, row, col, err)
			}
			tx0, ty1 := ox+float64(col)*span, oy-float64(row)*span
			md := &gisxml.MapDescription{Name: "Layers",
				SpatialReference: &gisxml.ProjectedCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptrTo(5070)}},
				MapArea:          &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: tx0, YMin: ty1 - span, XMax: tx0 + span, YMax: ty1}}}}
			var img gisxml.ExportMapImageResponse
			call("ExportMapImage", &gisxml.ExportMapImage{MapDescription: md, ImageDescription: &gisxml.ImageDescription{
				ImageType:    &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: gisxml.ImageReturnMimeData},
				ImageDisplay: &gisxml.ImageDisplay{ImageWidth: size, ImageHeight: size, ImageDPI: 96}}}, &img)
			want, err := png.Decode(bytes.NewReader(img.Result.ImageData))
			if err != nil {
				t.Fatal(err)
			}
			off, red := comparePixels(got, want)
			if off > size*size/100 {
				t.Errorf("tile %d/%d/%d: %d of %d pixels differ from ExportMapImage of its extent", level, row, col, off, size*size)
			}
			if red < size*size/10 {
				t.Errorf("tile %d/%d/%d: %d red pixels, want the states drawn", level, row, col, red)
			}
		}
	}
	t.Logf("level %d: tiles (row, column) %v seeded and compared, %v of the extent's tiles not in the cache", level, found, missing)
	// Every tile of the area (rows 3–4, columns 4–6), Kansas's among them. Before the map's full
	// extent bounded the scheme, column 6 (east of x = 0) was not in the matrix.
	if len(missing) > 0 || len(found) != 6 || !slices.Contains(found, [2]int{int((oy - 1_800_000) / span), int((-100_000 - ox) / span)}) {
		t.Errorf("level %d: tiles %v in the cache, %v missing; want the area's 6, Kansas's among them", level, found, missing)
	}

	var tile gisxml.GetMapTileResponse
	err = cl.Call(ctx, "GetMapTile", &gisxml.GetMapTile{MapName: "Layers", Level: level, Row: 0, Column: 0}, &tile)
	if err == nil || !strings.Contains(err.Error(), "not in the cache") {
		t.Errorf("tile 2/0/0 (outside the seeded area): %v, want a fault saying it is not in the cache", err)
	}
}

// comparePixels counts the pixels of a and b that differ by more than 24 in a channel, and
// the red pixels (the states' fill) of a.
func comparePixels(a, b image.Image) (off, red int) {
	r := a.Bounds()
	if r != b.Bounds() {
		return r.Dx() * r.Dy(), 0
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := color.NRGBAModel.Convert(a.At(x, y)).(color.NRGBA)
			q := color.NRGBAModel.Convert(b.At(x, y)).(color.NRGBA)
			d := func(u, v uint8) bool { return int(u)-int(v) > 24 || int(v)-int(u) > 24 }
			if d(p.R, q.R) || d(p.G, q.G) || d(p.B, q.B) || d(p.A, q.A) {
				off++
			}
			if p.R > 150 && p.G < 80 && p.B < 80 {
				red++
			}
		}
	}
	return off, red
}

func ptrTo[T any](v T) *T { return &v }
