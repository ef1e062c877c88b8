package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// runner holds one run: its packages, its temp dir, the variables it passes to every command,
// the servers it started and the steps that failed.
type runner struct {
	out   io.Writer
	dry   bool
	start time.Time
	pkgs  []string
	full  bool // no packages named: everything, with deadcode and the fuzz smoke
	work  string
	cache string
	env   []string // KEY=VALUE added to every command's environment

	mu      sync.Mutex
	failed  []string
	stops   []func() error
	logs    []string // logs of started servers, shown when a step failed
	started []*exec.Cmd
}

func newRunner(out io.Writer, pkgs []string, dry bool) (*runner, error) {
	r := &runner{out: out, dry: dry, start: runStart(), pkgs: pkgs, cache: cacheDir()}
	if len(pkgs) == 0 {
		r.pkgs, r.full = []string{"./..."}, true
	}
	work, err := os.MkdirTemp("", "mapfarm-test.")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	r.work = work
	return r, nil
}

// cleanup stops the servers started and removes the temp dir.
func (r *runner) cleanup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.started {
		if c.Process != nil && c.ProcessState == nil {
			c.Process.Signal(syscall.SIGTERM)
		}
	}
	for i := len(r.stops) - 1; i >= 0; i-- {
		if err := r.stops[i](); err != nil {
			r.note("%v", err)
		}
	}
	os.RemoveAll(r.work)
}

func (r *runner) section(name string) {
	fmt.Fprintf(r.out, "\n==== %s (at %ds) ====\n", name, int(time.Since(r.start).Seconds()))
}

func (r *runner) note(format string, args ...any) {
	fmt.Fprintf(r.out, "  "+format+"\n", args...)
}

// setenv passes KEY=VALUE to every later command.
func (r *runner) setenv(k, v string) { r.env = append(r.env, k+"="+v) }

// command returns name args with the run's variables, its output to w. It is canceled with
// SIGTERM when ctx ends, and killed 10 s later.
func (r *runner) command(ctx context.Context, w io.Writer, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// exec runs name args with its output to w, or in a dry run prints it.
func (r *runner) exec(ctx context.Context, w io.Writer, name string, args ...string) error {
	if r.dry {
		r.note("$ %s", shellWords(name, args))
		return nil
	}
	return r.command(ctx, w, name, args...).Run()
}

// background starts name args with its output to the file at logPath, or in a dry run prints
// it; the returned function waits for it and returns its error.
func (r *runner) background(ctx context.Context, logPath, name string, args ...string) func() error {
	if r.dry {
		r.note("$ %s > %s &", shellWords(name, args), filepath.Base(logPath))
		return func() error { return nil }
	}
	f, err := os.Create(logPath)
	if err != nil {
		return func() error { return err }
	}
	cmd := r.command(ctx, f, name, args...)
	if err := cmd.Start(); err != nil {
		f.Close()
		return func() error { return err }
	}
	r.mu.Lock()
	r.started = append(r.started, cmd)
	r.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); f.Close() }()
	return sync.OnceValue(func() error { return <-done })
}

// step runs fn as the section name, noting its time and outcome; a failure is remembered for
// the summary and the run goes on. Once ctx has ended (a signal), steps are skipped.
func (r *runner) step(ctx context.Context, name string, fn func() error) {
	t0 := time.Now()
	r.section(name)
	if ctx.Err() != nil {
		r.note("skipped: %v", context.Cause(ctx))
		return
	}
	if err := fn(); err != nil {
		if !isExit(err) {
			r.note("%v", err)
		}
		r.note("%s: FAILED (%ds)", name, int(time.Since(t0).Seconds()))
		r.mu.Lock()
		r.failed = append(r.failed, name)
		r.mu.Unlock()
		return
	}
	if !r.dry {
		r.note("%s: ok (%ds)", name, int(time.Since(t0).Seconds()))
	}
}

// output runs name args and returns its standard output (even in a dry run: go list only).
func (r *runner) output(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), r.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", shellWords(name, args), err, stderr.String())
	}
	return string(out), nil
}

func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}

func shellWords(name string, args []string) string {
	words := []string{name}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$*?^|&;()<>") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}
