// Package providers is the program's table of feature-data providers: the one place that says
// which providers mapfarm links and in which order. internal/app builds the registry here and
// hands it to the service-definition loader and the catalog; tests of the packages below app,
// which cannot import app itself, load definitions with the same registry.
package providers

import (
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// Registry returns the registry of every provider, explicitly listed. The order is part of the
// definition format (see provider.Registry): a source naming both postgis and a file is
// PostGIS's to report, one naming geojson and geopackage GeoJSON's, and one naming none is
// taken for a GeoPackage.
func Registry() *provider.Registry {
	return provider.NewRegistry(postgis.Provider{}, geojson.Provider{}, gpkg.Provider{})
}
