package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/refresh"
)

// cachetool expire -tiles sends a z/x/y list (comments and blank lines skipped) in requests of
// at most refresh.MaxExpireTiles tiles, in order; status prints every cache's backlog.
func TestExpireTileListAndBacklog(t *testing.T) {
	t.Setenv("MAPFARM_ADMIN_TOKEN", "secret")
	var got []refresh.ExpireRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/admin/expire":
			var req refresh.ExpireRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				t.Error(err)
			}
			got = append(got, req)
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprintf(w, `{"cache":"world/Layers","envelopes":%d}`, len(req.Tiles))
		case r.URL.Path == "/admin/refresh":
			old := time.Now().Add(-90*time.Second - 200*time.Millisecond).UTC().Format(time.RFC3339Nano)
			fmt.Fprintf(w, `{"backlog":[{"cache":"world/Layers","entries":3,"oldest":%q,"forced":true}]}`, old)
		default:
			w.Write([]byte(`{"jobs":[]}`))
		}
	}))
	defer srv.Close()
	var list strings.Builder
	list.WriteString("# expired by osm2pgsql\n\n")
	for i := range refresh.MaxExpireTiles + 1 {
		fmt.Fprintf(&list, "14/%d/%d\n", 8000+i%100, 5000+i/100)
	}
	path := filepath.Join(t.TempDir(), "expired.list")
	if err := os.WriteFile(path, []byte(list.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"expire", "-server", srv.URL, "-service", "world", "-tiles", path}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].Tiles) != refresh.MaxExpireTiles || len(got[1].Tiles) != 1 ||
		got[0].Tiles[0] != [3]int{14, 8000, 5000} || got[1].Tiles[0] != [3]int{14, 8000, 5100} || got[0].Service != "world" {
		t.Fatalf("requests: %d, first tiles %v", len(got), func() [][3]int {
			var f [][3]int
			for _, g := range got {
				f = append(f, g.Tiles[0])
			}
			return f
		}())
	}
	if !strings.Contains(out.String(), "expired 10001 areas of world/Layers in 2 request(s)") {
		t.Errorf("output: %s", out.String())
	}
	os.WriteFile(path, []byte("14/1/x\n"), 0o600)
	if err := run(t.Context(), []string{"expire", "-server", srv.URL, "-service", "world", "-tiles", path}, &out, &out); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad line: %v", err)
	}
	out.Reset()
	if err := run(t.Context(), []string{"status", "-server", srv.URL}, &out, &out); err != nil ||
		!strings.Contains(out.String(), "world/Layers  3 areas waiting, oldest 1m30s old, expired (due)") {
		t.Errorf("status: %v\n%s", err, out.String())
	}
}
