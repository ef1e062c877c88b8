package priority

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestLowRunsAtNiceAndLeavesTheCallerAlone(t *testing.T) {
	before := lockedNice(t)
	var inside int
	var insideErr error
	Low(func() { inside, insideErr = threadNice() })
	if insideErr != nil {
		t.Fatal(insideErr)
	}
	if want := min(before+Nice, 19); inside != want {
		t.Errorf("nice inside Low = %d, want %d (caller at %d)", inside, want, before)
	}
	checkNiceLeftAlone(t, "Low", before)
}

// lockedNice locks the test's goroutine to its thread for the rest of the test and returns the
// thread's nice value; it skips the test where priorities are not set.
func lockedNice(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("thread priorities are set on Linux only")
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread) // cleanups run on the test's goroutine
	n, err := threadNice()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkNiceLeftAlone fails t unless the calling thread and the threads of goroutines started
// now run at nice before: a lowered thread is never reused.
func checkNiceLeftAlone(t *testing.T, after string, before int) {
	t.Helper()
	if now, err := threadNice(); err != nil || now != before {
		t.Errorf("caller's nice after %s = %d (%v), want %d", after, now, err, before)
	}
	for range 20 {
		done := make(chan int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			n, _ := threadNice()
			done <- n
		}()
		if n := <-done; n != before {
			t.Fatalf("a goroutine after %s ran at nice %d, want %d", after, n, before)
		}
	}
}

func TestLowRaisesPanicsInTheCaller(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok {
			t.Fatalf("recovered %v (%T), want an error", r, r)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("recovered error does not wrap the panic's value: %v", err)
		}
		if !strings.Contains(err.Error(), "priority_test.go") {
			t.Errorf("recovered error lacks the function's stack: %v", err)
		}
	}()
	Low(func() { panic(io.ErrUnexpectedEOF) })
	t.Fatal("Low returned after a panic")
}

// Later starts at the caller's priority, drops to Nice when asked, once, and leaves the caller and
// later goroutines at theirs.
func TestLaterLowersWhenAsked(t *testing.T) {
	before := lockedNice(t)
	var first, lowered, again int
	Later(func(lower func()) {
		first, _ = threadNice()
		lower()
		lowered, _ = threadNice()
		lower()
		again, _ = threadNice()
	})
	want := min(before+Nice, 19)
	if first != before || lowered != want || again != want {
		t.Errorf("nice in Later: %d at first, %d after lower, %d after a second lower; want %d, %d, %d", first, lowered, again, before, want, want)
	}
	var never int
	Later(func(func()) { never, _ = threadNice() })
	if never != before {
		t.Errorf("nice in Later without lower = %d, want %d", never, before)
	}
	checkNiceLeftAlone(t, "Later", before)
}
