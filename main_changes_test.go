package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mapfarm/mapfarm/internal/testenv"
)

func TestChangesInstallPrintsSQLFirst(t *testing.T) {
	var out strings.Builder
	if err := changesCommand([]string{"install", "-table", "public.parcels", "-geometry", "geom", "-cap", "500"}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"CREATE TABLE IF NOT EXISTS mapfarm_changes.changelog", `ON "public"."parcels"`,
		`mapfarm_changes."record_parcels"`, ">= 500 THEN", "-- not applied"} {
		if !strings.Contains(s, want) {
			t.Errorf("printed SQL lacks %q:\n%s", want, s)
		}
	}
	if err := changesCommand([]string{"install"}, &out); err == nil {
		t.Error("install without -table accepted")
	}
}

// -apply on a real database, the geometry column looked up: an insert lands in the changelog.
func TestChangesInstallApply(t *testing.T) {
	dsn := testenv.PostgresDB(t)
	testenv.PostgresExec(t, dsn, `CREATE TABLE parcels (id int PRIMARY KEY, shape geometry(Point, 4326))`)
	var out strings.Builder
	if err := changesCommand([]string{"install", "-table", "parcels", "-dsn", dsn, "-apply"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `OLD."shape"`) || !strings.Contains(out.String(), "-- applied") {
		t.Fatalf("output:\n%s", out.String())
	}
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (1, ST_SetSRID(ST_Point(5, 6), 4326))`)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var layer string
	var srid int
	if err := conn.QueryRow(context.Background(), `SELECT layer, ST_SRID(new_env) FROM mapfarm_changes.changelog`).Scan(&layer, &srid); err != nil {
		t.Fatal(err)
	}
	if layer != "parcels" || srid != 4326 {
		t.Fatalf("changelog row: layer %q SRID %d, want parcels 4326", layer, srid)
	}
	out.Reset()
	if err := changesCommand([]string{"uninstall", "-table", "parcels", "-dsn", dsn, "-apply"}, &out); err != nil {
		t.Fatal(err)
	}
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (2, ST_SetSRID(ST_Point(5, 6), 4326))`)
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM mapfarm_changes.changelog`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d changelog rows after uninstall, want 0", n)
	}
}
