// Package sqlcheck holds the where package's differential tests against real SQL
// engines: every clause of a table is matched in Go by where and run as the SQL where
// translates it to, in SQLite (modernc.org/sqlite, as the GeoPackage provider runs it) and
// in PostgreSQL (as the PostGIS provider runs it), and the two must select the same rows.
//
// The tests live apart from where's own so that where's test binary, and the instrumented
// build its fuzz target needs, do not link SQLite's 9 MB translation and the test
// environment (Redis, MinIO and PostgreSQL clients): that build cost about 130 CPU-seconds
// of a fresh machine's test run, for a parser that imports none of it.
package sqlcheck
