package api

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/onewrite/onewritetest"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/wmts"
)

// noisyTile is a 64×64 PNG of random pixels: 16 KB, a real map tile's size (bench/tiles.sh's
// z5 tiles are 14 KB on average), over net/http's 4 KiB connection buffer.
func noisyTile(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, color.NRGBA{uint8(rng.Uint32()), uint8(rng.Uint32()), uint8(rng.Uint32()), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTileAnswersInOneWrite: served by Server.Run, every default middleware on, each tile
// answer of the REST tile route and the cache directory route leaves in one write, header and
// tile together, on a keep-alive connection with the requests pipelined; the answers come in
// order and are byte for byte net/http's own (the same handler on a plain http.Server), with
// the tile routes' headers: ETag, Cache-Control, CORS, nosniff, and 304 and HEAD as before.
func TestTileAnswersInOneWrite(t *testing.T) {
	tile := noisyTile(t)
	store := worldTileStoreWith(t, tile)
	logger := slog.New(slog.DiscardHandler)
	ops := mapserver.New(mapserver.Params{Catalog: catalogtest.Samples(t), Logger: logger, NewID: NewID, Tiles: store})
	s := New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute,
		PublicURL: "http://farm.test", Tiles: store, Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counter := onewritetest.NewCountingListener(ln)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, counter) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Server{Handler: s.Handler()}
	go func() { _ = plain.Serve(plainLn) }()
	t.Cleanup(func() { _ = plain.Close() })

	const restPath = "/arcgis/rest/services/world/MapServer/tile/0/0/0"
	etag := wmts.TileETag(tile)
	reqs := []struct{ method, path, header string }{
		{"GET", restPath, ""},
		{"GET", CachePath + "/world/Layers/_alllayers/L00/R00000000/C00000000.png", ""},
		{"HEAD", restPath, ""},
		{"GET", restPath, "If-None-Match: " + etag + "\r\n"},
		{"GET", "/arcgis/rest/services/world/MapServer/WMTS/tile/1.0.0/world/default/default028mm/0/0/0.png", ""},
		{"GET", restPath, "Connection: close\r\n"},
	}
	var wire strings.Builder
	for i, r := range reqs {
		// A request id of the client's own, so that both servers' answers carry the same.
		wire.WriteString(r.method + " " + r.path + " HTTP/1.1\r\nHost: farm.test\r\nX-Request-Id: request-" + string(rune('a'+i)) + "\r\n" + r.header + "\r\n")
	}
	exchange := func(addr string) []byte {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, wire.String()); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got := exchange(ln.Addr().String())
	if n := counter.Writes(); n != len(reqs) {
		t.Errorf("%d answers (4 tiles, a HEAD, a 304) in %d writes, want one each", len(reqs), n)
	}
	if want := exchange(plainLn.Addr().String()); !bytes.Equal(onewritetest.WithoutDate(got), onewritetest.WithoutDate(want)) {
		t.Errorf("the answers' bytes differ from net/http's own:\n%q\nwant\n%q", clip(got), clip(want))
	}
	br := bufio.NewReader(bytes.NewReader(got))
	for i, r := range reqs {
		resp, err := http.ReadResponse(br, &http.Request{Method: r.method})
		if err != nil {
			t.Fatalf("answer %d (%s %s): %v", i, r.method, r.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		wantStatus, wantBody := http.StatusOK, tile
		switch {
		case r.method == http.MethodHead:
			wantBody = nil
		case r.header != "" && strings.HasPrefix(r.header, "If-None-Match"):
			wantStatus, wantBody = http.StatusNotModified, nil
		}
		h := resp.Header
		if resp.StatusCode != wantStatus || !bytes.Equal(body, wantBody) || h.Get("X-Request-Id") != "request-"+string(rune('a'+i)) ||
			h.Get("Etag") != etag || h.Get("Cache-Control") != "public, max-age=3600" ||
			h.Get("Access-Control-Allow-Origin") != "*" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("answer %d (%s %s): %s, %d bytes, %v", i, r.method, r.path, resp.Status, len(body), h)
		}
	}
}

func clip(b []byte) []byte { return b[:min(len(b), 600)] }
