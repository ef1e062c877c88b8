package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dryRun runs the runner with -n from the module root and returns what it printed.
func dryRun(t *testing.T, pkgs ...string) string {
	t.Chdir("../../../..")
	t.Setenv("MAPFARM_TEST_START", "")
	t.Setenv("MAPFARM_FUZZ_TIME", "")
	t.Setenv("MAPFARM_GO_TEST_FLAGS", "")
	if os.Getenv("MAPFARM_FUZZ") != "1" {
		t.Setenv("MAPFARM_FUZZ", "")
	}
	var out bytes.Buffer
	r, err := newRunner(&out, pkgs, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.cleanup()
	if code := r.run(context.Background()); code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, out.String())
	}
	return out.String()
}

var sectionRE = regexp.MustCompile(`(?m)^==== (.+) \(at \d+s\) ====$`)

func sections(out string) []string {
	var s []string
	for _, m := range sectionRE.FindAllStringSubmatch(out, -1) {
		s = append(s, m[1])
	}
	return s
}

// The schedule of a full run with the fuzz smoke (MAPFARM_FUZZ=1), as docs/testing.md
// describes it.
func TestFullRunSchedule(t *testing.T) {
	t.Setenv("MAPFARM_FUZZ", "1")
	out := dryRun(t)
	want := []string{"Go", "installs", "Redis", "PostgreSQL + PostGIS", "MinIO", "python3-zeep", "PROJ",
		"reference tools", "gofmt", "stale words", "go test (race set)", "go vet", "deadcode",
		"built-in projection engine", "fuzz smoke", "go test (plain set)", "summary"}
	if got := sections(out); !slices.Equal(got, want) {
		t.Errorf("sections:\n%q\nwant\n%q", got, want)
	}
	race := section(out, "go test (race set)")
	for _, want := range []string{
		"-skip '^TestHostile$' github.com/mapfarm/mapfarm github.com/mapfarm/mapfarm/bench/apimemory ",
		" github.com/mapfarm/mapfarm/e2e github.com/mapfarm/mapfarm/internal/admincred ",
		" github.com/mapfarm/mapfarm/internal/feature/postgis ",
		" > go-test-plain.log &",
		"-race github.com/mapfarm/mapfarm/api github.com/mapfarm/mapfarm/cachetool ",
		"-fuzz \"^${2}\\$\" -fuzztime 1x", // the fuzz prebuild, beside the tests
	} {
		if !strings.Contains(race, want) {
			t.Errorf("race set section lacks %q:\n%s", want, race)
		}
	}
	raceLine := race[strings.Index(race, "-race github.com/"):]
	if strings.Contains(raceLine, "mapfarm/e2e") || strings.Contains(raceLine, "feature/postgis") || strings.Contains(raceLine, "internal/mvt ") {
		t.Errorf("a plain package in the race set:\n%s", race)
	}
	if plain := section(out, "go test (plain set)"); !strings.Contains(plain, "-run '^TestHostile$' ./e2e") {
		t.Errorf("TestHostile does not run on its own at the end:\n%s", plain)
	}
	if fuzz := section(out, "fuzz smoke"); strings.Count(fuzz, "-fuzzminimizetime 200x -timeout 5m") != len(fuzzTargets) {
		t.Errorf("fuzz smoke does not fuzz the %d targets:\n%s", len(fuzzTargets), fuzz)
	}
}

// A full run fuzzes nothing unless asked: no instrumented prebuild beside the tests, and the
// fuzz smoke's section says how to ask.
func TestFullRunNoFuzzByDefault(t *testing.T) {
	out := dryRun(t)
	if strings.Contains(out, "-fuzz ") {
		t.Errorf("a fuzz build or run in a default full run:\n%s", out)
	}
	if fuzz := section(out, "fuzz smoke"); !strings.Contains(fuzz, "off by default: MAPFARM_FUZZ=1") {
		t.Errorf("fuzz smoke section:\n%s", fuzz)
	}
}

// A run of named packages has no deadcode and no fuzz smoke, runs TestHostile with the rest of
// e2e, and builds only those packages beforehand.
func TestPackageRunSchedule(t *testing.T) {
	out := dryRun(t, "./internal/blob/...", "./e2e")
	got := sections(out)
	if slices.Contains(got, "deadcode") {
		t.Errorf("deadcode in a package run: %q", got)
	}
	if fuzz := section(out, "fuzz smoke"); !strings.Contains(fuzz, "skipped: packages were named") {
		t.Errorf("fuzz smoke in a package run:\n%s", fuzz)
	}
	if race := section(out, "go test (race set)"); strings.Contains(race, "-skip") ||
		!strings.Contains(race, "-race github.com/mapfarm/mapfarm/internal/blob\n") {
		t.Errorf("race set of a package run:\n%s", race)
	}
	if strings.Contains(section(out, "go test (plain set)"), "TestHostile") {
		t.Errorf("TestHostile apart in a package run")
	}
}

// section returns the text of the named section of out.
func section(out, name string) string {
	i := strings.Index(out, "==== "+name+" (")
	if i < 0 {
		return ""
	}
	rest := out[i+1:]
	if j := strings.Index(rest, "\n===="); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// Which packages run under the race detector: those whose code or tests start goroutines,
// call t.Parallel or use errgroup.
func TestConcurrent(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      bool
	}{
		{"plain", "package p\nfunc F() int { return 1 }\n", false},
		{"go statement", "package p\nfunc F() { go func() {}() }\n", true},
		{"a lock, one goroutine", "package p\nimport \"sync\"\nvar _ sync.Mutex\n", false},
		{"errgroup", "package p\nimport _ \"golang.org/x/sync/errgroup\"\n", true},
		{"t.Parallel", "package p\nimport \"testing\"\nfunc TestX(t *testing.T) { t.Parallel() }\n", true},
		{"unparsable", "package p\nfunc {", true},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package p\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "b_test.go"), []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := concurrent(dir, []string{"a.go", "b_test.go"}); got != c.want {
			t.Errorf("%s: concurrent = %v, want %v", c.name, got, c.want)
		}
	}
}
