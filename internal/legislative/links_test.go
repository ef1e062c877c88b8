package legislative

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	goldenfile "github.com/mapfarm/mapfarm/internal/golden"
)

// collectLinks returns every string in a JSON document that is an API path.
func collectLinks(t *testing.T, body []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			if strings.HasPrefix(x, apiPrefix) {
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// isDocumentLink reports links to a bill version's PDF or HTML text, which
// this service does not hold (it answers them 404, see README).
func isDocumentLink(p string) bool {
	return strings.HasSuffix(p, "/pdf/") || strings.HasSuffix(p, "/html/")
}

// crawl follows every link from /api/v2/ and checks that each answers 200
// with a JSON array. It returns the bodies by path.
func crawl(t *testing.T, h http.Handler) map[string][]byte {
	t.Helper()
	seen := map[string][]byte{}
	queue := []string{apiPrefix}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, ok := seen[p]; ok {
			continue
		}
		rec := do(h, "GET", p)
		if isDocumentLink(p) {
			if rec.Code != http.StatusNotFound || rec.Body.String() != `{"detail":"Not found."}` {
				t.Errorf("GET %s: %d %s, want the DRF 404", p, rec.Code, rec.Body)
			}
			seen[p] = nil
			continue
		}
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: status %d, body %s", p, rec.Code, rec.Body)
			seen[p] = nil
			continue
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
		body := rec.Body.Bytes()
		if !bytes.HasPrefix(body, []byte("[")) {
			t.Errorf("GET %s: body is not a JSON array: %.80s", p, body)
		}
		seen[p] = bytes.Clone(body)
		queue = append(queue, collectLinks(t, body)...)
	}
	return seen
}

func TestEveryLinkAnswers(t *testing.T) {
	for _, name := range []string{"", "full_dataset.json"} {
		t.Run("dataset="+name, func(t *testing.T) {
			h := newTestHandler(t, name, noon21Nov)
			seen := crawl(t, h)
			// Every link field of every session detail must have been followed.
			for _, cs := range h.snap.Load().order {
				for _, link := range collectLinks(t, seen[sessionLink(cs.s.ID)]) {
					if _, ok := seen[link]; !ok {
						t.Errorf("link %s of %s not followed", link, cs.s.ID)
					}
				}
			}
			if name == "" && len(seen) < 1+17*19 {
				t.Errorf("crawled %d paths, want at least %d (root + 17 sessions x (detail + 18 links))", len(seen), 1+17*19)
			}
		})
	}
}

// TestGoldenFullDataset pins the body of every path reachable in the full
// test dataset. Run with MAPFARM_UPDATE_GOLDEN=1 after an intended change and review the diff.
func TestGoldenFullDataset(t *testing.T) {
	h := newTestHandler(t, "full_dataset.json", noon21Nov)
	seen := crawl(t, h)
	paths := make([]string, 0, len(seen))
	for p, body := range seen {
		if body != nil && strings.Contains(p, "general_assembly_140") {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p + "\n" + string(seen[p]) + "\n\n")
	}
	goldenfile.Check(t, filepath.Join("testdata", "golden_full_dataset.txt"), b.Bytes())
}

// TestRealBillResponse checks that the one real response we have (H.B. 602,
// 136th GA) comes back byte for byte from the default dataset.
func TestRealBillResponse(t *testing.T) {
	h := newTestHandler(t, "", noon21Nov)
	want := bytes.TrimSpace(mustRead(t, "ga136_legislation_hb602.json"))
	for _, p := range []string{
		"/api/v2/general_assembly_136/legislation/hb602/",
		"/api/v2/general_assembly_136/legislation/hb602/00_IN/",
	} {
		rec := do(h, "GET", p)
		if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("GET %s: %d\n got %s\nwant %s", p, rec.Code, rec.Body, want)
		}
	}
	rec := do(h, "GET", "/api/v2/general_assembly_136/legislation/")
	if got := "[" + string(want[1:len(want)-1]) + "]"; rec.Body.String() != got {
		t.Errorf("legislation list\n got %s\nwant %s", rec.Body, got)
	}
}
