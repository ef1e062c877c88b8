// Command vtpostgis measures the two ways of making a vector tile of a PostGIS table (issue 28):
// encoding in the database (PostGIS's ST_AsMVT over ST_AsMVTGeom) and encoding in the worker
// (internal/vectortile: a lean read of the tile's rows through the PostGIS provider, then
// internal/mvt). For each zoom it takes the tiles around the middle of the table's extent and
// prints, as medians over the tiles and -runs rounds after one warm-up round:
//
//   - asmvt: the ST_AsMVT query, all of it in the database;
//   - read: the worker's read alone (the provider's Scan of the tile's rows and columns: the
//     database's share of the worker path, plus the WKB decoding);
//   - worker: the whole worker path (read and encode, gzip off);
//   - the tiles' sizes, and their features;
//   - worker cpu: the CPU time (user and system) the process spent on the worker path, which a
//     busy machine moves far less than the wall times.
//
// -gzip gzips the worker's tiles as the VectorTileServer serves them; -cpuprofile writes a CPU
// profile of the whole run (go tool pprof).
//
// Then, with -clients N, the throughput of each path at the first zoom: N clients making the
// zoom's tiles around the middle over and over for -for, in tiles a second (ST_AsMVT through a
// pool of N connections).
//
// The table is bench/parcelgen's (columns gid, parcel_id, land_use, assessed_value, geom):
//
//	go run ./bench/parcelgen -n 200000 -pg "host=127.0.0.1 user=postgres dbname=vtserve_bench"
//	go run -tags proj,nomsgpack ./bench/vtpostgis -pg "host=127.0.0.1 user=postgres dbname=vtserve_bench"
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

const services = `connections:
  bench:
    dsn: %q
services:
  - name: parcels
    maps:
      - spatialReference: 3857
        layers:
          - name: Parcels
            geometryType: polygon
            source: {postgis: bench, table: %s, idColumn: gid}
            fields: [gid, parcel_id, land_use, assessed_value]
            displayField: parcel_id
            vectorTiles: {fields: [parcel_id, land_use, assessed_value]}
`

const asMVT = `WITH b AS (SELECT ST_TileEnvelope($1, $2, $3) AS e, ST_TileEnvelope($1, $2, $3, margin => 64.0 / 4096) AS m)
SELECT ST_AsMVT(q, 'Parcels', 4096, 'geom', 'gid') FROM (
  SELECT p.gid, p.parcel_id, p.land_use, p.assessed_value, ST_AsMVTGeom(p.geom, b.e, 4096, 64, true) AS geom
  FROM %s p, b WHERE p.geom && b.m) q`

func main() {
	dsn := flag.String("pg", "host=127.0.0.1 user=postgres dbname=vtserve_bench", "PostgreSQL connection string")
	table := flag.String("table", "parcels", "the parcels table")
	zooms := flag.String("z", "14,13,12", "zooms to time, comma-separated")
	tiles := flag.Int("tiles", 3, "tiles a side around the middle, per zoom")
	runs := flag.Int("runs", 5, "timed rounds")
	clients := flag.Int("clients", 0, "concurrent clients of the throughput run (0: none)")
	dur := flag.Duration("for", 10*time.Second, "length of each throughput run")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	gz := flag.Bool("gzip", false, "the worker path gzips its tiles, as the VectorTileServer does")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "vtpostgis:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "vtpostgis:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*dsn, *table, *zooms, *tiles, *runs, *clients, *dur, *gz); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "vtpostgis:", err)
		os.Exit(1)
	}
}

func run(dsn, table, zooms string, side, runs, clients int, dur time.Duration, gz bool) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "vtpostgis")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "services.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(services, dsn, table)), 0o644); err != nil {
		return err
	}
	cfg, err := servicedef.Load(path, providers.Registry())
	if err != nil {
		return err
	}
	cat, err := catalog.Open(ctx, cfg, providers.Registry())
	if err != nil {
		return err
	}
	defer cat.Close()
	b, err := vectortile.New(vectortile.Params{Services: cat, MaxZoom: 20, Options: mvt.Options{Gzip: gz}})
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	svc, _ := cat.Service("parcels")
	layer := svc.DefaultMap().Layers[0]
	info := layer.Data.Info()
	var cols []int
	for _, f := range []string{"parcel_id", "land_use", "assessed_value"} {
		cols = append(cols, info.FieldIndex(f))
	}
	mid := info.Extent.Center()
	wm := tilecache.WebMercator()
	fmt.Printf("%-4s %-6s %10s %10s %10s %10s %10s %9s %10s\n", "zoom", "tiles", "asmvt ms", "read ms", "worker ms", "asmvt B", "worker B", "features", "worker cpu")
	for _, zs := range strings.Split(zooms, ",") {
		z, err := strconv.Atoi(strings.TrimSpace(zs))
		if err != nil {
			return err
		}
		n := math.Exp2(float64(z))
		cx := int((mid[0] + 20037508.342787) / (2 * 20037508.342787) * n)
		cy := int((20037508.342787 - mid[1]) / (2 * 20037508.342787) * n)
		var asmvtMS, readMS, workerMS, cpuMS []float64
		var asmvtB, workerB, features int
		for round := range runs + 1 {
			for dy := 0; dy < side; dy++ {
				for dx := 0; dx < side; dx++ {
					x, y := cx-side/2+dx, cy-side/2+dy
					start := time.Now()
					var data []byte
					if err := conn.QueryRow(ctx, fmt.Sprintf(asMVT, table), z, x, y).Scan(&data); err != nil {
						return fmt.Errorf("ST_AsMVT %d/%d/%d: %w", z, x, y, err)
					}
					a := time.Since(start)

					tb, err := wm.TileBounds(tilecache.Tile{Level: z, Row: y, Col: x})
					if err != nil {
						return err
					}
					pad := (tb.Max[0] - tb.Min[0]) * mvt.DefaultBuffer / mvt.DefaultExtent
					q := tb
					q.Min[0], q.Min[1], q.Max[0], q.Max[1] = tb.Min[0]-pad, tb.Min[1]-pad, tb.Max[0]+pad, tb.Max[1]+pad
					start = time.Now()
					rows := 0
					if err := layer.Data.Scan(ctx, &feature.Query{Bound: &q, Columns: cols}, func(*feature.Feature) error { rows++; return nil }); err != nil {
						return err
					}
					r := time.Since(start)

					start = time.Now()
					cpu0 := cpuTime()
					res, err := b.WebMercatorTile(ctx, "parcels", "", z, x, y)
					if err != nil {
						return err
					}
					w := time.Since(start)
					c := cpuTime() - cpu0
					if round == 0 {
						continue
					}
					asmvtMS = append(asmvtMS, ms(a))
					readMS = append(readMS, ms(r))
					workerMS = append(workerMS, ms(w))
					cpuMS = append(cpuMS, ms(c))
					if round == 1 {
						asmvtB += len(data)
						workerB += res.Size
						features += res.Features
					}
				}
			}
		}
		t := side * side
		fmt.Printf("%-4d %-6d %10.1f %10.1f %10.1f %10d %10d %9d %10.1f\n", z, t, median(asmvtMS), median(readMS), median(workerMS), asmvtB/t, workerB/t, features/t, median(cpuMS))
		if clients == 0 {
			continue
		}
		pool, err := pgxpool.New(ctx, dsn+fmt.Sprintf(" pool_max_conns=%d", clients))
		if err != nil {
			return err
		}
		tileAt := func(i int) (int, int) { return cx - side/2 + i%side, cy - side/2 + (i/side)%side }
		worker := throughput(clients, dur, func(i int) error {
			x, y := tileAt(i)
			_, err := b.WebMercatorTile(ctx, "parcels", "", z, x, y)
			return err
		})
		db := throughput(clients, dur, func(i int) error {
			x, y := tileAt(i)
			var data []byte
			return pool.QueryRow(ctx, fmt.Sprintf(asMVT, table), z, x, y).Scan(&data)
		})
		pool.Close()
		fmt.Printf("z%d, %d clients, %v each: worker %.1f tiles/s, ST_AsMVT %.1f tiles/s\n", z, clients, dur, worker, db)
		clients = 0 // the first zoom only
	}
	return nil
}

// throughput runs make with n clients for d and returns the tiles made a second; each client
// counts its own tiles, i being its count (so the clients walk the tiles in turn).
func throughput(n int, d time.Duration, make func(i int) error) float64 {
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	var total atomic.Int64
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; time.Now().Before(deadline); i += n {
				if err := make(i); err != nil {
					fmt.Fprintln(os.Stderr, "vtpostgis:", err)
					return
				}
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(total.Load()) / d.Seconds()
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
