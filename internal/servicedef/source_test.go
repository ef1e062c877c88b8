package servicedef_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// TestSourceProvider: which provider a source mapping belongs to is decided by the key that
// names one, and each mix of providers, or no provider at all, is reported with its own
// message at the source's line and column.
func TestSourceProvider(t *testing.T) {
	const gpkg = "geopackage: SAMPLE/world_countries_50m_3857.gpkg"
	places, err := filepath.Abs(filepath.Join("..", "feature", "geojson", "testdata", "places.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src, extra, want string
	}{
		{"postgis and a file", "{postgis: gis, " + gpkg + ", table: countries}", "",
			"10:21: source: set postgis or geopackage or geojson, not several"},
		{"postgis and geojson", "{postgis: gis, geojson: x.geojson}", "",
			"10:21: source: set postgis or geopackage or geojson, not several"},
		{"geojson and a table", "{geojson: x.geojson, table: countries}", "",
			"10:21: source: set either geojson or geopackage and table, not both"},
		{"geojson and geopackage", "{geojson: x.geojson, " + gpkg + "}", "",
			"10:21: source: set either geojson or geopackage and table, not both"},
		{"postgis keys on geojson", "{geojson: x.geojson, sql: SELECT 1}", "",
			"10:21: source: sql, geometryColumn and idColumn belong to postgis sources"},
		{"no provider", "{table: countries}", "",
			`10:21: source: missing required key "geopackage" (or "geojson")`},
		{"unknown key", "{" + gpkg + ", tabel: countries}", "",
			`10:72: unknown key "tabel" in source (did you mean "table"?)`},
		{"attachments of a geojson file", "{geojson: " + places + "}", "\n            attachments: true",
			"11:26: attachments need a GeoPackage source"},
		{"attachments without their table", "{" + gpkg + ", table: countries}", "\n            attachments: true",
			`11:26: attachments: table "countries__ATTACH" not found in the GeoPackage`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `connections:
  gis: {dsn: "host=h dbname=d user=u"}
services:
  - name: s
    maps:
      - spatialReference: 3857
        layers:
          - name: L
            geometryType: point
            source: ` + tc.src + tc.extra + "\n"
			_, err := servicedef.Load(writeConfig(t, body), providers.Registry())
			var ve *servicedef.ValidationError
			if !errors.As(err, &ve) || !slices.ContainsFunc(ve.Problems, func(p servicedef.Problem) bool { return strings.HasSuffix(p.String(), tc.want) }) {
				t.Errorf("Load = %v\nwant the problem %q", err, tc.want)
			}
		})
	}
}
