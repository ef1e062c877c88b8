package catalog_test

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// BenchmarkOpen loads the four sample services (8 layers and 2 tables from
// 8 GeoPackages) and reports the heap they keep.
func BenchmarkOpen(b *testing.B) {
	cfg, err := servicedef.Load(filepath.Join("..", "..", "services", "services.yaml"), providers.Registry())
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	var c *catalog.Catalog
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		if c, err = catalog.Open(context.Background(), cfg, providers.Registry()); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-retained")
	runtime.KeepAlive(c)
}
