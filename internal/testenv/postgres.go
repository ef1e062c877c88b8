package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvPostgres names the PostgreSQL the tests use: a connection string (URL
// or key=value) for a role that may create databases, to an existing
// database such as "postgres". scripts/test.sh sets it to the server on
// 127.0.0.1:5432 when that has PostGIS, or to a throw-away cluster it
// starts with initdb.
const EnvPostgres = "MAPFARM_TEST_POSTGRES"

// Postgres returns the admin connection string of the test PostgreSQL, or
// skips or fails t if there is none. Use [PostgresDB] for a database of
// the test's own.
func Postgres(t testing.TB) string {
	t.Helper()
	return lookup(t, "PostgreSQL", EnvPostgres)[0]
}

// PostgresDB creates a database mapfarm_test_<random> with the postgis
// extension on the test PostgreSQL and returns a connection string for it.
// The database is dropped (connections closed by force) when t ends.
func PostgresDB(t testing.TB) string {
	t.Helper()
	dsn, drop, err := CreatePostgresDB(Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return dsn
}

// CreatePostgresDB is PostgresDB for code without a testing.TB (a
// TestMain): it creates the database on the server admin names and
// returns its connection string and the function that drops it.
func CreatePostgresDB(admin string) (dsn string, drop func() error, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("testenv: connect to %s=%s: %w", EnvPostgres, admin, err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	name := "mapfarm_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("testenv: create database %s: %w", name, err)
	}
	drop = func() error { return dropDatabase(admin, name) }
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		drop()
		return "", nil, err
	}
	cfg.Database = name
	dsn = ConnString(cfg)
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("testenv: connect to database %s: %w", name, err)
	}
	defer db.Close(ctx)
	if _, err := db.Exec(ctx, "CREATE EXTENSION postgis"); err != nil {
		drop()
		return "", nil, fmt.Errorf("testenv: CREATE EXTENSION postgis in %s (install postgresql-15-postgis-3): %w", name, err)
	}
	return dsn, drop, nil
}

func dropDatabase(admin, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("testenv: drop database %s: %w", name, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("testenv: drop database %s: %w", name, err)
	}
	return nil
}

// ConnString writes a parsed configuration back as a key=value connection
// string libpq (and so ogr2ogr and psql) also reads.
func ConnString(cfg *pgx.ConnConfig) string {
	kv := []string{
		"host=" + quoteConnValue(cfg.Host),
		"port=" + strconv.Itoa(int(cfg.Port)),
		"dbname=" + quoteConnValue(cfg.Database),
		"user=" + quoteConnValue(cfg.User),
		"sslmode=disable",
	}
	if cfg.Password != "" {
		kv = append(kv, "password="+quoteConnValue(cfg.Password))
	}
	if cfg.TLSConfig != nil {
		kv[4] = "sslmode=require"
	}
	return strings.Join(kv, " ")
}

func quoteConnValue(s string) string {
	if s != "" && !strings.ContainsAny(s, ` '\`) {
		return s
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// SampleData returns the path of a file in the repository's data/sample
// directory (the GeoPackages the sample services use).
func SampleData(t testing.TB, name string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "data", "sample", name)
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("testenv: sample data %s: %v", name, err)
			}
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("testenv: no go.mod above %s", wd)
		}
	}
}

// LoadGeoPackage copies table layer of the GeoPackage gpkg into the
// PostGIS database dsn as table, with ogr2ogr (gdal-bin): the geometry
// column "geom" with a GiST index, the feature ids kept in the column fid
// (the primary key; name it as the GeoPackage does for parity), every
// other column under its own name (no laundering), then ANALYZE.
func LoadGeoPackage(t testing.TB, dsn, gpkg, layer, table, fid string) {
	t.Helper()
	if _, err := exec.LookPath("ogr2ogr"); err != nil {
		if Required() {
			t.Fatalf("testenv: ogr2ogr not found (apt-get install gdal-bin): %v", err)
		}
		t.Skipf("testenv: ogr2ogr not found (apt-get install gdal-bin); %s", scriptHint)
	}
	if err := CopyGeoPackage(dsn, gpkg, layer, table, fid); err != nil {
		t.Fatal(err)
	}
}

// CopyGeoPackage is LoadGeoPackage for code without a testing.TB.
func CopyGeoPackage(dsn, gpkg, layer, table, fid string) error {
	cmd := exec.Command("ogr2ogr", "-f", "PostgreSQL", "PG:"+dsn, gpkg, layer,
		"-nln", table, "-preserve_fid", "-lco", "GEOMETRY_NAME=geom", "-lco", "FID="+fid, "-lco", "LAUNDER=NO",
		"-lco", "SPATIAL_INDEX=GIST")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testenv: ogr2ogr %s %s → %s: %w\n%s", gpkg, layer, table, err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "ANALYZE "+pgx.Identifier{table}.Sanitize())
	return err
}

// PostgresCluster is a throw-away PostgreSQL cluster of one test, in a
// temporary directory on a free loopback port, for tests that stop and
// restart the server.
type PostgresCluster struct {
	t    testing.TB
	dir  string
	port int
	bin  string
	user string // runs the server when the test runs as root
	// DSN connects to its "postgres" database as the superuser postgres.
	DSN string
}

// StartPostgresCluster creates (initdb) and starts a cluster, or skips or
// fails t when PostgreSQL's server binaries are not installed. It is
// stopped and removed when t ends.
func StartPostgresCluster(t testing.TB) *PostgresCluster {
	t.Helper()
	bin := os.Getenv("MAPFARM_PG_BIN")
	if bin == "" {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		if len(matches) > 0 {
			bin = filepath.Dir(matches[len(matches)-1])
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		if Required() {
			t.Fatalf("testenv: PostgreSQL server binaries (initdb) not found: install postgresql-15-postgis-3")
		}
		t.Skipf("testenv: PostgreSQL server binaries (initdb) not found; %s", scriptHint)
	}
	dir, err := os.MkdirTemp("", "mapfarm-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &PostgresCluster{t: t, dir: dir, bin: bin, port: freePort(t)}
	if os.Geteuid() == 0 {
		c.user = "postgres" // postgres refuses to run as root
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c.pgctl("stop", "-m", "immediate") //nolint:errcheck // may be stopped already
		os.RemoveAll(dir)
	})
	if out, err := c.run(filepath.Join(bin, "initdb"), "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		t.Fatalf("testenv: initdb: %v\n%s", err, out)
	}
	c.DSN = fmt.Sprintf("host=127.0.0.1 port=%d dbname=postgres user=postgres sslmode=disable", c.port)
	c.Start()
	return c
}

func (c *PostgresCluster) data() string { return filepath.Join(c.dir, "data") }

func (c *PostgresCluster) run(name string, args ...string) ([]byte, error) {
	if c.user != "" {
		args = append([]string{"-u", c.user, "--", name}, args...)
		name = "runuser"
	}
	return exec.Command(name, args...).CombinedOutput()
}

func (c *PostgresCluster) pgctl(args ...string) error {
	args = append([]string{"-D", c.data(), "-w", "-t", "30", "-l", filepath.Join(c.dir, "log")}, args...)
	out, err := c.run(filepath.Join(c.bin, "pg_ctl"), args...)
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// Start starts the (stopped) server and waits until it accepts connections.
func (c *PostgresCluster) Start() {
	c.t.Helper()
	opts := fmt.Sprintf("-k %s -p %d -c listen_addresses=127.0.0.1 -c fsync=off", c.dir, c.port)
	if err := c.pgctl("start", "-o", opts); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("testenv: pg_ctl start: %v\n%s", err, log)
	}
}

// Stop stops the server (fast shutdown: sessions are disconnected).
func (c *PostgresCluster) Stop() {
	c.t.Helper()
	if err := c.pgctl("stop", "-m", "fast"); err != nil {
		c.t.Fatalf("testenv: pg_ctl stop: %v", err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// postgresConn connects to dsn for a helper here, failing t where it cannot; the connection and
// its context last a minute at most, or until done is called.
func postgresConn(t testing.TB, dsn string) (ctx context.Context, conn *pgx.Conn, done func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		cancel()
		t.Fatalf("testenv: connect: %v", err)
	}
	return ctx, conn, func() {
		conn.Close(ctx)
		cancel()
	}
}

// PostgresExec runs SQL statements on dsn, failing t on the first error.
func PostgresExec(t testing.TB, dsn string, stmts ...string) {
	t.Helper()
	ctx, conn, done := postgresConn(t, dsn)
	defer done()
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("testenv: %s: %v", s, fmt.Errorf("%w", err))
		}
	}
}

// PostgresCount returns the number of rows of table (schema-qualified where it is not in the
// search path) in dsn, failing t on an error.
func PostgresCount(t testing.TB, dsn, table string) int {
	t.Helper()
	ctx, conn, done := postgresConn(t, dsn)
	defer done()
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("testenv: count %s: %v", table, err)
	}
	return n
}

// PostgresTables returns every table of dsn's public schema with its row count and a digest of
// its rows: what a statement that writes would change. Compare two with
// [CheckPostgresTablesUnchanged].
func PostgresTables(t testing.TB, dsn string) map[string]string {
	t.Helper()
	ctx, conn, done := postgresConn(t, dsn)
	defer done()
	rows, err := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
	if err != nil {
		t.Fatalf("testenv: list tables: %v", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("testenv: list tables: %v", err)
	}
	state := map[string]string{}
	for _, n := range names {
		var digest string
		q := "SELECT count(*) || ' rows, md5 ' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') FROM " + pgx.Identifier{n}.Sanitize() + " t"
		if err := conn.QueryRow(ctx, q).Scan(&digest); err != nil {
			t.Fatalf("testenv: table %s: %v", n, err)
		}
		state[n] = digest
	}
	return state
}

// CheckPostgresTablesUnchanged fails t where dsn's public tables are not those of before (from
// [PostgresTables]): a table changed, dropped or added.
func CheckPostgresTablesUnchanged(t testing.TB, dsn string, before map[string]string) {
	t.Helper()
	after := PostgresTables(t, dsn)
	for name, st := range before {
		if after[name] != st {
			t.Errorf("table %s changed: %s → %q", name, st, after[name])
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("table %s was added", name)
		}
	}
}
