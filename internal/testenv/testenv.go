// Package testenv tells tests where the real servers they need are running,
// starts the ones a test runs for itself, and keeps what those servers log
// ([LogBuffer]).
//
// scripts/test.sh starts (or finds) a Redis server and a MinIO server on
// loopback and passes their addresses in environment variables:
//
//	MAPFARM_TEST_REDIS              Redis address, host:port
//	MAPFARM_TEST_MINIO_ENDPOINT     MinIO endpoint, host:port (plain HTTP)
//	MAPFARM_TEST_MINIO_ACCESS_KEY   MinIO access key
//	MAPFARM_TEST_MINIO_SECRET_KEY   MinIO secret key
//	MAPFARM_TEST_PYTHON             a python3 that can import zeep
//	MAPFARM_REQUIRE_SERVICES        "1": a missing service fails the test
//
// When a variable is unset, the helper skips the test with a message that
// names scripts/test.sh, so a plain `go test ./...` still runs every test that
// needs nothing external; a package whose TestMain calls [Services] finds or
// starts the servers itself instead (package servers does the starting, for
// the test runner too). scripts/test.sh and CI set MAPFARM_REQUIRE_SERVICES=1,
// and then a missing variable fails the test instead: CI cannot pass by
// skipping.
//
// # Redis database numbers
//
// go test runs test binaries (one per package) in parallel, all against the
// same Redis server. [RedisDB] gives each test binary its own database
// number, 1 to 15, so that packages never see each other's keys:
//
//   - The preferred number is 1 + fnv32a(package directory relative to the
//     module root) mod 15, so a package usually gets the same number.
//   - The number is claimed with a lease in database 0: SET NX on the key
//     "mapfarm:testenv:db:<n>" with a 20-second expiry, renewed every 5
//     seconds while the test binary runs. If the preferred number is leased
//     by another live test binary, the next free number is taken (wrapping
//     from 15 to 1). If all 15 are taken, RedisDB waits for one, up to two
//     minutes. A binary that dies releases its number when the lease expires.
//   - The claimed database is flushed once, when it is first claimed.
//
// All tests in one package share the number and the flush happens only once,
// so tests within a package that use Redis at the same time must use distinct
// keys (or asynq queue names). Nothing may use database 0 or FLUSHALL on the
// test server.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Environment variables read by this package and set by scripts/test.sh.
const (
	EnvRedis            = "MAPFARM_TEST_REDIS"
	EnvMinIOEndpoint    = "MAPFARM_TEST_MINIO_ENDPOINT"
	EnvMinIOAccessKey   = "MAPFARM_TEST_MINIO_ACCESS_KEY"
	EnvMinIOSecretKey   = "MAPFARM_TEST_MINIO_SECRET_KEY"
	EnvPython           = "MAPFARM_TEST_PYTHON"
	EnvMinIOBinary      = "MAPFARM_TEST_MINIO_BIN"
	EnvRequireServices  = "MAPFARM_REQUIRE_SERVICES"
	scriptHint          = "run ./scripts/test.sh, which starts the services and sets it"
	requireServicesHint = EnvRequireServices + "=1, so a missing service is a failure"
)

// Required reports whether missing services fail tests rather than skip
// them (MAPFARM_REQUIRE_SERVICES=1).
func Required() bool { return os.Getenv(EnvRequireServices) == "1" }

// lookup returns the values of the named environment variables, or skips or
// fails t (see the package documentation) if any is unset.
func lookup(t testing.TB, what string, names ...string) []string {
	t.Helper()
	vals := make([]string, len(names))
	var missing []string
	for i, name := range names {
		vals[i] = os.Getenv(name)
		if vals[i] == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return vals
	}
	if Required() {
		t.Fatalf("testenv: %s needed but %v unset, and %s", what, missing, requireServicesHint)
	} else {
		t.Skipf("testenv: %s needed but %v unset; %s", what, missing, scriptHint)
	}
	return nil
}

// Redis returns the address (host:port) of the test Redis server, or skips
// or fails t if there is none. Use [RedisDB] for the database number.
func Redis(t testing.TB) string {
	t.Helper()
	return lookup(t, "Redis", EnvRedis)[0]
}

// MinIOEndpoint is where the test MinIO server listens and how to log in.
// The endpoint is host:port over plain HTTP.
type MinIOEndpoint struct {
	Endpoint  string
	AccessKey string
	SecretKey string
}

// MinIO returns the test MinIO server, or skips or fails t if there is none.
// Use [Bucket] for a bucket name of the test's own.
func MinIO(t testing.TB) MinIOEndpoint {
	t.Helper()
	v := lookup(t, "MinIO", EnvMinIOEndpoint, EnvMinIOAccessKey, EnvMinIOSecretKey)
	return MinIOEndpoint{Endpoint: v[0], AccessKey: v[1], SecretKey: v[2]}
}

// MinIOBinary returns the path of the MinIO server binary (MAPFARM_TEST_MINIO_BIN), for
// tests that run and stop a server of their own, or skips or fails t.
func MinIOBinary(t testing.TB) string {
	t.Helper()
	return lookup(t, "the MinIO server binary", EnvMinIOBinary)[0]
}

// Python returns the path of a python3 interpreter that can import zeep, or
// skips or fails t if there is none.
func Python(t testing.TB) string {
	t.Helper()
	return lookup(t, "python3 with zeep", EnvPython)[0]
}

// PythonWith is Python after a check that it imports module, which the Debian package pkg
// installs: without it t skips, or fails when the services are required (Required).
func PythonWith(t testing.TB, module, pkg string) string {
	t.Helper()
	py := Python(t)
	if err := exec.Command(py, "-c", "import "+module).Run(); err != nil {
		if Required() {
			t.Fatalf("%s cannot import %s (%s): %v", py, module, pkg, err)
		}
		t.Skipf("%s cannot import %s (%s)", py, module, pkg)
	}
	return py
}

// RunPython runs script with the interpreter py and args, and returns what it printed; a
// failure fails t with what the script wrote to its standard error.
func RunPython(t testing.TB, py, script string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(py, append([]string{"-c", script}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("python: %v\n%s", err, stderr)
	}
	return out
}
