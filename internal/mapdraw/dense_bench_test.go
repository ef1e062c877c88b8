package mapdraw

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// BenchmarkDense draws bench/dense.sh's views in process — read, draw and PNG encode, as a
// worker does, without the farm around it — for profiling: bench/dense.sh leaves its services
// file and views in its cache, and
//
//	MAPFARM_BENCH_DENSE=~/.cache/mapfarm/bench/dense-parcels-1000000.env MAPFARM_BENCH_DSN=… \
//	  go test ./internal/mapdraw -run '^$' -bench Dense -benchtime 5x -cpuprofile cpu.prof
//
// draws each view of each service (dense_pg, dense_gpkg). Skipped without MAPFARM_BENCH_DENSE.
func BenchmarkDense(b *testing.B) {
	envFile := os.Getenv("MAPFARM_BENCH_DENSE")
	if envFile == "" {
		b.Skip("MAPFARM_BENCH_DENSE names bench/dense.sh's env file")
	}
	text, err := os.ReadFile(envFile)
	if err != nil {
		b.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	cfg, err := servicedef.Load(vars["services"], providers.Registry())
	if err != nil {
		b.Fatal(err)
	}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r, err := render.NewRenderer()
	if err != nil {
		b.Fatal(err)
	}
	for _, svcName := range []string{"dense_pg", "dense_gpkg"} {
		svc, ok := c.Service(svcName)
		if !ok {
			b.Fatalf("no service %s", svcName)
		}
		m, _ := svc.Map("Layers")
		for _, v := range []string{"street", "region"} {
			var box [4]float64
			for i, s := range strings.Split(vars[v], ",") {
				if box[i], err = strconv.ParseFloat(s, 64); err != nil {
					b.Fatalf("%s=%s: %v", v, vars[v], err)
				}
			}
			view := render.View{Extent: orb.Bound{Min: orb.Point{box[0], box[1]}, Max: orb.Point{box[2], box[3]}}, Width: 1024, Height: 768, DPI: 96}
			b.Run(svcName+"/"+v, func(b *testing.B) {
				benchDraw(b, r, Request{Map: m, View: view, Layers: []LayerState{{ID: 0, Visible: true}}, Format: render.PNG})
			})
		}
	}
}
