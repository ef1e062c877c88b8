package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/task"
)

func soapEnvelope(body string) string {
	return `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:gis="` +
		testNS + `"><soap:Body>` + body + `</soap:Body></soap:Envelope>`
}

func polygonXML(n int) string {
	var b strings.Builder
	b.WriteString(`<RingArray><Ring><PointArray>`)
	for i := range n {
		fmt.Fprintf(&b, `<Point><X>%d</X><Y>%d</Y></Point>`, i, i%5)
	}
	b.WriteString(`</PointArray></Ring></RingArray>`)
	return b.String()
}

const viewXML = `<MapDescription><Name>Layers</Name><MapArea xsi:type="gis:MapExtent"><Extent xsi:type="gis:EnvelopeN"><XMin>-100</XMin><YMin>-50</YMin><XMax>100</XMax><YMax>50</YMax></Extent></MapArea>`

func displayXML(tag string, w, h int, dpi string) string {
	return fmt.Sprintf(`<%s><ImageHeight>%d</ImageHeight><ImageWidth>%d</ImageWidth><ImageDPI>%s</ImageDPI></%s>`, tag, h, w, dpi, tag)
}

// Every limit is checked in the api before anything is queued: a request over one gets a
// soap:Client fault naming the limit and its value, no render is asked for, and the refusal is
// counted in mapfarm_limit_refusals_total under the limit's name.
func TestLimitsRefuseBeforeQueuing(t *testing.T) {
	cat := catalogtest.Samples(t)
	var renders atomic.Int32
	export := exporterFunc(func(context.Context, task.ExportMap) (task.Result, error) {
		renders.Add(1)
		return task.Result{}, fmt.Errorf("no farm in this test")
	})
	m := metrics.New()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ops := mapserver.New(mapserver.Params{Catalog: cat, Exporter: export, Logger: logger, NewID: NewID,
		Limits: mapserver.Limits{MaxImageWidth: 1000, MaxImageHeight: 800, MaxRecordCount: 1000, MaxPoints: 10}})
	h := New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{MaxElements: 5000}), MaxBodyBytes: 200_000, OutputTTL: time.Minute,
		Limits: limits.Request{MaxVertices: 100, MaxIDs: 20, MaxStringBytes: 256, MaxImageWidth: 1000, MaxImageHeight: 800, MaxImageDPI: 600},
		Logger: logger, Metrics: m}).Handler()

	ints := func(n int) string { return strings.Repeat("<Int>1</Int>", n) }
	export4096 := `<gis:ExportMapImage>` + viewXML + `</MapDescription><ImageDescription><ImageType><ImageFormat>gisImagePNG24</ImageFormat>` +
		`<ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>`
	for _, tc := range []struct {
		name   string
		body   string
		status int
		limit  limits.Name
		want   string
	}{
		{"body size", soapEnvelope(`<gis:GetMapCount>` + strings.Repeat("<x>padding</x>", 20_000) + `</gis:GetMapCount>`), 413, limits.BodyBytes,
			"request body is larger than the limit of 200000 bytes (maxBodyBytes)"},
		{"body size outranks bad XML", `<a>` + strings.Repeat("<b>", 100_000), 413, limits.BodyBytes, "(maxBodyBytes)"},
		{"elements", soapEnvelope(`<gis:GetMapCount>` + strings.Repeat("<x/>", 6000) + `</gis:GetMapCount>`), 500, limits.Elements,
			"more than 5000 elements; the limit is 5000 (maxElements)"},
		{"depth", soapEnvelope(strings.Repeat("<a>", 70) + strings.Repeat("</a>", 70)), 500, limits.Depth, "the limit is 64 (maxDepth)"},
		{"vertices", soapEnvelope(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter xsi:type="gis:SpatialFilter">` +
			`<FilterGeometry xsi:type="gis:PolygonN">` + polygonXML(101) + `</FilterGeometry></QueryFilter></gis:QueryFeatureCount>`), 500, limits.Vertices,
			"QueryFeatureCount/QueryFilter/FilterGeometry/RingArray[0]/PointArray[100]: more than 100 vertices in the request's geometries; the limit is 100 (maxVertices)"},
		{"ids", soapEnvelope(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter><FIDSet><FIDArray>` + ints(21) +
			`</FIDArray></FIDSet></QueryFilter></gis:QueryFeatureCount>`), 500, limits.IDs, "the limit is 20 (maxIDs)"},
		{"where clause", soapEnvelope(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter><WhereClause>` +
			strings.Repeat("1=1 AND ", 40) + `1=1</WhereClause></QueryFilter></gis:QueryFeatureCount>`), 500, limits.StringBytes,
			"QueryFeatureCount/QueryFilter/WhereClause: a string of 323 bytes is longer than the limit of 256 bytes (maxStringBytes)"},
		{"image width", soapEnvelope(export4096 + displayXML("ImageDisplay", 1001, 10, "96") + `</ImageDescription></gis:ExportMapImage>`), 500, limits.ImageWidth,
			"1001×10 pixels is larger than the limit of 1000×800"},
		{"image DPI", soapEnvelope(export4096 + displayXML("ImageDisplay", 100, 100, "NaN") + `</ImageDescription></gis:ExportMapImage>`), 500, limits.ImageDPI,
			"ImageDisplay/ImageDPI NaN is out of range: the limit is 1 to 600 DPI, 0 meaning 96 (maxImageDPI)"},
		{"identify display", soapEnvelope(`<gis:Identify>` + viewXML + `</MapDescription>` + displayXML("MapImageDisplay", 100, 900, "96") +
			`<SearchShape xsi:type="gis:PointN"><X>1</X><Y>1</Y></SearchShape></gis:Identify>`), 500, limits.ImageHeight, "100×900 pixels"},
		{"points", soapEnvelope(`<gis:ToMapPoints>` + viewXML + `</MapDescription>` + displayXML("MapImageDisplay", 100, 100, "96") +
			`<ScreenXValues>` + ints(11) + `</ScreenXValues><ScreenYValues>` + ints(11) + `</ScreenYValues></gis:ToMapPoints>`), 500, limits.Points,
			"ScreenXValues: 11 points is more than the limit of 10 (maxPoints)"},
		{"selection buffer", soapEnvelope(`<gis:ExportMapImage>` + viewXML + `<LayerDescriptions><LayerDescription><LayerID>1</LayerID><Visible>true</Visible>` +
			`<ShowSelectionBuffer>true</ShowSelectionBuffer><SelectionBufferDistance>1e9</SelectionBufferDistance></LayerDescription></LayerDescriptions></MapDescription>` +
			`<ImageDescription><ImageType><ImageFormat>gisImagePNG24</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType>` +
			displayXML("ImageDisplay", 100, 100, "96") + `</ImageDescription></gis:ExportMapImage>`), 500, limits.BufferDistance,
			"SelectionBufferDistance 1e+09 is longer than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := refusals(t, m, tc.limit)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/arcgis/services/world/MapServer", strings.NewReader(tc.body)))
			body := rec.Body.String()
			if rec.Code != tc.status || !strings.Contains(body, "<faultcode>soap:Client</faultcode>") || !strings.Contains(body, tc.want) {
				t.Fatalf("HTTP %d %s\nwant %d, a soap:Client fault containing %q", rec.Code, body, tc.status, tc.want)
			}
			if got := refusals(t, m, tc.limit); got != before+1 {
				t.Errorf("mapfarm_limit_refusals_total{limit=%q} went from %d to %d, want one more", tc.limit, before, got)
			}
		})
	}
	if n := renders.Load(); n != 0 {
		t.Errorf("%d renders were asked for; requests over a limit must not reach the farm", n)
	}
}

// refusals reads mapfarm_limit_refusals_total{limit} from /metrics.
func refusals(t *testing.T, m *metrics.Metrics, limit limits.Name) int {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	prefix := fmt.Sprintf("mapfarm_limit_refusals_total{limit=%q} ", limit)
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("/metrics has no %s", prefix)
	return 0
}

// The JSON routes' limits are counted too: a seed job id over its length (HTTP 400) and a
// client over its rate limit (HTTP 429).
func TestJSONRouteRefusalsCounted(t *testing.T) {
	m := metrics.New()
	h := New(Params{SeedJobs: &fakeJobs{jobs: map[string]seed.Status{}}, Metrics: m,
		Security: Security{AdminToken: adminToken, RateLimit: 0.001, RateBurst: 1}}).Handler()
	req := adminRequest("POST", "/admin/seed", `{"id":"`+strings.Repeat("y", 129)+`","service":"world"}`)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "the limit is 128") {
		t.Fatalf("a 129-character id: HTTP %d %s", rec.Code, rec.Body)
	}
	if n := refusals(t, m, limits.SeedID); n != 1 {
		t.Errorf("seedIDLength refusals %d, want 1", n)
	}
	for i, want := range []int{404, 429} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v2/nowhere", nil))
		if rec.Code != want {
			t.Fatalf("request %d: HTTP %d, want %d", i+1, rec.Code, want)
		}
	}
	if n := refusals(t, m, limits.RateLimit); n != 1 {
		t.Errorf("rateLimit refusals %d, want 1", n)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A SOAP body that declares a length over the limit is refused with 413 without being decoded
// (the codec allocates for every element it reads: 50,000 here before the limit), yet read on to
// the limit, so that a client still sending gets the answer. A body of unknown length is decoded
// as it comes and refused when it passes the limit.
func TestDeclaredOversizedBodyNotDecoded(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	ops := mapserver.New(mapserver.Params{Catalog: catalogtest.Samples(t), Logger: logger, NewID: NewID})
	const limit = 200_000
	h := New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{MaxElements: 1_000_000}), MaxBodyBytes: limit, OutputTTL: time.Minute,
		Logger: logger}).Handler()
	body := soapEnvelope(`<gis:GetMapCount>` + strings.Repeat("<x/>", 100_000) + `</gis:GetMapCount>`)
	serve := func(declared bool) (*httptest.ResponseRecorder, int) {
		cr := &countingReader{r: strings.NewReader(body)}
		req := httptest.NewRequest("POST", "/arcgis/services/world/MapServer", cr)
		req.ContentLength = -1
		if declared {
			req.ContentLength = int64(len(body))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec, cr.n
	}
	for _, declared := range []bool{true, false} {
		rec, read := serve(declared)
		if rec.Code != 413 || !strings.Contains(rec.Body.String(), "request body is larger than the limit of 200000 bytes (maxBodyBytes)") {
			t.Errorf("declared %v: HTTP %d %.300s", declared, rec.Code, rec.Body)
		}
		if read < limit {
			t.Errorf("declared %v: %d bytes of the body read, want the limit's %d at least", declared, read, limit)
		}
	}
	allocs := testing.AllocsPerRun(5, func() { serve(true) })
	t.Logf("declared: %.0f allocations", allocs)
	if allocs > 2000 {
		t.Errorf("a body declared over the limit cost %.0f allocations to refuse: it was decoded", allocs)
	}
	if chunked := testing.AllocsPerRun(2, func() { serve(false) }); chunked < 10*allocs {
		t.Errorf("a chunked body over the limit cost %.0f allocations, the declared one %.0f: the test no longer tells decoding apart", chunked, allocs)
	}
}
