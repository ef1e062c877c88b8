// Package priority runs work that may take a core for seconds (a 4096×4096 render, a relation
// query with a 1,000-vertex polygon) at a lower CPU priority than the process's other work, so
// that the short requests beside it keep their latency on a machine with few cores.
//
// Go schedules goroutines itself and has no priorities; the operating system schedules
// threads, and on Linux the nice value is an attribute of each thread. Low therefore runs its
// function in a goroutine of its own locked to an OS thread, raises that thread's nice value,
// and lets the goroutine end still locked, so the runtime discards the thread rather than give
// other goroutines a thread of low priority (lowering a nice value again needs privileges a
// service does not have). Work the function hands to other goroutines runs at the normal
// priority; so does the garbage collector's.
//
// Later does the same for work that turns heavy midway: its function starts at the normal
// priority on a locked thread and may lower that thread once it knows.
//
// Elsewhere than Linux, Low and Later run the function at the normal priority.
package priority

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Nice is the nice value Low gives its thread: under contention the kernel gives such a thread
// about a tenth of the CPU time of a thread at 0 (CFS weights 110 against 1024).
const Nice = 10

// Low runs fn on a thread of lower priority (Nice) and returns when fn does. A panic in fn is
// raised again in the caller's goroutine, with fn's stack in its message, so that the caller's
// recovery sees it as its own.
func Low(fn func()) {
	onThread(func() bool {
		lowerThread(Nice)
		fn()
		return true
	})
}

// Later runs fn on a thread of its own at the caller's priority, for work that may turn out
// heavy midway (a request body of unknown length): lower, called from fn's goroutine, drops that
// thread to Nice for the rest of fn; calling it again does nothing. Work fn hands to other
// goroutines keeps the normal priority. A thread that was lowered ends with fn, as in Low; one
// that was not goes back to the runtime. Panics are raised again in the caller, as in Low.
func Later(fn func(lower func())) {
	onThread(func() bool {
		lowered := false
		fn(func() {
			if !lowered {
				lowerThread(Nice)
				lowered = true
			}
		})
		return lowered
	})
}

// onThread runs fn in a goroutine locked to its thread and waits for it. When fn reports that it
// lowered the thread, the goroutine ends still locked, so the runtime discards the thread
// (package doc); otherwise it unlocks it first.
func onThread(fn func() (lowered bool)) {
	done := make(chan any, 1)
	go func() {
		runtime.LockOSThread()
		lowered := true // until fn says otherwise: a panic may come after lowering
		defer func() {
			if r := recover(); r != nil {
				done <- panicked{value: r, stack: debug.Stack()}
				return
			}
			if !lowered {
				runtime.UnlockOSThread()
			}
			done <- nil
		}()
		lowered = fn()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}

type panicked struct {
	value any
	stack []byte
}

func (p panicked) Error() string { return fmt.Sprintf("%v\n\n(in priority.Low)\n%s", p.value, p.stack) }

// Unwrap gives the original value when it was an error.
func (p panicked) Unwrap() error {
	err, _ := p.value.(error)
	return err
}
