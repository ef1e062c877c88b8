package onewrite_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/onewrite"
	"github.com/mapfarm/mapfarm/internal/onewrite/onewritetest"
)

// tile is a body larger than net/http's 4 KiB connection buffer, which it sends in two writes.
var tile = bytes.Repeat([]byte("0123456789abcdef"), 14000/16)

// handler answers /tile/<n> with tile and its n in a header, as the tile routes do (headers, then
// the body through onewrite.Write); HEAD gets the header alone. /plain writes without Write.
func handler(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(tile)))
	h.Set("X-N", strings.TrimPrefix(r.URL.Path, "/tile/"))
	if r.URL.Path == "/plain" {
		_, _ = w.Write(tile)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	_ = onewrite.Write(w, r, tile)
}

// serve starts an http.Server on ln (wrapped in onewrite.Listener when one is set) and returns
// its address.
func serve(t *testing.T, ln net.Listener, one bool) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(handler)}
	if one {
		srv.ConnContext = onewrite.ConnContext
		ln = onewrite.Listener(ln)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// raw sends the requests on one connection, all at once (pipelined), and returns everything
// the server sent until it closed the connection (the last request says Connection: close).
func raw(t *testing.T, addr string, reqs ...string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, strings.Join(reqs, "")); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func get(path string, close bool) string {
	s := "GET " + path + " HTTP/1.1\r\nHost: x\r\n"
	if close {
		s += "Connection: close\r\n"
	}
	return s + "\r\n"
}

// TestOneWritePerAnswer: an answer written with Write leaves in one write, header and body;
// one written without it, in two (net/http's 4 KiB buffer), on the same server.
func TestOneWritePerAnswer(t *testing.T) {
	cl := onewritetest.NewCountingListener(listen(t))
	addr := serve(t, cl, true)
	const n = 5
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = get("/tile/"+strconv.Itoa(i), i == n-1)
	}
	raw(t, addr, reqs...)
	if got := cl.Writes(); got != n {
		t.Errorf("%d tiles on a keep-alive connection: %d writes, want %d (one each)", n, got, n)
	}
	before := cl.Writes()
	raw(t, addr, get("/plain", true))
	if got := cl.Writes() - before; got != 2 {
		t.Errorf("an answer written without onewrite.Write: %d writes, want net/http's 2", got)
	}
}

// TestBytesOnTheWire: what a client receives is byte for byte what net/http sends without the
// listener (the Date header aside), for GET, HEAD and pipelined requests, which are answered in
// order.
func TestBytesOnTheWire(t *testing.T) {
	with := serve(t, listen(t), true)
	without := serve(t, listen(t), false)
	for _, reqs := range [][]string{
		{get("/tile/1", true)},
		{"HEAD /tile/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"},
		{get("/tile/1", false), "HEAD /tile/2 HTTP/1.1\r\nHost: x\r\n\r\n", get("/tile/3", false), get("/plain", false), get("/tile/5", true)},
	} {
		a, b := onewritetest.WithoutDate(raw(t, with, reqs...)), onewritetest.WithoutDate(raw(t, without, reqs...))
		if !bytes.Equal(a, b) {
			t.Errorf("%q: %d bytes with the listener differ from the %d without", reqs, len(a), len(b))
		}
		// The answers come in the order of the requests, each with its whole tile.
		br := bufio.NewReader(bytes.NewReader(a))
		for i, r := range reqs {
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(r)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				t.Fatalf("%q: answer %d: %v", reqs, i, err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimPrefix(req.URL.Path, "/tile/")
			if got := resp.Header.Get("X-N"); got != want {
				t.Errorf("%q: answer %d is for %q, want %q", reqs, i, got, want)
			}
			if req.Method == http.MethodGet && !bytes.Equal(body, tile) {
				t.Errorf("%q: answer %d: a body of %d bytes, want the tile's %d", reqs, i, len(body), len(tile))
			}
		}
	}
}

// TestClientGone: a client that hangs up mid-answer makes Write fail, not hang, and the server
// goes on answering other connections.
func TestClientGone(t *testing.T) {
	big := make([]byte, 64<<20) // far more than loopback socket buffers hold (tcp_wmem and tcp_rmem at most 4 and 6 MiB by default)
	errs := make(chan error, 1)
	srv := &http.Server{ConnContext: onewrite.ConnContext, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			handler(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		errs <- onewrite.Write(w, r, big)
	})}
	ln := onewrite.Listener(listen(t))
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, get("/big", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
	select {
	case err := <-errs:
		if err == nil {
			t.Error("Write to a client gone: no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Write to a client gone did not return in 10 s")
	}
	if b := raw(t, ln.Addr().String(), get("/tile/7", true)); !bytes.Contains(b, []byte("X-N: 7")) || !bytes.HasSuffix(b, tile) {
		t.Errorf("the next client's answer: %.200q…", b)
	}
}

// TestWriteSystemCalls counts the write system calls of the process (Linux's /proc/self/io
// syscw: write and writev alike) while a keep-alive client gets tiles over TCP: one for each
// request the client sends, one for each answer. Without the listener, net/http sends each
// tile in two.
func TestWriteSystemCalls(t *testing.T) {
	if _, err := syscw(); err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	const n = 200
	measure := func(addr string) float64 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req := []byte(get("/tile/1", false))
		calls := func() int64 {
			v, err := syscw()
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		exchange := func() {
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		exchange()
		start := calls()
		for range n {
			exchange()
		}
		return float64(calls()-start) / n
	}
	with := measure(serve(t, listen(t), true))
	without := measure(serve(t, listen(t), false))
	t.Logf("write system calls per request and answer: %.2f with the listener, %.2f without", with, without)
	if with > 2.2 {
		t.Errorf("%.2f write system calls per request and answer, want 2: the request's and the answer's", with)
	}
}

// syscw reads the process's count of write system calls.
func syscw() (int64, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "syscw: "); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no syscw in /proc/self/io")
}

// BenchmarkTileOverTCP serves a 14 KB tile over loopback TCP to 8 keep-alive clients in the same
// process, with the listener and without (net/http's two writes), and reports the process's CPU
// time per tile (server and clients: getrusage), which a shared machine disturbs less than the
// time per tile. Alternate the two with -count.
//
//	go test -run '^$' -bench TileOverTCP -count 6 ./internal/onewrite/
func BenchmarkTileOverTCP(b *testing.B) {
	for _, c := range []struct {
		name string
		one  bool
	}{{"onewrite", true}, {"net-http", false}} {
		b.Run(c.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(handler)}
			if c.one {
				srv.ConnContext = onewrite.ConnContext
				ln = onewrite.Listener(ln)
			}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Close()
			const clients = 8
			conns := make([]net.Conn, clients)
			for i := range conns {
				if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
					b.Fatal(err)
				}
				defer conns[i].Close()
			}
			req := []byte(get("/tile/1", false))
			var next atomic.Int64
			cpu0 := cpuTime()
			b.ResetTimer()
			var wg sync.WaitGroup
			for _, conn := range conns {
				wg.Go(func() {
					br := bufio.NewReaderSize(conn, 32<<10)
					for next.Add(1) <= int64(b.N) {
						if _, err := conn.Write(req); err != nil {
							b.Error(err)
							return
						}
						resp, err := http.ReadResponse(br, nil)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
