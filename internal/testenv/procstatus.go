package testenv

import (
	"os"
	"strconv"
	"strings"
)

// ProcStatusMB returns one of a process's memory figures from /proc/<pid>/status, in MiB:
// field names it ("VmRSS" the resident set, "VmHWM" its peak); pid 0 is this process. ok is
// false where the file or the field is not there (not Linux, or the process has gone).
func ProcStatusMB(pid int, field string) (mb float64, ok bool) {
	proc := "self"
	if pid != 0 {
		proc = strconv.Itoa(pid)
	}
	st, err := os.ReadFile("/proc/" + proc + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(st), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}
