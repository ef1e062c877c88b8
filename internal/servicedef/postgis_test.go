package servicedef_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

const postgisGood = `connections:
  gis:
    dsn: "host=127.0.0.1 port=5432 dbname=gis user=mapfarm sslmode=disable"
    passwordEnv: MAPFARM_TEST_GIS_PASSWORD
    statementTimeout: 5s
  files:
    dsnFile: secrets/dsn
services:
  - name: parcels
    maps:
      - spatialReference: 3857
        layers:
          - name: Parcels
            geometryType: polygon
            source: {postgis: gis, table: public.parcels, geometryColumn: geom, idColumn: gid}
          - name: Big
            geometryType: polygon
            source: {postgis: files, sql: "SELECT gid, geom, area FROM parcels WHERE area > 1000", idColumn: gid}
        tables:
          - name: Owners
            source: {postgis: gis, table: owners}
`

func TestPostGISSource(t *testing.T) {
	p := writeConfig(t, postgisGood)
	cfg, err := servicedef.Load(p, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	gis := cfg.Connections["gis"]
	if gis == nil || gis.StatementTimeout != 5*time.Second || gis.PasswordEnv != "MAPFARM_TEST_GIS_PASSWORD" {
		t.Fatalf("connection gis = %+v", gis)
	}
	src, _ := cfg.Services[0].Maps[0].Layers[0].Source.(postgis.Definition)
	if src.Connection != "gis" || src.Table != "public.parcels" || src.GeometryColumn != "geom" || src.IDColumn != "gid" {
		t.Errorf("source = %+v", src)
	}
	if got := cfg.Services[0].Maps[0].Layers[1].Source.(postgis.Definition).SQL; !strings.HasPrefix(got, "SELECT gid") {
		t.Errorf("sql = %q", got)
	}

	// The secret comes from the environment or a file when the connection opens.
	if _, _, err := gis.Resolve(); err == nil || !strings.Contains(err.Error(), "MAPFARM_TEST_GIS_PASSWORD is not set") {
		t.Errorf("Resolve without the variable = %v", err)
	}
	t.Setenv("MAPFARM_TEST_GIS_PASSWORD", "s3cret")
	if dsn, pw, err := gis.Resolve(); err != nil || pw != "s3cret" || strings.Contains(dsn, "s3cret") {
		t.Errorf("Resolve = %q, %q, %v", dsn, pw, err)
	}
	files := cfg.Connections["files"]
	if !filepath.IsAbs(files.DSNFile) {
		t.Errorf("dsnFile %q not absolute", files.DSNFile)
	}
	if err := os.MkdirAll(filepath.Dir(files.DSNFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.DSNFile, []byte("postgres://u:pw@h/db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if dsn, pw, err := files.Resolve(); err != nil || dsn != "postgres://u:pw@h/db" || pw != "" {
		t.Errorf("Resolve dsnFile = %q, %q, %v", dsn, pw, err)
	}
}

func TestPostGISValidation(t *testing.T) {
	layer := func(src string) string {
		return `services:
  - name: s
    maps:
      - spatialReference: 3857
        layers:
          - name: L
            geometryType: polygon
            source: ` + src + "\n"
	}
	conns := func(c string) string { return "connections:\n  gis:\n" + c }
	const okConn = "    dsn: host=h dbname=d user=u\n"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"password in key=value dsn", conns("    dsn: host=h dbname=d user=u password=secret\n") + layer("{postgis: gis, table: t}"),
			"the dsn holds a password in clear"},
		{"password in URL", conns("    dsn: postgres://u:secret@h/d\n") + layer("{postgis: gis, table: t}"),
			"the dsn holds a password in clear"},
		{"password in URL query", conns("    dsn: postgres://u@h/d?password=secret\n") + layer("{postgis: gis, table: t}"),
			"the dsn holds a password in clear"},
		{"password key", conns(okConn+"    password: secret\n") + layer("{postgis: gis, table: t}"),
			"a password must not be written in the service definition"},
		{"two secrets", conns(okConn+"    passwordEnv: A\n    passwordFile: b\n") + layer("{postgis: gis, table: t}"),
			"set passwordEnv or passwordFile, not both"},
		{"no dsn", conns("    passwordEnv: A\n") + layer("{postgis: gis, table: t}"),
			"set exactly one of dsn, dsnEnv and dsnFile"},
		{"bad timeout", conns(okConn+"    statementTimeout: soon\n") + layer("{postgis: gis, table: t}"),
			"statementTimeout \"soon\""},
		{"unknown connection", conns(okConn) + layer("{postgis: other, table: t}"),
			`postgis connection "other" is not defined`},
		{"hostile table", conns(okConn) + layer(`{postgis: gis, table: "t; DROP TABLE x"}`),
			"want name or schema.name"},
		{"hostile column", conns(okConn) + layer(`{postgis: gis, table: t, idColumn: "gid\" OR 1=1"}`),
			"idColumn"},
		{"table and sql", conns(okConn) + layer(`{postgis: gis, table: t, sql: "SELECT 1"}`),
			"exactly one of table and sql"},
		{"two statements", conns(okConn) + layer(`{postgis: gis, sql: "SELECT 1; DROP TABLE t", idColumn: gid}`),
			"one SELECT statement"},
		{"sql without id", conns(okConn) + layer(`{postgis: gis, sql: "SELECT 1"}`),
			"needs idColumn"},
		{"postgis keys on a geopackage", layer(`{geopackage: SAMPLE/world_countries_50m_3857.gpkg, table: countries, idColumn: fid}`),
			"belong to postgis sources"},
		{"no geometry type", conns(okConn) + strings.Replace(layer("{postgis: gis, table: t}"), "            geometryType: polygon\n", "", 1),
			"needs geometryType"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := servicedef.Load(writeConfig(t, tc.body), providers.Registry())
			var ve *servicedef.ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v; want a validation error with %q", err, tc.want)
			}
			if strings.Contains(tc.body, "secret") && err != nil && strings.Contains(err.Error(), "secret") && !strings.Contains(tc.want, "secret") {
				t.Errorf("the error repeats the secret: %v", err)
			}
		})
	}
}
