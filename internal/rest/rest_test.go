package rest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/render/rendertest"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// newHandler is the REST handler on the sample catalog.
func newHandler(t testing.TB) http.Handler {
	t.Helper()
	ops, c := mapservertest.Drawing(t)
	return rest.New(rest.Params{Ops: ops, Services: c, PublicURL: "http://farm.test", MaxRecordCount: 1000})
}

// get sends a GET and returns the status and body.
func get(t testing.TB, h http.Handler, target string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, body
}

// getJSON sends a GET that must answer 200 with JSON and decodes it.
func getJSON(t testing.TB, h http.Handler, target string) map[string]any {
	t.Helper()
	code, body := get(t, h, target)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, code, body)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v in %.300s", target, err, body)
	}
	return v
}

// The catalog lists every service of the sample catalog, in f=json and f=pjson alike; a folder
// that does not exist is ArcGIS's error (HTTP 200, the code in the body).
func TestCatalog(t *testing.T) {
	h := newHandler(t)
	for _, f := range []string{"json", "pjson"} {
		v := getJSON(t, h, "/arcgis/rest/services?f="+f)
		var names []string
		for _, s := range v["services"].([]any) {
			m := s.(map[string]any)
			if m["type"] != "MapServer" {
				t.Errorf("service %v: type %v", m["name"], m["type"])
			}
			names = append(names, m["name"].(string))
		}
		if got := strings.Join(names, ","); got != "usa,usa_geographic,world,world_geographic" || v["currentVersion"] != 10.71 {
			t.Errorf("f=%s: services %s, version %v", f, got, v["currentVersion"])
		}
	}
	info := getJSON(t, h, "/arcgis/rest/info?f=json")
	if info["soapUrl"] != "http://farm.test/arcgis/services" || info["authInfo"].(map[string]any)["isTokenBasedSecurity"] != false {
		t.Errorf("info: %v", info)
	}
	e := getJSON(t, h, "/arcgis/rest/services/nofolder?f=json")["error"].(map[string]any)
	if e["code"] != 404.0 {
		t.Errorf("missing folder: %v", e)
	}
	_, body := get(t, h, "/arcgis/rest/services?f=pjson")
	if !strings.Contains(string(body), "\n  \"folders\"") {
		t.Errorf("f=pjson is not indented: %.100s", body)
	}
}

// The MapServer root and layer resources describe the service as ArcGIS 10.7 does.
func TestMapServerResources(t *testing.T) {
	h := newHandler(t)
	root := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/?f=json")
	sr := root["spatialReference"].(map[string]any)
	if root["mapName"] != "Layers" || sr["wkid"] != 3857.0 || root["units"] != "esriMeters" || root["singleFusedMapCache"] != false ||
		root["maxRecordCount"] != 1000.0 || root["capabilities"] != "Map,Query,Data" {
		t.Errorf("root: %v", root)
	}
	if layers := root["layers"].([]any); len(layers) != 3 || layers[1].(map[string]any)["name"] != "Counties" {
		t.Errorf("root layers: %v", layers)
	}
	if tables := root["tables"].([]any); len(tables) != 1 || tables[0].(map[string]any)["id"] != 2.0 {
		t.Errorf("root tables: %v", tables)
	}
	if ext := root["fullExtent"].(map[string]any); ext["xmin"].(float64) >= ext["xmax"].(float64) {
		t.Errorf("fullExtent: %v", ext)
	}
	l := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1?f=json")
	fields := l["fields"].([]any)
	if l["geometryType"] != "esriGeometryPolygon" || l["displayField"] != "NAME" || fields[0].(map[string]any)["type"] != "esriFieldTypeOID" ||
		fields[2].(map[string]any)["alias"] != "County" {
		t.Errorf("layer 1: %v", l)
	}
	r := l["drawingInfo"].(map[string]any)["renderer"].(map[string]any)
	if r["type"] != "simple" || r["symbol"].(map[string]any)["type"] != "esriSFS" {
		t.Errorf("renderer: %v", r)
	}
	if rels := l["relationships"].([]any); len(rels) != 2 {
		t.Errorf("relationships: %v", rels)
	}
	tbl := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/2?f=json")
	if tbl["type"] != "Table" || tbl["name"] != "County attributes" {
		t.Errorf("table: %v", tbl)
	}
	all := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/layers?f=json")
	if len(all["layers"].([]any)) != 3 || len(all["tables"].([]any)) != 1 {
		t.Errorf("layers: %v", all)
	}
	for target, code := range map[string]float64{
		"/arcgis/rest/services/nosuch/MapServer?f=json": 404,
		"/arcgis/rest/services/usa/MapServer/9?f=json":  400,
		"/arcgis/rest/services/usa/MapServer/x?f=json":  400,
	} {
		e, ok := getJSON(t, h, target)["error"].(map[string]any)
		if !ok || e["code"] != code {
			t.Errorf("%s: %v, want code %v", target, e, code)
		}
	}
}

func features(t *testing.T, v map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	fs, ok := v["features"].([]any)
	if !ok {
		t.Fatalf("no features: %.300v", v)
	}
	for _, f := range fs {
		out = append(out, f.(map[string]any))
	}
	return out
}

// query pages by resultOffset/resultRecordCount with exceededTransferLimit; count, ids,
// distinct values, order, tables and GeoJSON answer as ArcGIS does; bad parameters are 400.
func TestQuery(t *testing.T) {
	h := newHandler(t)
	const counties = "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=1%3D1"
	n := int(getJSON(t, h, counties+"&returnCountOnly=true")["count"].(float64))
	ids := getJSON(t, h, counties+"&returnIdsOnly=true")
	if n <= 1000 || len(ids["objectIds"].([]any)) != n || ids["objectIdFieldName"] != "fid" {
		t.Fatalf("count %d, ids %d", n, len(ids["objectIds"].([]any)))
	}
	seen := map[float64]bool{}
	pages := 0
	for off := 0; ; off += 1000 {
		v := getJSON(t, h, counties+"&returnGeometry=false&outFields=NAME,fid&resultOffset="+strconv.Itoa(off))
		pages++
		for _, f := range features(t, v) {
			seen[f["attributes"].(map[string]any)["fid"].(float64)] = true
		}
		if v["exceededTransferLimit"] != true {
			break
		}
		if pages > 10 {
			t.Fatal("no end of pages")
		}
	}
	if len(seen) != n || pages != (n+999)/1000 {
		t.Errorf("paging read %d distinct features in %d pages, want %d", len(seen), pages, n)
	}
	v := getJSON(t, h, counties+"&outFields=STATE&returnDistinctValues=true&returnGeometry=false&orderByFields=STATE")
	fs := features(t, v)
	if len(fs) < 40 || len(fs) > 60 || fs[0]["attributes"].(map[string]any)["STATE"].(string) > fs[1]["attributes"].(map[string]any)["STATE"].(string) {
		t.Errorf("distinct states: %d, first %v", len(fs), fs[0])
	}
	if _, ok := fs[0]["geometry"]; ok {
		t.Errorf("returnGeometry=false answered a geometry")
	}
	v = getJSON(t, h, "/arcgis/rest/services/usa/MapServer/0/query?f=json&text=Carol&outFields=NAME&returnGeometry=false&orderByFields=NAME")
	if fs := features(t, v); len(fs) != 2 || fs[0]["attributes"].(map[string]any)["NAME"] != "North Carolina" {
		t.Errorf("text=Carol: %.300v", v)
	}
	v = getJSON(t, h, "/arcgis/rest/services/usa/MapServer/2/query?f=json&where=1%3D1&outFields=*&resultRecordCount=5")
	if len(features(t, v)) != 5 || v["exceededTransferLimit"] != true || v["geometryType"] != nil {
		t.Errorf("table query: %.300v", v)
	}
	v = getJSON(t, h, "/arcgis/rest/services/world/MapServer/0/query?f=geojson&where=1%3D1&outFields=*&resultRecordCount=3")
	gf := v["features"].([]any)
	if v["type"] != "FeatureCollection" || len(gf) != 3 || gf[0].(map[string]any)["geometry"].(map[string]any)["type"] != "Point" {
		t.Errorf("geojson: %.300v", v)
	}
	c := gf[0].(map[string]any)["geometry"].(map[string]any)["coordinates"].([]any)
	if x := c[0].(float64); x < -180 || x > 180 {
		t.Errorf("geojson is not in WGS 84: %v", c)
	}
	for _, bad := range []string{"&where=NOPE%3D1", "&returnCountOnly=maybe", "&geometry=1,2,3", "&spatialRel=esriSpatialRelNear&geometry=1,2"} {
		e, ok := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1/query?f=json"+bad)["error"].(map[string]any)
		if d, _ := e["details"].([]any); !ok || e["code"] != 400.0 || e["message"] != "Unable to complete operation." || len(d) != 2 || d[1] != "Unable to complete Query operation." {
			t.Errorf("%s: %v, want ArcGIS's 400 error with the cause in details", bad, e)
		}
	}
}

func decodePNG(t *testing.T, data []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v (%.200s)", err, data)
	}
	return img
}

// export draws the map through ExportMapImage: f=image answers the bytes at the asked size
// (corners in any order), layers=hide changes the picture, transparent=true leaves the
// background transparent, f=json answers the image's URL and extent.
func TestExport(t *testing.T) {
	h := newHandler(t)
	const base = "/arcgis/rest/services/world/MapServer/export?bboxSR=4326&imageSR=4326&size=200,100&format=png32&f=image"
	code, body := get(t, h, base+"&bbox=-180,-90,180,90")
	if code != 200 {
		t.Fatalf("export: %d %s", code, body)
	}
	full := decodePNG(t, body)
	if b := full.Bounds(); b.Dx() != 200 || b.Dy() != 100 {
		t.Fatalf("export size %v", b)
	}
	_, body = get(t, h, base+"&bbox=-180,90,180,-90") // esri-leaflet's order
	if d := rendertest.Differing(t, full, decodePNG(t, body)); d != 0 {
		t.Errorf("bbox corners in another order: %d pixels differ", d)
	}
	_, body = get(t, h, base+"&bbox=-180,-90,180,90&layers=hide:0,1")
	if d := rendertest.Differing(t, full, decodePNG(t, body)); d < 1000 {
		t.Errorf("layers=hide:0,1 changed %d pixels", d)
	}
	_, body = get(t, h, base+"&bbox=-180,-90,180,90&layers=show:&transparent=true")
	empty := decodePNG(t, body)
	if _, _, _, a := empty.At(100, 50).RGBA(); a != 0 {
		t.Errorf("transparent empty map: alpha %d at the centre", a)
	}
	v := getJSON(t, h, "/arcgis/rest/services/world/MapServer/export?bbox=-180,-90,180,90&bboxSR=4326&size=200,100&f=json")
	if href, _ := v["href"].(string); !strings.HasPrefix(href, "http://farm.test/arcgis/outputs/") || v["width"] != 200.0 || v["extent"] == nil {
		t.Errorf("export f=json: %v", v)
	}
	for _, bad := range []string{"&bbox=1,2,3", "&bbox=0,0,10,10&size=0,5", "&bbox=0,0,10,10&format=webp", "&bbox=0,0,10,10&layers=show", "&bbox=0,0,10,10&layerDefs=9:x=1"} {
		e, ok := getJSON(t, h, "/arcgis/rest/services/world/MapServer/export?f=json"+bad)["error"].(map[string]any)
		if !ok || e["code"] != 400.0 {
			t.Errorf("%s: %v, want a 400 error", bad, e)
		}
	}
}

// GDAL's WMS driver draws the REST map service with its ArcGIS (AGS) mini-driver, which asks
// export for the image: gdal_translate's PNG equals the export of the same extent and size.
// (GDAL opens a bare …/MapServer?f=json only for a cached service, whose tiles it then reads
// from tile/{level}/{row}/{col}.) Needs gdal_translate (gdal-bin); the server listens on
// loopback only.
func TestGDALDrawsMapService(t *testing.T) {
	if _, err := exec.LookPath("gdal_translate"); err != nil {
		t.Skip("gdal_translate (gdal-bin) is not installed")
	}
	h := newHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "world.xml")
	xml := `<GDAL_WMS><Service name="AGS"><ServerUrl>` + srv.URL + `/arcgis/rest/services/world/MapServer</ServerUrl>` +
		`<BBoxOrder>xyXY</BBoxOrder><SRS>EPSG:4326</SRS><ImageFormat>png</ImageFormat><Transparent>FALSE</Transparent></Service>` +
		`<DataWindow><UpperLeftX>-180</UpperLeftX><UpperLeftY>90</UpperLeftY><LowerRightX>180</LowerRightX><LowerRightY>-90</LowerRightY>` +
		`<SizeX>512</SizeX><SizeY>256</SizeY></DataWindow><BandsCount>3</BandsCount><BlockSizeX>512</BlockSizeX><BlockSizeY>256</BlockSizeY></GDAL_WMS>`
	if err := os.WriteFile(config, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	got, log := testenv.GDALTranslatePNG(t, testenv.GDALEnv(dir), config, dir)
	if !strings.Contains(log, "/export?") {
		t.Errorf("GDAL did not call export:\n%s", log)
	}
	code, body := get(t, h, "/arcgis/rest/services/world/MapServer/export?bbox=-180,-90,180,90&bboxSR=4326&imageSR=4326&size=512,256&format=png&f=image")
	if code != 200 {
		t.Fatalf("export: %d %s", code, body)
	}
	want := decodePNG(t, body)
	if got.Bounds() != want.Bounds() {
		t.Fatalf("GDAL drew %v, export %v", got.Bounds(), want.Bounds())
	}
	// GDAL writes RGB (no alpha band asked for): compare colours only.
	diff := 0
	for y := 0; y < 256; y++ {
		for x := 0; x < 512; x++ {
			r1, g1, b1, _ := got.At(x, y).RGBA()
			r2, g2, b2, _ := want.At(x, y).RGBA()
			if r1>>8 != r2>>8 || g1>>8 != g2>>8 || b1>>8 != b2>>8 {
				diff++
			}
		}
	}
	if diff != 0 {
		t.Errorf("%d of %d pixels differ between GDAL's drawing and export's", diff, 512*256)
	}
}

// identify finds the country under a click (esri-leaflet's request, in degrees), and find
// finds a country by name; both name the layer, the display field and its value.
func TestIdentifyAndFind(t *testing.T) {
	h := newHandler(t)
	v := getJSON(t, h, "/arcgis/rest/services/world/MapServer/identify?sr=4326&layers=all:1&tolerance=3&returnGeometry=true&imageDisplay=512,512,96"+
		"&mapExtent=-20,30,40,60&geometry="+url.QueryEscape(`{"x":2.35,"y":46.8,"spatialReference":{"wkid":4326}}`)+"&geometryType=esriGeometryPoint&f=json")
	rs := v["results"].([]any)
	if len(rs) != 1 {
		t.Fatalf("identify: %.500v", v)
	}
	r := rs[0].(map[string]any)
	g := r["geometry"].(map[string]any)
	if r["layerId"] != 1.0 || r["layerName"] != "Countries" || r["value"] != "France" || r["displayFieldName"] != "NAME" ||
		r["geometryType"] != "esriGeometryPolygon" || g["spatialReference"].(map[string]any)["wkid"] != 4326.0 {
		t.Errorf("identify result: %.500v", r)
	}
	if x := g["rings"].([]any)[0].([]any)[0].([]any)[0].(float64); x < -180 || x > 180 {
		t.Errorf("identify geometry is not in sr=4326: x %v", x)
	}
	v = getJSON(t, h, "/arcgis/rest/services/world/MapServer/find?searchText=Franc&contains=true&searchFields=NAME&layers=1&returnGeometry=false&returnFieldName=true&f=json")
	rs = v["results"].([]any)
	if len(rs) != 1 {
		t.Fatalf("find: %.500v", v)
	}
	r = rs[0].(map[string]any)
	if r["value"] != "France" || r["foundFieldName"] != "NAME" || r["attributes"].(map[string]any)["NAME"] != "France" || r["geometry"] != nil {
		t.Errorf("find result: %.500v", r)
	}
	for _, bad := range []string{"identify?geometry=1,2&mapExtent=0,0,10,10", "identify?geometry=1,2&imageDisplay=5,5,96", "find?layers=1"} {
		e, ok := getJSON(t, h, "/arcgis/rest/services/world/MapServer/"+bad+"&f=json")["error"].(map[string]any)
		if !ok || e["code"] != 400.0 {
			t.Errorf("%s: %v, want a 400 error", bad, e)
		}
	}
}

// outStatistics groups through QueryDataStatistics; returnExtentOnly is the extent of the
// matching shapes.
func TestQueryStatisticsAndExtent(t *testing.T) {
	h := newHandler(t)
	const q = "/arcgis/rest/services/usa/MapServer/1/query?f=json&where=" + "STATE%3D%27Delaware%27%20OR%20STATE%3D%27Hawaii%27"
	v := getJSON(t, h, q+"&groupByFieldsForStatistics=STATE&orderByFields=STATE&outStatistics="+
		url.QueryEscape(`[{"statisticType":"count","onStatisticField":"fid","outStatisticFieldName":"n"}]`))
	fs := features(t, v)
	if len(fs) != 2 {
		t.Fatalf("statistics: %.400v", v)
	}
	a, b := fs[0]["attributes"].(map[string]any), fs[1]["attributes"].(map[string]any)
	if a["STATE"] != "Delaware" || a["n"] != 3.0 || b["STATE"] != "Hawaii" || b["n"] != 5.0 {
		t.Errorf("counties by state: %v %v", a, b)
	}
	e := getJSON(t, h, q+"&returnExtentOnly=true&outSR=4326")["extent"].(map[string]any)
	if e["xmin"].(float64) < -161 || e["xmin"].(float64) > -154 || e["xmax"].(float64) < -76 || e["xmax"].(float64) > -75 ||
		e["spatialReference"].(map[string]any)["wkid"] != 4326.0 {
		t.Errorf("extent of Delaware and Hawaii counties: %v", e)
	}
}

// Where the map has a stored fused cache, the root says singleFusedMapCache and gives tileInfo
// with the cache's LODs, from the cache operations.
func TestRootTileInfo(t *testing.T) {
	c := catalogtest.Samples(t)
	svc, _ := c.Service("world")
	m, _ := svc.Map("Layers")
	d, err := seed.DrawingOf(m)
	if err != nil {
		t.Fatal(err)
	}
	store, err := blob.NewDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tilecache.New(store, tilecache.Options{Root: seed.CacheRoot("world", "Layers")})
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.WriteMetadata(context.Background(), tilecache.CacheInfo{Scheme: d.Scheme, Storage: tilecache.CompactV2}, orb.Bound{}); err != nil {
		t.Fatal(err)
	}
	// A stored conf.xml and a bundle in the fused folder make a fused cache.
	bundle := seed.CacheRoot("world", "Layers") + "/" + tilecache.FusedLayer + "/L00/R0000C0000.bundle"
	if err := store.Put(context.Background(), bundle, []byte("bundle"), "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	ops := mapserver.New(mapserver.Params{Catalog: c, Tiles: store, Limits: mapserver.Limits{MaxRecordCount: 1000}})
	h := rest.New(rest.Params{Ops: ops, Services: c})
	root := getJSON(t, h, "/arcgis/rest/services/world/MapServer?f=json")
	_, body := get(t, h, "/arcgis/rest/services/world/MapServer?f=json")
	rest.CheckGolden(t, "root_tiled", body)
	ti, ok := root["tileInfo"].(map[string]any)
	if root["singleFusedMapCache"] != true || !ok {
		t.Fatalf("root: %v", root)
	}
	lods := ti["lods"].([]any)
	if ti["rows"] != 256.0 || ti["cols"] != 256.0 || len(lods) != len(d.Scheme.LODs) || ti["spatialReference"].(map[string]any)["wkid"] == nil {
		t.Errorf("tileInfo: %.600v", ti)
	}
	first := lods[0].(map[string]any)
	if first["level"] != 0.0 || math.Abs(first["resolution"].(float64)-d.Scheme.LODs[0].Resolution) > 1e-9 || math.Abs(first["scale"].(float64)-d.Scheme.LODs[0].Scale) > 1e-6 {
		t.Errorf("lod 0: %v, scheme %+v", first, d.Scheme.LODs[0])
	}
	if o := ti["origin"].(map[string]any); o["x"].(float64) > -2e7 || o["y"].(float64) < 2e7 {
		t.Errorf("origin: %v", o)
	}
	if root2 := getJSON(t, h, "/arcgis/rest/services/usa/MapServer?f=json"); root2["singleFusedMapCache"] != false || root2["tileInfo"] != nil {
		t.Errorf("usa has no cache: %v %v", root2["singleFusedMapCache"], root2["tileInfo"])
	}
}

// legend gives each layer's classes with PNG swatches; queryRelatedRecords follows a
// relationship; attachments list a feature's files and serve their bytes.
func TestLegendRelatedAttachments(t *testing.T) {
	h := newHandler(t)
	lg := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/legend?f=json")
	layers := lg["layers"].([]any)
	if len(layers) == 0 {
		t.Fatalf("legend: %.300v", lg)
	}
	l0 := layers[0].(map[string]any)
	entry := l0["legend"].([]any)[0].(map[string]any)
	data, err := base64.StdEncoding.DecodeString(entry["imageData"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if img := decodePNG(t, data); l0["layerName"] != "States" || entry["contentType"] != "image/png" || img.Bounds().Dx() != int(entry["width"].(float64)) {
		t.Errorf("legend of States: %v", entry)
	}
	v := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1/queryRelatedRecords?objectIds=1&relationshipId=2&outFields=NAME&returnGeometry=false&f=json")
	groups := v["relatedRecordGroups"].([]any)
	if len(groups) != 1 {
		t.Fatalf("related: %.400v", v)
	}
	g := groups[0].(map[string]any)
	recs := g["relatedRecords"].([]any)
	if g["objectId"] != 1.0 || len(recs) != 1 || recs[0].(map[string]any)["attributes"].(map[string]any)["NAME"] != "Arizona" {
		t.Errorf("the state of Mohave county: %.400v", g)
	}
	var infos []any
	oid := 0
	for oid = 1; oid < 60 && len(infos) == 0; oid++ {
		v := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/3/"+strconv.Itoa(oid)+"/attachments?f=json")
		infos, _ = v["attachmentInfos"].([]any)
	}
	if len(infos) == 0 {
		t.Fatal("no feature of State facts has attachments")
	}
	a := infos[0].(map[string]any)
	code, body := get(t, h, "/arcgis/rest/services/usa/MapServer/3/"+strconv.Itoa(oid-1)+"/attachments/"+strconv.Itoa(int(a["id"].(float64))))
	if code != 200 || len(body) != int(a["size"].(float64)) {
		t.Errorf("attachment %v: %d, %d bytes", a, code, len(body))
	}
	if code, _ := get(t, h, "/arcgis/rest/services/usa/MapServer/3/"+strconv.Itoa(oid)+"/attachments/"+strconv.Itoa(int(a["id"].(float64)))+"?f=json"); code != 200 {
		t.Errorf("another feature's attachment, f=json: HTTP %d, want 200 with the error in the body", code)
	}
	if e, ok := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/3/"+strconv.Itoa(oid)+"/attachments/"+strconv.Itoa(int(a["id"].(float64)))+"?f=json")["error"].(map[string]any); !ok || e["code"] != 404.0 {
		t.Errorf("another feature's attachment: %v, want 404", e)
	}
}

// The request limits apply to REST as to SOAP: a query naming more ids than MaxIDs is refused
// before it runs, naming the limit.
func TestRequestLimits(t *testing.T) {
	c := catalogtest.Samples(t)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: mapserver.Limits{MaxRecordCount: 1000}})
	lim := limits.Request{MaxIDs: 10}
	admit := func(_ context.Context, op string, req any, run func()) error {
		if err := lim.Check(op, req); err != nil {
			return err
		}
		run()
		return nil
	}
	h := rest.New(rest.Params{Ops: ops, Services: c, Admit: admit})
	if v := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1/query?f=json&objectIds=1,2,3,4,5,6,7,8,9,10&returnCountOnly=true"); v["count"] != 10.0 {
		t.Errorf("10 ids: %v", v)
	}
	e, ok := getJSON(t, h, "/arcgis/rest/services/usa/MapServer/1/query?f=json&objectIds=1,2,3,4,5,6,7,8,9,10,11&returnCountOnly=true")["error"].(map[string]any)
	if !ok || e["code"] != 400.0 || !strings.Contains(fmt.Sprint(e["details"]), "10") {
		t.Errorf("11 ids: %v, want a 400 naming the limit", e)
	}
}

// With VectorTiles every service is listed twice, as ArcGIS lists a service once per type: its
// MapServer, then its VectorTileServer, which the directory page links to.
func TestCatalogVectorTiles(t *testing.T) {
	c := catalogtest.Samples(t)
	ops := mapserver.New(mapserver.Params{Catalog: c})
	h := rest.New(rest.Params{Ops: ops, Services: c, PublicURL: "http://farm.test", VectorTiles: true})
	var got []string
	for _, s := range getJSON(t, h, "/arcgis/rest/services?f=json")["services"].([]any) {
		m := s.(map[string]any)
		got = append(got, m["name"].(string)+"/"+m["type"].(string))
	}
	if want := "usa/MapServer usa/VectorTileServer usa_geographic/MapServer usa_geographic/VectorTileServer " +
		"world/MapServer world/VectorTileServer world_geographic/MapServer world_geographic/VectorTileServer"; strings.Join(got, " ") != want {
		t.Errorf("services %q, want %q", got, want)
	}
	_, page := get(t, h, "/arcgis/rest/services")
	if !strings.Contains(string(page), `href="/arcgis/rest/services/world/VectorTileServer"`) {
		t.Errorf("the directory page does not link the VectorTileServer: %.2000s", page)
	}
}
