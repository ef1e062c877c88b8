package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/token"
	"github.com/mapfarm/mapfarm/internal/wms"
)

// sampleParams are the parameters of sampleAPI, which a test may change before they are used.
type sampleParams struct {
	Ops  mapserver.Params // Catalog (the samples), NewID and Limits (images up to 4096 pixels, 1,000 records) set
	API  Params           // Codec, MaxBodyBytes (16 MiB) and OutputTTL (a minute) set; Ops, REST and WMS are sampleAPI's
	REST rest.Params      // Services and MaxRecordCount (1,000) set; Ops and TokenBased (tokens in API.Security) are sampleAPI's
	WMS  *wms.Params      // when set, WMS is served too; Server is sampleAPI's
}

// sampleAPI is the api on the sample catalog with the SOAP endpoint and the REST API (and WMS
// when adjust asks for it), built from the parameters adjust (may be nil) has changed.
func sampleAPI(t testing.TB, adjust func(*sampleParams)) http.Handler {
	t.Helper()
	cat := catalogtest.Samples(t)
	p := sampleParams{
		Ops: mapserver.Params{Catalog: cat, NewID: NewID,
			Limits: mapserver.Limits{MaxImageWidth: 4096, MaxImageHeight: 4096, MaxRecordCount: 1000}},
		API:  Params{Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 16 << 20, OutputTTL: time.Minute},
		REST: rest.Params{Services: cat, MaxRecordCount: 1000},
	}
	if adjust != nil {
		adjust(&p)
	}
	ops := mapserver.New(p.Ops)
	p.API.Ops, p.REST.Ops = ops, ops
	p.REST.TokenBased = p.API.Security.Tokens != nil
	p.API.REST = rest.New(p.REST)
	if p.WMS != nil {
		p.WMS.Server = ops
		p.API.WMS = wms.New(*p.WMS)
	}
	return New(p.API).Handler()
}

// restServer is the api with both the SOAP endpoint and the REST API on the sample catalog.
func restServer(t testing.TB, sec Security) (http.Handler, *soap.Codec) {
	t.Helper()
	var codec *soap.Codec
	h := sampleAPI(t, func(p *sampleParams) { p.API.Security, codec = sec, p.API.Codec })
	return h, codec
}

func restGet(t testing.TB, h http.Handler, target string, hdr ...string) (*http.Response, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	h.ServeHTTP(rec, req)
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("GET %s: %d, not JSON: %v: %.200s", target, rec.Code, err, rec.Body.Bytes())
	}
	return rec.Result(), v
}

// errorCode is the code of an ArcGIS REST error body, 0 when the body is no error.
func errorCode(v map[string]any) int {
	e, ok := v["error"].(map[string]any)
	if !ok {
		return 0
	}
	c, _ := e["code"].(float64)
	return int(c)
}

// Tokens apply to REST as to SOAP: none is ArcGIS's 499 Token Required, a bad one 498, one
// scoped to another service 403 (all with HTTP 200 and the code in the body, as ArcGIS answers
// f=json); the token is taken from the token parameter or an Authorization header. The REST
// info resource stays open so clients can learn that tokens are needed.
func TestRESTTokens(t *testing.T) {
	signer := testSigner(t)
	read := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	usaOnly := issue(t, signer, token.Grant{Client: "usa-viewer", Role: token.RoleRead, Services: []string{"usa"}})
	h, _ := restServer(t, Security{Tokens: signer})
	const q = "/arcgis/rest/services/world/MapServer/1/query?where=1%3D1&returnCountOnly=true&f=json"
	for _, tc := range []struct {
		name, target string
		hdr          []string
		code         int
	}{
		{"no token", q, nil, 499},
		{"no token, catalog", "/arcgis/rest/services?f=json", nil, 499},
		{"forged token", q + "&token=" + url.QueryEscape(forge(read)), nil, 498},
		{"token parameter", q + "&token=" + url.QueryEscape(read), nil, 0},
		{"bearer header", q, []string{"Authorization", "Bearer " + read}, 0},
		{"TOKEN parameter (names are case-insensitive)", q + "&TOKEN=" + url.QueryEscape(read), nil, 0},
		{"token for another service", q + "&token=" + url.QueryEscape(usaOnly), nil, 403},
		{"info is open", "/arcgis/rest/info?f=json", nil, 0},
	} {
		resp, v := restGet(t, h, tc.target, tc.hdr...)
		if resp.StatusCode != 200 || errorCode(v) != tc.code {
			t.Errorf("%s: HTTP %d, body %v; want HTTP 200 and error code %d", tc.name, resp.StatusCode, v, tc.code)
		}
		if n, _ := v["count"].(float64); tc.code == 0 && strings.Contains(tc.target, "returnCountOnly") && n < 1 {
			t.Errorf("%s: count %v, want the layer's count", tc.name, v["count"])
		}
	}
	_, info := restGet(t, h, "/arcgis/rest/info?f=json")
	if auth, _ := info["authInfo"].(map[string]any); auth["isTokenBasedSecurity"] != true {
		t.Errorf("info authInfo = %v, want isTokenBasedSecurity true", info["authInfo"])
	}
}

// forge changes one character in the middle of a token's signature.
func forge(tok string) string {
	i := len(tok) - 5
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

// The rate limit and CORS apply to REST answers, errors included.
func TestRESTRateLimitAndCORS(t *testing.T) {
	const origin = "https://maps.example.org"
	h, _ := restServer(t, Security{RateLimit: 0.001, RateBurst: 2, CORSOrigins: []string{origin}})
	target := "/arcgis/rest/services/world/MapServer?f=json"
	for i, want := range []int{200, 200, 429} {
		resp, v := restGet(t, h, target, "Origin", origin)
		if resp.StatusCode != want {
			t.Fatalf("request %d: HTTP %d %v, want %d", i, resp.StatusCode, v, want)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("request %d: Access-Control-Allow-Origin %q, want %q", i, got, origin)
		}
		if want == 429 && (errorCode(v) != 429 || resp.Header.Get("Retry-After") == "") {
			t.Errorf("over the limit: %v, Retry-After %q", v, resp.Header.Get("Retry-After"))
		}
	}
}

// soapQuery runs QueryFeatureData2 through the SOAP endpoint and returns its record set.
func soapQuery(t *testing.T, h http.Handler, codec *soap.Codec, service string, req *gisxml.QueryFeatureData2) *gisxml.RecordSet {
	t.Helper()
	var buf bytes.Buffer
	if err := codec.WriteRequest(&buf, "QueryFeatureData2", req); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/arcgis/services/"+service+"/MapServer", &buf))
	if rec.Code != 200 {
		t.Fatalf("SOAP QueryFeatureData2: %d %.500s", rec.Code, rec.Body.String())
	}
	var resp gisxml.QueryFeatureData2Response
	if err := codec.ReadResponse(rec.Body, "QueryFeatureData2", &resp); err != nil {
		t.Fatal(err)
	}
	rs, ok := resp.Result.Object.(*gisxml.RecordSet)
	if !ok {
		t.Fatalf("SOAP answered %T", resp.Result.Object)
	}
	return rs
}

// canon turns a SOAP value into what the REST JSON holds (dates as epoch ms, numbers as float64).
func canon(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float32:
		return float64(x)
	case time.Time:
		return float64(x.UnixMilli())
	}
	return v
}

// soapCoords flattens a SOAP geometry's coordinates, part by part.
func soapCoords(g any) [][][2]float64 {
	pts := func(a gisxml.ArrayOfPoint) [][2]float64 {
		var out [][2]float64
		for _, p := range a {
			pn := p.(*gisxml.PointN)
			out = append(out, [2]float64{pn.X, pn.Y})
		}
		return out
	}
	switch x := g.(type) {
	case *gisxml.PointN:
		return [][][2]float64{{{x.X, x.Y}}}
	case *gisxml.MultipointN:
		return [][][2]float64{pts(x.PointArray)}
	case *gisxml.PolylineN:
		var out [][][2]float64
		for _, p := range x.PathArray {
			out = append(out, pts(p.PathPart().PointArray))
		}
		return out
	case *gisxml.PolygonN:
		var out [][][2]float64
		for _, r := range x.RingArray {
			out = append(out, pts(r.PointArray))
		}
		return out
	}
	return nil
}

// restCoords flattens an Esri JSON geometry's coordinates the same way.
func restCoords(g map[string]any) [][][2]float64 {
	if g == nil {
		return nil
	}
	if x, ok := g["x"].(float64); ok {
		return [][][2]float64{{{x, g["y"].(float64)}}}
	}
	part := func(a []any) [][2]float64 {
		var out [][2]float64
		for _, p := range a {
			c := p.([]any)
			out = append(out, [2]float64{c[0].(float64), c[1].(float64)})
		}
		return out
	}
	if ps, ok := g["points"].([]any); ok {
		return [][][2]float64{part(ps)}
	}
	var out [][][2]float64
	for _, k := range []string{"paths", "rings"} {
		if parts, ok := g[k].([]any); ok {
			for _, p := range parts {
				out = append(out, part(p.([]any)))
			}
		}
	}
	return out
}

func sameCoords(a, b [][][2]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			for k := 0; k < 2; k++ {
				if math.Abs(a[i][j][k]-b[i][j][k]) > 1e-9*math.Max(1, math.Abs(a[i][j][k])) {
					return false
				}
			}
		}
	}
	return true
}

// The differential test: for each query case the REST answer holds the same records, attributes
// and geometries as the SOAP QueryFeatureData2 answer to the same filter.
func TestRESTQueryMatchesSOAP(t *testing.T) {
	h, codec := restServer(t, Security{})
	wgs := &gisxml.GeographicCoordinateSystem{SpatialReferenceFields: gisxml.SpatialReferenceFields{WKID: ptrTo(4326)}}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name, service string
		layer         int
		rest          string
		filter        gisxml.QueryFilterKind
	}{
		{"where", "usa", 0, "where=" + url.QueryEscape("NAME LIKE 'New%'") + "&outFields=*",
			&gisxml.QueryFilter{WhereClause: "NAME LIKE 'New%'"}},
		{"objectIds and outFields", "usa", 1, "objectIds=5,17,300&outFields=NAME,STATE",
			&gisxml.QueryFilter{FIDSet: &gisxml.FIDSet{FIDArray: gisxml.ArrayOfInt{5, 17, 300}}, SubFields: str("NAME,STATE,Shape")}},
		{"envelope intersects", "world", 1, "geometry=0,40,20,50&geometryType=esriGeometryEnvelope&inSR=4326&spatialRel=esriSpatialRelIntersects&outFields=*",
			&gisxml.SpatialFilter{SearchOrder: gisxml.SearchOrderSpatial, SpatialRel: gisxml.SpatialRelIntersects, FilterGeometry: &gisxml.EnvelopeN{XMin: 0, YMin: 40, XMax: 20, YMax: 50, SpatialReference: wgs}}},
		{"point within, out in 4326", "usa", 0, "geometry=" + url.QueryEscape(`{"x":-10880000,"y":3540000}`) + "&geometryType=esriGeometryPoint&spatialRel=esriSpatialRelWithin&outSR=4326&outFields=*",
			&gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{OutputSpatialReference: wgs}, SearchOrder: gisxml.SearchOrderSpatial, SpatialRel: gisxml.SpatialRelWithin, FilterGeometry: &gisxml.PointN{X: -10880000, Y: 3540000}}},
		{"order by", "world", 1, "where=" + url.QueryEscape("NAME LIKE 'B%'") + "&orderByFields=" + url.QueryEscape("NAME DESC") + "&outFields=*",
			&gisxml.QueryFilter{WhereClause: "NAME LIKE 'B%'", PostfixClause: str("ORDER BY NAME DESC")}},
		{"points layer", "world", 0, "where=" + url.QueryEscape("NAME < 'C'") + "&outFields=*",
			&gisxml.QueryFilter{WhereClause: "NAME < 'C'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := soapQuery(t, h, codec, tc.service, &gisxml.QueryFeatureData2{LayerDescription: &gisxml.LayerDescription{LayerID: tc.layer, Visible: true},
				QueryFilter: tc.filter, QueryResultOptions: &gisxml.QueryResultOptions{Format: gisxml.QueryResultRecordSetAsObject}})
			_, v := restGet(t, h, fmt.Sprintf("/arcgis/rest/services/%s/MapServer/%d/query?f=json&%s", tc.service, tc.layer, tc.rest))
			feats, _ := v["features"].([]any)
			if len(rs.Records) == 0 || len(feats) != len(rs.Records) {
				t.Fatalf("REST %d features, SOAP %d records (want the same, more than none): %.300v", len(feats), len(rs.Records), v)
			}
			for i, r := range rs.Records {
				f := feats[i].(map[string]any)
				attrs := f["attributes"].(map[string]any)
				var geom any
				for j, fld := range rs.Fields.FieldArray {
					if fld.GeometryDef != nil {
						geom = r.Values[j]
						continue
					}
					if got, want := attrs[fld.Name], canon(r.Values[j]); got != want {
						t.Errorf("record %d field %s: REST %v, SOAP %v", i, fld.Name, got, want)
					}
				}
				g, _ := f["geometry"].(map[string]any)
				if !sameCoords(restCoords(g), soapCoords(geom)) {
					t.Errorf("record %d: geometries differ", i)
				}
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// GDAL reads the REST API as a client: the ESRIJSON driver pages through a layer query larger
// than maxRecordCount (following exceededTransferLimit with resultOffset) and reads exactly the
// returnCountOnly count. Needs ogrinfo (gdal-bin); the server listens on loopback only.
func TestRESTGDALPagesLayerQuery(t *testing.T) {
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		t.Skip("ogrinfo (gdal-bin) is not installed")
	}
	h, _ := restServer(t, Security{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	base := srv.URL + "/arcgis/rest/services/usa/MapServer/1/query?where=1%3D1"
	resp, err := http.Get(base + "&returnCountOnly=true&f=json")
	if err != nil {
		t.Fatal(err)
	}
	var count struct{ Count int }
	if err := json.NewDecoder(resp.Body).Decode(&count); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if count.Count <= 1000 {
		t.Fatalf("count %d: the test needs a layer over maxRecordCount (1000)", count.Count)
	}
	out := filepath.Join(t.TempDir(), "counties.csv")
	cmd := exec.Command("ogr2ogr", "-f", "CSV", out, "ESRIJSON:"+base+"&outFields=*&returnGeometry=false&orderByFields=&f=json")
	cmd.Env = append(cmd.Environ(), "GDAL_HTTP_TIMEOUT=60", "CPL_DEBUG=ON")
	msg, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ogr2ogr: %v\n%s", err, msg)
	}
	requests := strings.Count(string(msg), "resultOffset")
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	data := string(raw)
	lines := strings.Count(strings.TrimSpace(data), "\n") // the header line aside
	if lines != count.Count {
		t.Fatalf("GDAL read %d features, returnCountOnly says %d\n%.2000s", lines, count.Count, msg)
	}
	if requests == 0 {
		t.Errorf("GDAL did not page (no resultOffset request in its debug output)")
	}
}

// TestRESTTokenInPostedForm: a long REST request POSTed as a form carries its token among the
// fields, as ArcGIS clients send it.
func TestRESTTokenInPostedForm(t *testing.T) {
	signer := testSigner(t)
	read := issue(t, signer, token.Grant{Client: "viewer", Role: token.RoleRead})
	h, _ := restServer(t, Security{Tokens: signer})
	for _, tc := range []struct {
		name, form string
		code       int
	}{
		{"no token", "where=1%3D1&returnCountOnly=true&f=json", 499},
		{"token field", "where=1%3D1&returnCountOnly=true&f=json&token=" + url.QueryEscape(read), 0},
	} {
		req := httptest.NewRequest(http.MethodPost, "/arcgis/rest/services/world/MapServer/1/query", strings.NewReader(tc.form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v: %s", tc.name, err, rec.Body)
		}
		if errorCode(v) != tc.code || (tc.code == 0 && v["count"] == nil) {
			t.Errorf("%s: %d %v; want error code %d", tc.name, rec.Code, v, tc.code)
		}
	}
}
