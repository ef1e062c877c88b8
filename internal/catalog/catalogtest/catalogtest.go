// Package catalogtest opens catalogs for tests: the sample services the farm ships
// (services/services.yaml at the module's root), or a service definition file of the test's own.
// The catalog is closed when the test ends.
package catalogtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// Samples opens the sample services of services/services.yaml.
func Samples(t testing.TB) *catalog.Catalog {
	t.Helper()
	return Open(t, SamplesPath(t))
}

// SamplesPath is the path of services/services.yaml, found from the test's working directory
// (go test runs a test binary in its package's directory) up to the module's root.
func SamplesPath(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "services", "services.yaml")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("catalogtest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Open loads the service definition file at path and opens its catalog.
func Open(t testing.TB, path string) *catalog.Catalog {
	t.Helper()
	cfg, err := servicedef.Load(path, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
