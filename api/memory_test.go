package api

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// releaseServer is an engine with a memoryRelease whose releases are sent on the returned
// channel; its /slow route answers when block is closed.
func releaseServer(t *testing.T, quiet, waitIdle time.Duration, block chan struct{}) (*httptest.Server, *memoryRelease, chan struct{}) {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	freed := make(chan struct{}, 16)
	m := &memoryRelease{quiet: quiet, waitIdle: waitIdle, free: func() { freed <- struct{}{} }}
	e := gin.New()
	e.Use(m.track)
	e.POST("/read", func(c *gin.Context) {
		n, _ := io.Copy(io.Discard, c.Request.Body)
		c.String(http.StatusOK, "%d", n)
	})
	e.GET("/slow", func(c *gin.Context) { <-block; c.String(http.StatusOK, "ok") })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv, m, freed
}

func post(t *testing.T, url string, size int) {
	t.Helper()
	resp, err := http.Post(url+"/read", "text/xml", bytes.NewReader(make([]byte, size)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != strconv.Itoa(size) {
		t.Fatalf("the handler read %s bytes of %d", b, size)
	}
}

func TestMemoryReleaseAfterLargeBodies(t *testing.T) {
	srv, m, freed := releaseServer(t, 50*time.Millisecond, time.Second, nil)

	// Small bodies: ordinary traffic never calls for a release.
	for range 20 {
		post(t, srv.URL, 4<<10)
	}
	// A burst of large bodies: one release once it is over.
	for range 3 {
		post(t, srv.URL, 3<<20)
	}
	select {
	case <-freed:
	case <-time.After(5 * time.Second):
		t.Fatal("no release 5 s after a burst of large bodies")
	}
	// Small bodies after it: no second release.
	for range 20 {
		post(t, srv.URL, 4<<10)
	}
	select {
	case <-freed:
		t.Fatal("a second release without a large body since the first")
	case <-time.After(300 * time.Millisecond):
	}
	if n := m.releases(); n != 1 {
		t.Fatalf("%d releases, want 1", n)
	}
}

func TestMemoryReleaseWaitsForRequestsInFlight(t *testing.T) {
	block := make(chan struct{})
	srv, m, freed := releaseServer(t, 50*time.Millisecond, time.Hour, block)
	slow := make(chan error, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		slow <- err
	}()
	// Wait until the slow request is in flight.
	for deadline := time.Now().Add(5 * time.Second); ; {
		m.mu.Lock()
		n := m.inFlight
		m.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow request never arrived")
		}
		time.Sleep(5 * time.Millisecond)
	}
	post(t, srv.URL, 2<<20)
	select {
	case <-freed:
		t.Fatal("released while a request was in flight")
	case <-time.After(300 * time.Millisecond):
	}
	close(block)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	select {
	case <-freed:
	case <-time.After(5 * time.Second):
		t.Fatal("no release 5 s after the last request in flight ended")
	}
}

// BenchmarkMemoryReleaseBeside measures what the release costs the small requests beside it:
// one client sends small requests back to back while another sends a burst of three 8 MB
// bodies (each held as 64 MB of garbage by the handler, as a decode does) every 400 ms, with the
// release's quiet time shortened to 100 ms so that every burst is followed by a release. It
// reports the small requests' p50 and p99 with the release on (debug.FreeOSMemory) and off.
//
//	go test ./api -run '^$' -bench MemoryReleaseBeside -benchtime 2000x
func BenchmarkMemoryReleaseBeside(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "release=off"
		if on {
			name = "release=on"
		}
		b.Run(name, func(b *testing.B) {
			gin.SetMode(gin.ReleaseMode)
			m := &memoryRelease{quiet: 100 * time.Millisecond, waitIdle: time.Second, free: func() {}}
			if on {
				m.free = debug.FreeOSMemory
			}
			var sinkMu sync.Mutex
			var sink [][]byte // what the last large body left, until the burst is over
			e := gin.New()
			e.Use(m.track)
			e.POST("/read", func(c *gin.Context) {
				n, _ := io.Copy(io.Discard, c.Request.Body)
				var held [][]byte
				for range n >> 20 * 8 { // 8 bytes held per byte read, like a decode
					held = append(held, make([]byte, 1<<20))
				}
				sinkMu.Lock()
				sink = held // garbage once the next large body replaces it
				sinkMu.Unlock()
				_ = sink
				c.String(http.StatusOK, "%d", n)
			})
			srv := httptest.NewServer(e)
			defer srv.Close()
			client := srv.Client()
			big := make([]byte, 8<<20)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				tick := time.NewTicker(400 * time.Millisecond)
				defer tick.Stop()
				for {
					for range 3 {
						if resp, err := client.Post(srv.URL+"/read", "text/xml", bytes.NewReader(big)); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
					sinkMu.Lock()
					sink = nil
					sinkMu.Unlock()
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			small := make([]byte, 4<<10)
			ms := make([]float64, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				resp, err := client.Post(srv.URL+"/read", "text/xml", bytes.NewReader(small))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ms = append(ms, float64(time.Since(start).Microseconds())/1000)
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			close(stop)
			<-done
			sort.Float64s(ms)
			b.ReportMetric(ms[len(ms)/2], "p50-ms")
			b.ReportMetric(ms[min(len(ms)-1, len(ms)*99/100)], "p99-ms")
			b.ReportMetric(float64(m.releases()), "releases")
		})
	}
}
