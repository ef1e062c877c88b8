package testenv

import (
	"os/exec"
	"testing"
)

// RedisServerBinary returns the path of the redis-server binary, for tests that run servers of
// their own (a Sentinel group, a server to kill and restart), or skips t when it is not
// installed, or fails t when MAPFARM_REQUIRE_SERVICES=1 (scripts/test.sh installs it).
func RedisServerBinary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		return bin
	}
	if Required() {
		t.Fatalf("testenv: redis-server needed but not found (%v), and %s", err, requireServicesHint)
	}
	t.Skipf("testenv: redis-server needed but not found (%v); %s", err, scriptHint)
	return ""
}
