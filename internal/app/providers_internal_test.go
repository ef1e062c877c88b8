package app

import (
	"slices"
	"testing"

	"github.com/mapfarm/mapfarm/internal/provider/providertest"
)

// The registry the program serves with and the one the tests of the packages below it load
// with are the same providers in the same order, so those tests load definitions as the program
// does.
func TestProvidersMatchTheTests(t *testing.T) {
	got, want := Providers().Keys(), providertest.Registry().Keys()
	if !slices.Equal(got, want) {
		t.Errorf("app.Providers keys %v, providertest.Registry keys %v", got, want)
	}
	for _, name := range []string{"postgis", "geojson", "geopackage"} {
		if _, ok := Providers().For(name); !ok {
			t.Errorf("provider %q is not registered", name)
		}
	}
}
