package wms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/render/rendertest"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/wms"
)

// farm is WMS and the REST API on one composed server over the sample catalog, drawing in
// process with the worker's own drawing; REST's export is the oracle of GetMap.
type farm struct {
	http.Handler
	ops *mapserver.Server
}

func newFarm(t testing.TB) *farm { return newFarmAt(t, "http://farm.test") }

// newFarmAt is newFarm whose capabilities name publicURL.
func newFarmAt(t testing.TB, publicURL string) *farm {
	t.Helper()
	ops, c := mapservertest.Drawing(t)
	mux := http.NewServeMux()
	mux.Handle("/arcgis/services/{service}/MapServer/WMSServer", wms.New(wms.Params{Server: ops, PublicURL: publicURL, MaxImageWidth: 4096, MaxImageHeight: 4096}))
	mux.Handle("/arcgis/rest/", rest.New(rest.Params{Ops: ops, Services: c, PublicURL: "http://farm.test", WMS: true}))
	return &farm{Handler: mux, ops: ops}
}

// serveFarm serves a farm over HTTP on loopback until the test ends, its capabilities naming
// the server's own address, and returns it and the server's URL.
func serveFarm(t testing.TB) (*farm, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	f := newFarmAt(t, "http://"+srv.Listener.Addr().String())
	srv.Config.Handler = f // before Start: the server's goroutines read it
	srv.Start()
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func get(t testing.TB, h http.Handler, target string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Result()
}

func body(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wmsURL(service string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return "/arcgis/services/" + service + "/MapServer/WMSServer?" + q.Encode()
}

// imageOf GETs target, which must answer 200 with a PNG.
func imageOf(t testing.TB, h http.Handler, target string) image.Image {
	t.Helper()
	resp := get(t, h, target)
	b := body(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("GET %s: %v (%s, %.200q)", target, err, resp.Header.Get("Content-Type"), b)
	}
	return img
}

// exception is a ServiceExceptionReport of either version.
type exception struct {
	XMLName    xml.Name
	Version    string `xml:"version,attr"`
	Exceptions []struct {
		Code    string `xml:"code,attr"`
		Locator string `xml:"locator,attr"`
		Text    string `xml:",chardata"`
	} `xml:"ServiceException"`
}

func exceptionOf(t testing.TB, h http.Handler, target string) (int, exception) {
	t.Helper()
	resp := get(t, h, target)
	b := body(t, resp)
	var e exception
	if err := xml.Unmarshal(b, &e); err != nil || e.XMLName.Local != "ServiceExceptionReport" || len(e.Exceptions) != 1 {
		t.Fatalf("GET %s: %d %v, not a ServiceExceptionReport: %s", target, resp.StatusCode, err, b)
	}
	return resp.StatusCode, e
}

// GetMap draws the picture REST export (ExportMapImage) draws of the same extent, size and
// layers, in the service's system and in another.
func TestGetMapIsExportMapImage(t *testing.T) {
	f := newFarm(t)
	for _, c := range []struct{ wms, export string }{
		{wmsURL("world", "SERVICE", "WMS", "VERSION", "1.3.0", "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", "CRS", "EPSG:3857",
			"BBOX", "-20000000,-10000000,20000000,10000000", "WIDTH", "400", "HEIGHT", "200", "FORMAT", "image/png"),
			"/arcgis/rest/services/world/MapServer/export?bbox=-20000000,-10000000,20000000,10000000&bboxSR=3857&size=400,200&format=png32&f=image"},
		{wmsURL("world", "SERVICE", "WMS", "VERSION", "1.1.1", "REQUEST", "GetMap", "LAYERS", "0,1", "STYLES", ",", "SRS", "EPSG:4326",
			"BBOX", "-20,30,40,60", "WIDTH", "300", "HEIGHT", "150", "FORMAT", "image/png"),
			"/arcgis/rest/services/world/MapServer/export?bbox=-20,30,40,60&bboxSR=4326&imageSR=4326&size=300,150&format=png32&layers=show:0,1&f=image"},
	} {
		got := imageOf(t, f, c.wms)
		want := imageOf(t, f, c.export)
		if n := rendertest.Differing(t, got, want); n != 0 {
			t.Errorf("%s: %d pixels differ from export's", c.wms, n)
		}
	}
}

// 1.3.0 reads an EPSG:4326 BBOX latitude first, CRS:84 and 1.1.1 longitude first: the three
// requests of one extent draw one picture, and the 1.3.0 request with its axes swapped draws
// another.
func TestAxisOrder(t *testing.T) {
	f := newFarm(t)
	m := func(v, crsName, crsValue, bbox string) string {
		return wmsURL("world_geographic", "SERVICE", "WMS", "VERSION", v, "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", crsName, crsValue,
			"BBOX", bbox, "WIDTH", "256", "HEIGHT", "128", "FORMAT", "image/png")
	}
	lonFirst := imageOf(t, f, m("1.1.1", "SRS", "EPSG:4326", "-30,20,50,60"))
	latFirst := imageOf(t, f, m("1.3.0", "CRS", "EPSG:4326", "20,-30,60,50"))
	crs84 := imageOf(t, f, m("1.3.0", "CRS", "CRS:84", "-30,20,50,60"))
	if n := rendertest.Differing(t, latFirst, lonFirst); n != 0 {
		t.Errorf("1.3.0 EPSG:4326 latitude first differs from 1.1.1 longitude first in %d pixels", n)
	}
	if n := rendertest.Differing(t, crs84, lonFirst); n != 0 {
		t.Errorf("1.3.0 CRS:84 differs from 1.1.1 EPSG:4326 in %d pixels", n)
	}
	swapped := imageOf(t, f, m("1.3.0", "CRS", "EPSG:4326", "-30,20,50,60"))
	if rendertest.Differing(t, swapped, lonFirst) == 0 {
		t.Error("1.3.0 EPSG:4326 read a longitude-first BBOX as longitude first")
	}
}

// TRANSPARENT=TRUE leaves the background transparent, BGCOLOR colours it.
func TestTransparentAndBGColor(t *testing.T) {
	f := newFarm(t)
	m := func(extra ...string) image.Image {
		kv := append([]string{"SERVICE", "WMS", "VERSION", "1.3.0", "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", "CRS", "CRS:84",
			"BBOX", "-40,-40,-30,-30", "WIDTH", "64", "HEIGHT", "64", "FORMAT", "image/png"}, extra...) // the South Atlantic: no land
		return imageOf(t, f, wmsURL("world_geographic", kv...))
	}
	if _, _, _, a := m("TRANSPARENT", "TRUE").At(10, 10).RGBA(); a != 0 {
		t.Errorf("TRANSPARENT=TRUE: the sea has alpha %d", a)
	}
	if r, g, b, a := m("BGCOLOR", "0xFF0000").At(10, 10).RGBA(); r>>8 != 255 || g != 0 || b != 0 || a>>8 != 255 {
		t.Errorf("BGCOLOR=0xFF0000: the sea is %d,%d,%d,%d", r>>8, g>>8, b>>8, a>>8)
	}
}

// GetFeatureInfo at a pixel inside Brazil names Brazil, in every INFO_FORMAT and both versions.
func TestGetFeatureInfo(t *testing.T) {
	f := newFarm(t)
	// 360 × 180 pixels over the world: pixel (130, 100) is about 49.5° W, 10.5° S.
	base := []string{"SERVICE", "WMS", "REQUEST", "GetFeatureInfo", "LAYERS", "1", "QUERY_LAYERS", "1", "STYLES", "", "WIDTH", "360", "HEIGHT", "180", "FORMAT", "image/png"}
	v130 := append(append([]string{}, base...), "VERSION", "1.3.0", "CRS", "EPSG:4326", "BBOX", "-90,-180,90,180", "I", "130", "J", "100")
	v111 := append(append([]string{}, base...), "VERSION", "1.1.1", "SRS", "EPSG:4326", "BBOX", "-180,-90,180,90", "X", "130", "Y", "100")
	for _, kv := range [][]string{v130, v111} {
		for _, format := range []string{"text/xml", "text/html", "text/plain", "application/json"} {
			target := wmsURL("world_geographic", append(kv, "INFO_FORMAT", format)...)
			resp := get(t, f, target)
			b := body(t, resp)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), format) {
				t.Fatalf("%s: %d %s %s", target, resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			switch format {
			case "application/json":
				var fc struct {
					Type     string `json:"type"`
					Features []struct {
						ID         string         `json:"id"`
						Geometry   map[string]any `json:"geometry"`
						Properties map[string]any `json:"properties"`
					} `json:"features"`
				}
				if err := json.Unmarshal(b, &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 1 ||
					fc.Features[0].Properties["Name"] != "Brazil" || fc.Features[0].ID != "Countries.211" || fc.Features[0].Geometry["type"] != "MultiPolygon" && fc.Features[0].Geometry["type"] != "Polygon" {
					t.Errorf("%s: %v %s", format, err, b)
				}
			case "text/xml":
				var r struct {
					Collections []struct {
						Layer    string `xml:"layername,attr"`
						Features []struct {
							Fields []struct {
								Name  string `xml:"FieldName"`
								Value string `xml:"FieldValue"`
							} `xml:"Field"`
						} `xml:"FeatureInfo"`
					} `xml:"FeatureInfoCollection"`
				}
				if err := xml.Unmarshal(b, &r); err != nil || len(r.Collections) != 1 || r.Collections[0].Layer != "Countries" || len(r.Collections[0].Features) != 1 ||
					!strings.Contains(string(b), "<esri_wms:FieldValue>Brazil</esri_wms:FieldValue>") {
					t.Errorf("%s: %v %s", format, err, b)
				}
			default:
				if !strings.Contains(string(b), "Brazil") || !strings.Contains(string(b), "Countries") {
					t.Errorf("%s does not name Brazil in Countries: %s", format, b)
				}
			}
		}
	}
	// A pixel at sea finds nothing.
	resp := get(t, f, wmsURL("world_geographic", append(v111[:len(v111)-4], "X", "140", "Y", "125", "INFO_FORMAT", "application/json")...))
	if b := body(t, resp); !bytes.Contains(b, []byte(`"features":[]`)) {
		t.Errorf("at sea: %s", b)
	}
}

// Requests a WMS must refuse get a ServiceExceptionReport with the standard's code, in the
// version of the request.
func TestExceptions(t *testing.T) {
	f := newFarm(t)
	getMap130 := []string{"SERVICE", "WMS", "VERSION", "1.3.0", "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", "CRS", "EPSG:3857",
		"BBOX", "0,0,1000000,1000000", "WIDTH", "64", "HEIGHT", "64", "FORMAT", "image/png"}
	with := func(kv []string, set ...string) string {
		out := append([]string{}, kv...)
		for i := 0; i+1 < len(set); i += 2 {
			found := false
			for j := 0; j+1 < len(out); j += 2 {
				if out[j] == set[i] {
					out[j+1], found = set[i+1], true
				}
			}
			if !found {
				out = append(out, set[i], set[i+1])
			}
		}
		return wmsURL("world", out...)
	}
	getMap111 := []string{"SERVICE", "WMS", "VERSION", "1.1.1", "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", "SRS", "EPSG:3857",
		"BBOX", "0,0,1000000,1000000", "WIDTH", "64", "HEIGHT", "64", "FORMAT", "image/png"}
	gfi := append(append([]string{}, getMap130...), "REQUEST", "GetFeatureInfo", "QUERY_LAYERS", "1", "I", "1", "J", "1")
	for _, c := range []struct {
		target, code, version string
	}{
		{wmsURL("world", "SERVICE", "WMS"), "MissingParameterValue", "1.3.0"},
		{wmsURL("world", "SERVICE", "WMS", "VERSION", "1.3.0", "REQUEST", "DescribeLayer"), "OperationNotSupported", "1.3.0"},
		{with(getMap130, "LAYERS", "7"), "LayerNotDefined", "1.3.0"},
		{with(getMap130, "CRS", "EPSG:2154"), "InvalidCRS", "1.3.0"},
		{with(getMap111, "SRS", "EPSG:2154"), "InvalidSRS", "1.1.1"},
		{with(getMap111, "SRS", "CRS:84"), "InvalidSRS", "1.1.1"},
		{with(getMap130, "FORMAT", "image/webp"), "InvalidFormat", "1.3.0"},
		{with(getMap130, "STYLES", "fancy"), "StyleNotDefined", "1.3.0"},
		{with(getMap130, "TIME", "2020"), "InvalidDimensionValue", "1.3.0"},
		{with(getMap130, "BBOX", ""), "MissingParameterValue", "1.3.0"},
		{with(getMap130, "WIDTH", "5000"), "", "1.3.0"},
		{with(getMap130, "BBOX", "10,0,0,10"), "", "1.3.0"},
		{with(gfi, "I", "64"), "InvalidPoint", "1.3.0"},
		{with(gfi, "QUERY_LAYERS", "0"), "LayerNotDefined", "1.3.0"},
		{with(gfi, "INFO_FORMAT", "application/vnd.ogc.gml"), "InvalidFormat", "1.3.0"},
		{wmsURL("world", "SERVICE", "WMS", "REQUEST", "GetLegendGraphic", "LAYER", "9"), "LayerNotDefined", "1.3.0"},
		{wmsURL("world", "SERVICE", "WMS", "REQUEST", "GetMap", "VERSION", "1.3.0", "layers", "1", "LAYERS", "0"), "", "1.3.0"},
	} {
		code, e := exceptionOf(t, f, c.target)
		if code != 400 || e.Exceptions[0].Code != c.code || e.Version != c.version {
			t.Errorf("%s: %d %s %q (version %s); want 400 %q in %s", c.target, code, e.XMLName.Space, e.Exceptions[0].Code, e.Version, c.code, c.version)
		}
		if c.version == "1.3.0" && e.XMLName.Space != "http://www.opengis.net/ogc" || c.version == "1.1.1" && e.XMLName.Space != "" {
			t.Errorf("%s: namespace %q", c.target, e.XMLName.Space)
		}
	}
	if code, _ := exceptionOf(t, f, with(getMap130)[:0]+"/arcgis/services/nosuch/MapServer/WMSServer?SERVICE=WMS&REQUEST=GetCapabilities"); code != 404 {
		t.Errorf("unknown service: %d", code)
	}
	// INIMAGE and BLANK answer an image of the request's size and format.
	for _, mode := range []string{"INIMAGE", "BLANK", "application/vnd.ogc.se_inimage"} {
		img := imageOf(t, f, with(getMap130, "LAYERS", "7", "EXCEPTIONS", mode, "TRANSPARENT", "TRUE"))
		opaque := 0
		for y := 0; y < 64; y++ {
			for x := 0; x < 64; x++ {
				if _, _, _, a := img.At(x, y).RGBA(); a != 0 {
					opaque++
				}
			}
		}
		if img.Bounds().Dx() != 64 || (mode == "BLANK") != (opaque == 0) {
			t.Errorf("EXCEPTIONS=%s: %v, %d drawn pixels", mode, img.Bounds(), opaque)
		}
	}
}

// GetLegendGraphic draws a layer's legend at the size its capabilities' LegendURL announces.
func TestGetLegendGraphic(t *testing.T) {
	f := newFarm(t)
	caps := capabilities130(t, f, "usa")
	var l *layer130
	caps.Capability.Layer.walk(func(x *layer130) {
		if x.Name == "0" {
			l = x
		}
	})
	if l == nil || len(l.Styles) != 1 || l.Styles[0].LegendURL.Resource.Href == "" {
		t.Fatalf("layer 0 of usa has no LegendURL: %+v", l)
	}
	lu := l.Styles[0].LegendURL
	u, err := url.Parse(lu.Resource.Href)
	if err != nil {
		t.Fatal(err)
	}
	img := imageOf(t, f, u.RequestURI())
	if img.Bounds().Dx() != lu.Width || img.Bounds().Dy() != lu.Height {
		t.Errorf("legend %v; LegendURL says %dx%d", img.Bounds(), lu.Width, lu.Height)
	}
	drawn := 0
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a != 0 {
				drawn++
			}
		}
	}
	if drawn < 100 {
		t.Errorf("the legend is blank (%d drawn pixels)", drawn)
	}
}

// The REST service resource and its directory page list the WMS capability as ArcGIS does.
func TestRESTListsWMSServer(t *testing.T) {
	f := newFarm(t)
	var v struct {
		SupportedExtensions string `json:"supportedExtensions"`
	}
	if err := json.Unmarshal(body(t, get(t, f, "/arcgis/rest/services/usa/MapServer?f=json")), &v); err != nil || v.SupportedExtensions != "WMSServer" {
		t.Errorf("supportedExtensions %q (%v)", v.SupportedExtensions, err)
	}
	if page := body(t, get(t, f, "/arcgis/rest/services/usa/MapServer?f=html")); !bytes.Contains(page, []byte("<b>Supported Extensions:</b> WMSServer")) {
		t.Errorf("the directory's service page does not list WMSServer:\n%s", page)
	}
}

// Every operation runs through Params.Admit (the api's request policy) and is told to
// Params.Observe: a GetMap runs GetServerInfo and ExportMapImage; a heavy lane that stays full
// answers 503 with Retry-After, and the refusal is observed.
func TestRequestPolicy(t *testing.T) {
	c := catalogtest.Samples(t)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000, MaxImageWidth: 4096, MaxImageHeight: 4096},
		Exporter: instantFarm{png: blankPNG(t, 64, 64)}, NewID: mapservertest.NewIDs()})
	var admitted, observed []string
	busy := false
	h := wms.New(wms.Params{Server: ops, PublicURL: "http://farm.test",
		Admit: func(ctx context.Context, op string, req any, run func()) error {
			admitted = append(admitted, op)
			if busy && op == "ExportMapImage" {
				return fmt.Errorf("heavy lane: %w", limits.ErrBusy)
			}
			run()
			return nil
		},
		Observe: func(op string, start time.Time, err error) {
			observed = append(observed, fmt.Sprintf("%s %v", op, err != nil))
		}})
	mux := http.NewServeMux()
	mux.Handle("/arcgis/services/{service}/MapServer/WMSServer", h)
	target := wmsURL("world", "SERVICE", "WMS", "VERSION", "1.3.0", "REQUEST", "GetMap", "LAYERS", "1", "STYLES", "", "CRS", "EPSG:3857",
		"BBOX", "0,0,1000000,1000000", "WIDTH", "64", "HEIGHT", "64", "FORMAT", "image/png")
	if resp := get(t, mux, target); resp.StatusCode != 200 || strings.Join(admitted, ",") != "GetServerInfo,ExportMapImage" ||
		strings.Join(observed, ",") != "GetServerInfo false,ExportMapImage false" {
		t.Errorf("GetMap: %d, admitted %v, observed %v", resp.StatusCode, admitted, observed)
	}
	busy, admitted, observed = true, nil, nil
	code, e := exceptionOf(t, mux, target)
	if resp := get(t, mux, target); code != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(e.Exceptions[0].Text, "busy") ||
		observed[1] != "ExportMapImage true" {
		t.Errorf("busy: %d %+v, observed %v", code, e, observed)
	}
}
