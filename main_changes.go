package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mapfarm/mapfarm/internal/changes"
)

const changesUsage = `usage: mapfarm changes install|uninstall -table NAME [-layer KEY] [-geometry COLUMN] [-cap N] [-dsn DSN] [-apply]

Prints the SQL that sets up (install) or removes (uninstall) change capture for one PostGIS
table: a changelog in schema mapfarm_changes filled by row triggers, and a NOTIFY on channel
mapfarm_changes (docs/freshness.md). With -apply it also runs it, in one transaction, on -dsn
(a libpq connection string or URL; PGPASSWORD and the other PG* variables are read as libpq
reads them). Without -geometry the column is looked up on -dsn.`

// changesCommand is `mapfarm changes`: it prints, and with -apply runs, the change capture SQL.
func changesCommand(args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "install" && args[0] != "uninstall") {
		return errors.New(changesUsage)
	}
	verb := args[0]
	fs := flag.NewFlagSet("mapfarm changes "+verb, flag.ContinueOnError)
	table := fs.String("table", "", "table to capture: name or schema.name")
	layer := fs.String("layer", "", "key its changes are recorded under (default: the table's name)")
	geom := fs.String("geometry", "", "geometry column (default: the table's only one, looked up on -dsn)")
	capRows := fs.Int64("cap", changes.DefaultCap, "most changelog rows waiting before changed layers are marked wholly dirty")
	dsn := fs.String("dsn", "", "PostgreSQL connection string (or set PGHOST, PGDATABASE, … as for psql)")
	apply := fs.Bool("apply", false, "run the SQL after printing it")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), changesUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *table == "" {
		return errors.New("mapfarm changes: -table is needed")
	}
	if *layer == "" {
		*layer = *table
		if _, name, ok := strings.Cut(*table, "."); ok {
			*layer = name
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var conn *pgx.Conn
	connect := func() error {
		if conn != nil {
			return nil
		}
		c, err := pgx.Connect(ctx, *dsn)
		if err != nil {
			return fmt.Errorf("mapfarm changes: connect: %w", err)
		}
		conn = c
		return nil
	}
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	c := changes.Capture{Layer: *layer, Table: *table, Geometry: *geom, Cap: *capRows}
	var sql string
	var err error
	if verb == "uninstall" {
		sql, err = changes.UninstallSQL(c)
	} else {
		if c.Geometry == "" {
			if err := connect(); err != nil {
				return err
			}
			if c.Geometry, err = changes.GeometryColumn(ctx, conn, *table); err != nil {
				return err
			}
		}
		sql, err = changes.InstallSQL(c)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(out, sql)
	if !*apply {
		fmt.Fprintln(out, "-- not applied: run it with psql, or again with -apply")
		return nil
	}
	if err := connect(); err != nil {
		return err
	}
	// No arguments: pgx sends it by the simple protocol, so the script's statements run as
	// psql would run them, BEGIN to COMMIT.
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("mapfarm changes %s: %w", verb, err)
	}
	fmt.Fprintf(out, "-- applied: layer %s of table %s\n", *layer, *table)
	return nil
}
