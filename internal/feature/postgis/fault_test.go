package postgis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// slowSource returns a database and a source over the table "slow" that,
// after Open, is replaced by a view whose every scan sleeps for a minute
// (pg_sleep): a database that has become slow.
func slowSource(t *testing.T, timeout time.Duration) (string, *postgis.Source) {
	t.Helper()
	dsn := testenv.PostgresDB(t)
	testenv.LoadGeoPackage(t, dsn, testenv.SampleData(t, samples[0].file), "countries", "countries", "fid")
	testenv.PostgresExec(t, dsn, "CREATE TABLE slow AS SELECT * FROM countries WHERE fid <= 3")
	src := openSource(t, newPool(t, dsn, timeout), postgis.Table{Name: "postgis slowdb slow", Table: "slow", IDColumn: "fid"})
	testenv.PostgresExec(t, dsn, "ALTER TABLE slow RENAME TO slow_data",
		"CREATE VIEW slow AS SELECT * FROM slow_data WHERE (SELECT true FROM pg_sleep(60))")
	return dsn, src
}

// TestStatementTimeout: the server's statement_timeout ends a slow query;
// the error names the source and says it timed out.
func TestStatementTimeout(t *testing.T) {
	_, src := slowSource(t, 500*time.Millisecond)
	start := time.Now()
	_, err := src.Count(context.Background(), &feature.Query{})
	took := time.Since(start)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "postgis slowdb slow: query timed out") {
		t.Fatalf("Count = %v; want a timeout naming the source", err)
	}
	if took > 3*time.Second {
		t.Errorf("took %v with a 500ms statement_timeout", took)
	}
}

// TestDeadline: the request's deadline ends a slow query in time.
func TestDeadline(t *testing.T) {
	_, src := slowSource(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := src.Scan(ctx, &feature.Query{}, func(*feature.Feature) error { return nil })
	took := time.Since(start)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "postgis slowdb slow: query timed out") {
		t.Fatalf("Scan = %v; want a timeout naming the source", err)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("took %v with a 500ms deadline", took)
	}
}

// TestCancelStopsServerQuery: a client that goes away (its context is
// cancelled) cancels the statement on the server: pg_stat_activity shows
// it running before and gone within a second after.
func TestCancelStopsServerQuery(t *testing.T) {
	dsn, src := slowSource(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Scan(ctx, &feature.Query{}, func(*feature.Feature) error { return nil }) }()

	mon, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close(context.Background())
	running := func() int {
		var n int
		err := mon.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND query LIKE '%"slow"%' AND pid <> pg_backend_pid()`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	waitFor := func(want int, limit time.Duration) bool {
		for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if running() == want {
				return true
			}
		}
		return false
	}
	if !waitFor(1, 5*time.Second) {
		t.Fatal("the slow query never showed in pg_stat_activity")
	}
	cancel()
	cancelled := time.Now()
	if !waitFor(0, time.Second) {
		t.Fatalf("the query still runs on the server %v after the cancel", time.Since(cancelled))
	}
	t.Logf("gone from pg_stat_activity %v after the cancel", time.Since(cancelled).Round(time.Millisecond))
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Scan = %v; want context.Canceled", err)
	}
}

// TestUnavailable: nothing listens on the port: Open, Ping and queries
// fail within their deadline with ErrUnavailable naming the source.
func TestUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	pool, err := postgis.NewPool(postgis.PoolConfig{Name: "down", DSN: fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres", port)})
	if err != nil {
		t.Fatalf("NewPool must not connect: %v", err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err = postgis.Open(ctx, pool, postgis.Table{Name: "postgis down parcels", Table: "parcels"})
	if !errors.Is(err, feature.ErrUnavailable) || !strings.Contains(err.Error(), "postgis down parcels") {
		t.Errorf("Open = %v; want ErrUnavailable naming the source", err)
	}
	if err := pool.Ping(ctx); !errors.Is(err, feature.ErrUnavailable) || !strings.Contains(err.Error(), "postgis connection down") {
		t.Errorf("Ping = %v; want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("took %v with a 2s deadline", took)
	}
}

// TestRecovery: a throw-away cluster is stopped under an open source and
// started again: queries fail with ErrUnavailable while it is down and
// succeed again afterwards on the same pool, without a restart.
func TestRecovery(t *testing.T) {
	cl := testenv.StartPostgresCluster(t)
	testenv.PostgresExec(t, cl.DSN, "CREATE EXTENSION postgis",
		"CREATE TABLE parcels (gid int PRIMARY KEY, name text, geom geometry(Point, 3857))",
		"INSERT INTO parcels SELECT i, 'p' || i, ST_SetSRID(ST_MakePoint(i, i), 3857) FROM generate_series(1, 50) i")
	pool := newPool(t, cl.DSN, 0)
	src := openSource(t, pool, postgis.Table{Table: "parcels"})
	count := func() (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return src.Count(ctx, &feature.Query{Where: mustWhere(t, "gid > 10")})
	}
	if n, err := count(); err != nil || n != 40 {
		t.Fatalf("Count = %d, %v", n, err)
	}
	cl.Stop()
	start := time.Now()
	if _, err := count(); !errors.Is(err, feature.ErrUnavailable) || !strings.Contains(err.Error(), src.Info().Name) {
		t.Errorf("Count with the server down = %v; want ErrUnavailable naming %q", err, src.Info().Name)
	}
	if err := src.Ping(context.Background()); !errors.Is(err, feature.ErrUnavailable) {
		t.Errorf("Ping with the server down = %v", err)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("failing took %v", took)
	}
	cl.Start()
	// The pool drops its dead connections and dials again: the first
	// query after the restart succeeds.
	n, err := count()
	if err != nil || n != 40 {
		t.Fatalf("Count after the restart = %d, %v", n, err)
	}
	if err := src.Ping(context.Background()); err != nil {
		t.Errorf("Ping after the restart: %v", err)
	}
}
