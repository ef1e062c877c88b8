package vectortileserver_test

import (
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/onewrite"
	"github.com/mapfarm/mapfarm/internal/onewrite/onewritetest"
)

// TestTileInOneWrite: served as the api serves it (internal/onewrite's listener), a stored
// vector tile larger than net/http's 4 KiB connection buffer leaves in one write, header and
// body, and arrives whole; without the listener it takes two.
func TestTileInOneWrite(t *testing.T) {
	// A stored tile of 20 KB that gzip cannot shrink (stored plain, it is gzipped once when read).
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 20000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	f := newFixture(t, mvt.Options{Gzip: true}, seeded{data: data})
	for _, one := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl := onewritetest.NewCountingListener(ln)
		srv := &http.Server{Handler: f.mux}
		var serveOn net.Listener = cl
		if one {
			srv.ConnContext = onewrite.ConnContext
			serveOn = onewrite.Listener(cl)
		}
		go func() { _ = srv.Serve(serveOn) }()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		req := "GET /arcgis/rest/services/world/VectorTileServer/tile/1/0/1.pbf HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n"
		if _, err := io.WriteString(c, req+"\r\n"+req+"Connection: close\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		_ = c.Close()
		_ = srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(got), "HTTP/1.1 200 OK"); n != 2 {
			t.Fatalf("listener %v: %d answers of 200, want 2:\n%.300s", one, n, got)
		}
		if writes, want := cl.Writes(), map[bool]int{true: 2, false: 4}[one]; writes != want {
			t.Errorf("onewrite listener %v: 2 tiles in %d writes, want %d", one, writes, want)
		}
	}
}
