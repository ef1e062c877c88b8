package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mapfarm/mapfarm/internal/stalewords"
	"github.com/mapfarm/mapfarm/internal/testenv/servers"
)

// fuzzTargets are fuzzed in full runs with MAPFARM_FUZZ=1 (or MAPFARM_FUZZ_TIME set),
// "package:FuzzFunc:runs", each for its count of runs (about 5 s each on this project's 2-core
// machines; the rates differ 70-fold). Off by default since 2026-11-27: the instrumented builds
// of the targets and their dependencies cost about 130 CPU-seconds with an empty build cache, a
// quarter of a fresh run's budget; every target's seed corpus runs in go test anyway. Add new
// fuzz targets here. A count of runs, not a time: with -fuzztime as a duration, Go 1.26's fuzzing
// coordinator can end a run that found nothing with "context deadline exceeded" when the time
// is up while a worker is mid-input (go.dev/issue/75804, fixed in Go 1.27). A count has no
// deadline to race; -timeout still ends a hang. The readers of untrusted input (and the disk
// store's key mapping, the last guard against path traversal) run in every full run; the
// bundle index readers (their seed corpora run in go test anyway) with MAPFARM_FUZZ_ALL=1.
var fuzzTargets = []string{
	"./internal/blob:FuzzDiskKey:5000",
	"./internal/soap:FuzzReadRequest:150000",
	"./internal/where:FuzzParse:30000",
	"./internal/proj:FuzzFromWKT:50000",
	"./internal/feature/gpkg/geomblob:FuzzDecodeGeometry:300000",
	"./internal/feature/geojson:FuzzParse:110000",
}

var fuzzAllTargets = []string{
	"./internal/tilecache:FuzzBundleIndexV2:100000",
	"./internal/tilecache:FuzzBundleIndexV1:100000",
}

// plainPackages are tested without the race detector whatever their files say (split and
// concurrent decide for the others): e2e drives separate processes and real servers (the race
// detector would only slow its clients down) and the two data providers' tests are long scans
// of real databases (their concurrent use runs under the race detector in internal/mapdraw).
var plainPackages = []string{"/e2e", "/internal/feature/gpkg", "/internal/feature/postgis"}

const (
	deadcodeVersion = "v0.52.0"
	// buildTags are in every build of the run: nomsgpack leaves out gin's MessagePack binding
	// (github.com/ugorji/go/codec, about 25 CPU-s a build mode), which mapfarm does not use;
	// e2e builds its farm binaries with them and proj too (MAPFARM_TEST_BUILD_TAGS), so that
	// those builds compile nothing the test builds have not: every package above internal/proj
	// depends on the tag, and a farm built without it compiled them all again (about 39 CPU-s
	// from an empty build cache). The default build's engine is tested where it lives (the
	// built-in projection engine step), and deadcode type-checks the whole default build.
	buildTags = "nomsgpack"
)

// testBuild are the flags of every test build: test binaries are linked without DWARF (stack
// traces read the symbol table, which stays; a race-built binary links in about half the CPU),
// and go test's own vet, a subset of the go vet step's analyzers over the same packages, is
// off (about 30 CPU-s with an empty build cache).
var testBuild = []string{"-ldflags=-w", "-vet=off"}

func (r *runner) run(ctx context.Context) int {
	// scripts/test.sh has printed these two sections' headers and run the installs, unless
	// this is a dry run or the runner was started by hand.
	headers := r.dry || os.Getenv("MAPFARM_TEST_START") == ""
	if headers {
		r.section("Go")
		if err := r.exec(ctx, r.out, "go", "version"); err != nil {
			return r.die("go is not on PATH: %v", err)
		}
	}
	r.setenv("MAPFARM_TEST_BUILD_TAGS", "proj,"+buildTags)
	tags := "-tags=proj," + buildTags

	// The installs (scripts/install.sh) ran before; the MinIO build may still be going on, in
	// the background since the start, on both cores. There is no warm-up build beside it: the
	// machine's two cores are busy from the start to the end of a fresh run (docs/testing.md),
	// so compiling earlier would not end sooner. (The warm-up the runner had until 2026-11-27
	// built nothing: its shell dropped the package list. Every figure in docs/testing.md was
	// measured without it.)
	if headers {
		r.section("installs")
		r.note("$ ./scripts/install.sh minio > /dev/null &   # scripts/test.sh")
		r.note("$ ./scripts/install.sh packages              # scripts/test.sh")
	}
	t0 := time.Now()
	minioBin := "$MAPFARM_CACHE/bin/minio"
	if !r.dry {
		out, err := r.output(ctx, "./scripts/install.sh", "minio")
		if err != nil {
			return r.die("could not build MinIO (scripts/install.sh minio): %v", err)
		}
		minioBin = strings.TrimSpace(lastLine(out))
	} else {
		r.note("$ ./scripts/install.sh minio   # waits for the build the installs started")
	}
	r.note("MinIO binary ready (waited %ds after apt)", int(time.Since(t0).Seconds()))

	if code, ok := r.services(ctx, minioBin); !ok {
		return code
	}
	if code, ok := r.tools(); !ok {
		return code
	}
	r.setenv("MAPFARM_REQUIRE_SERVICES", "1")
	r.setenv("MAPFARM_TEST_NODE_MODULES", filepath.Join(r.cache, "node", "node_modules"))
	r.setenv("MAPFARM_TEST_STYLE_SPEC", filepath.Join(r.cache, "node"))

	// The steps. The tests run in two sets at once: the race set in the foreground and the
	// plain set in the background, since e2e spends much of its time waiting (leases,
	// restarts, separate processes) and the race set's tail is one long package on one core.
	// go vet, deadcode and the fuzz smoke run once the race set is done, in e2e's waits. In a
	// full run, e2e's TestHostile, which holds every hostile request to a 2 s answer, runs
	// last, on its own.
	r.step(ctx, "gofmt", func() error { return r.gofmt(ctx, tags) })
	r.step(ctx, "stale words", r.staleWords)

	race, plain, err := r.split(ctx, tags)
	if err != nil {
		return r.die("%v", err)
	}
	targets := r.fuzzTargets()
	fuzzOn := os.Getenv("MAPFARM_FUZZ") == "1" || (os.Getenv("MAPFARM_FUZZ_TIME") != "" && os.Getenv("MAPFARM_FUZZ_TIME") != "0")
	fuzzing := r.full && len(targets) > 0 && fuzzOn
	prebuild := func() error { return nil }
	hostileApart := r.full && containsSuffix(plain, "/e2e")
	goTestBase := append(append([]string{"test", tags}, testBuild...), "-count=1", "-timeout", envOr("MAPFARM_GO_TEST_TIMEOUT", "20m"))
	goTest := append(append([]string{}, goTestBase...), strings.Fields(os.Getenv("MAPFARM_GO_TEST_FLAGS"))...)
	plainDone := func() error { return nil }
	plainLog := filepath.Join(r.work, "go-test-plain.log")
	var plainEnd time.Duration
	r.step(ctx, "go test (race set)", func() error {
		if fuzzing {
			prebuild = r.fuzzPrebuild(ctx, targets)
		}
		if len(plain) > 0 {
			args := append([]string{}, goTest...)
			if hostileApart {
				args = append(args, "-skip", "^TestHostile$")
			}
			r.note("the plain set runs meanwhile (%s); its output follows when it ends", strings.Join(plain, " "))
			wait := r.background(ctx, plainLog, "go", append(args, plain...)...)
			plainDone = sync.OnceValue(func() error {
				err := wait()
				plainEnd = time.Since(r.start)
				return err
			})
			go plainDone() // notes when the plain set ended
		}
		if len(race) == 0 {
			return nil
		}
		return r.exec(ctx, r.out, "go", append(append(append([]string{}, goTest...), "-race"), race...)...)
	})
	r.step(ctx, "go vet", func() error {
		return r.exec(ctx, r.out, "go", append([]string{"vet", tags}, r.pkgs...)...)
	})
	if r.full {
		r.step(ctx, "deadcode", func() error { return r.deadcode(ctx) })
	}
	// The built-in engine (no tag): what go run . serve uses. e2e's farm binaries have the proj
	// tag of the test builds (MAPFARM_TEST_BUILD_TAGS), whose compiled packages they share.
	r.step(ctx, "built-in projection engine", func() error {
		if err := r.exec(ctx, r.out, "go", "vet", "./internal/proj"); err != nil {
			return err
		}
		return r.exec(ctx, r.out, "go", "test", "-vet=off", "-count=1", "./internal/proj")
	})
	switch {
	case !r.full:
		r.section("fuzz smoke")
		r.note("skipped: packages were named on the command line")
	case !fuzzOn:
		r.section("fuzz smoke")
		r.note("off by default: MAPFARM_FUZZ=1 ./scripts/test.sh fuzzes each target of fuzzTargets (their seed corpora ran in go test)")
	case len(targets) == 0:
		r.section("fuzz smoke")
		r.note("no fuzz targets listed (fuzzTargets in internal/testenv/cmd/testrun)")
	default:
		t0 := time.Now()
		prebuild()
		r.note("fuzz prebuild done (waited %ds)", int(time.Since(t0).Seconds()))
		r.step(ctx, "fuzz smoke", func() error { return r.fuzzSmoke(ctx, targets) })
	}
	r.step(ctx, "go test (plain set)", func() error {
		var err error
		if len(plain) > 0 {
			err = plainDone()
			if !r.dry {
				r.note("the plain set ended at %ds", int(plainEnd.Seconds()))
				if b, rerr := os.ReadFile(plainLog); rerr == nil {
					r.out.Write(b)
				}
			}
		}
		if hostileApart {
			r.note("TestHostile, on its own")
			args := append(append([]string{}, goTestBase...), "-run", "^TestHostile$", "./e2e")
			err = errors.Join(err, r.exec(ctx, r.out, "go", args...))
		}
		return err
	})

	r.section("summary")
	r.note("total %ds", int(time.Since(r.start).Seconds()))
	if len(r.failed) > 0 {
		for _, l := range r.logs {
			tail(r.out, l, 15)
		}
		r.note("FAILED: %s", strings.Join(r.failed, ", "))
		return 1
	}
	if r.dry {
		r.note("dry run: nothing was run but go list")
		return 0
	}
	r.note("all passed")
	return 0
}

// die reports a failure that ends the run before the steps (a server that cannot be had).
func (r *runner) die(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "test.sh: "+format+"\n", args...)
	return 1
}

// services finds or starts Redis, PostgreSQL with PostGIS and MinIO (internal/testenv/servers)
// and passes them on; one that cannot be had ends the run.
func (r *runner) services(ctx context.Context, minioBin string) (int, bool) {
	cfg := servers.Config{Dir: r.work, MinIOBinary: minioBin, Logf: r.note}
	for _, s := range []struct {
		section string
		start   func(context.Context, servers.Config) (*servers.Server, error)
	}{
		{"Redis", servers.Redis},
		{"PostgreSQL + PostGIS", servers.Postgres},
		{"MinIO", servers.MinIO},
	} {
		r.section(s.section)
		if r.dry {
			r.note("use the one named by its MAPFARM_TEST_* variables, else one running at the usual address, else start one")
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		srv, err := s.start(sctx, cfg)
		cancel()
		if err != nil {
			return r.die("%s: %v", s.section, err), false
		}
		r.stops = append(r.stops, srv.Stop)
		if srv.Log != "" {
			r.logs = append(r.logs, srv.Log)
		}
		r.env = append(r.env, srv.Environ()...)
	}
	return 0, true
}

// tools checks what scripts/install.sh installs: python3 with zeep, libproj's headers and the
// reference tools the tests compare against (PROJ's geod and cs2cs, GDAL's ogrinfo and
// ogr2ogr, MapProxy, docker-compose, rsvg-convert, pdftoppm, UMN MapServer's map2img).
func (r *runner) tools() (int, bool) {
	r.section("python3-zeep")
	if r.dry {
		r.note("/usr/bin/python3 must import zeep")
	} else if out, err := exec.Command("/usr/bin/python3", "-c", "import zeep; print(zeep.__version__)").Output(); err != nil {
		return r.die("/usr/bin/python3 cannot import zeep: run scripts/install.sh"), false
	} else {
		r.note("/usr/bin/python3: zeep %s", strings.TrimSpace(string(out)))
	}
	r.setenv("MAPFARM_TEST_PYTHON", "/usr/bin/python3")

	r.section("PROJ")
	if !r.dry && !fileExists("/usr/include/proj.h") {
		return r.die("/usr/include/proj.h missing (libproj-dev): run scripts/install.sh"), false
	}
	version := "(version unknown)"
	if out, err := exec.Command("pkg-config", "--modversion", "proj").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	r.note("libproj %s; go vet and go test use -tags=proj,%s", version, buildTags)

	r.section("reference tools")
	var missing []string
	for _, tool := range []string{"geod", "cs2cs", "ogrinfo", "ogr2ogr", "docker-compose", "rsvg-convert", "pdftoppm", "map2img"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import mapproxy").Run(); err != nil {
		missing = append(missing, "mapproxy (python3)")
	}
	if len(missing) > 0 && !r.dry {
		return r.die("missing %s: run scripts/install.sh", strings.Join(missing, ", ")), false
	}
	r.note("geod, ogrinfo, mapproxy, docker-compose, rsvg-convert, pdftoppm and map2img present")
	return 0, true
}

// gofmt fails on any Go file of the packages (those of other build tags too) that gofmt would
// change, with gofmt from the toolchain that runs the tests.
func (r *runner) gofmt(ctx context.Context, tags string) error {
	out, err := r.output(ctx, "go", append([]string{"list", "-e", tags, "-f",
		`{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}} {{end}}{{range .TestGoFiles}}{{$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$d}}/{{.}} {{end}}{{range .IgnoredGoFiles}}{{$d}}/{{.}} {{end}}`},
		r.pkgs...)...)
	if err != nil {
		return err
	}
	files := strings.Fields(out)
	if len(files) == 0 {
		return nil
	}
	root, err := r.output(ctx, "go", "env", "GOROOT")
	if err != nil {
		return err
	}
	gofmt := filepath.Join(strings.TrimSpace(root), "bin", "gofmt")
	if !fileExists(gofmt) {
		gofmt = "gofmt"
	}
	if r.dry {
		r.note("$ %s -l <the %d Go files of %s>", gofmt, len(files), strings.Join(r.pkgs, " "))
		return nil
	}
	bad, err := exec.CommandContext(ctx, gofmt, append([]string{"-l"}, files...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("gofmt failed:\n%s", bad)
	}
	if len(strings.TrimSpace(string(bad))) > 0 {
		r.note("not gofmt-formatted (run gofmt -w):")
		for _, l := range lastLines(string(bad), 1000) {
			r.note("  %s", l)
		}
		return errors.New("gofmt")
	}
	return nil
}

// staleWords fails on comments that name files or declarations that do not exist
// (internal/stalewords), over the whole module: about a second.
func (r *runner) staleWords() error {
	if r.dry {
		r.note("stalewords.Check over the module's comments (in this process)")
		return nil
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	found, err := stalewords.Check(root)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	r.note("comments that name what does not exist (fix the comment, or what it names):")
	for _, f := range found {
		r.note("  %s", f)
	}
	return fmt.Errorf("%d stale words", len(found))
}

// split lists the packages under test and splits them into the race set (packages whose code
// or tests run concurrently: concurrent) and the plain set (the rest, and plainPackages).
// Packages without test files go to the plain set: go test only compiles them, and a plain
// compile is one the e2e binaries need anyway.
func (r *runner) split(ctx context.Context, tags string) (race, plain []string, err error) {
	out, err := r.output(ctx, "go", append([]string{"list", tags, "-f",
		`{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}} {{join .CgoFiles " "}}|{{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}`},
		r.pkgs...)...)
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			continue
		}
		pkg, dir, code, tests := f[0], f[1], strings.Fields(f[2]), strings.Fields(f[3])
		if !isPlain(pkg) && len(tests) > 0 && concurrent(dir, append(code, tests...)) {
			race = append(race, pkg)
		} else {
			plain = append(plain, pkg)
		}
	}
	return race, plain, nil
}

func isPlain(pkg string) bool {
	for _, s := range plainPackages {
		if strings.HasSuffix(pkg, s) {
			return true
		}
	}
	return false
}

func (r *runner) fuzzTargets() []string {
	t := append([]string{}, fuzzTargets...)
	if os.Getenv("MAPFARM_FUZZ_ALL") == "1" {
		t = append(t, fuzzAllTargets...)
	}
	return append(t, strings.Fields(os.Getenv("MAPFARM_FUZZ_TARGETS"))...)
}

// fuzzPrebuild compiles each fuzz target's instrumented test binary (and runs its seed corpus
// once), at low priority, while go test runs: go test leaves a core idle at times (e2e waits
// on leases, restarts and separate processes), and the fuzz smoke then spends its time
// fuzzing, not compiling (about 120 s of a fresh machine's run). Failures show again in the
// fuzz smoke.
func (r *runner) fuzzPrebuild(ctx context.Context, targets []string) func() error {
	var script strings.Builder
	var args []string
	for _, t := range targets {
		pkg, name, _ := splitTarget(t)
		fmt.Fprintf(&script, "nice -n 15 go test %s -run '^$' -fuzz \"^${%d}\\$\" -fuzztime 1x \"${%d}\" >/dev/null 2>&1; ",
			strings.Join(testBuild, " "), len(args)+2, len(args)+1)
		args = append(args, pkg, name)
	}
	script.WriteString("true")
	return r.background(ctx, filepath.Join(r.work, "fuzz-prebuild.log"), "bash", append([]string{"-c", script.String(), "fuzz-prebuild"}, args...)...)
}

// fuzzSmoke fuzzes each target for its count of runs (or MAPFARM_FUZZ_TIME), minimizing a new
// input for at most 200 runs, under a 5-minute -timeout that ends a hang.
func (r *runner) fuzzSmoke(ctx context.Context, targets []string) error {
	var errs []error
	for _, t := range targets {
		pkg, name, runs := splitTarget(t)
		budget := os.Getenv("MAPFARM_FUZZ_TIME")
		if budget == "" {
			budget = runs + "x"
		}
		r.note("fuzz %s %s for %s", pkg, name, budget)
		args := append(append([]string{"test"}, testBuild...), "-run", "^$", "-fuzz", "^"+name+"$",
			"-fuzztime", budget, "-fuzzminimizetime", "200x", "-timeout", "5m", pkg)
		if err := r.exec(ctx, r.out, "go", args...); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", pkg, name, err))
		}
	}
	return errors.Join(errs...)
}

func splitTarget(t string) (pkg, name, runs string) {
	parts := strings.SplitN(t, ":", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	if parts[2] == "" {
		parts[2] = "100000"
	}
	return parts[0], parts[1], parts[2]
}

// deadcode fails when a function or method is reachable neither from main nor from a test
// (golang.org/x/tools/cmd/deadcode, pinned, built once into the cache): what nothing calls
// goes, rather than waiting as a stub. Whole-program, so only in full runs.
func (r *runner) deadcode(ctx context.Context) error {
	bin := filepath.Join(r.cache, "bin", "deadcode-"+deadcodeVersion)
	if r.dry {
		if !fileExists(bin) {
			r.note("$ go install golang.org/x/tools/cmd/deadcode@%s   # into %s", deadcodeVersion, bin)
		}
		r.note("$ %s -test ./...", bin)
		return nil
	}
	if !fileExists(bin) {
		// Installed beside its final place, then renamed: never a half-written binary there.
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return err
		}
		gobin, err := os.MkdirTemp(filepath.Dir(bin), ".deadcode-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(gobin)
		if err := r.exec(ctx, r.out, "env", "-u", "GOFLAGS", "GOBIN="+gobin, "go", "install",
			"golang.org/x/tools/cmd/deadcode@"+deadcodeVersion); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(gobin, "deadcode"), bin); err != nil {
			return err
		}
	}
	out, err := r.output(ctx, bin, "-test", "./...")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "" {
		r.note("unreachable functions (remove them, or call them):")
		for _, l := range lastLines(out, 1000) {
			r.note("  %s", l)
		}
		return errors.New("deadcode")
	}
	return nil
}

func containsSuffix(list []string, suffix string) bool {
	for _, s := range list {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func lastLine(s string) string {
	l := lastLines(s, 1)
	return l[len(l)-1]
}
