package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/testenv/servers"
)

// Service is a server a test binary may need: see [Services].
type Service int

// The servers [Services] provides.
const (
	ServiceRedis Service = iota
	ServicePostgres
	ServiceMinIO
)

// servicesStartBound bounds the start-up of every server of one test binary together (a MinIO
// takes a few seconds, a PostgreSQL cluster's initdb a few more).
const servicesStartBound = 2 * time.Minute

// Services runs the tests of m with the servers named: for each whose variables are unset (see
// the package documentation) it finds one already running (Redis on 127.0.0.1:6379,
// PostgreSQL with postgis on 127.0.0.1:5432) or starts one of the binary's own on a free
// loopback port, sets the variables for the tests, and stops what it started once they are
// done. It is for TestMain, so that `go test ./internal/blob` needs no script:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Services(m, testenv.ServiceMinIO)) }
//
// Under scripts/test.sh every variable is set and nothing is started. A MinIO is started only
// from a binary already built (MAPFARM_TEST_MINIO_BIN, else $MAPFARM_CACHE/bin/minio, which
// scripts/install.sh builds). A server that cannot be had is reported on stderr and its
// variables stay unset: its tests skip, or fail under MAPFARM_REQUIRE_SERVICES=1.
func Services(m *testing.M, need ...Service) int {
	dir, err := os.MkdirTemp("", "mapfarm-testenv-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return m.Run()
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), servicesStartBound)
	cfg := servers.Config{Dir: dir, MinIOBinary: minioBinaryPath()}
	var started []*servers.Server
	for _, s := range need {
		var srv *servers.Server
		var err error
		switch s {
		case ServiceRedis:
			srv, err = servers.Redis(ctx, cfg)
		case ServicePostgres:
			srv, err = servers.Postgres(ctx, cfg)
		case ServiceMinIO:
			srv, err = servers.MinIO(ctx, cfg)
		default:
			err = fmt.Errorf("unknown service %d", s)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v; the tests that need it skip, or fail under %s=1\n", err, EnvRequireServices)
			continue
		}
		for k, v := range srv.Env {
			os.Setenv(k, v)
		}
		started = append(started, srv)
	}
	cancel()
	defer func() {
		for _, srv := range started {
			if err := srv.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "testenv: stop %s: %v\n", srv.Name, err)
			}
		}
	}()
	return m.Run()
}

// minioBinaryPath returns MAPFARM_TEST_MINIO_BIN, else the binary scripts/install.sh keeps in
// the cache when it is there, else "".
func minioBinaryPath() string {
	if bin := os.Getenv(EnvMinIOBinary); bin != "" {
		return bin
	}
	cache := os.Getenv("MAPFARM_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache", "mapfarm")
	}
	bin := filepath.Join(cache, "bin", "minio")
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		return ""
	}
	return bin
}
