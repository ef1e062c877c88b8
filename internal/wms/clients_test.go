package wms_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mapfarm/mapfarm/internal/render/rendertest"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// owslibScript reads both versions' capabilities of every service with OWSLib, draws a
// GetMap of the world in EPSG:3857 with each version, and asks GetFeatureInfo at a pixel
// inside Brazil; it prints what it read as JSON and writes the maps beside it.
const owslibScript = `
import json, sys
from owslib.wms import WebMapService
base, out = sys.argv[1], sys.argv[2]
res = {"layers": {}, "info": {}}
for svc in ("world", "world_geographic", "usa", "usa_geographic"):
    for v in ("1.1.1", "1.3.0"):
        wms = WebMapService(base + "/arcgis/services/" + svc + "/MapServer/WMSServer", version=v)
        res["layers"][svc + " " + v] = sorted((name, wms[name].title, wms[name].queryable) for name in wms.contents)
        res["version " + svc + " " + v] = wms.identification.version
        if svc != "world":
            continue
        bbox = (-20037508.34, -20037508.34, 20037508.34, 20037508.34)
        img = wms.getmap(layers=["1"], styles=[""], srs="EPSG:3857", bbox=bbox, size=(400, 400), format="image/png", transparent=True)
        open(out + "/getmap-" + v + ".png", "wb").write(img.read())
        info = wms.getfeatureinfo(layers=["1"], query_layers=["1"], styles=[""], srs="EPSG:3857", bbox=bbox, size=(400, 400),
                                  format="image/png", info_format="application/json", xy=(144, 211), feature_count=5)
        res["info"][v] = json.loads(info.read())
print(json.dumps(res))
`

// OWSLib, the OGC client library of Python, reads both versions' capabilities of every
// service; its GetMap is the picture REST export (ExportMapImage) draws of the same extent
// (both transparent: OWSLib sends BGCOLOR=0xFFFFFF, which paints over the map's background);
// its GetFeatureInfo at a pixel inside Brazil names Brazil. Needs python3-owslib; the server
// listens on loopback only.
func TestOWSLib(t *testing.T) {
	py := testenv.PythonWith(t, "owslib", "python3-owslib")
	// The capabilities name the server's own URL: the handler is set before the server starts
	// (the listener's address is known already), so no request races with it.
	f, url := serveFarm(t)
	dir := t.TempDir()
	out := testenv.RunPython(t, py, owslibScript, url, dir)
	var res struct {
		Layers map[string][][]any `json:"layers"`
		Info   map[string]struct {
			Features []map[string]any `json:"features"`
		} `json:"info"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var raw map[string]any
	_ = json.Unmarshal(out, &raw)
	for _, svc := range []string{"world", "world_geographic", "usa", "usa_geographic"} {
		for _, v := range []string{"1.1.1", "1.3.0"} {
			layers := res.Layers[svc+" "+v]
			names := []string{}
			for _, l := range layers {
				names = append(names, l[0].(string))
			}
			if len(layers) < 3 || !strings.Contains(strings.Join(names, ","), svc) || raw["version "+svc+" "+v] != v {
				t.Errorf("%s %s: OWSLib read %v (version %v)", svc, v, layers, raw["version "+svc+" "+v])
			}
		}
	}
	want := imageOf(t, f, "/arcgis/rest/services/world/MapServer/export?bbox=-20037508.34,-20037508.34,20037508.34,20037508.34&bboxSR=3857&size=400,400&format=png32&transparent=true&f=image")
	for _, v := range []string{"1.1.1", "1.3.0"} {
		b, err := os.ReadFile(filepath.Join(dir, "getmap-"+v+".png"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: OWSLib's GetMap is no PNG: %v %.200q", v, err, b)
		}
		if n := rendertest.Differing(t, got, want); n != 0 {
			t.Errorf("%s: OWSLib's GetMap differs from export in %d pixels", v, n)
		}
		feats := res.Info[v].Features
		if len(feats) != 1 || feats[0]["properties"].(map[string]any)["Name"] != "Brazil" {
			t.Errorf("%s: GetFeatureInfo found %v", v, feats)
		}
	}
}

// GDAL's WMS driver opens the capabilities, lists a subdataset per layer, and draws one:
// gdal_translate's picture shows the countries. Needs gdal-bin; loopback only.
func TestGDALReadsWMS(t *testing.T) {
	if _, err := exec.LookPath("gdalinfo"); err != nil {
		t.Skip("gdalinfo (gdal-bin) is not installed")
	}
	// The capabilities name the server's own URL: the handler is set before the server starts
	// (the listener's address is known already), so no request races with it.
	_, url := serveFarm(t)
	dir := t.TempDir()
	env := testenv.GDALEnv(dir)
	cmd := exec.Command("gdalinfo", "WMS:"+url+"/arcgis/services/world_geographic/MapServer/WMSServer?SERVICE=WMS&REQUEST=GetCapabilities")
	cmd.Env = env
	info, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gdalinfo: %v\n%s", err, info)
	}
	m := regexp.MustCompile(`SUBDATASET_\d+_NAME=(WMS:\S*LAYERS=1&\S*)`).FindSubmatch(info)
	if m == nil {
		t.Fatalf("gdalinfo lists no subdataset of layer 1:\n%s", info)
	}
	sub := string(m[1])
	out := filepath.Join(dir, "layer1.png")
	tr := exec.Command("gdal_translate", "-of", "PNG", "-outsize", "360", "180", sub, out)
	tr.Env = env
	log, err := tr.CombinedOutput()
	if err != nil {
		t.Fatalf("gdal_translate %s: %v\n%s", sub, err, log)
	}
	if !strings.Contains(string(log), "REQUEST=GetMap") && !strings.Contains(string(log), "request=GetMap") {
		t.Errorf("GDAL did not call GetMap:\n%s", log)
	}
	img := testenv.ReadPNG(t, out)
	// Pixel (130, 100) is in Brazil, (140, 125) in the South Atlantic: land and sea differ.
	land, sea := img.At(130, 100), img.At(140, 125)
	r1, g1, b1, _ := land.RGBA()
	r2, g2, b2, _ := sea.RGBA()
	if img.Bounds().Dx() != 360 || (r1 == r2 && g1 == g2 && b1 == b2) {
		t.Errorf("GDAL drew %v; land %v and sea %v look alike", img.Bounds(), land, sea)
	}
}

// MapProxy's wms source (Debian's python3-mapproxy, a layer without a cache) draws from the WMS,
// asking in WMS 1.1.1 and in 1.3.0 (EPSG:4326 latitude first): each time MapProxy's picture is
// the one REST export draws of the same extent and size, within a small colour tolerance
// (MapProxy decodes the PNG and encodes its own). Loopback only.
func TestMapProxyWMSSource(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	f := newFarmAt(t, "http://"+srv.Listener.Addr().String())
	var mu sync.Mutex
	var asked []string
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/WMSServer") {
			mu.Lock()
			asked = append(asked, r.URL.RawQuery)
			mu.Unlock()
		}
		f.ServeHTTP(w, r)
	})
	srv.Start()
	defer srv.Close()
	const w, h = 512, 256
	want := imageOf(t, f, "/arcgis/rest/services/world/MapServer/export?bbox=-180,-90,180,90&bboxSR=4326&imageSR=4326&size=512,256&format=png32&layers=show:1&f=image")
	for _, c := range []struct {
		version string
		bbox    [4]float64 // as the WMS reads it: latitude first in 1.3.0's EPSG:4326
	}{{"1.1.1", [4]float64{-180, -90, 180, 90}}, {"1.3.0", [4]float64{-90, -180, 90, 180}}} {
		t.Run(c.version, func(t *testing.T) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			mp := testenv.NewMapProxyWMS(t, t.TempDir(), srv.URL+"/arcgis/services/world/MapServer/WMSServer", "1", c.version, "EPSG:4326")
			got, err := png.Decode(bytes.NewReader(mp.GetMap("EPSG:4326", [4]float64{-180, -90, 180, 90}, w, h)))
			if err != nil {
				t.Fatalf("MapProxy's answer is no PNG: %v", err)
			}
			mu.Lock()
			calls := asked
			mu.Unlock()
			if len(calls) != 1 {
				t.Fatalf("MapProxy asked the WMS %q; want one GetMap", calls)
			}
			q, err := url.ParseQuery(calls[0])
			if err != nil {
				t.Fatal(err)
			}
			param := func(name string) string {
				for k, v := range q {
					if strings.EqualFold(k, name) {
						return v[0]
					}
				}
				return ""
			}
			var bbox [4]float64
			if _, err := fmt.Sscanf(param("bbox"), "%g,%g,%g,%g", &bbox[0], &bbox[1], &bbox[2], &bbox[3]); err != nil ||
				param("version") != c.version || bbox != c.bbox {
				t.Fatalf("MapProxy asked the WMS %q; want version %s, BBOX %v", calls[0], c.version, c.bbox)
			}
			rendertest.CheckNear(t, got, want, "MapProxy", "export")
		})
	}
}
