package priority

import "syscall"

// lowerThread sets the calling thread's nice value. On Linux PRIO_PROCESS with a thread id
// addresses that one thread (setpriority(2), "Notes"). A failure leaves the thread as it was:
// the work still runs, at the normal priority.
func lowerThread(nice int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}

// threadNice is the calling thread's nice value, for the tests.
func threadNice() (int, error) {
	// The raw system call returns 20 - nice (getpriority(2), "C library/kernel differences").
	r, _, errno := syscall.Syscall(syscall.SYS_GETPRIORITY, syscall.PRIO_PROCESS, uintptr(syscall.Gettid()), 0)
	if errno != 0 {
		return 0, errno
	}
	return 20 - int(r), nil
}
