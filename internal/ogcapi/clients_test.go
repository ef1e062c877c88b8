package ogcapi_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

// startFarm serves the farm on loopback, its links naming the server's own URL: the handler is
// set before the server starts (the listener's address is known already), so no request races
// with it.
func startFarm(t *testing.T) string {
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = newFarmAt(t, "http://"+srv.Listener.Addr().String())
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// owslibScript lists the collections of the world service with OWSLib's OGC API Features
// client and reads a page of items of collection 1 and one feature; it prints what it read.
const owslibScript = `
import json, sys
from owslib.ogcapi.features import Features
api = Features(sys.argv[1] + "/ogc/world")
cols = api.collections()
items = api.collection_items("1", limit=5, NAME="Brazil")
page = api.collection_items("1", limit=7)
fid = page["features"][0]["id"]
one = api.collection_item("1", str(fid))
print(json.dumps({"collections": [c["id"] for c in cols["collections"]], "brazil": items["features"][0]["properties"]["NAME"],
    "matched": page["numberMatched"], "returned": len(page["features"]), "one": one["id"] == fid}))
`

// OWSLib, the OGC client library of Python, lists the collections and reads items: a filtered
// page, a page of seven, and one feature by id. Needs python3-owslib; loopback only.
func TestOWSLib(t *testing.T) {
	py := testenv.PythonWith(t, "owslib.ogcapi.features", "python3-owslib")
	out := testenv.RunPython(t, py, owslibScript, startFarm(t))
	var res struct {
		Collections       []string
		Brazil            string
		Matched, Returned int
		One               bool
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Join(res.Collections, ",") != "0,1" || res.Brazil != "Brazil" || res.Returned != 7 || res.Matched < 200 || !res.One {
		t.Errorf("owslib read %+v", res)
	}
}

func needGDAL(t *testing.T) {
	for _, tool := range []string{"ogr2ogr", "gdal_translate"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testenv.Required() {
				t.Fatalf("%s (gdal-bin) is not installed", tool)
			}
			t.Skipf("%s (gdal-bin) is not installed", tool)
		}
	}
}

// GDAL's OAPIF driver pages through collection 0, the country points (pages of 40 features: it
// follows the next links), and reads exactly the layer's count, as REST's query counts it; its
// OGCAPI driver
// reads the collection's WebMercatorQuad tileset into a picture that shows the countries.
// Needs gdal-bin; loopback only.
func TestGDAL(t *testing.T) {
	needGDAL(t)
	base := startFarm(t)
	dir := t.TempDir()
	env := testenv.GDALEnv(dir)
	want := restCount(t, newFarmAt(t, farmURL), "world", 0, "1%3D1")

	out := filepath.Join(dir, "points.geojson")
	cmd := exec.Command("ogr2ogr", "-f", "GeoJSON", "-oo", "PAGE_SIZE=40", out, "OAPIF:"+base+"/ogc/world", "0")
	cmd.Env = env
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ogr2ogr OAPIF: %v\n%s", err, log)
	} else if n := strings.Count(string(log), "offset="); n < want/40 {
		t.Errorf("ogr2ogr asked for %d pages, want at least %d:\n%s", n, want/40, log)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var fc featureCollection
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fc.Features {
		names[f.Properties["NAME"].(string)] = true
	}
	if len(fc.Features) != want || !names["Brazil"] {
		t.Errorf("OAPIF read %d features (Brazil: %v), want %d", len(fc.Features), names["Brazil"], want)
	}

	png := filepath.Join(dir, "tiles.png")
	// GDAL 3.6 does not move the collection's CRS84 extent into the tile matrix set's system:
	// the extent to read is given in it.
	cmd = exec.Command("gdal_translate", "-of", "PNG", "-outsize", "256", "0", "-oo", "MINX=-20037508", "-oo", "MAXX=20037508",
		"-oo", "MINY=-15000000", "-oo", "MAXY=15000000", "OGCAPI:"+base+"/ogc/world/collections/1", png)
	cmd.Env = env
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdal_translate OGCAPI: %v\n%s", err, log)
	}
	if !strings.Contains(string(log), "/map/tiles/WebMercatorQuad/") {
		t.Errorf("gdal_translate read no tile of the tileset:\n%s", log)
	}
	img := testenv.ReadPNG(t, png)
	land := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 4 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 4 {
			r, g, b, a := img.At(x, y).RGBA()
			if a>>8 == 255 && r>>8 == 232 && g>>8 == 228 && b>>8 == 216 {
				land++
			}
		}
	}
	if land == 0 {
		t.Errorf("the tileset GDAL read (%v) shows no country", img.Bounds())
	}
}
