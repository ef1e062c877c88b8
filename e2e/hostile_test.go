package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// hostileBound is how long a hostile request may take, answer included (issue 17's target).
const hostileBound = 2 * time.Second

// hostileRow is one hostile request and what the farm must answer.
type hostileRow struct {
	name   string
	method string // "" is POST
	path   string // "" is the world service's SOAP endpoint; else a path on the farm
	header []string
	body   string
	// cancelAfter, when set, makes the client hang up this long after sending: nothing is
	// answered; logWant then applies to the request's log line.
	cancelAfter time.Duration

	status int    // HTTP status
	fault  string // SOAP faultcode ("soap:Client"); "" for answers that are not faults
	want   string // a substring of the faultstring, or of the body when fault is ""
	// echo, when set, is the repeating unit of a huge input: the answer may quote at most 200
	// characters of it.
	echo string
	// logWant and logNot are substrings the request's access-log line must and must not hold.
	logWant, logNot []string
}

// hostileRows is the table: one row per class of hostile input.
func hostileRows() []hostileRow {
	longID := strings.Repeat("Jx7q", 25_000)
	rows := []hostileRow{
		// Scale bars and numbers that multiplied memory or panicked a worker (issue 17, 1–3).
		{name: "scale bar DPI 100000", body: scaleBarBody("100000", "10", 4096, 4096), status: 500, fault: "soap:Client", want: "ImageDPI 100000 is out of range"},
		{name: "scale bar DPI 0 means 96", body: scaleBarBody("0", "10", 1000, 200), status: 200, want: "ImageURL"},
		{name: "scale bar DPI negative", body: scaleBarBody("-96", "10", 1000, 200), status: 500, fault: "soap:Client", want: "ImageDPI -96 is out of range"},
		{name: "scale bar DPI NaN", body: scaleBarBody("NaN", "10", 1000, 200), status: 500, fault: "soap:Client", want: "ImageDPI NaN is out of range"},
		{name: "scale bar DPI 1e300", body: scaleBarBody("1e300", "10", 4096, 4096), status: 500, fault: "soap:Client", want: "ImageDPI 1e+300 is out of range"},
		{name: "scale bar DPI INF", body: scaleBarBody("INF", "10", 1000, 200), status: 500, fault: "soap:Client", want: "ImageDPI +Inf is out of range"},
		{name: "scale bar division 1e308", body: scaleBarBody("96", "1e308", 4096, 4096), status: 500, fault: "soap:Client", want: "ScaleBar/Division 1e+308 is"},
		{name: "scale bar division -1", body: scaleBarBody("96", "-1", 1000, 200), status: 500, fault: "soap:Client", want: "Division"},
		{name: "selection buffer 1e308", body: bufferBody("1e308"), status: 500, fault: "soap:Client", want: "SelectionBufferDistance 1e+308 is longer than the limit"},
		{name: "selection buffer 1e7", body: bufferBody("1e7"), status: 200, want: "ImageURL"},
		{name: "selection buffer -Inf", body: bufferBody("-INF"), status: 500, fault: "soap:Client", want: "SelectionBufferDistance"},
		{name: "export DPI 1e300", body: exportBody(1024, 768, "1e300", ""), status: 500, fault: "soap:Client", want: "ImageDPI 1e+300 is out of range"},

		// Queries that ran for nobody (issue 17, 4).
		{name: "relation with a 1,000-vertex polygon", body: relationBody(1_000), status: 200, want: "<Result>"},
		{name: "relation with a 100,000-vertex polygon", body: relationBody(100_000), status: 500, fault: "soap:Client", want: "maxVertices"},

		// XML that multiplied memory (issue 17, 5), and the XML classes that held.
		{name: "2 million empty elements in 8 MB", body: soapEnv(`<gis:GetMapCount>` + strings.Repeat("<a/>", 2_000_000) + `</gis:GetMapCount>`), status: 500, fault: "soap:Client", want: "maxElements"},
		{name: "nesting 10,000 deep", body: soapEnv(`<gis:GetMapCount>` + strings.Repeat("<a>", 10_000) + strings.Repeat("</a>", 10_000) + `</gis:GetMapCount>`), status: 500, fault: "soap:Client", want: "nested too deeply"},
		{name: "DTD with an external entity (XXE)", body: `<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` + soapEnv(`<gis:GetServerInfo><MapName>&xxe;</MapName></gis:GetServerInfo>`), status: 500, fault: "soap:Client", want: "DTD"},
		{name: "entity expansion (billion laughs)", body: `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` + soapEnv(`<gis:GetServerInfo><MapName>&c;</MapName></gis:GetServerInfo>`), status: 500, fault: "soap:Client", want: "DTD"},
		{name: "invalid UTF-8", body: soapEnv("<gis:GetServerInfo><MapName>La\xff\xfeyers</MapName></gis:GetServerInfo>"), status: 500, fault: "soap:Client", want: "UTF-8"},
		{name: "body over 8 MiB", body: soapEnv(`<gis:GetMapCount>` + strings.Repeat("<x>padding</x>", 700_000) + `</gis:GetMapCount>`), status: 413, fault: "soap:Client", want: "larger than the limit"},

		// Faults that echoed whole inputs (issue 17, 8): at most 200 characters of any.
		{name: "7 MB operation name", body: soapEnv(`<gis:` + strings.Repeat("Qz", 1_750_000) + `/>`), status: 500, fault: "soap:Client", want: "unknown operation", echo: "Qz"},
		{name: "60 KB map name", body: soapEnv(`<gis:GetServerInfo><MapName>` + strings.Repeat("Wk3m", 15_000) + `</MapName></gis:GetServerInfo>`), status: 500, fault: "soap:Client", want: "is not in service world", echo: "Wk3m"},
		{name: "1 MB number", body: soapEnv(`<gis:GetMapName><Index>` + strings.Repeat("98", 500_000) + `</Index></gis:GetMapName>`), status: 500, fault: "soap:Client", want: "is not an xs:int", echo: "98"},
		{name: "where clause of 1 MB", body: queryBody("QueryFeatureCount", `<QueryFilter xsi:type="gis:QueryFilter"><WhereClause>NAME = '`+strings.Repeat("Vb5n", 250_000)+`'</WhereClause></QueryFilter>`), status: 500, fault: "soap:Client", want: "65536", echo: "Vb5n"},
		{name: "field list of 60 KB", body: queryBody("QueryFeatureData", `<QueryFilter xsi:type="gis:QueryFilter"><SubFields>`+strings.Repeat("NAME,", 4_000)+strings.Repeat("Hp8r", 10_000)+`</SubFields><WhereClause></WhereClause></QueryFilter>`), status: 500, fault: "soap:Client", want: "has no field", echo: "Hp8r"},
		{name: "Find with a 60 KB search string", body: findBody(strings.Repeat("Ty6u", 15_000)), status: 200, want: "FindResponse", echo: "Ty6u"},
		{name: "1 MB map name", body: soapEnv(`<gis:GetServerInfo><MapName>` + strings.Repeat("Wk3m", 250_000) + `</MapName></gis:GetServerInfo>`), status: 500, fault: "soap:Client", want: "maxStringBytes", echo: "Wk3m"},
		{name: "field list of 1 MB", body: queryBody("QueryFeatureData", `<QueryFilter xsi:type="gis:QueryFilter"><SubFields>`+strings.Repeat("NAME,", 200_000)+strings.Repeat("Hp8r", 50_000)+`</SubFields><WhereClause></WhereClause></QueryFilter>`), status: 500, fault: "soap:Client", want: "maxStringBytes", echo: "Hp8r"},
		{name: "Find with a 1 MB search string", body: findBody(strings.Repeat("Ty6u", 250_000)), status: 500, fault: "soap:Client", want: "maxStringBytes", echo: "Ty6u"},
		{name: "definition expression of 1 MB", body: soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name><LayerDescriptions><LayerDescription><LayerID>1</LayerID><Visible>true</Visible><DefinitionExpression>NAME = '` + strings.Repeat("Gs4d", 250_000) + `'</DefinitionExpression></LayerDescription></LayerDescriptions></MapDescription>` + imageDescription(256, 256, "96") + `</gis:ExportMapImage>`), status: 500, fault: "soap:Client", want: "DefinitionExpression", echo: "Gs4d"},

		// Ids and numbers out of every range.
		{name: "400,000 ids in one FIDSet", body: queryBody("QueryFeatureCount", `<QueryFilter xsi:type="gis:QueryFilter"><WhereClause></WhereClause><FIDSet><FIDArray>`+strings.Repeat("<Int>7</Int>", 400_000)+`</FIDArray></FIDSet></QueryFilter>`), status: 500, fault: "soap:Client", want: "maxIDs"},
		{name: "image width -1", body: exportBody(-1, 300, "96", ""), status: 500, fault: "soap:Client", want: "must be positive"},
		{name: "image width 2147483647", body: exportBody(math.MaxInt32, 300, "96", ""), status: 500, fault: "soap:Client", want: "larger than the limit of 4096×4096"},
		{name: "image width past xs:int", body: soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name></MapDescription><ImageDescription><ImageDisplay><ImageHeight>300</ImageHeight><ImageWidth>99999999999999999999</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage>`), status: 500, fault: "soap:Client", want: "is not an xs:int"},
		{name: "extent of NaN", body: exportBody(256, 256, "96", extent("NaN", "0", "1000", "1000")), status: 500, fault: "soap:Client", want: "must be finite"},
		{name: "extent of Inf", body: exportBody(256, 256, "96", extent("-INF", "-INF", "INF", "INF")), status: 500, fault: "soap:Client", want: "must be finite"},
		{name: "zero-area extent", body: exportBody(256, 256, "96", extent("1000", "1000", "1000", "1000")), status: 500, fault: "soap:Client", want: "XMax must exceed XMin"},
		{name: "query envelope of NaN", body: queryBody("QueryFeatureCount", `<QueryFilter xsi:type="gis:SpatialFilter"><WhereClause></WhereClause><SpatialRel>gisSpatialRelIntersects</SpatialRel><FilterGeometry xsi:type="gis:EnvelopeN"><XMin>NaN</XMin><YMin>0</YMin><XMax>1</XMax><YMax>1</YMax></FilterGeometry></QueryFilter>`), status: 500, fault: "soap:Client", want: "must be finite"},
		{name: "tile level 2147483647", body: tileBody(math.MaxInt32, 0, 0), status: 500, fault: "soap:Client", want: "level 2147483647 row 0 column 0 is not in the cache's tiling scheme"},
		{name: "tile row -1", body: tileBody(3, -1, 0), status: 500, fault: "soap:Client", want: "row -1 column 0 is not in the cache's tiling scheme"},
		{name: "tile column 2147483647", body: tileBody(3, 0, math.MaxInt32), status: 500, fault: "soap:Client", want: "column 2147483647 is not in the cache's tiling scheme"},
		{name: "ToMapPoints with 150,000 points", body: soapEnv(`<gis:ToMapPoints><MapDescription><Name>Layers</Name></MapDescription><MapImageDisplay><ImageHeight>400</ImageHeight><ImageWidth>400</ImageWidth><ImageDPI>96</ImageDPI></MapImageDisplay><ScreenXValues>` +
			strings.Repeat("<Int>1</Int>", 150_000) + `</ScreenXValues><ScreenYValues>` + strings.Repeat("<Int>1</Int>", 150_000) + `</ScreenYValues></gis:ToMapPoints>`), status: 500, fault: "soap:Client", want: "100000"},
		{name: "Identify with tolerance 2147483647", body: soapEnv(`<gis:Identify><MapDescription><Name>Layers</Name></MapDescription><MapImageDisplay><ImageHeight>400</ImageHeight><ImageWidth>400</ImageWidth><ImageDPI>96</ImageDPI></MapImageDisplay>` +
			`<SearchShape xsi:type="gis:PointN"><X>0</X><Y>0</Y></SearchShape><Tolerance>2147483647</Tolerance><IdentifyOption>gisIdentifyAllLayers</IdentifyOption><LayerIDs><Int>1</Int></LayerIDs></gis:Identify>`), status: 200, want: "IdentifyResponse"},
		{name: "50,000 layer descriptions", body: soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name><LayerDescriptions>` + strings.Repeat(`<LayerDescription><LayerID>1</LayerID><Visible>true</Visible></LayerDescription>`, 50_000) +
			`</LayerDescriptions></MapDescription>` + imageDescription(256, 256, "96") + `</gis:ExportMapImage>`), status: 500, fault: "soap:Client", want: "maxDecodedBytes"},
		{name: "cache route, huge level and row", method: "GET", path: "/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L99/Rffffffff/Cffffffff.png", status: 404, want: "not a tile path"},

		// Paths, headers and JSON routes (issue 17, 6–8).
		{name: "output name with %00", method: "GET", path: "/arcgis/output/0123456789abcdef0123456789abcdef%00.png", status: 404, want: "no such output"},
		{name: "output name never issued", method: "GET", path: "/arcgis/output/0123456789abcdef0123456789abcdef.png", status: 404, want: "no such output"},
		{name: "%2e%2e in a cache route", method: "GET", path: "/arcgis/rest/directories/arcgiscache/world/%2e%2e/_alllayers/L00/R00000000/C00000000.png", status: 400, want: "must be names, not . or .."},
		{name: "%2e%2e as the cache folder", method: "GET", path: "/arcgis/rest/directories/arcgiscache/world/Layers/%2e%2e/L00/R00000000/C00000000.png", status: 400, want: "must be names, not . or .."},
		{name: "legislative date 0000-02-29", method: "GET", path: "/api/v2/general_assembly_136/committees/meetings/house/0000-02-29", status: 404, want: `{"detail":"Not found."}`},
		{name: "seed job id of 100,000 characters", path: "/admin/seed", header: []string{"Content-Type", "application/json"}, body: `{"id":"` + longID + `","service":"world","levels":[0]}`, status: 400, want: "is 100000 characters long: the limit is 128", echo: "Jx7q"},
		{name: "seed job of 100,000 characters looked up", method: "GET", path: "/admin/seed/" + longID[:60_000], status: 404, want: "no such job", echo: "Jx7q"},
		{name: "seed level 2147483647", path: "/admin/seed", header: []string{"Content-Type", "application/json"}, body: `{"service":"world","levels":[2147483647]}`, status: 400, want: "level 2147483647 is not a level of the cache"},
		{name: "forwarded headers from an untrusted client", method: "GET", path: "/healthz", header: []string{"X-Forwarded-For", "203.0.113.7", "X-Real-IP", "203.0.113.8"}, status: 200, want: "ok",
			logWant: []string{"remote=127.0.0.1", "client=127.0.0.1"}, logNot: []string{"203.0.113."}},
		{name: "a 100 KB header", method: "GET", path: "/healthz", header: []string{"X-Filler", strings.Repeat("f", 100_000)}, status: 431, want: "Request Header Fields Too Large"},
		{name: "client hangs up mid-render", body: exportBody(4096, 4096, "96", ""), cancelAfter: 50 * time.Millisecond, logWant: []string{"level=INFO", "status=499"}},
	}
	rows = append(rows, hostileSRRows()...)
	rows = append(rows, hostileAdminRows()...)
	rows = append(rows, hostileRESTRows()...)
	rows = append(rows, hostileRESTBodyRows()...) // hostile_tokens_test.go
	rows = append(rows, hostileLaneRows()...)
	rows = append(rows, hostileWMSRows()...) // hostile_wms_test.go
	return rows
}

// scaleBarBody is an ExportScaleBar for a map 1000 px wide, into an image of w×h px at dpi.
func scaleBarBody(dpi, division string, w, h int) string {
	return soapEnv(`<gis:ExportScaleBar><ScaleBar xsi:type="gis:AlternatingScaleBar"><Division>` + division + `</Division></ScaleBar>` +
		`<MapDescription><Name>Layers</Name></MapDescription><MapDisplay><ImageHeight>500</ImageHeight><ImageWidth>1000</ImageWidth><ImageDPI>96</ImageDPI></MapDisplay>` +
		imageDescription(w, h, dpi) + `</gis:ExportScaleBar>`)
}

// bufferBody draws the countries at 4096×4096 with one selected country and its buffer.
func bufferBody(distance string) string {
	return soapEnv(`<gis:ExportMapImage><MapDescription><Name>Layers</Name><LayerDescriptions><LayerDescription><LayerID>1</LayerID><Visible>true</Visible>` +
		`<SelectionFeatures><Int>1</Int></SelectionFeatures><SelectionBufferDistance>` + distance + `</SelectionBufferDistance><ShowSelectionBuffer>true</ShowSelectionBuffer>` +
		`</LayerDescription></LayerDescriptions></MapDescription>` + imageDescription(4096, 4096, "96") + `</gis:ExportMapImage>`)
}

// queryBody is a query operation on the countries layer of the world map.
func queryBody(op, filter string) string {
	return soapEnv(`<gis:` + op + `><MapName>Layers</MapName><LayerID>1</LayerID>` + filter + `</gis:` + op + `>`)
}

// relationBody is a QueryFeatureCount on the countries with a DE-9IM relation to a wavy
// polygon of n vertices over most of the world: every country is tested against all of them.
func relationBody(n int) string {
	var b strings.Builder
	for i := range n + 1 {
		a := 2 * math.Pi * float64(i%n) / float64(n)
		r := 1.5e7 * (1 + 0.05*math.Sin(37*a))
		fmt.Fprintf(&b, `<Point xsi:type="gis:PointN"><X>%.1f</X><Y>%.1f</Y></Point>`, r*math.Cos(a), 0.6*r*math.Sin(a))
	}
	return queryBody("QueryFeatureCount", `<QueryFilter xsi:type="gis:SpatialFilter"><WhereClause></WhereClause><SpatialRel>gisSpatialRelRelation</SpatialRel>`+
		`<SpatialRelDescription>T*T***T**</SpatialRelDescription><FilterGeometry xsi:type="gis:PolygonN"><RingArray><Ring><PointArray>`+b.String()+
		`</PointArray></Ring></RingArray></FilterGeometry></QueryFilter>`)
}

func findBody(search string) string {
	return soapEnv(`<gis:Find><MapDescription><Name>Layers</Name></MapDescription><MapImageDisplay><ImageHeight>400</ImageHeight><ImageWidth>400</ImageWidth><ImageDPI>96</ImageDPI></MapImageDisplay>` +
		`<SearchString>` + search + `</SearchString><Contains>true</Contains><SearchFields>NAME</SearchFields><FindOption>gisFindAllLayers</FindOption><LayerIDs><Int>1</Int></LayerIDs></gis:Find>`)
}

// hostileAnswer is what the farm answered one row.
type hostileAnswer struct {
	status      int
	code, fault string // faultcode and faultstring when the answer is a SOAP fault
	body        string
	took        time.Duration
	err         error // the client's, e.g. when it hung up
}

// send sends one row's request with request id rid and reads the whole answer.
func (r hostileRow) send(client *http.Client, base, rid string) hostileAnswer {
	method, path := r.method, r.path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = "/arcgis/services/world/MapServer"
	}
	timeout := 3 * hostileBound // past the bound, so a slow answer is measured, not cut at it
	if r.cancelAfter > 0 {
		timeout = r.cancelAfter
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return hostileAnswer{err: err}
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	for i := 0; i+1 < len(r.header); i += 2 {
		req.Header.Set(r.header[i], r.header[i+1])
	}
	req.Header.Set("X-Request-Id", rid)
	withAdminCredential(req, base)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return hostileAnswer{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := hostileAnswer{status: resp.StatusCode, body: string(b), took: time.Since(start), err: err}
	if strings.Contains(a.body, "<faultcode>") {
		a.code, a.fault = faultOf(b)
	}
	return a
}

// faultOf reads faultcode and faultstring from a SOAP fault envelope ("", "" if it is none).
func faultOf(b []byte) (code, msg string) {
	_, rest, ok := bytes.Cut(b, []byte("<faultcode>"))
	if !ok {
		return "", ""
	}
	c, rest, _ := bytes.Cut(rest, []byte("</faultcode>"))
	_, rest, _ = bytes.Cut(rest, []byte("<faultstring>"))
	m, _, _ := bytes.Cut(rest, []byte("</faultstring>"))
	return string(c), xmlUnescape(string(m))
}

func xmlUnescape(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#34;", `"`, "&apos;", "'", "&#39;", "'", "&amp;", "&").Replace(s)
}

// internalTexts are pieces of internal error texts that no answer to a client may hold.
var internalTexts = []string{"runtime error", "panic", "goroutine ", ".go:", "json: unsupported", "dial tcp", "outputs/", "arcgiscache/",
	"minio", "redis", "asynq", "root:x:0:0"}

// check reports what is wrong with an answer to the row.
func (r hostileRow) check(a hostileAnswer) []string {
	var bad []string
	if a.took > hostileBound {
		bad = append(bad, fmt.Sprintf("answered in %v, over the %v bound", a.took.Round(time.Millisecond), hostileBound))
	}
	if r.cancelAfter > 0 {
		if a.err == nil {
			bad = append(bad, fmt.Sprintf("answered HTTP %d before the client hung up after %v: the row tests nothing", a.status, r.cancelAfter))
		}
		return bad
	}
	if a.err != nil {
		return append(bad, "no answer: "+a.err.Error())
	}
	text := a.body
	if r.fault != "" {
		text = a.fault
	}
	if a.status != r.status || a.code != r.fault || !strings.Contains(text, r.want) {
		bad = append(bad, fmt.Sprintf("got HTTP %d %q %.300q; want HTTP %d %q containing %q", a.status, a.code, text, r.status, r.fault, r.want))
	}
	if len([]rune(a.fault)) > 1000 {
		bad = append(bad, fmt.Sprintf("faultstring of %d characters, over 1000", len([]rune(a.fault))))
	}
	if r.echo != "" {
		if n := longestEcho(a.body, r.echo); n > 200 {
			bad = append(bad, fmt.Sprintf("the answer quotes %d characters of the input, over 200", n))
		}
	}
	lower := strings.ToLower(a.body)
	for _, s := range internalTexts {
		if strings.Contains(lower, strings.ToLower(s)) {
			bad = append(bad, fmt.Sprintf("the answer holds internal text %q: %.300q", s, a.body))
		}
	}
	return bad
}

// longestEcho returns the length of the longest run of s made of unit repeated (from any of
// its rotations), in characters.
func longestEcho(s, unit string) int {
	best := 0
	for off := range len(unit) {
		rot := unit[off:] + unit[:off]
		run := 0
		for i := 0; i < len(s); {
			if strings.HasPrefix(s[i:], rot) {
				run += len(rot)
				i += len(rot)
				continue
			}
			best = max(best, run)
			run = 0
			i++
		}
		best = max(best, run)
	}
	return best
}

// requestLine returns the access-log line in logs of request id rid, waiting up to limit for it.
func requestLine(logs *testenv.LogBuffer, rid string, limit time.Duration) string {
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "msg=request ") && strings.Contains(line, "request_id="+rid+" ") {
				return line
			}
		}
		if time.Now().After(deadline) {
			return ""
		}
	}
}

// panickedTasks returns the tasks of the farm's asynq queues, waiting for a retry or archived
// (failed for good), whose last error is a panic, as "queue/state/type: error".
func panickedTasks(t testing.TB, insp *asynq.Inspector) []string {
	t.Helper()
	queues, err := insp.Queues()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range queues {
		for state, list := range map[string]func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
			"retry": insp.ListRetryTasks, "archived": insp.ListArchivedTasks,
		} {
			tasks, err := list(q, asynq.PageSize(1000))
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range tasks {
				if strings.Contains(strings.ToLower(ti.LastErr), "panic") {
					out = append(out, q+"/"+state+"/"+ti.Type+": "+ti.LastErr)
				}
			}
		}
	}
	return out
}

func processCPU(t testing.TB) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestHostile sends the hostile-input table of issue 17 to a farm (api, coordinator and worker
// in this process, on real Redis and MinIO), one request after another. Every request is
// answered within 2 s (a right answer over it is sent once more, and must make it then: the
// machine may be busy with other work) with the row's answer (a soap:Client fault naming the problem, an HTTP
// status, or a normal answer where the input is allowed), quotes at most 200 characters of a
// huge input and no internal error text; its access-log line is as the row says. After the
// table: nothing was logged at ERROR and no panic, no task is waiting for a retry, the
// goroutines are back to where they were, and the farm spends no CPU on the requests it has
// answered.
func TestHostile(t *testing.T) {
	logs := &testenv.LogBuffer{}
	base := startLoggedFarm(t, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))).url
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	defer insp.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 4}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	// The world map's cache, levels 0–1, for the tile rows.
	no := false
	seedAndWait(t, base, seed.Request{Service: "world", Extent: worldExtent(), Levels: []int{0, 1}, SkipEmpty: &no})
	// Warm up (the first render, the first query) so the baseline holds the farm's own
	// goroutines, then take it.
	for _, body := range []string{exportBody(256, 256, "96", ""), queryBody("QueryFeatureCount", `<QueryFilter xsi:type="gis:QueryFilter"><WhereClause>NAME = 'France'</WhereClause></QueryFilter>`)} {
		if a := (hostileRow{body: body}).send(client, base, "warmup-"+strconv.Itoa(len(body))); a.status != 200 {
			t.Fatalf("warm-up request: HTTP %d %.300s %v", a.status, a.body, a.err)
		}
	}
	transport.CloseIdleConnections()
	baseline := settledGoroutines(0, 3*time.Second)

	for i, r := range hostileRows() {
		rid := fmt.Sprintf("hostile-%03d", i)
		t.Run(r.name, func(t *testing.T) {
			a := r.send(client, base, rid)
			if bad := r.check(a); len(bad) == 1 && a.took > hostileBound && r.cancelAfter == 0 {
				// Right answer, too late: on a machine other work loads (the test runs alone only
				// in a full run), a request can wait that long for a CPU. A request that takes
				// the time itself (work, or a wait for a timer) takes it again: the bound must
				// hold on the second try.
				load, _ := os.ReadFile("/proc/loadavg")
				t.Logf("%s: right answer in %v, over the bound (load average %.14s on %d CPUs); sending it once more", rid,
					a.took.Round(time.Millisecond), load, runtime.NumCPU())
				rid += "-again"
				a = r.send(client, base, rid)
			}
			shown := a.fault
			if a.code == "" {
				shown = a.body
			}
			t.Logf("%s: HTTP %d %s %.200q in %v (err %v)", rid, a.status, a.code, shown, a.took.Round(time.Millisecond), a.err)
			bad := r.check(a)
			if len(r.logWant) > 0 || len(r.logNot) > 0 {
				line := requestLine(logs, rid, 5*time.Second)
				if line == "" {
					bad = append(bad, "no access-log line for request "+rid)
				}
				for _, w := range r.logWant {
					if !strings.Contains(line, w) {
						bad = append(bad, fmt.Sprintf("log line lacks %q: %.500s", w, line))
					}
				}
				for _, w := range r.logNot {
					if strings.Contains(line, w) {
						bad = append(bad, fmt.Sprintf("log line holds %q: %.500s", w, line))
					}
				}
			}
			for _, b := range bad {
				t.Error(b)
			}
		})
	}

	transport.CloseIdleConnections()
	if n := settledGoroutines(baseline+4, 15*time.Second); n > baseline+4 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines 15 s after the table, %d before it:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
	// No CPU spent after the answers: over 3 s, the farm (idle workers sleep 2 s after their
	// queues empty) uses a small fraction of a core. A query left running for nobody uses one.
	c0, t0 := processCPU(t), time.Now()
	time.Sleep(3 * time.Second)
	if share := float64(processCPU(t)-c0) / float64(time.Since(t0)); share > 0.3 {
		t.Errorf("the farm used %.0f%% of a core in the 3 s after the table: work goes on for nobody", share*100)
	}
	// A task whose handler panicked is archived, never retried (worker/recover.go); none may
	// have panicked at all. (A render whose client hung up is retried and dropped undrawn.)
	if p := panickedTasks(t, insp); len(p) > 0 {
		t.Errorf("tasks that panicked:\n%s", strings.Join(p, "\n"))
	}
	var errs []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") || strings.Contains(strings.ToLower(line), "panic") {
			errs = append(errs, line)
		}
	}
	if len(errs) > 0 {
		t.Errorf("logged at ERROR or about a panic during the table (client errors and hang-ups are INFO or WARN):\n%.4000s", strings.Join(errs, "\n"))
	}
	if t.Failed() {
		t.Logf("farm log (last 8000 bytes):\n%s", tail(logs.String(), 8000))
	}
}

// settledGoroutines waits up to limit for the goroutine count to come down to want and returns
// the last count (with want 0, it returns the count once it has not changed for 500 ms).
func settledGoroutines(want int, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	last := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		n := runtime.NumGoroutine()
		if (want > 0 && n <= want) || (want == 0 && n == last) {
			return n
		}
		last = n
	}
	return last
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
