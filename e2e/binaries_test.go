package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// binaries holds the commands the tests start as separate processes (mapfarm, cachetool),
// each built once per run of this package into a directory TestMain removes at the end.
// A link of the farm costs about 5 CPU-seconds; a dozen tests start it.
//
// It is package state only because TestMain is the one place a test binary can set
// something up for all its tests.
var binaries *binaryBuilds

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mapfarm-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binaries = &binaryBuilds{dir: dir, built: map[string]*binaryBuild{}}
	// The state directory of every farm the tests start, in-process or as processes: each api
	// keeps its admin credential there, where the tests and cachetool find it (adminDo).
	os.Setenv("MAPFARM_STATE_DIR", filepath.Join(dir, "state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type binaryBuilds struct {
	dir   string
	mu    sync.Mutex
	built map[string]*binaryBuild
}

type binaryBuild struct {
	once sync.Once
	path string
	err  error
}

// buildBinary returns the path of the command pkg, built on first use. The build has the
// tags in MAPFARM_TEST_BUILD_TAGS: the test command names those of its test builds (proj
// among them), so that this build compiles nothing they have not and only links. Run by hand
// without it, the binary is the default build, the farm `go run . serve` starts; the two
// differ only in their projection engine, and the samples' systems (WGS 84, Web Mercator)
// are drawn by the same code in both.
func buildBinary(tb testing.TB, pkg string) string {
	tb.Helper()
	binaries.mu.Lock()
	b := binaries.built[pkg]
	if b == nil {
		b = &binaryBuild{}
		binaries.built[pkg] = b
	}
	binaries.mu.Unlock()
	b.once.Do(func() { b.path, b.err = binaries.build(pkg) })
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

func (bs *binaryBuilds) build(pkg string) (string, error) {
	bin := filepath.Join(bs.dir, filepath.Base(pkg))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Without DWARF (-w): the link takes about half the CPU, and panics still show their stacks.
	args := []string{"build", "-ldflags=-w", "-o", bin}
	if tags := os.Getenv("MAPFARM_TEST_BUILD_TAGS"); tags != "" {
		args = append(args, "-tags", tags)
	}
	out, err := exec.CommandContext(ctx, "go", append(args, pkg)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}
