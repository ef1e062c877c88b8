package servers_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/testenv/servers"
)

// These tests start real servers and so skip where the binaries are not installed
// (scripts/install.sh installs them).

func TestRedisStartsItsOwn(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	t.Setenv(servers.EnvRedis, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := servers.Redis(ctx, servers.Config{Dir: t.TempDir(), RedisProbe: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Env[servers.EnvRedis]
	if addr == "127.0.0.1:1" || !servers.RedisAnswers(addr) {
		t.Fatalf("started Redis at %q does not answer PING", addr)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if servers.RedisAnswers(addr) {
		t.Errorf("Redis at %s still answers after Stop", addr)
	}
}

func TestRedisNamedMustAnswer(t *testing.T) {
	t.Setenv(servers.EnvRedis, "127.0.0.1:1")
	if _, err := servers.Redis(context.Background(), servers.Config{Dir: t.TempDir()}); err == nil {
		t.Errorf("%s=127.0.0.1:1: no error", servers.EnvRedis)
	}
}

func TestMinIOStartsItsOwn(t *testing.T) {
	bin := os.Getenv(servers.EnvMinIOBinary)
	if bin == "" {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, ".cache", "mapfarm", "bin", "minio")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("no MinIO binary (scripts/install.sh builds it)")
	}
	t.Setenv(servers.EnvMinIOEndpoint, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := servers.MinIO(ctx, servers.Config{Dir: t.TempDir(), MinIOBinary: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ep := srv.Env[servers.EnvMinIOEndpoint]
	if ep == "" || srv.Env[servers.EnvMinIOAccessKey] == "" || srv.Env[servers.EnvMinIOSecretKey] == "" ||
		srv.Env[servers.EnvMinIOBinary] != bin {
		t.Fatalf("env of the started MinIO: %v", srv.Environ())
	}
	// The S3 API answers, and refuses an anonymous listing of the buckets. Ready by its health
	// check, MinIO may still answer 503 (its object layer initialising) for a moment on a busy
	// machine: that is waited out, for at most 10 s.
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		resp, err = http.Get("http://" + ep + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous GET / on the started MinIO: status %d, want 403", resp.StatusCode)
	}
}

func TestPostgresStartsACluster(t *testing.T) {
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
		t.Skip("initdb not installed")
	}
	if _, err := exec.LookPath("psql"); err != nil {
		t.Skip("psql not installed")
	}
	t.Setenv(servers.EnvPostgres, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Not t.TempDir: run as root, the cluster runs as the postgres user, who must reach the
	// directory through its parents.
	dir, err := os.MkdirTemp("", "servers-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := servers.Postgres(ctx, servers.Config{Dir: dir, PostgresProbe: "host=127.0.0.1 port=1 user=postgres"})
	if err != nil {
		t.Fatal(err)
	}
	dsn := srv.Env[servers.EnvPostgres]
	if !servers.PostgresAnswers(ctx, dsn) {
		t.Fatalf("started PostgreSQL at %q does not answer with postgis", dsn)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if servers.PostgresAnswers(ctx, dsn) {
		t.Errorf("PostgreSQL at %q still answers after Stop", dsn)
	}
}
