package api

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"math"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// tileColour is the solid colour of a tile of the test cache: each tile of each level differs.
func tileColour(t tilecache.Tile) color.NRGBA {
	return color.NRGBA{R: uint8(30 + 60*t.Col), G: uint8(30 + 60*t.Row), B: uint8(100 + 80*t.Level), A: 255}
}

// GDAL opens a cached map service by its bare REST URL (…/MapServer?f=json): it reads the
// root's tileInfo and then the tiles through tile/{level}/{row}/{col}. gdal_translate of that
// URL gives, at every pixel, the colour of the cache's tile of the finest level under it.
func TestGDALTranslatesCachedRESTService(t *testing.T) {
	for _, tool := range []string{"gdal_translate", "gdalinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s (gdal-bin) is not installed", tool)
		}
	}
	ctx := context.Background()
	cat := catalogtest.Samples(t)
	svc, _ := cat.Service("world")
	m, _ := svc.Map("Layers")
	d, err := seed.DrawingOf(m)
	if err != nil {
		t.Fatal(err)
	}
	scheme := d.Scheme
	scheme.LODs = scheme.LODs[:2]
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := tilecache.New(store, tilecache.Options{Root: seed.CacheRoot("world", "Layers")})
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, l := range scheme.LODs {
		rows, cols, err := scheme.MatrixSize(l.LevelID)
		if err != nil {
			t.Fatal(err)
		}
		w, err := c.NewBundleWriter(tilecache.BundleOf(tilecache.Tile{Level: l.LevelID}))
		if err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			for col := range cols {
				tl := tilecache.Tile{Level: l.LevelID, Row: r, Col: col}
				img := image.NewNRGBA(image.Rect(0, 0, scheme.TileCols, scheme.TileRows))
				for i := 0; i < len(img.Pix); i += 4 {
					cc := tileColour(tl)
					copy(img.Pix[i:], []uint8{cc.R, cc.G, cc.B, cc.A})
				}
				var buf bytes.Buffer
				if err := png.Encode(&buf, img); err != nil {
					t.Fatal(err)
				}
				if err := w.Put(tl, buf.Bytes()); err != nil {
					t.Fatal(err)
				}
				stored++
			}
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: scheme, Storage: tilecache.CompactV2}, scheme.Extent); err != nil {
		t.Fatal(err)
	}
	ops := mapserver.New(mapserver.Params{Catalog: cat, NewID: NewID, Tiles: store,
		Limits: mapserver.Limits{MaxImageWidth: 4096, MaxImageHeight: 4096, MaxRecordCount: 1000}})
	srv := httptest.NewServer(New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20,
		OutputTTL: time.Minute, Tiles: store, Logger: slog.New(slog.DiscardHandler), REST: rest.New(rest.Params{Ops: ops, Services: cat, MaxRecordCount: 1000})}).Handler())
	defer srv.Close()

	dir := t.TempDir()
	src := srv.URL + "/arcgis/rest/services/world/MapServer?f=json"
	env := testenv.GDALEnv(dir)
	info := exec.Command("gdalinfo", "-json", src)
	info.Env = env
	infoOut, err := info.Output()
	if err != nil {
		t.Fatalf("gdalinfo %s: %v", src, err)
	}
	var ds struct {
		Size         []int     `json:"size"`
		GeoTransform []float64 `json:"geoTransform"`
	}
	if err := json.Unmarshal(infoOut, &ds); err != nil || len(ds.GeoTransform) != 6 || len(ds.Size) != 2 {
		t.Fatalf("gdalinfo: %v\n%s", err, infoOut)
	}
	finest := scheme.LODs[len(scheme.LODs)-1]
	if math.Abs(ds.GeoTransform[1]-finest.Resolution) > finest.Resolution*1e-6 {
		t.Errorf("GDAL's pixel is %v wide; the finest level's resolution is %v", ds.GeoTransform[1], finest.Resolution)
	}
	img, log := testenv.GDALTranslatePNG(t, env, src, dir)
	if !strings.Contains(log, "/MapServer/tile/") {
		t.Errorf("GDAL did not read tile/:\n%s", log)
	}
	if img.Bounds().Dx() != ds.Size[0] || img.Bounds().Dy() != ds.Size[1] {
		t.Fatalf("gdal_translate wrote %v, gdalinfo says %v", img.Bounds(), ds.Size)
	}
	span := finest.Resolution * float64(scheme.TileCols)
	spanY := finest.Resolution * float64(scheme.TileRows)
	rows, cols, _ := scheme.MatrixSize(finest.LevelID)
	checked, wrong, tiles := 0, 0, map[tilecache.Tile]bool{}
	for py := 0; py < img.Bounds().Dy(); py++ {
		for px := 0; px < img.Bounds().Dx(); px++ {
			x := ds.GeoTransform[0] + (float64(px)+0.5)*ds.GeoTransform[1]
			y := ds.GeoTransform[3] + (float64(py)+0.5)*ds.GeoTransform[5]
			tl := tilecache.Tile{Level: finest.LevelID, Col: int(math.Floor((x - scheme.Origin[0]) / span)), Row: int(math.Floor((scheme.Origin[1] - y) / spanY))}
			if tl.Row < 0 || tl.Col < 0 || tl.Row >= rows || tl.Col >= cols {
				continue
			}
			checked++
			tiles[tl] = true
			r, g, b, _ := img.At(px, py).RGBA()
			if want := tileColour(tl); uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B {
				wrong++
			}
		}
	}
	t.Logf("GDAL drew %dx%d; %d pixels over %d of the finest level's %d tiles checked, %d wrong (%d tiles stored)",
		ds.Size[0], ds.Size[1], checked, len(tiles), rows*cols, wrong, stored)
	if len(tiles) != rows*cols || checked < ds.Size[0]*ds.Size[1]/2 {
		t.Errorf("GDAL's image covers %d of %d tiles (%d pixels checked)", len(tiles), rows*cols, checked)
	}
	if wrong != 0 {
		t.Errorf("%d of %d pixels are not the colour of the cache's tile under them", wrong, checked)
	}
}
