// Package e2e tests the whole farm from outside: it starts api, coordinator and worker processes
// (in-process, or as real separate processes) against a real Redis and a real MinIO server and
// talks to them as clients do.
package e2e

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/color"
	"log/slog"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/app/apptest"
	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

const namespace = "http://schemas.mapfarm.dev/gis/10.7"

// farm is a running in-process farm.
type farm struct {
	url   string
	store *blob.MinIO
}

// startFarm runs api + coordinator + worker on real Redis and MinIO until the test ends, logging
// warnings and errors to the test's log. Each option, if any, adjusts the loaded configuration
// before the farm starts (benchmarks use them).
func startFarm(t testing.TB, options ...func(*config.Config)) *farm {
	t.Helper()
	return startLoggedFarm(t, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})), options...)
}

// startLoggedFarm is startFarm with the farm's logs going to logger, for tests that look at
// what is logged.
func startLoggedFarm(t testing.TB, logger *slog.Logger, options ...func(*config.Config)) *farm {
	t.Helper()
	mi := testenv.MinIO(t)
	bucket := testenv.Bucket(t)
	t.Setenv("MAPFARM_LISTEN", "127.0.0.1:0")
	t.Setenv("MAPFARM_SERVICES", "../services/services.yaml")
	t.Setenv("MAPFARM_REDIS_ADDR", testenv.Redis(t))
	t.Setenv("MAPFARM_REDIS_DB", strconv.Itoa(testenv.RedisDB(t)))
	t.Setenv("MAPFARM_STORE", "minio")
	t.Setenv("MAPFARM_MINIO_ENDPOINT", mi.Endpoint)
	t.Setenv("MAPFARM_MINIO_BUCKET", bucket)
	t.Setenv("MAPFARM_MINIO_ACCESS_KEY", mi.AccessKey)
	t.Setenv("MAPFARM_MINIO_SECRET_KEY", mi.SecretKey)
	t.Setenv("MAPFARM_NAMESPACE", namespace)
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range options {
		o(cfg)
	}
	url := apptest.Serve(t, cfg, logger, app.Hooks{})
	store, err := blob.NewMinIO(context.Background(), blob.MinIOConfig{Endpoint: mi.Endpoint, AccessKey: mi.AccessKey, SecretKey: mi.SecretKey, Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return &farm{url: url, store: store}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// zeepSummary is what zeep_client.py prints.
type zeepSummary struct {
	MapCount       int    `json:"mapCount"`
	DefaultMapName string `json:"defaultMapName"`
	MapName0       string `json:"mapName0"`
	Name           string `json:"name"`
	Units          string `json:"units"`
	WKID           int    `json:"wkid"`
	FullExtent     []float64
	Layers         []struct {
		ID     int       `json:"id"`
		Name   string    `json:"name"`
		Fields []string  `json:"fields"`
		Extent []float64 `json:"extent"`
	} `json:"layers"`
	DocumentInfo map[string]any `json:"documentInfo"`
	Config       map[string]any `json:"config"`
	ReturnTypes  string         `json:"returnTypes"`
	FixedScale   bool           `json:"fixedScale"`
	Mime         struct {
		Width, Height int
		Scale         float64
		Type          string
		Visible       []int
		Extent        []float64
	} `json:"mime"`
	URL struct {
		URL   string `json:"url"`
		Type  string `json:"type"`
		Width int    `json:"width"`
	} `json:"url"`
	Faults map[string][]string `json:"faults"`
}

// TestZeepClients drives the farm with zeep clients generated from the served WSDL and from
// the ArcGIS reference WSDL, and checks the values against the sample data and the images by
// their pixels.
func TestZeepClients(t *testing.T) {
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/world/MapServer"

	eachClientWSDL(t, endpoint, func(t *testing.T, wsdl string) {
		dir := t.TempDir()
		s := runScript[zeepSummary](t, "testdata/zeep_client.py", wsdl, endpoint, namespace, dir)
		checkSummary(t, s)
		img := testenv.ReadPNG(t, filepath.Join(dir, "mime.png"))
		checkWorldImage(t, img, 400, 300, s.Mime.Extent)
		checkURL(t, f, s.URL.URL)
	})
}

func checkSummary(t *testing.T, s zeepSummary) {
	t.Helper()
	if s.MapCount != 1 || s.DefaultMapName != s.Name || s.MapName0 != s.Name {
		t.Errorf("maps: count %d, default %q, index 0 %q, info %q", s.MapCount, s.DefaultMapName, s.MapName0, s.Name)
	}
	if s.WKID != 3857 || s.Units != "gisMeters" {
		t.Errorf("spatial reference %d, units %s; want 3857 and gisMeters", s.WKID, s.Units)
	}
	var countries bool
	for _, l := range s.Layers {
		if strings.EqualFold(l.Name, "countries") {
			countries = true
			if !slices.Contains(l.Fields, "NAME") || !slices.Contains(l.Fields, "ISO_N3") {
				t.Errorf("countries fields %v lack NAME/ISO_N3", l.Fields)
			}
			// Web Mercator world: x spans ±20037508 m (the antimeridian), within a metre.
			if len(l.Extent) != 4 || l.Extent[0] > -20037000 || l.Extent[2] < 20037000 {
				t.Errorf("countries extent %v does not span the world", l.Extent)
			}
		}
	}
	if !countries {
		t.Errorf("no countries layer in %+v", s.Layers)
	}
	if s.Config["MaximumImageWidth"] != float64(4096) || s.Config["MaximumRecordCount"] != float64(1000) {
		t.Errorf("service configuration %v", s.Config)
	}
	if s.ReturnTypes != "gisImageReturnURL" || s.FixedScale {
		t.Errorf("return types %q fixed %v", s.ReturnTypes, s.FixedScale)
	}
	if s.Mime.Width != 400 || s.Mime.Height != 300 || s.Mime.Type != "image/png" || s.Mime.Scale <= 0 {
		t.Errorf("MIME image %+v", s.Mime)
	}
	if s.URL.Type != "image/jpeg" || !strings.Contains(s.URL.URL, "/arcgis/output/") {
		t.Errorf("URL image %+v", s.URL)
	}
	if f := s.Faults["index"]; len(f) != 2 || f[0] != "soap:Client" || !strings.Contains(f[1], "Index 7 is out of range") {
		t.Errorf("GetMapName(7) fault %v", f)
	}
	if f := s.Faults["map"]; len(f) != 2 || !strings.Contains(f[1], `map "NoSuchMap"`) {
		t.Errorf("GetServerInfo(NoSuchMap) fault %v", f)
	}
}

// checkWorldImage looks at the pixels: boxes of open ocean are ocean-coloured, boxes inside big
// countries mostly land-coloured (borders and labels take the rest). ext is the image's extent
// in Web Mercator metres.
func checkWorldImage(t *testing.T, img image.Image, w, h int, ext []float64) {
	t.Helper()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	boxes := []struct {
		name                   string
		lon0, lat0, lon1, lat1 float64
		want                   color.NRGBA
		share                  float64
	}{
		{"South Pacific", -140, -50, -100, -20, ocean, 0.85},
		{"South Atlantic", -35, -45, -20, -25, ocean, 0.85},
		{"central Africa", 15, -10, 30, 8, land, 0.3},
		{"Brazil", -65, -15, -45, -3, land, 0.3},
		{"Siberia", 90, 55, 130, 68, land, 0.3},
	}
	for _, b := range boxes {
		x0, y0 := toPixel(ext, w, h, b.lon0, b.lat1)
		x1, y1 := toPixel(ext, w, h, b.lon1, b.lat0)
		if got := share(img, image.Rect(x0, y0, x1, y1), b.want); got < b.share {
			t.Errorf("%s (pixels %d,%d–%d,%d): %.0f%% of pixels are %v, want at least %.0f%%", b.name, x0, y0, x1, y1, got*100, b.want, b.share*100)
		}
	}
}

// toPixel converts longitude/latitude to a pixel of an image of the Web Mercator extent ext.
func toPixel(ext []float64, w, h int, lon, lat float64) (int, int) {
	const r = 6378137.0
	x := lon * math.Pi / 180 * r
	y := math.Log(math.Tan(math.Pi/4+lat*math.Pi/360)) * r
	return int((x - ext[0]) / (ext[2] - ext[0]) * float64(w)), int((ext[3] - y) / (ext[3] - ext[1]) * float64(h))
}

// share returns the fraction of the pixels in r that have about colour c.
func share(img image.Image, r image.Rectangle, c color.NRGBA) float64 {
	r = r.Intersect(img.Bounds())
	n, hit := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			n++
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near(cr>>8, c.R) && near(cg>>8, c.G) && near(cb>>8, c.B) {
				hit++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(hit) / float64(n)
}

// nearest reports whether a pixel within radius r of (x, y) has about colour c (labels and
// borders may cover the exact spot).
func nearest(img image.Image, x, y int, c color.NRGBA, r int) bool {
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			cr, cg, cb, _ := img.At(x+dx, y+dy).RGBA()
			if near(cr>>8, c.R) && near(cg>>8, c.G) && near(cb>>8, c.B) {
				return true
			}
		}
	}
	return false
}

func near(a uint32, b uint8) bool { d := int(a) - int(b); return d >= -6 && d <= 6 }

// checkURL fetches an image by its URL and finds its bytes in MinIO.
func checkURL(t *testing.T, f *farm, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("GET %s: %s %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	name := url[strings.LastIndex(url, "/")+1:]
	// The worker writes to MinIO right after it reports, so the write may still be landing.
	var stored []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if stored, err = f.store.Get(context.Background(), "outputs/"+name); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("image not in MinIO: %v", err)
	}
	if !bytes.Equal(stored, body.Bytes()) {
		t.Fatalf("served image (%d bytes) differs from MinIO's (%d bytes)", body.Len(), len(stored))
	}
	if len(name) < 32 {
		t.Errorf("output name %q is guessable", name)
	}
}

// TestBadInput sends broken requests: each gets a SOAP fault naming the problem, and the farm
// keeps serving.
func TestBadInput(t *testing.T) {
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/world/MapServer"
	cases := []struct {
		name, url, body string
		status          int
		code, want      string
	}{
		{"malformed XML", endpoint, `<soap:Envelope><soap:Body><gis:GetMapCount>`, 500, "soap:Client", "malformed XML"},
		{"unknown operation", endpoint, soapEnv(`<gis:BrewCoffee/>`), 500, "soap:Client", `unknown operation "BrewCoffee"`},
		{"unknown map", endpoint, soapEnv(`<gis:GetServerInfo><MapName>Atlantis</MapName></gis:GetServerInfo>`), 500, "soap:Client", `map "Atlantis" is not in service world`},
		{"unknown service", f.url + "/arcgis/services/nowhere/MapServer", soapEnv(`<gis:GetMapCount/>`), 404, "soap:Client", `service "nowhere" does not exist`},
		{"missing required field", endpoint, soapEnv(`<gis:ExportMapImage><ImageDescription/></gis:ExportMapImage>`), 500, "soap:Client", "MapDescription is required"},
		{"bad number", endpoint, soapEnv(`<gis:GetMapName><Index>one</Index></gis:GetMapName>`), 500, "soap:Client", `GetMapName/Index: "one" is not an xs:int`},
		{"image too large", endpoint, exportBody(20000, 300, "96", ""), 500, "soap:Client", "20000×300 pixels is larger than the limit of 4096×4096"},
		{"zero-size image", endpoint, exportBody(0, 300, "96", ""), 500, "soap:Client", "must be positive"},
		{"bad definition expression", endpoint, soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name><LayerDescriptions><LayerDescription><LayerID>1</LayerID><Visible>true</Visible><DefinitionExpression>NAME = = 'x'</DefinitionExpression></LayerDescription></LayerDescriptions></MapDescription><ImageDescription><ImageDisplay><ImageHeight>10</ImageHeight><ImageWidth>10</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage>`), 500, "soap:Client", "DefinitionExpression"},
		{"unsupported format", endpoint, soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name></MapDescription><ImageDescription><ImageType><ImageFormat>gisImageEMF</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType><ImageDisplay><ImageHeight>10</ImageHeight><ImageWidth>10</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage>`), 500, "soap:Client", "gisImageEMF is not supported"},
		{"oversized body", endpoint, soapEnv(`<gis:GetMapCount>` + strings.Repeat("<x>padding</x>", 700_000) + `</gis:GetMapCount>`), 413, "soap:Client", "larger than the limit of 8388608 bytes"},
		// Hostile numbers (issue 17): a scale bar image 4096 px square with a DPI or a division,
		// and a selection buffer distance.
		{"scale bar DPI 100000", endpoint, scaleBarBody("100000", "10", 4096, 4096), 500, "soap:Client", "ImageDPI 100000 is out of range: the limit is 1 to 2400 DPI"},
		{"scale bar DPI NaN", endpoint, scaleBarBody("NaN", "10", 4096, 4096), 500, "soap:Client", "ImageDPI NaN is out of range: the limit is 1 to 2400 DPI"},
		{"scale bar DPI 1e300", endpoint, scaleBarBody("1e300", "10", 4096, 4096), 500, "soap:Client", "ImageDPI 1e+300 is out of range"},
		{"scale bar division 1e308", endpoint, scaleBarBody("96", "1e308", 4096, 4096), 500, "soap:Client", "ScaleBar/Division 1e+308 is"},
		{"scale bar division NaN", endpoint, scaleBarBody("96", "NaN", 4096, 4096), 500, "soap:Client", "ScaleBar/Division NaN must be a finite number"},
		{"selection buffer 1e308", endpoint, bufferBody("1e308"), 500, "soap:Client", "SelectionBufferDistance 1e+308 is longer than the limit"},
		{"selection buffer NaN", endpoint, bufferBody("NaN"), 500, "soap:Client", "SelectionBufferDistance NaN must be a finite number"},
		{"entity expansion", endpoint, `<?xml version="1.0"?><!DOCTYPE lol [<!ENTITY lol "lol">]>` + soapEnv(`<gis:GetMapCount/>`), 500, "soap:Client", "DTDs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "text/xml; charset=utf-8")
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body bytes.Buffer
			body.ReadFrom(resp.Body)
			// A hang fails through the context's 20 s; how fast a hostile request is answered is
			// TestHostile's to hold, on a machine doing nothing else. (The oversized body took
			// 6 s beside the race set, over 20 s at load 19, while the api decoded it up to the
			// limit; a body declared over the limit is now refused undecoded.)
			took := time.Since(start)
			code, msg := parseFault(t, body.Bytes())
			t.Logf("HTTP %d %s in %v: %s", resp.StatusCode, code, took.Round(time.Millisecond), msg)
			if resp.StatusCode != tc.status || code != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("got HTTP %d %s %q; want HTTP %d %s containing %q", resp.StatusCode, code, msg, tc.status, tc.code, tc.want)
			}
		})
	}
	// Still serving.
	resp, err := http.Post(endpoint, "text/xml", strings.NewReader(soapEnv(`<gis:GetMapCount/>`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("after bad input, GetMapCount answers %s", resp.Status)
	}
}

// parseFault reads faultcode and faultstring from a SOAP fault envelope.
func parseFault(t *testing.T, b []byte) (code, msg string) {
	t.Helper()
	var env struct {
		Body struct {
			Fault struct {
				Code   string `xml:"faultcode"`
				String string `xml:"faultstring"`
			} `xml:"Fault"`
		} `xml:"Body"`
	}
	if err := xml.Unmarshal(b, &env); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	return env.Body.Fault.Code, env.Body.Fault.String
}
