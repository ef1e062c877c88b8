// Package changes captures changes to the data behind map layers, so that tile caches can be
// brought up to date by area instead of by a full re-seed (docs/freshness.md). It turns edits
// into dirty envelopes per layer, one way per kind of provider:
//
//   - PostGIS: an opt-in changelog table filled by row triggers (InstallSQL prints them; `mapfarm
//     changes install` runs it), a statement-level NOTIFY that wakes a Consumer, and a bound on
//     the changelog's growth past which a layer is marked wholly dirty;
//   - GeoPackage: row digests (fid → hash of geometry blob and attributes) compared with those
//     kept in a state file (FileState), so a few changed rows give a few envelopes;
//   - GeoJSON: a file whose bytes changed makes its whole layer dirty.
//
// What a caller gets is [Dirty]: a layer, its envelopes in the layer's spatial reference, or
// Whole. Mapping envelopes to tiles is internal/seed's (DirtyPlan).
package changes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Schema is the PostgreSQL schema that holds the changelog, its overflow markers and its
// cursor, and the trigger functions.
const Schema = "mapfarm_changes"

// Channel is the LISTEN/NOTIFY channel the statement triggers notify (payload: the layer).
const Channel = "mapfarm_changes"

// DefaultCap is the default bound on the changelog: how many change rows may wait for a
// consumer before layers that change further are marked wholly dirty instead.
const DefaultCap = 100_000

// layerName is what a layer key may be: it is written into trigger function names and SQL
// literals, so it is kept to a plain, short alphabet.
var layerName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$`)

// Capture is what InstallSQL needs to capture one table's changes.
type Capture struct {
	// Layer is the key changes are recorded under (the layer's table key in the service
	// definition, say "parcels"): 1 to 63 characters of A–Z a–z 0–9 _ . -.
	Layer string
	// Table is "name" or "schema.name".
	Table string
	// Geometry is the table's geometry column.
	Geometry string
	// Cap bounds the changelog (DefaultCap when 0); see docs/freshness.md.
	Cap int64
}

func (c Capture) check() error {
	if !layerName.MatchString(c.Layer) {
		return fmt.Errorf("changes: layer %q: want 1 to 63 characters of A-Z a-z 0-9 _ . - (not starting with . or -)", c.Layer)
	}
	if c.Table == "" || c.Geometry == "" {
		return errors.New("changes: a table and its geometry column are needed")
	}
	if strings.Contains(c.Geometry, "$mapfarm$") {
		// The column is written into the function's body, quoted by that tag.
		return fmt.Errorf("changes: geometry column %q holds $mapfarm$", c.Geometry)
	}
	if c.Cap < 0 {
		return fmt.Errorf("changes: cap %d is negative", c.Cap)
	}
	return nil
}

// quoteIdent quotes one SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiteral quotes a SQL string literal (standard_conforming_strings on, as since 9.1).
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// quoteTable quotes "name" or "schema.name".
func quoteTable(t string) (string, error) {
	parts := strings.Split(t, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("changes: table %q: want name or schema.name", t)
	}
	for i, p := range parts {
		if p == "" {
			return "", fmt.Errorf("changes: table %q: empty name", t)
		}
		parts[i] = quoteIdent(p)
	}
	return strings.Join(parts, "."), nil
}

// schemaSQL creates the shared objects once; every statement is idempotent.
const schemaSQL = `CREATE SCHEMA IF NOT EXISTS mapfarm_changes;

-- One row per changed row: the envelopes (ST_Envelope, in the table's SRID) before and after.
CREATE TABLE IF NOT EXISTS mapfarm_changes.changelog (
  id         bigserial PRIMARY KEY,
  layer      text NOT NULL,
  op         char(1) NOT NULL CHECK (op IN ('I', 'U', 'D')),
  old_env    geometry,
  new_env    geometry,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- A layer past the cap (or truncated) is wholly dirty: one row per layer, whatever the edits.
CREATE TABLE IF NOT EXISTS mapfarm_changes.overflow (
  layer text PRIMARY KEY,
  hits  bigint NOT NULL DEFAULT 1,
  since timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The consumer's cursor: changelog ids up to low_water are consumed.
CREATE TABLE IF NOT EXISTS mapfarm_changes.cursor (
  one       boolean PRIMARY KEY DEFAULT true CHECK (one),
  low_water bigint NOT NULL DEFAULT 0,
  acked_at  timestamptz
);
INSERT INTO mapfarm_changes.cursor DEFAULT VALUES ON CONFLICT DO NOTHING;

-- Statement trigger: wake the listeners (delivered at commit, once per layer and transaction).
CREATE OR REPLACE FUNCTION mapfarm_changes.notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('mapfarm_changes', TG_ARGV[0]);
  RETURN NULL;
END $$;

-- TRUNCATE fires no row trigger: the whole layer is dirty.
CREATE OR REPLACE FUNCTION mapfarm_changes.truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO mapfarm_changes.overflow AS o (layer) VALUES (TG_ARGV[0])
    ON CONFLICT (layer) DO UPDATE SET hits = o.hits + 1;
  RETURN NULL;
END $$;
`

// functionName is the row trigger function of a layer.
func functionName(layer string) string { return Schema + "." + quoteIdent("record_"+layer) }

// InstallSQL returns the SQL that sets up change capture for one table, in one transaction:
// the shared schema (idempotent), the layer's row trigger function, and the row, statement and
// truncate triggers on the table. Running it again replaces the layer's function and triggers.
func InstallSQL(c Capture) (string, error) {
	if err := c.check(); err != nil {
		return "", err
	}
	table, err := quoteTable(c.Table)
	if err != nil {
		return "", err
	}
	capRows := c.Cap
	if capRows == 0 {
		capRows = DefaultCap
	}
	layer, geom, fn := quoteLiteral(c.Layer), quoteIdent(c.Geometry), functionName(c.Layer)
	var b strings.Builder
	fmt.Fprintf(&b, "-- mapfarm change capture: layer %s, table %s, geometry column %s, cap %d rows\nBEGIN;\n\n", c.Layer, table, geom, capRows)
	b.WriteString(schemaSQL)
	fmt.Fprintf(&b, `
-- Row trigger of layer %[1]s: past the cap, or once the layer is marked, only the marker moves.
CREATE OR REPLACE FUNCTION %[2]s() RETURNS trigger LANGUAGE plpgsql AS $mapfarm$
BEGIN
  IF EXISTS (SELECT 1 FROM mapfarm_changes.overflow WHERE layer = %[1]s)
     OR (SELECT last_value FROM mapfarm_changes.changelog_id_seq)
        - (SELECT low_water FROM mapfarm_changes.cursor) >= %[3]d THEN
    INSERT INTO mapfarm_changes.overflow AS o (layer) VALUES (%[1]s)
      ON CONFLICT (layer) DO UPDATE SET hits = o.hits + 1;
    RETURN NULL;
  END IF;
  INSERT INTO mapfarm_changes.changelog (layer, op, old_env, new_env) VALUES (%[1]s, left(TG_OP, 1),
    CASE WHEN TG_OP <> 'INSERT' THEN ST_Envelope(OLD.%[4]s) END,
    CASE WHEN TG_OP <> 'DELETE' THEN ST_Envelope(NEW.%[4]s) END);
  RETURN NULL;
END $mapfarm$;

DROP TRIGGER IF EXISTS mapfarm_changes_row ON %[5]s;
CREATE TRIGGER mapfarm_changes_row AFTER INSERT OR UPDATE OR DELETE ON %[5]s
  FOR EACH ROW EXECUTE FUNCTION %[2]s();
DROP TRIGGER IF EXISTS mapfarm_changes_notify ON %[5]s;
CREATE TRIGGER mapfarm_changes_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %[5]s
  FOR EACH STATEMENT EXECUTE FUNCTION mapfarm_changes.notify(%[1]s);
DROP TRIGGER IF EXISTS mapfarm_changes_truncate ON %[5]s;
CREATE TRIGGER mapfarm_changes_truncate AFTER TRUNCATE ON %[5]s
  FOR EACH STATEMENT EXECUTE FUNCTION mapfarm_changes.truncated(%[1]s);

COMMIT;
`, layer, fn, capRows, geom, table)
	return b.String(), nil
}

// UninstallSQL returns the SQL that removes one table's triggers and its layer's function and
// pending rows. The shared schema stays (other tables may use it); DROP SCHEMA
// mapfarm_changes CASCADE removes everything.
func UninstallSQL(c Capture) (string, error) {
	c.Geometry = "-" // not used here
	if err := c.check(); err != nil {
		return "", err
	}
	table, err := quoteTable(c.Table)
	if err != nil {
		return "", err
	}
	layer := quoteLiteral(c.Layer)
	return fmt.Sprintf(`-- mapfarm change capture removed: layer %[3]s, table %[1]s
BEGIN;
DROP TRIGGER IF EXISTS mapfarm_changes_row ON %[1]s;
DROP TRIGGER IF EXISTS mapfarm_changes_notify ON %[1]s;
DROP TRIGGER IF EXISTS mapfarm_changes_truncate ON %[1]s;
DROP FUNCTION IF EXISTS %[2]s();
DELETE FROM mapfarm_changes.changelog WHERE layer = %[4]s;
DELETE FROM mapfarm_changes.overflow WHERE layer = %[4]s;
COMMIT;
`, table, functionName(c.Layer), c.Layer, layer), nil
}

// GeometryColumn returns the geometry column of table ("name" or "schema.name") from
// PostGIS's geometry_columns: the only one, or an error naming them.
func GeometryColumn(ctx context.Context, conn *pgx.Conn, table string) (string, error) {
	schema, name, ok := strings.Cut(table, ".")
	if !ok {
		schema, name = "", table
	}
	rows, err := conn.Query(ctx, `SELECT f_geometry_column FROM geometry_columns
		WHERE f_table_name = $1 AND (f_table_schema = $2 OR ($2 = '' AND f_table_schema = ANY(current_schemas(false))))
		ORDER BY f_geometry_column`, name, schema)
	if err != nil {
		return "", fmt.Errorf("changes: geometry column of %s: %w", table, err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("changes: geometry column of %s: %w", table, err)
	}
	switch len(cols) {
	case 1:
		return cols[0], nil
	case 0:
		return "", fmt.Errorf("changes: table %s has no geometry column", table)
	}
	return "", fmt.Errorf("changes: table %s has geometry columns %s: name one", table, strings.Join(cols, ", "))
}
