package e2e

import (
	"bytes"
	"database/sql"
	"fmt"
	"image"
	_ "image/jpeg"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/testenv"
	_ "modernc.org/sqlite"
)

// querySummary is what zeep_queries.py prints.
type querySummary struct {
	CountWhere         int   `json:"countWhere"`
	CountEnvelope      int   `json:"countEnvelope"`
	CountEnvelopeWhere int   `json:"countEnvelopeWhere"`
	IDsWhere           []int `json:"idsWhere"`
	IDsPoint           []int `json:"idsPoint"`
	Data               struct {
		Fields     []string `json:"fields"`
		Names      []string `json:"names"`
		IDs        []int    `json:"ids"`
		ShapeTypes []string `json:"shapeTypes"`
	} `json:"data"`
	Count2    int   `json:"count2"`
	IDs2      []int `json:"ids2"`
	Data2JSON []int `json:"data2Json"`
	RowCount  int   `json:"rowCount"`
	RowIDs    []int `json:"rowIDs"`
	QueryData struct {
		Fields []string `json:"fields"`
		Rows   [][]any  `json:"rows"`
	} `json:"queryData"`
	Statistics struct {
		Fields []string `json:"fields"`
		Rows   [][]any  `json:"rows"`
	} `json:"statistics"`
	Find     [][]any `json:"find"`
	Identify [][]any `json:"identify"`
	SQL      struct {
		Predicates    []string `json:"predicates"`
		CaseSensitive bool     `json:"caseSensitive"`
		Functions     []string `json:"functions"`
	} `json:"sql"`
	Related struct {
		Source int      `json:"source"`
		GEOIDs []string `json:"geoids"`
	} `json:"related"`
	Hyperlinks     []string          `json:"hyperlinks"`
	TexasFacts     int               `json:"texasFacts"`
	Popups         []string          `json:"popups"`
	Attachments    [][]any           `json:"attachments"`
	AttachmentData map[string]string `json:"attachmentData"`
	Subtypes       []struct {
		Table int    `json:"table"`
		Field string `json:"field"`
		Codes []int  `json:"codes"`
	} `json:"subtypes"`
	Classes struct {
		Min float64   `json:"min"`
		Max []float64 `json:"max"`
	} `json:"classes"`
	Two struct {
		RelatedCount  int      `json:"relatedCount"`
		Popups        int      `json:"popups"`
		Attachments   int      `json:"attachments"`
		AttachmentURL string   `json:"attachmentURL"`
		Subtypes      []int    `json:"subtypes"`
		Raster        []any    `json:"raster"`
		Raster2       []string `json:"raster2"`
		UniqueValues  []string `json:"uniqueValues"`
		Data2Names    []string `json:"data2Names"`
	} `json:"two"`
	Faults map[string][]string `json:"faults"`
}

// The usa service's data, read directly for the expected values.
const (
	countiesGpkg = "../data/sample/us_counties_10m_3857.gpkg"
	statesGpkg   = "../data/sample/us_states_10m_3857.gpkg"
	factsGpkg    = "../data/sample/us_state_facts_3857.gpkg"
	// The script's envelope and point (downtown Los Angeles), in Web Mercator.
	envXMin, envYMin, envXMax, envYMax = -13000000.0, 4000000.0, -12000000.0, 5000000.0
	laPoint                            = "POINT(-13163590 4035932)"
)

// TestZeepQueries calls every query operation through zeep clients built from the served WSDL
// and from the ArcGIS reference WSDL, and checks the answers against the GeoPackages read
// directly (SQLite for attributes; GDAL's SpatiaLite functions for the spatial cases).
func TestZeepQueries(t *testing.T) {
	f := startFarm(t)
	endpoint := f.url + "/arcgis/services/usa/MapServer"
	want := expectedQueries(t)
	eachClientWSDL(t, endpoint, func(t *testing.T, wsdl string) {
		checkQueries(t, runScript[querySummary](t, "testdata/zeep_queries.py", wsdl, endpoint, namespace), want)
	})
}

// expected holds the answers recomputed from the data.
type expected struct {
	countWhere, countEnvelope, countEnvelopeWhere int
	idsWhere, idsPoint                            []int // idsPoint nil without GDAL
	utahNames                                     []string
	utahIDs                                       []int
	utahCount                                     int
	utahS                                         []int
	texas                                         int
	delaware                                      []int
	delawareNames                                 []string
	stats                                         [][3]any // STATEFP, count, max fid
	utahState                                     int
	laState, laFacts                              []int // nil without GDAL
	caState                                       int
	caGEOIDs                                      []string
	wikis                                         []string
	texasFacts, texasCounties                     int
	texasAttachments                              map[int][]byte
	texasAttachmentNames                          []string
	regions                                       []int
	texasSwatch                                   []byte
	southNames                                    []string
	minCounties, maxCounties                      float64
}

func expectedQueries(t *testing.T) expected {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+countiesGpkg+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var e expected
	e.countWhere = column[int](t, db, "SELECT COUNT(*) FROM counties WHERE STATEFP = '06'")[0]
	e.idsWhere = column[int](t, db, "SELECT fid FROM counties WHERE STATE = 'Utah' ORDER BY fid")
	e.utahNames = column[string](t, db, "SELECT NAME FROM counties WHERE STATEFP = '49' ORDER BY NAME, fid")
	e.utahIDs = column[int](t, db, "SELECT fid FROM counties WHERE STATEFP = '49' ORDER BY NAME, fid")
	e.utahCount = len(e.utahIDs)
	e.utahS = column[int](t, db, "SELECT fid FROM counties WHERE STATEFP = '49' AND NAME GLOB 'S*' ORDER BY fid")
	e.texas = column[int](t, db, "SELECT COUNT(*) FROM counties WHERE STATE = 'Texas'")[0]
	e.delaware = column[int](t, db, "SELECT fid FROM counties WHERE STATEFP = '10' ORDER BY fid")
	e.delawareNames = column[string](t, db, "SELECT NAME FROM counties WHERE STATEFP = '10' ORDER BY fid")
	rows, err := db.Query("SELECT STATEFP, COUNT(fid), MAX(fid) FROM counties GROUP BY STATEFP ORDER BY 2 DESC, 1")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var fp string
		var n, maxFid int
		if err := rows.Scan(&fp, &n, &maxFid); err != nil {
			t.Fatal(err)
		}
		e.stats = append(e.stats, [3]any{fp, n, maxFid})
	}
	rows.Close()

	sdb, err := sql.Open("sqlite", "file:"+statesGpkg+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if err := sdb.QueryRow("SELECT fid FROM states WHERE NAME = 'Utah'").Scan(&e.utahState); err != nil {
		t.Fatal(err)
	}
	if err := sdb.QueryRow("SELECT fid FROM states WHERE NAME = 'California'").Scan(&e.caState); err != nil {
		t.Fatal(err)
	}
	e.caGEOIDs = column[string](t, db, "SELECT GEOID FROM counties WHERE STATEFP = '06' ORDER BY GEOID")
	factsFromGpkg(t, &e)

	// The spatial answers come from GDAL: the bounding-box test on each geometry, and
	// SpatiaLite's ST_Intersects (compared with 1: it answers -1 for a NULL geometry).
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		t.Log("ogrinfo (gdal-bin) not installed: envelope and point answers are not checked")
		e.countEnvelope, e.countEnvelopeWhere = -1, -1
		return e
	}
	bbox := fmt.Sprintf("ST_MaxX(geom) >= %f AND ST_MinX(geom) <= %f AND ST_MaxY(geom) >= %f AND ST_MinY(geom) <= %f", envXMin, envXMax, envYMin, envYMax)
	e.countEnvelope = len(testenv.OGRFids(t, countiesGpkg, "SELECT fid FROM counties WHERE "+bbox))
	e.countEnvelopeWhere = len(testenv.OGRFids(t, countiesGpkg, "SELECT fid FROM counties WHERE STATEFP = '04' AND "+bbox))
	e.idsPoint = testenv.OGRFids(t, countiesGpkg, fmt.Sprintf("SELECT fid FROM counties WHERE ST_Intersects(geom, ST_GeomFromText('%s', 3857)) = 1", laPoint))
	e.laState = testenv.OGRFids(t, statesGpkg, fmt.Sprintf("SELECT fid FROM states WHERE ST_Intersects(geom, ST_GeomFromText('%s', 3857)) = 1", laPoint))
	e.laFacts = testenv.OGRFids(t, factsGpkg, fmt.Sprintf("SELECT fid FROM state_facts WHERE ST_Intersects(geom, ST_GeomFromText('%s', 3857)) = 1", laPoint))
	return e
}

func checkQueries(t *testing.T, s querySummary, e expected) {
	t.Helper()
	if s.CountWhere != e.countWhere {
		t.Errorf("QueryFeatureCount STATEFP='06' = %d, data has %d", s.CountWhere, e.countWhere)
	}
	if e.countEnvelope >= 0 && (s.CountEnvelope != e.countEnvelope || s.CountEnvelopeWhere != e.countEnvelopeWhere) {
		t.Errorf("envelope counts %d and %d (with where), GDAL %d and %d", s.CountEnvelope, s.CountEnvelopeWhere, e.countEnvelope, e.countEnvelopeWhere)
	}
	if !slices.Equal(s.IDsWhere, e.idsWhere) {
		t.Errorf("QueryFeatureIDs STATE='Utah' = %v, data has %v", s.IDsWhere, e.idsWhere)
	}
	if e.idsPoint != nil && !slices.Equal(s.IDsPoint, e.idsPoint) {
		t.Errorf("QueryFeatureIDs at the LA point = %v, GDAL %v", s.IDsPoint, e.idsPoint)
	}
	if !slices.Equal(s.Data.Fields, []string{"fid", "NAME", "Shape"}) || !slices.Equal(s.Data.Names, e.utahNames) || !slices.Equal(s.Data.IDs, e.utahIDs) {
		t.Errorf("QueryFeatureData Utah by NAME: fields %v names %v ids %v; data has %v %v", s.Data.Fields, s.Data.Names, s.Data.IDs, e.utahNames, e.utahIDs)
	}
	if !slices.Equal(s.Data.ShapeTypes, []string{"PolygonN"}) {
		t.Errorf("QueryFeatureData shapes are %v, want PolygonN", s.Data.ShapeTypes)
	}
	if s.Count2 != e.utahCount || !slices.Equal(s.IDs2, e.utahS) || !slices.Equal(s.Data2JSON, e.utahS) {
		t.Errorf("LayerDescription variants: count %d ids %v json %v; data has %d and %v", s.Count2, s.IDs2, s.Data2JSON, e.utahCount, e.utahS)
	}
	if s.RowCount != e.texas || !slices.Equal(s.RowIDs, e.delaware) {
		t.Errorf("table: QueryRowCount Texas %d (data %d), QueryRowIDs Delaware %v (data %v)", s.RowCount, e.texas, s.RowIDs, e.delaware)
	}
	var names []string
	name := slices.Index(s.QueryData.Fields, "NAME")
	for _, r := range s.QueryData.Rows {
		if name >= 0 {
			names = append(names, fmt.Sprint(r[name]))
		}
	}
	if !slices.Equal(names, e.delawareNames) || slices.Contains(s.QueryData.Fields, "Shape") {
		t.Errorf("QueryData Delaware: fields %v names %v; data has %v", s.QueryData.Fields, names, e.delawareNames)
	}
	if !slices.Equal(s.Statistics.Fields, []string{"STATEFP", "n", "maxfid"}) || len(s.Statistics.Rows) != len(e.stats) {
		t.Fatalf("QueryDataStatistics: fields %v, %d groups; data has %d", s.Statistics.Fields, len(s.Statistics.Rows), len(e.stats))
	}
	for i, r := range s.Statistics.Rows {
		w := e.stats[i]
		if r[0] != w[0] || r[1] != float64(w[1].(int)) || r[2] != float64(w[2].(int)) {
			t.Errorf("statistics group %d = %v, data has %v", i, r, w)
			break
		}
	}
	var find []string
	for _, r := range s.Find {
		find = append(find, fmt.Sprint(r...))
	}
	wantFind := []string{fmt.Sprint(0, e.utahState, "NAME", "Utah")}
	if len(s.Find) != 2 || find[0] != wantFind[0] || s.Find[1][0] != float64(1) || s.Find[1][3] != "Utah" {
		t.Errorf("Find Utah = %v, want the state (fid %d) then Utah county", s.Find, e.utahState)
	}
	if e.laState != nil {
		// gisIdentifyAllLayers includes the hidden State facts layer.
		if len(s.Identify) != 3 || s.Identify[0][0] != float64(0) || s.Identify[0][1] != float64(e.laState[0]) ||
			s.Identify[1][0] != float64(1) || s.Identify[1][1] != float64(e.idsPoint[0]) || s.Identify[1][2] != "Los Angeles" ||
			s.Identify[2][0] != float64(3) || s.Identify[2][1] != float64(e.laFacts[0]) || s.Identify[2][2] != "California" {
			t.Errorf("Identify at LA = %v; GDAL has state %v, county %v and state facts %v", s.Identify, e.laState, e.idsPoint, e.laFacts)
		}
	}
	if s.Related.Source != e.caState || !slices.Equal(s.Related.GEOIDs, e.caGEOIDs) {
		t.Errorf("QueryRelatedRecords California: source %d, %d GEOIDs; data has %d and %d", s.Related.Source, len(s.Related.GEOIDs), e.caState, len(e.caGEOIDs))
	}
	if len(s.Hyperlinks) < 48 || !slices.Contains(s.Hyperlinks, "https://en.wikipedia.org/wiki/New_Mexico") {
		t.Errorf("QueryHyperlinks: %d links %v", len(s.Hyperlinks), s.Hyperlinks)
	}
	for _, h := range s.Hyperlinks {
		if !slices.Contains(e.wikis, h) {
			t.Errorf("hyperlink %q is not a WIKI value of the data", h)
		}
	}
	if s.TexasFacts != e.texasFacts || len(s.Popups) != 1 || !strings.Contains(s.Popups[0], fmt.Sprintf("%d counties", e.texasCounties)) {
		t.Errorf("QueryHTMLPopups Texas (fid %d, data %d): %q; want %d counties", s.TexasFacts, e.texasFacts, s.Popups, e.texasCounties)
	}
	var attNames []string
	for _, a := range s.Attachments {
		attNames = append(attNames, a[1].(string))
		id := int(a[0].(float64))
		want, ok := e.texasAttachments[id]
		if !ok || s.AttachmentData[strconv.Itoa(id)] != fmt.Sprintf("%x", want) || int(a[3].(float64)) != len(want) {
			t.Errorf("attachment %v: data %.40s…, want %d bytes from the data", a, s.AttachmentData[strconv.Itoa(id)], len(want))
		}
	}
	slices.Sort(attNames)
	if !slices.Equal(attNames, e.texasAttachmentNames) {
		t.Errorf("Texas attachments %v, data has %v", attNames, e.texasAttachmentNames)
	}
	if len(s.Subtypes) != 1 || s.Subtypes[0].Table != 3 || s.Subtypes[0].Field != "REGION" || !slices.Equal(s.Subtypes[0].Codes, e.regions) {
		t.Errorf("GetMapTableSubtypeInfos %+v; the data's regions are %v", s.Subtypes, e.regions)
	}
	if s.Classes.Min != e.minCounties || !slices.Equal(s.Classes.Max, []float64{(e.minCounties + e.maxCounties) / 2, e.maxCounties}) {
		t.Errorf("GenerateDataClasses equal interval: %+v; data spans %g to %g", s.Classes, e.minCounties, e.maxCounties)
	}
	if !slices.Contains(s.SQL.Predicates, "esriSQL_LIKE") || !s.SQL.CaseSensitive || !slices.Contains(s.SQL.Functions, "UPPER") {
		t.Errorf("GetSQLSyntaxInfo %+v", s.SQL)
	}
	two := s.Two
	if two.RelatedCount != e.texasCounties || two.Popups != 1 || two.Attachments != len(e.texasAttachments) ||
		!strings.Contains(two.AttachmentURL, "/arcgis/output/") || !slices.Equal(two.Subtypes, []int{3}) {
		t.Errorf("2 variants on the South: %+v; Texas has %d counties and %d attachments", two, e.texasCounties, len(e.texasAttachments))
	}
	if len(two.Raster) != 4 || two.Raster[0] != float64(8) || two.Raster[2] != "image/png" || two.Raster[3] != fmt.Sprintf("%x", e.texasSwatch) {
		t.Errorf("QueryRasterValue Texas %.80v; the data holds %d bytes", two.Raster, len(e.texasSwatch))
	}
	if len(two.Raster2) != 2 || two.Raster2[0] != "image/jpeg" || !strings.Contains(two.Raster2[1], "/arcgis/output/") {
		t.Errorf("QueryRasterValue2 as JPEG URL: %v", two.Raster2)
	} else if img := fetchImage(t, two.Raster2[1], "image/jpeg"); img.Bounds().Dx() != 8 || img.Bounds().Dy() != 8 {
		t.Errorf("QueryRasterValue2's JPEG is %v, want 8×8", img.Bounds())
	}
	// The attachment's URL serves the attachment's bytes.
	if strings.Contains(two.AttachmentURL, "/arcgis/output/") {
		resp, err := http.Get(two.AttachmentURL)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		found := false
		for _, want := range e.texasAttachments {
			found = found || bytes.Equal(got, want)
		}
		if resp.StatusCode != 200 || !found {
			t.Errorf("GET %s: %s, %d bytes that are none of Texas's attachments", two.AttachmentURL, resp.Status, len(got))
		}
	}
	if !slices.Equal(two.UniqueValues, []string{"3"}) || !slices.Equal(two.Data2Names, e.southNames) {
		t.Errorf("South: unique REGION values %v, QueryFeatureData2 names %v; data has %v", two.UniqueValues, two.Data2Names, e.southNames)
	}
	if f := s.Faults["where"]; len(f) != 2 || f[0] != "soap:Client" || !strings.Contains(f[1], "WhereClause") {
		t.Errorf("bad where clause fault %v", f)
	}
	if f := s.Faults["subfields"]; len(f) != 2 || f[0] != "soap:Client" || !strings.Contains(f[1], `"NOPE"`) {
		t.Errorf("unknown SubFields fault %v", f)
	}
}

// factsFromGpkg reads the State facts answers from its GeoPackage.
func factsFromGpkg(t *testing.T, e *expected) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+factsGpkg+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("SELECT fid, COUNTIES FROM state_facts WHERE NAME = 'Texas'").Scan(&e.texasFacts, &e.texasCounties); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT MIN(COUNTIES), MAX(COUNTIES) FROM state_facts").Scan(&e.minCounties, &e.maxCounties); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT SWATCH FROM state_facts WHERE NAME = 'Texas'").Scan(&e.texasSwatch); err != nil {
		t.Fatal(err)
	}
	e.southNames = column[string](t, db, "SELECT NAME FROM state_facts WHERE REGION = 3 ORDER BY NAME")
	e.wikis = column[string](t, db, "SELECT WIKI FROM state_facts")
	e.regions = column[int](t, db, "SELECT DISTINCT REGION FROM state_facts ORDER BY REGION")
	e.texasAttachments = map[int][]byte{}
	rows, err := db.Query("SELECT ATTACHMENTID, ATT_NAME, DATA FROM state_facts__ATTACH WHERE REL_OBJECTID = ? ORDER BY ATT_NAME", e.texasFacts)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int
		var name string
		var data []byte
		if err := rows.Scan(&id, &name, &data); err != nil {
			t.Fatal(err)
		}
		e.texasAttachments[id] = data
		e.texasAttachmentNames = append(e.texasAttachmentNames, name)
	}
	slices.Sort(e.texasAttachmentNames)
}

// column returns the values of the one column that query selects from db.
func column[T any](t *testing.T, db *sql.DB, query string) []T {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fetchImage gets an image URL and decodes it.
func fetchImage(t *testing.T, url, contentType string) image.Image {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != contentType {
		t.Fatalf("GET %s: %s %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	img, _, err := image.Decode(resp.Body)
	if err != nil {
		t.Fatalf("decode %s: %v", url, err)
	}
	return img
}
