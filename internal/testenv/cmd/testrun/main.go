// Command testrun is the order of the test command's steps: scripts/test.sh installs what is
// missing (scripts/install.sh) and then runs it. It finds or starts the servers the tests need
// (internal/testenv/servers) once for the whole run and passes them to every test binary in
// MAPFARM_TEST_* variables, with MAPFARM_REQUIRE_SERVICES=1 so that CI cannot pass by skipping,
// then runs the checks and tests on the schedule docs/testing.md explains:
//
//	MinIO build → servers → gofmt → stale words →
//	race set ‖ plain set (e2e, providers) ─┬→ go vet → deadcode → built-in engine → fuzz smoke ─┬→ TestHostile
//	                                       └──────────── plain set goes on ─────────────────────┘
//
// Every step runs even if an earlier one failed; the summary names the failures and the exit
// status is 1 if there were any. Usage:
//
//	go run ./internal/testenv/cmd/testrun [-n] [packages]
//
// With packages, only those are tested (no deadcode, no fuzz smoke); -n prints the schedule,
// with the commands it would run, and runs nothing but go list.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	dry := flag.Bool("n", false, "print the schedule and the commands, run nothing but go list")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: testrun [-n] [packages]")
		flag.PrintDefaults()
	}
	flag.Parse()
	// A signal cancels the run: commands get SIGTERM, the steps left are skipped, the servers
	// started are stopped, and the exit status is the shell's for that signal.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var got atomic.Value
	go func() {
		s := <-sigs
		got.Store(s)
		cancel(fmt.Errorf("stopped by %v", s))
	}()
	r, err := newRunner(os.Stdout, flag.Args(), *dry)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testrun: %v\n", err)
		os.Exit(1)
	}
	code := r.run(ctx)
	r.cleanup()
	switch got.Load() {
	case os.Interrupt:
		code = 130
	case syscall.SIGTERM:
		code = 143
	}
	os.Exit(code)
}

// runStart is when the test command started: scripts/test.sh passes its start in
// MAPFARM_TEST_START (Unix seconds) so that section headers count the installs too.
func runStart() time.Time {
	if s, err := strconv.ParseInt(os.Getenv("MAPFARM_TEST_START"), 10, 64); err == nil {
		return time.Unix(s, 0)
	}
	return time.Now()
}

// cacheDir is MAPFARM_CACHE, by default ~/.cache/mapfarm.
func cacheDir() string {
	if d := os.Getenv("MAPFARM_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "mapfarm-cache")
	}
	return filepath.Join(home, ".cache", "mapfarm")
}

// tail writes the last n lines of the file at path to w, indented.
func tail(w io.Writer, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return
	}
	fmt.Fprintf(w, "  last lines of %s:\n", filepath.Base(path))
	for _, l := range lastLines(string(b), n) {
		fmt.Fprintf(w, "    %s\n", l)
	}
}
