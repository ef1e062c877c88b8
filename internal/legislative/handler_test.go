package legislative

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSessionListOrderAndShape(t *testing.T) {
	h := newTestHandler(t, "", noon21Nov)
	rec := do(h, "GET", "/api/v2/")
	var list []map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{
		"general_assembly_136", "general_assembly_135_special_1", "general_assembly_135", "general_assembly_134",
		"general_assembly_133", "general_assembly_132", "general_assembly_131", "general_assembly_130",
		"general_assembly_129", "general_assembly_128", "general_assembly_127", "general_assembly_126",
		"general_assembly_125_special_1", "general_assembly_125", "general_assembly_124", "general_assembly_123",
		"general_assembly_122",
	}
	if len(list) != len(wantIDs) {
		t.Fatalf("%d sessions, want %d", len(list), len(wantIDs))
	}
	for i, s := range list {
		if s["id"] != wantIDs[i] {
			t.Errorf("position %d: %v, want %s", i, s["id"], wantIDs[i])
		}
	}
	first := `{"id":"general_assembly_136","start":"2025-01-06","end":"2026-12-31","type":"Regular Session","link":"/api/v2/general_assembly_136/"},` +
		`{"id":"general_assembly_135_special_1","start":"2024-05-28","end":"2024-06-12","type":"Special Session","link":"/api/v2/general_assembly_135_special_1/"}`
	if !strings.HasPrefix(rec.Body.String(), "["+first+",") {
		t.Errorf("list starts %.300s", rec.Body)
	}
}

func TestDetailNameCurrentActive(t *testing.T) {
	tests := []struct {
		name    string
		now     time.Time
		id      string
		display string
		current bool
		active  bool
	}{
		{"136 today", noon21Nov, "general_assembly_136", "2025-Regular Session", true, true},
		{"135 today", noon21Nov, "general_assembly_135", "2023-Regular Session", false, false},
		{"special today", noon21Nov, "general_assembly_135_special_1", "2024-Special Session", false, false},
		{"special during it", time.Date(2024, 6, 1, 16, 0, 0, 0, time.UTC), "general_assembly_135_special_1", "2024-Special Session", false, true},
		{"135 during special", time.Date(2024, 6, 1, 16, 0, 0, 0, time.UTC), "general_assembly_135", "2023-Regular Session", true, true},
		{"2004 special", time.Date(2004, 12, 10, 16, 0, 0, 0, time.UTC), "general_assembly_125_special_1", "2004-Special Session", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHandler(t, "", tc.now)
			rec := do(h, "GET", "/api/v2/"+tc.id+"/")
			var got []struct {
				ID      string `json:"id"`
				Name    string `json:"name"`
				Current bool   `json:"current"`
				Active  bool   `json:"active"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || len(got) != 1 {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if got[0].ID != tc.id || got[0].Name != tc.display || got[0].Current != tc.current || got[0].Active != tc.active {
				t.Errorf("got %+v, want name %q current %v active %v", got[0], tc.display, tc.current, tc.active)
			}
		})
	}
}

// mutableClock is a clock the test moves while a handler is in use.
type mutableClock struct{ unix atomic.Int64 }

func (c *mutableClock) now() time.Time  { return time.Unix(c.unix.Load(), 0) }
func (c *mutableClock) set(t time.Time) { c.unix.Store(t.Unix()) }

func TestPendingDateIsNewYorkDate(t *testing.T) {
	clock := &mutableClock{}
	h := New(Options{Now: clock.now})
	tests := []struct {
		utc  time.Time
		date string
	}{
		{time.Date(2026, 11, 22, 4, 59, 59, 0, time.UTC), "2026-11-21"}, // 23:59:59 EST
		{time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC), "2026-11-22"},   // midnight EST
		{time.Date(2026, 7, 1, 3, 59, 59, 0, time.UTC), "2026-06-30"},   // 23:59:59 EDT
		{time.Date(2026, 7, 1, 4, 0, 0, 0, time.UTC), "2026-07-01"},     // midnight EDT
		{time.Date(2026, 11, 22, 4, 59, 59, 0, time.UTC), "2026-11-21"}, // the clock may go back
	}
	for _, tc := range tests {
		clock.set(tc.utc)
		body := do(h, "GET", "/api/v2/general_assembly_136/").Body.String()
		for _, ch := range []string{"house", "senate"} {
			want := `"/api/v2/general_assembly_136/committees/meetings/` + ch + "/" + tc.date + `"`
			if !strings.Contains(body, want) {
				t.Errorf("at %s: body lacks %s", tc.utc, want)
			}
		}
	}
}

func TestPendingMeetings(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	ids := func(target string) string {
		rec := do(h, "GET", target)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
		}
		var ms []meetingOut
		if err := json.Unmarshal(rec.Body.Bytes(), &ms); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.MeetingID)
		}
		return strings.Join(out, ",")
	}
	base := "/api/v2/general_assembly_140/committees/meetings/"
	tests := []struct{ path, want string }{
		{"house/2027-01-01", "cmte_h_finance_1_2027-01-20-1000_1,cmte_h_finance_1_2027-03-02-0900_2"},
		{"house/2027-01-21", "cmte_h_finance_1_2027-03-02-0900_2"},
		{"house/2027-03-03", ""},
		{"senate/2027-03-02", "cmte_s_health_1_2027-03-02-1330_1"},
		{"senate/2027-03-03", ""},
	}
	for _, tc := range tests {
		if got := ids(base + tc.path); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
	}
	if rec := do(h, "GET", base+"house/2027-03-03"); rec.Body.String() != "[]" {
		t.Errorf("empty pending list body %q, want []", rec.Body)
	}
}

func TestActions(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	rec := do(h, "GET", "/api/v2/general_assembly_140/legislation/hb1/actions/")
	want := `[{"occurred":"2027-01-14T10:00:00-05:00","chamber":"House","action":"Refer to Committee","description":"Refer to Committee","session_day":"day004_h_20270114","cmte_lpid":"cmte_h_finance_1","cmte_name":"Finance","committee":"Finance"},` +
		`{"occurred":"2027-02-03T13:05:12-05:00","chamber":"House","action":"Passed","description":"Passed 3rd consideration","session_day":"day012_h_20270203","cmte_lpid":"","cmte_name":"","committee":"","yeas":["rep_swearingen_douglas_1"],"nays":[],"result":"Passed","amended":false,"revno":1001}]`
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Errorf("actions %d\n got %s\nwant %s", rec.Code, rec.Body, want)
	}
	if rec := do(h, "GET", "/api/v2/general_assembly_140/legislation/hb2/actions/"); rec.Body.String() != "[]" {
		t.Errorf("no actions: %s, want []", rec.Body)
	}
}

func TestErrorsAndRouting(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	const notFound = `{"detail":"Not found."}`
	tests := []struct {
		name, method, target string
		hdr                  []string
		status               int
		ctype, body          string
		location             string
	}{
		{"unknown session in sub-collection", "GET", "/api/v2/general_assembly_999/committees/", nil, 404, "application/json", notFound, ""},
		{"unknown bill", "GET", "/api/v2/general_assembly_140/legislation/hb999/", nil, 404, "application/json", notFound, ""},
		{"unknown version", "GET", "/api/v2/general_assembly_140/legislation/hb1/09_EN/", nil, 404, "application/json", notFound, ""},
		{"unknown committee", "GET", "/api/v2/general_assembly_140/committees/cmte_h_nope_1/meetings/", nil, 404, "application/json", notFound, ""},
		{"impossible date", "GET", "/api/v2/general_assembly_140/committees/meetings/house/2027-02-30", nil, 404, "application/json", notFound, ""},
		{"year zero", "GET", "/api/v2/general_assembly_140/committees/meetings/house/0000-02-29", nil, 404, "application/json", notFound, ""},
		{"year zero, January", "GET", "/api/v2/general_assembly_140/committees/meetings/senate/0000-01-01", nil, 404, "application/json", notFound, ""},
		{"year one", "GET", "/api/v2/general_assembly_140/committees/meetings/senate/0001-01-01", nil, 200, "application/json",
			`[{"meeting_id":"cmte_s_health_1_2027-03-02-1330_1","cmte_lpid":"cmte_s_health_1","committee":"Health","chamber":"Senate","meeting_date":"2027-03-02","meeting_time":"13:30","location":"Senate Finance Hearing Room","canceled":false,"agenda":[{"headline":"Sole hearing","billno":"","proposed_sponsor":""}]}]`, ""},
		{"document", "GET", "/api/v2/general_assembly_140/legislation/hb1/00_IN/pdf/", nil, 404, "application/json", notFound, ""},
		{"not a date is unrouted", "GET", "/api/v2/general_assembly_140/committees/meetings/house/today", nil, 404, "text/html", string(bodyHTML404), ""},
		{"pending with slash is unrouted", "GET", "/api/v2/general_assembly_140/committees/meetings/house/2027-01-01/", nil, 404, "text/html", string(bodyHTML404), ""},
		{"outside the API", "GET", "/api/v3/", nil, 404, "text/html", string(bodyHTML404), ""},
		{"double slash", "GET", "/api/v2//", nil, 404, "text/html", string(bodyHTML404), ""},
		{"mount point", "GET", "/api/v2", nil, 301, "text/html; charset=utf-8", "", "/api/v2/"},
		{"mount point with query", "GET", "/api/v2?format=json", nil, 301, "text/html; charset=utf-8", "", "/api/v2/?format=json"},
		{"sub-collection slash", "GET", "/api/v2/general_assembly_140/legislators?format=api", nil, 301, "text/html; charset=utf-8", "", "/api/v2/general_assembly_140/legislators/?format=api"},
		{"unknown session still redirects", "DELETE", "/api/v2/nope", nil, 301, "text/html; charset=utf-8", "", "/api/v2/nope/"},
		{"406 before 405", "POST", "/api/v2/general_assembly_140/", []string{"Accept", "application/xml"}, 406, "application/json", `{"detail":"Could not satisfy the request Accept header."}`, ""},
		{"unknown format before 405", "PUT", "/api/v2/?format=yaml", nil, 404, "application/json", notFound, ""},
		{"lower-case verb", "purge", "/api/v2/general_assembly_140/journals/", nil, 405, "application/json", `{"detail":"Method \"PURGE\" not allowed."}`, ""},
		{"empty Accept", "GET", "/api/v2/", []string{"Accept", ""}, 406, "application/json", `{"detail":"Could not satisfy the request Accept header."}`, ""},
		{"last format wins", "GET", "/api/v2/?format=api&format=xml", nil, 404, "application/json", notFound, ""},
		{"encoded format key", "GET", "/api/v2/?%66ormat=xml", nil, 404, "application/json", notFound, ""},
		{"OPTIONS sub-collection", "OPTIONS", "/api/v2/general_assembly_140/committees/", nil, 200, "application/json",
			`{"name":"Committee List","description":"","renders":["application/json","text/html"],"parses":["application/json","application/x-www-form-urlencoded","multipart/form-data"]}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, tc.method, tc.target, tc.hdr...)
			if rec.Code != tc.status || rec.Header().Get("Content-Type") != tc.ctype || rec.Body.String() != tc.body {
				t.Errorf("got %d %q %q\nwant %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body, tc.status, tc.ctype, tc.body)
			}
			if rec.Header().Get("Location") != tc.location {
				t.Errorf("Location %q, want %q", rec.Header().Get("Location"), tc.location)
			}
			drf := tc.ctype == "application/json"
			if got := rec.Header().Get("Vary") != "" && rec.Header().Get("Allow") == "GET, HEAD, OPTIONS"; got != drf {
				t.Errorf("Vary %q Allow %q; DRF headers expected: %v", rec.Header().Get("Vary"), rec.Header().Get("Allow"), drf)
			}
		})
	}
}

func TestIndent(t *testing.T) {
	h := newTestHandler(t, "probe_dataset.json", noon21Nov)
	compact := do(h, "GET", "/api/v2/general_assembly_135/").Body.Bytes()
	for _, tc := range []struct {
		accept string
		indent int
	}{
		{"application/json; indent=2", 2},
		{"application/json;indent=0", 0},
		{"application/json; indent=20", 8},
		{"application/json; indent=x", 0},
		{`*/*; indent="3"`, 3},
	} {
		rec := do(h, "GET", "/api/v2/general_assembly_135/", "Accept", tc.accept)
		want := compact
		if tc.indent > 0 {
			var b bytes.Buffer
			_ = json.Indent(&b, compact, "", strings.Repeat(" ", tc.indent))
			want = b.Bytes()
		}
		if !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("Accept %q: body\n%s\nwant\n%s", tc.accept, rec.Body, want)
		}
	}
}

func TestConditionalGet(t *testing.T) {
	h := newTestHandler(t, "", noon21Nov)
	for _, target := range []string{"/api/v2/", "/api/v2/general_assembly_136/", "/api/v2/general_assembly_136/legislation/"} {
		first := do(h, "GET", target)
		etag := first.Header().Get("ETag")
		if first.Code != 200 || !strings.HasPrefix(etag, `"`) {
			t.Fatalf("GET %s: %d ETag %q", target, first.Code, etag)
		}
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
			for _, method := range []string{"GET", "HEAD"} {
				rec := do(h, method, target, "If-None-Match", inm)
				if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
					t.Errorf("%s %s If-None-Match %s: %d %q", method, target, inm, rec.Code, rec.Body)
				}
				if rec.Header().Get("ETag") != etag || rec.Header().Get("Vary") != "Accept" || rec.Header().Get("Content-Type") != "" {
					t.Errorf("304 headers %v", rec.Header())
				}
			}
		}
		if rec := do(h, "GET", target, "If-None-Match", `"stale"`); rec.Code != 200 || rec.Body.String() != first.Body.String() {
			t.Errorf("stale tag: %d", rec.Code)
		}
	}
	// A new dataset changes the tag.
	before := do(h, "GET", "/api/v2/").Header().Get("ETag")
	if err := h.LoadJSON(mustRead(t, "full_dataset.json")); err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "GET", "/api/v2/", "If-None-Match", before); rec.Code != 200 || rec.Header().Get("ETag") == before {
		t.Errorf("after reload: %d, ETag %q (was %q)", rec.Code, rec.Header().Get("ETag"), before)
	}
}

func TestGzipLargeLists(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	const target = "/api/v2/general_assembly_140/legislation/"
	plain := do(h, "GET", target)
	if plain.Body.Len() < defaultGzipMinSize {
		t.Fatalf("test list is %d bytes, too small to be compressed", plain.Body.Len())
	}
	if plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("Vary") != "Accept, Accept-Encoding" {
		t.Errorf("identity response headers %v", plain.Header())
	}
	for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.5", "*"} {
		rec := do(h, "GET", target, "Accept-Encoding", ae)
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q: not compressed", ae)
			continue
		}
		if rec.Header().Get("Content-Length") != itoa(rec.Body.Len()) || rec.Body.Len() >= plain.Body.Len() {
			t.Errorf("compressed length %s / %d vs plain %d", rec.Header().Get("Content-Length"), rec.Body.Len(), plain.Body.Len())
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, plain.Body.Bytes()) {
			t.Errorf("decompressed body differs (err %v)", err)
		}
		etag := rec.Header().Get("ETag")
		if !strings.HasPrefix(etag, "W/") {
			t.Errorf("compressed ETag %q should be weak", etag)
		}
		if nm := do(h, "GET", target, "Accept-Encoding", ae, "If-None-Match", etag); nm.Code != http.StatusNotModified {
			t.Errorf("304 for compressed: %d", nm.Code)
		}
	}
	for _, ae := range []string{"identity", "gzip;q=0", "br"} {
		if rec := do(h, "GET", target, "Accept-Encoding", ae); rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != plain.Body.String() {
			t.Errorf("Accept-Encoding %q: compressed or different", ae)
		}
	}
	// Small bodies are never compressed and keep Vary: Accept.
	if rec := do(h, "GET", "/api/v2/", "Accept-Encoding", "gzip"); rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Vary") != "Accept" {
		t.Errorf("session list headers %v", rec.Header())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestHeadMatchesGet(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	for _, target := range []string{"/api/v2/", "/api/v2/general_assembly_140/", "/api/v2/general_assembly_140/legislation/?format=api", "/api/v2/nowhere/x/"} {
		get, head := do(h, "GET", target), do(h, "HEAD", target)
		if head.Code != get.Code || head.Body.Len() != 0 {
			t.Errorf("HEAD %s: %d with %d body bytes; GET %d", target, head.Code, head.Body.Len(), get.Code)
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Vary", "Allow", "ETag"} {
			// The browsable page names the method ("<b>HEAD</b>"), so
			// its length differs by one, as in DRF.
			if k == "Content-Length" && strings.Contains(target, "format=api") {
				continue
			}
			if head.Header().Get(k) != get.Header().Get(k) {
				t.Errorf("HEAD %s: %s %q, GET %q", target, k, head.Header().Get(k), get.Header().Get(k))
			}
		}
	}
}

func TestBrowsablePageForSubCollection(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	rec := do(h, "GET", "/api/v2/general_assembly_140/committees/meetings/house/2027-01-01?format=api&x=a%26b")
	body := rec.Body.String()
	for _, want := range []string{
		"<title>Pending House Committee Meeting List – Django REST framework</title>",
		`<li><a href="/api/v2/?format=api">Session List</a></li>`,
		`<li><a href="/api/v2/general_assembly_140/?format=api">Session Detail</a></li>`,
		`<li><a href="/api/v2/general_assembly_140/committees/?format=api">Committee List</a></li>`,
		`<li><a href="/api/v2/general_assembly_140/committees/meetings/?format=api">Committee Meeting List</a></li>`,
		`<li class="active"><a href="/api/v2/general_assembly_140/committees/meetings/house/2027-01-01?format=api">Pending House Committee Meeting List</a></li>`,
		`href="/api/v2/general_assembly_140/committees/meetings/house/2027-01-01?format=json&amp;x=a%26b"`,
		`<b>GET</b> /api/v2/general_assembly_140/committees/meetings/house/2027-01-01?format=api&amp;x=a%26b</pre>`,
		"&quot;meeting_id&quot;: &quot;cmte_h_finance_1_2027-01-20-1000_1&quot;,\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" || rec.Header().Get("ETag") != "" {
		t.Errorf("page headers %d %v", rec.Code, rec.Header())
	}
	// Data is escaped; links in it become anchors.
	rec = do(h, "GET", "/api/v2/general_assembly_140/legislation/sb3/?format=api")
	if !strings.Contains(rec.Body.String(), "Test bill sb3 &lt;&amp;&gt; é\\u2028") {
		t.Errorf("short title not escaped as expected")
	}
	if got := urlize(`"see https://example.org/a?b=1&c=2." and http://x.y`); got != `&quot;see <a href="https://example.org/a?b=1&amp;c=2" rel="nofollow">https://example.org/a?b=1&amp;c=2</a>.&quot; and <a href="http://x.y" rel="nofollow">http://x.y</a>` {
		t.Errorf("urlize: %s", got)
	}
}

// With the real clock the day cache is not checked per request; a timer
// clears it at local midnight. A day that is already over is cleared at once.
func TestMidnightTimerClearsDayCache(t *testing.T) {
	ds, err := ParseDataset(DefaultDatasetJSON())
	if err != nil {
		t.Fatal(err)
	}
	s := compile(ds, "x", newRouter(), legislatureLocation(), defaultGzipMinSize, true)
	past := func() time.Time { return time.Date(2020, 3, 1, 12, 0, 0, 0, time.UTC) }
	d := s.dayFor(past)
	if d.date != "2020-03-01" {
		t.Fatalf("date %s", d.date)
	}
	for s.day.p.Load() != nil { // the timer for a past midnight fires at once
		runtime.Gosched()
	}
	if got := s.dayFor(fixedClock(noon21Nov)).date; got != "2026-11-21" {
		t.Errorf("after the timer: date %s, want 2026-11-21", got)
	}
}
