// Package providertest gives tests the providers the program registers, for the packages
// that internal/app imports and whose tests therefore cannot import it.
package providertest

import (
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// Registry returns a registry of the providers app.Providers registers, in its order
// (internal/app's tests check that the two agree).
func Registry() *provider.Registry {
	return provider.NewRegistry(postgis.Provider{}, geojson.Provider{}, gpkg.Provider{})
}
