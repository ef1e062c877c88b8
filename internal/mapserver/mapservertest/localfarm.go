package mapservertest

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/worker"
)

// LocalFarm stands in for the farm in the test's process: it draws each export with the
// worker's own drawing (worker.DrawExportMap), so it cannot drift from what a worker stores,
// and reports a drawing error as the worker reports a bad request, as the client's.
type LocalFarm struct {
	Cat *catalog.Catalog
	R   *render.Renderer
}

// NewLocalFarm is a LocalFarm on cat with a renderer of its own.
func NewLocalFarm(t testing.TB, cat *catalog.Catalog) *LocalFarm {
	t.Helper()
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	return &LocalFarm{Cat: cat, R: r}
}

// Export draws and encodes the image job asks for.
func (l *LocalFarm) Export(ctx context.Context, job task.ExportMap) (task.Result, error) {
	data, f, err := worker.DrawExportMap(ctx, l.Cat, l.R, job)
	if err != nil {
		return task.Result{Error: err.Error(), ClientError: true}, nil
	}
	return task.Result{Key: job.Key, ContentType: f.ContentType(), Data: data, Size: len(data)}, nil
}

// Drawing returns a server on the sample catalog whose exports a LocalFarm draws, with the
// limits of New, export ids img1, img2, … and output URLs under http://farm.test/arcgis/: the
// operations under a front end's tests (REST, WMS).
func Drawing(t testing.TB) (*mapserver.Server, *catalog.Catalog) {
	t.Helper()
	c := catalogtest.Samples(t)
	ops := mapserver.New(mapserver.Params{Catalog: c, Limits: limits(), Exporter: NewLocalFarm(t, c), NewID: NewIDs(),
		OutputURL: func(key string) string { return "http://farm.test/arcgis/" + key }})
	return ops, c
}

// NewIDs returns a source of export ids img1, img2, …, safe for concurrent use.
func NewIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return "img" + strconv.Itoa(n)
	}
}
