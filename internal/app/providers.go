package app

import (
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// Providers is the table of the feature-data providers this program links, the one registry
// the service-definition loader and the catalog read through. The order is part of the
// definition format (see provider.Registry): a source naming both postgis and a file is
// PostGIS's to report, one naming geojson and geopackage GeoJSON's, and one naming none is
// taken for a GeoPackage.
func Providers() *provider.Registry {
	return provider.NewRegistry(postgis.Provider{}, geojson.Provider{}, gpkg.Provider{})
}
