// Package servers provides the real servers the tests use (Redis, PostgreSQL with PostGIS and
// MinIO) on loopback: the one a MAPFARM_TEST_* variable names, else one already running at
// the usual address, else one started here on a free port with its data in a directory of the
// caller's, stopped by [Server.Stop].
//
// Two callers start servers through it: the test runner (internal/testenv/cmd/testrun, behind
// scripts/test.sh), once for a whole run, and a test binary's TestMain through
// [testenv.Services], so that `go test ./internal/blob` starts what it needs by itself. It uses
// the standard library only (the Redis and MinIO probes speak the protocols directly, the
// PostgreSQL one runs psql), so the runner builds in seconds on a machine with an empty build
// cache. Nothing here installs anything: scripts/install.sh does.
package servers

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The variables that name the servers to the tests (internal/testenv reads them).
const (
	EnvRedis          = "MAPFARM_TEST_REDIS"
	EnvPostgres       = "MAPFARM_TEST_POSTGRES"
	EnvMinIOEndpoint  = "MAPFARM_TEST_MINIO_ENDPOINT"
	EnvMinIOAccessKey = "MAPFARM_TEST_MINIO_ACCESS_KEY"
	EnvMinIOSecretKey = "MAPFARM_TEST_MINIO_SECRET_KEY"
	EnvMinIOBinary    = "MAPFARM_TEST_MINIO_BIN"
)

// The addresses probed for servers already running, unless MAPFARM_REDIS_PROBE and
// MAPFARM_POSTGRES_PROBE say otherwise.
const (
	DefaultRedisProbe    = "127.0.0.1:6379"
	DefaultPostgresProbe = "host=127.0.0.1 port=5432 user=postgres dbname=postgres sslmode=disable"
)

// Config says where to look for servers and where to start them.
type Config struct {
	// Dir holds the data and logs of the servers started (a temp dir the caller removes).
	Dir string
	// RedisProbe and PostgresProbe are reused when they answer (Redis: PING; PostgreSQL: a
	// connection that offers the postgis extension). Empty: the defaults above.
	RedisProbe, PostgresProbe string
	// MinIOBinary is the server binary to start; empty: no MinIO is started.
	MinIOBinary string
	// Logf, when set, is told what was found or started.
	Logf func(format string, args ...any)
}

func (c Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Server is a server found or started: the variables that name it to the tests and, when it
// was started here, its log and how to stop it.
type Server struct {
	Name string
	Env  map[string]string
	Log  string // the log file of a started server, else empty
	stop func() error
}

// Stop stops a started server; for one found running it does nothing.
func (s *Server) Stop() error {
	if s == nil || s.stop == nil {
		return nil
	}
	return s.stop()
}

// Environ returns s.Env as KEY=VALUE strings, for os/exec.
func (s *Server) Environ() []string {
	var out []string
	for k, v := range s.Env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Redis returns the Redis named by MAPFARM_TEST_REDIS (an error if it does not answer), else
// the one answering at the probe address, else a redis-server started on a free port without
// persistence.
func Redis(ctx context.Context, cfg Config) (*Server, error) {
	if addr := os.Getenv(EnvRedis); addr != "" {
		if !RedisAnswers(addr) {
			return nil, fmt.Errorf("%s=%s does not answer PING", EnvRedis, addr)
		}
		cfg.logf("using %s=%s", EnvRedis, addr)
		return &Server{Name: "Redis", Env: map[string]string{EnvRedis: addr}}, nil
	}
	probe := firstSet(cfg.RedisProbe, os.Getenv("MAPFARM_REDIS_PROBE"), DefaultRedisProbe)
	if RedisAnswers(probe) {
		cfg.logf("using the Redis already running on %s", probe)
		return &Server{Name: "Redis", Env: map[string]string{EnvRedis: probe}}, nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("no Redis answers on %s and redis-server is not installed (scripts/install.sh): %w", probe, err)
	}
	dir := filepath.Join(cfg.Dir, "redis")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	logPath := filepath.Join(cfg.Dir, "redis.log")
	var last error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "",
			"--appendonly", "no", "--dir", dir, "--daemonize", "no", "--logfile", logPath)
		stop, err := startProcess(ctx, cmd, 10*time.Second, func() bool { return RedisAnswers(addr) })
		if err == nil {
			cfg.logf("started redis-server on %s (pid %d)", addr, cmd.Process.Pid)
			return &Server{Name: "Redis", Env: map[string]string{EnvRedis: addr}, Log: logPath, stop: stop}, nil
		}
		last = err
	}
	return nil, fmt.Errorf("could not start redis-server (log %s): %w", logPath, last)
}

// Postgres returns the PostgreSQL named by MAPFARM_TEST_POSTGRES (an error if it does not
// answer or lacks postgis), else the one at the probe DSN if it offers postgis, else a
// throw-away cluster (initdb; as the postgres user when run as root, since PostgreSQL refuses
// root) started on a free port with fsync off.
func Postgres(ctx context.Context, cfg Config) (*Server, error) {
	if dsn := os.Getenv(EnvPostgres); dsn != "" {
		if !PostgresAnswers(ctx, dsn) {
			return nil, fmt.Errorf("%s=%s does not answer or has no postgis", EnvPostgres, dsn)
		}
		cfg.logf("using %s=%s", EnvPostgres, dsn)
		return &Server{Name: "PostgreSQL", Env: map[string]string{EnvPostgres: dsn}}, nil
	}
	probe := firstSet(cfg.PostgresProbe, os.Getenv("MAPFARM_POSTGRES_PROBE"), DefaultPostgresProbe)
	if PostgresAnswers(ctx, probe) {
		cfg.logf("using the PostgreSQL already running at %s", probe)
		return &Server{Name: "PostgreSQL", Env: map[string]string{EnvPostgres: probe}}, nil
	}
	initdbs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(initdbs) == 0 {
		return nil, errors.New("no PostgreSQL with postgis answers and initdb is not installed (scripts/install.sh)")
	}
	slices.SortFunc(initdbs, func(a, b string) int { return versionOf(a) - versionOf(b) })
	bin := filepath.Dir(initdbs[len(initdbs)-1])
	dir := filepath.Join(cfg.Dir, "pg")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	var as []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("postgres: running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(cfg.Dir, 0o711); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
		as = []string{"runuser", "-u", "postgres", "--"}
	}
	run := func(name string, args ...string) ([]byte, error) {
		argv := append(append(slices.Clone(as), filepath.Join(bin, name)), args...)
		return exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	}
	data, logPath := filepath.Join(dir, "data"), filepath.Join(dir, "postgres.log")
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, lastLines(string(out), 5))
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-k %s -p %d -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", dir, port)
	if out, err := run("pg_ctl", "-D", data, "-l", logPath, "-w", "-t", "30", "start", "-o", opts); err != nil {
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("could not start PostgreSQL: %w\n%s%s", err, out, lastLines(string(log), 5))
	}
	stop := func() error {
		argv := append(append(slices.Clone(as), filepath.Join(bin, "pg_ctl")), "-D", data, "-w", "-t", "30", "stop", "-m", "immediate")
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
		}
		return nil
	}
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", port)
	if !PostgresAnswers(ctx, dsn) {
		stop()
		return nil, fmt.Errorf("the PostgreSQL started on port %d has no postgis", port)
	}
	cfg.logf("started PostgreSQL on 127.0.0.1:%d in %s", port, dir)
	return &Server{Name: "PostgreSQL", Env: map[string]string{EnvPostgres: dsn}, Log: logPath, stop: stop}, nil
}

// MinIO returns the MinIO named by MAPFARM_TEST_MINIO_ENDPOINT and its keys (an error if it is
// not live or a key is missing), else the binary cfg names started on a free port with a data
// dir of its own and fresh root credentials. Either way the binary, when known, is named too
// (MAPFARM_TEST_MINIO_BIN), for tests that run a MinIO of their own.
func MinIO(ctx context.Context, cfg Config) (*Server, error) {
	env := map[string]string{}
	if cfg.MinIOBinary != "" {
		env[EnvMinIOBinary] = cfg.MinIOBinary
	}
	if ep := os.Getenv(EnvMinIOEndpoint); ep != "" {
		if os.Getenv(EnvMinIOAccessKey) == "" || os.Getenv(EnvMinIOSecretKey) == "" {
			return nil, fmt.Errorf("%s is set but the access or secret key is not", EnvMinIOEndpoint)
		}
		if !httpOK(ep, "/minio/health/live") {
			return nil, fmt.Errorf("%s=%s is not live", EnvMinIOEndpoint, ep)
		}
		cfg.logf("using %s=%s", EnvMinIOEndpoint, ep)
		env[EnvMinIOEndpoint] = ep
		env[EnvMinIOAccessKey] = os.Getenv(EnvMinIOAccessKey)
		env[EnvMinIOSecretKey] = os.Getenv(EnvMinIOSecretKey)
		return &Server{Name: "MinIO", Env: env}, nil
	}
	if cfg.MinIOBinary == "" {
		return nil, errors.New("no MinIO binary (scripts/install.sh builds it)")
	}
	access, secret := "mapfarm-"+randomHex(4), randomHex(16)
	data, logPath := filepath.Join(cfg.Dir, "minio-data"), filepath.Join(cfg.Dir, "minio.log")
	var last error
	for range 3 {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		if err := os.RemoveAll(data); err != nil {
			return nil, fmt.Errorf("minio: %w", err)
		}
		if err := os.MkdirAll(data, 0o755); err != nil {
			return nil, fmt.Errorf("minio: %w", err)
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		cmd := exec.Command(cfg.MinIOBinary, "server", "--quiet", "--address", addr, data)
		cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+access, "MINIO_ROOT_PASSWORD="+secret,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=1")
		log, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("minio: %w", err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		stop, err := startProcess(ctx, cmd, 60*time.Second, func() bool { return httpOK(addr, "/minio/health/ready") })
		log.Close()
		if err == nil {
			cfg.logf("started MinIO on %s (pid %d, data %s)", addr, cmd.Process.Pid, data)
			env[EnvMinIOEndpoint] = addr
			env[EnvMinIOAccessKey] = access
			env[EnvMinIOSecretKey] = secret
			return &Server{Name: "MinIO", Env: env, Log: logPath, stop: stop}, nil
		}
		last = err
	}
	return nil, fmt.Errorf("could not start MinIO (log %s): %w", logPath, last)
}

// startProcess starts cmd and polls ready every 200 ms until it holds, the process exits, the
// wait runs out or ctx ends; the server is then killed. It returns the function that stops
// the server (SIGTERM, then SIGKILL after 10 s).
func startProcess(ctx context.Context, cmd *exec.Cmd, wait time.Duration, ready func() bool) (func() error, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if ready() {
			return stop, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s exited while starting: %v", filepath.Base(cmd.Path), err)
		case <-ctx.Done():
			stop()
			return nil, fmt.Errorf("%s did not answer within %v: %w", filepath.Base(cmd.Path), wait, ctx.Err())
		case <-tick.C:
		}
	}
}

// RedisAnswers reports whether a Redis at addr answers PING within 3 s.
func RedisAnswers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// PostgresAnswers reports whether the PostgreSQL at dsn answers (psql, 3 s to connect) and
// offers the postgis extension.
func PostgresAnswers(ctx context.Context, dsn string) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", "-X", "-At", "-d", dsn,
		"-c", "SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'")
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=3")
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}

// httpOK reports whether GET http://addr+path answers 200 within 3 s.
func httpOK(addr, path string) bool {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// FreePort returns a loopback port nothing listens on, chosen at random in 20000–31999, below
// Linux's ephemeral range (32768+), so that outgoing connections do not take it meanwhile.
func FreePort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("no free loopback port found in 100 tries")
}

func randomHex(n int) string {
	b := make([]byte, n)
	crand.Read(b)
	return hex.EncodeToString(b)
}

// versionOf returns the major version in a path /usr/lib/postgresql/<major>/bin/initdb.
func versionOf(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
