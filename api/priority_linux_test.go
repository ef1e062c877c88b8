package api

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/mapfarm/mapfarm/internal/priority"
	"github.com/mapfarm/mapfarm/internal/task"
)

// threadNice is the nice value of the thread the calling goroutine runs on: its own while the
// goroutine is locked to it, as in priority.Low and priority.Later.
func threadNice(t *testing.T) int {
	r, _, errno := syscall.Syscall(syscall.SYS_GETPRIORITY, syscall.PRIO_PROCESS, uintptr(syscall.Gettid()), 0)
	if errno != 0 {
		t.Error(errno)
	}
	return 20 - int(r)
}

// niceReader notes the nice value of the thread of its last Read.
type niceReader struct {
	t    *testing.T
	r    io.Reader
	last int
}

func (n *niceReader) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	n.last = threadNice(n.t)
	return k, err
}

// A body that makes its request heavy, declared large (Content-Length) or sent chunked and found
// large as it is read, is decoded (from the end of its first BodyBytes on) and its operation run
// on a thread at priority.Nice; a small body, chunked or not, stays at the process's priority.
func TestHeavyBodiesRunAtLowPriority(t *testing.T) {
	nice := make(chan int, 1)
	export := exporterFunc(func(ctx context.Context, job task.ExportMap) (task.Result, error) {
		nice <- threadNice(t)
		return task.Result{}, errors.New("no farm in this test")
	})
	srv := newLaneServer(t, export, HeavyLane{Slots: 1, BodyBytes: 4000})
	h := srv.Handler()

	runtime.LockOSThread()
	base := threadNice(t)
	runtime.UnlockOSThread()
	low := min(base+priority.Nice, 19)
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		want    int
	}{
		{"declared small", 0, false, base},
		{"declared large", 50_000, false, low},
		{"chunked small", 0, true, base},
		{"chunked large", 50_000, true, low},
	} {
		body := &niceReader{t: t, r: strings.NewReader(exportSized("64", tc.size)), last: -100}
		req := httptest.NewRequest("POST", "/arcgis/services/world/MapServer", body)
		req.ContentLength = -1
		if !tc.chunked {
			req.ContentLength = int64(len(exportSized("64", tc.size)))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if body.last != tc.want {
			t.Errorf("%s: the end of the body was read at nice %d, want %d", tc.name, body.last, tc.want)
		}
		select {
		case got := <-nice:
			if got != tc.want {
				t.Errorf("%s: operation ran at nice %d, want %d", tc.name, got, tc.want)
			}
		default:
			t.Fatalf("%s: the farm was never asked (answer %d %s)", tc.name, rec.Code, rec.Body)
		}
	}
}
