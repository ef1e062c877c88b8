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
// Elsewhere than Linux, Low runs the function at the normal priority.
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
	done := make(chan any, 1)
	go func() {
		runtime.LockOSThread()
		// Not unlocked: the thread ends with this goroutine (package doc).
		defer func() {
			if r := recover(); r != nil {
				done <- panicked{value: r, stack: debug.Stack()}
				return
			}
			done <- nil
		}()
		lowerThread(Nice)
		fn()
	}()
	if p := <-done; p != nil {
		panic(p)
	}
}

// panicked is a panic of Low's function, raised again in the caller.
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
