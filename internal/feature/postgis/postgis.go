// Package postgis is the feature.Source of a PostGIS table or SQL view.
//
// A Pool is one connection of the service definition (`connections:`): a
// pgxpool whose connections run with statement_timeout, TimeZone UTC,
// client_connection_check_interval and jit = off set, and which cancel their running
// query on the server (a PostgreSQL cancel request) when the request's
// context ends. The pool connects lazily, so a farm starts while its
// database is down and recovers without a restart when it returns.
//
// Open reads a table's schema once (column types, SRID, geometry type,
// extent, average vertex count); the Source then answers each query with
// one SQL statement:
//
//   - envelopes become `geom && ST_MakeEnvelope(…)` (the GiST index) plus an
//     exact test of the double-precision box, since && compares the
//     float4-rounded boxes;
//   - spatial relations ST_Intersects, ST_Touches, ST_Overlaps, ST_Crosses,
//     ST_Within, ST_Contains, ST_Relate, with the filter geometry first (the
//     ArcObjects subject order of feature.Relation);
//   - where clauses go through where.(*Expr).SQL; when the translation is
//     exact, counts, extents, statistics and distinct values are SQL
//     aggregates and pages are LIMIT/OFFSET; otherwise the rows the looser
//     SQL selects are finished in Go (feature.Matcher, Aggregator, Page);
//   - pages are stable: ORDER BY the requested columns, then the id column.
//
// User text never becomes SQL: a query names columns by position in
// Info().Fields, a where clause binds every literal as a parameter and
// resolves every name against the schema, and the table, column and id
// names of the service definition are checked against the database's
// catalog at Open and quoted with pgx.Identifier.
package postgis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultStatementTimeout is the server-side statement_timeout of a pool
// whose configuration sets none.
const DefaultStatementTimeout = 30 * time.Second

// PoolConfig configures one connection of the service definition.
type PoolConfig struct {
	// Name names the connection in messages ("postgis connection <Name>").
	Name string
	// DSN is a libpq connection string (URL or key=value).
	DSN string
	// Password, when not empty, replaces the DSN's password.
	Password string
	// StatementTimeout is the server-side statement_timeout of every
	// statement (DefaultStatementTimeout when 0).
	StatementTimeout time.Duration
	// MaxConns bounds the pool (pgxpool's default when 0).
	MaxConns int32
}

// Pool is a pool of connections to one PostgreSQL database. It is safe
// for concurrent use.
type Pool struct {
	name    string
	pool    *pgxpool.Pool
	timeout time.Duration
}

// NewPool returns a pool for cfg. It does not connect: the first query
// (or Ping) does.
func NewPool(cfg PoolConfig) (*Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("postgis connection %s: %w", cfg.Name, err)
	}
	if cfg.Password != "" {
		pc.ConnConfig.Password = cfg.Password
	}
	timeout := cfg.StatementTimeout
	if timeout <= 0 {
		timeout = DefaultStatementTimeout
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	rp := pc.ConnConfig.RuntimeParams
	rp["statement_timeout"] = strconv.FormatInt(timeout.Milliseconds(), 10)
	rp["TimeZone"] = "UTC"
	rp["client_connection_check_interval"] = "1000"
	// A map's queries are many and short, or one long scan of simple expressions: compiling them
	// (JIT, on by default for plans costed above 100,000, such as a region view of a million rows)
	// takes longer than it saves.
	if rp["jit"] == "" {
		rp["jit"] = "off"
	}
	if rp["application_name"] == "" {
		rp["application_name"] = "mapfarm"
	}
	if pc.ConnConfig.ConnectTimeout == 0 || pc.ConnConfig.ConnectTimeout > 10*time.Second {
		pc.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	// On a cancelled context, ask the server to cancel the statement at
	// once (not only drop the socket), and give up on the socket a second
	// later.
	pc.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: time.Second}
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		return nil, fmt.Errorf("postgis connection %s: %w", cfg.Name, err)
	}
	return &Pool{name: cfg.Name, pool: pool, timeout: timeout}, nil
}

// Close closes the pool's connections.
func (p *Pool) Close() { p.pool.Close() }

// Ping checks that the database answers. Its error wraps
// feature.ErrUnavailable.
func (p *Pool) Ping(ctx context.Context) error {
	return classify("postgis connection "+p.name, p.pool.Ping(ctx), p.timeout)
}

// query runs a statement, returning its rows.
func (p *Pool) query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return p.pool.Query(ctx, sql, args...)
}
