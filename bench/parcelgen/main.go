// Command parcelgen writes the synthetic parcels dataset of the providers benchmark
// (bench/providers.sh): N land parcels (default 1,000,000) over a 100 km × 100 km region around
// Austin, Texas, in EPSG:3857, into a PostGIS table and a GeoPackage, the same rows in both.
//
// The region is cut into a square grid of blocks; each block holds a row of parcels whose
// outlines are jittered quadrilaterals to octagons (4–8 vertices) inside their cell, so parcels
// never overlap and density is even, as in a county's cadastre. Attributes follow what a parcel
// layer carries: a parcel number, an owner, a land-use class with realistic frequencies, a
// zoning code, an assessed value, the area, a year built (NULL for 12% — vacant land) and a
// last sale date (NULL for 20%), a county and a street address. The same seed gives the same
// rows.
//
//	go run ./bench/parcelgen -n 1000000 -gpkg /tmp/parcels.gpkg -pg "host=127.0.0.1 user=postgres dbname=mapfarm_bench"
//
// Either target may be left out. The PostGIS table (-table, default parcels) is dropped and
// written again with COPY, then given its primary key, a GiST index and ANALYZE.
//
// -squares SIZE writes the dense layout of bench/dense.sh instead: axis-aligned squares of SIZE
// metres, one per cell of a -cell metre grid (48 m squares on a 50 m grid: 1,000,000 parcels
// cover 50 km × 50 km from the same origin), with the same attributes.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// Region is the south-west corner and size of the area, in EPSG:3857 metres.
const (
	originX, originY = -10915000.0, 3480000.0
	regionSize       = 100_000.0
)

var (
	landUses = []struct {
		code   string
		weight int
	}{{"RES", 70}, {"COM", 9}, {"IND", 4}, {"AG", 8}, {"EXEMPT", 4}, {"VACANT", 5}}
	zones    = map[string][]string{"RES": {"SF-1", "SF-2", "SF-3", "MF-1", "MF-2"}, "COM": {"CS", "GR", "LR"}, "IND": {"LI", "MI"}, "AG": {"AG", "RR"}, "EXEMPT": {"P", "PUD"}, "VACANT": {"SF-2", "DR"}}
	surnames = []string{"Garcia", "Smith", "Johnson", "Martinez", "Brown", "Lopez", "Davis", "Miller", "Wilson", "Nguyen", "Anderson", "Thomas", "Hernandez", "Moore", "Taylor", "Clark", "Lewis", "Walker", "Young", "King"}
	given    = []string{"Maria", "James", "Robert", "Linda", "Michael", "Patricia", "David", "Jennifer", "John", "Elizabeth", "Carlos", "Ana", "Wei", "Sarah", "Daniel"}
	streets  = []string{"Oak", "Cedar", "Pecan", "Lamar", "Guadalupe", "Congress", "Riverside", "Barton", "Manor", "Cameron", "Burnet", "Slaughter", "William Cannon", "Parmer", "Howard"}
	suffixes = []string{"St", "Ave", "Dr", "Ln", "Blvd", "Rd", "Trl"}
	counties = []string{"Travis", "Williamson", "Hays", "Bastrop"}
)

// Fields are the parcel table's columns after the id and geometry, in order.
var fields = []feature.Field{
	{Name: "gid", Type: feature.FieldOID},
	{Name: "parcel_id", Type: feature.FieldString, Length: 16},
	{Name: "owner", Type: feature.FieldString, Length: 64},
	{Name: "land_use", Type: feature.FieldString, Length: 8},
	{Name: "zoning", Type: feature.FieldString, Length: 8},
	{Name: "assessed_value", Type: feature.FieldDouble},
	{Name: "area_m2", Type: feature.FieldDouble},
	{Name: "year_built", Type: feature.FieldInteger},
	{Name: "last_sale", Type: feature.FieldDate},
	{Name: "county", Type: feature.FieldString, Length: 16},
	{Name: "address", Type: feature.FieldString, Length: 64},
}

// parcel is one generated row.
type parcel struct {
	values []any // aligned with fields
	geom   orb.Polygon
}

// generator yields the parcels of a grid of side×side cells in row order.
type generator struct {
	rng  *rand.Rand
	side int
	cell float64
	// square, when > 0, makes every parcel an axis-aligned square of that size centred in
	// its cell.
	square float64
}

func (g *generator) parcel(i int) parcel {
	row, col := i/g.side, i%g.side
	x0, y0 := originX+float64(col)*g.cell, originY+float64(row)*g.cell
	cx, cy := x0+g.cell/2, y0+g.cell/2
	var ring orb.Ring
	if h := g.square / 2; h > 0 {
		ring = orb.Ring{{cx - h, cy - h}, {cx + h, cy - h}, {cx + h, cy + h}, {cx - h, cy + h}, {cx - h, cy - h}}
	} else {
		n := 4 + g.rng.IntN(5)
		ring = make(orb.Ring, 0, n+1)
		for k := range n {
			a := 2*math.Pi*float64(k)/float64(n) + math.Pi/float64(n)
			r := g.cell * (0.36 + 0.1*g.rng.Float64())
			ring = append(ring, orb.Point{cx + r*math.Cos(a), cy + r*math.Sin(a)})
		}
		ring = append(ring, ring[0])
	}
	poly := orb.Polygon{ring}
	area := math.Abs(ringArea(ring))
	w := g.rng.IntN(100)
	use := landUses[0].code
	for _, u := range landUses {
		if w < u.weight {
			use = u.code
			break
		}
		w -= u.weight
	}
	var year, sale any
	if use != "VACANT" && g.rng.IntN(100) >= 5 {
		year = int64(1900 + g.rng.IntN(125))
	}
	if g.rng.IntN(5) > 0 {
		sale = time.Date(1985+g.rng.IntN(40), time.Month(1+g.rng.IntN(12)), 1+g.rng.IntN(28), 0, 0, 0, 0, time.UTC)
	}
	value := math.Round(area*(40+g.rng.Float64()*400)) + float64(g.rng.IntN(50000))
	z := zones[use]
	return parcel{
		geom: poly,
		values: []any{
			int64(i + 1),
			fmt.Sprintf("%02d-%04d-%05d", row%97, col, i%100000),
			given[g.rng.IntN(len(given))] + " " + surnames[g.rng.IntN(len(surnames))],
			use, z[g.rng.IntN(len(z))], value, math.Round(area*10) / 10, year, sale,
			counties[(row*4/g.side+col*2/g.side)%len(counties)],
			fmt.Sprintf("%d %s %s", 100+g.rng.IntN(9800), streets[g.rng.IntN(len(streets))], suffixes[g.rng.IntN(len(suffixes))]),
		},
	}
}

func ringArea(r orb.Ring) float64 {
	a := 0.0
	for i := 0; i+1 < len(r); i++ {
		a += r[i][0]*r[i+1][1] - r[i+1][0]*r[i][1]
	}
	return a / 2
}

func main() {
	n := flag.Int("n", 1_000_000, "number of parcels")
	gpkgPath := flag.String("gpkg", "", "GeoPackage to write (must not exist)")
	pgDSN := flag.String("pg", "", "PostGIS database to write the table into (libpq connection string)")
	table := flag.String("table", "parcels", "table name")
	seed := flag.Uint64("seed", 1, "random seed")
	square := flag.Float64("squares", 0, "dense layout: axis-aligned squares of this size in metres (0: the jittered parcels)")
	cell := flag.Float64("cell", 50, "grid cell in metres of the dense layout (-squares)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *gpkgPath == "" && *pgDSN == "" {
		fmt.Fprintln(os.Stderr, "parcelgen: give -gpkg, -pg or both")
		os.Exit(2)
	}
	side := int(math.Ceil(math.Sqrt(float64(*n))))
	newGen := func() *generator {
		if *square > 0 {
			if *square >= *cell {
				fmt.Fprintln(os.Stderr, "parcelgen: -squares must be smaller than -cell")
				os.Exit(2)
			}
			return &generator{rng: rand.New(rand.NewPCG(*seed, 7)), side: side, cell: *cell, square: *square}
		}
		return &generator{rng: rand.New(rand.NewPCG(*seed, 7)), side: side, cell: regionSize / float64(side)}
	}
	if *gpkgPath != "" {
		start := time.Now()
		if err := writeGeoPackage(*gpkgPath, *table, newGen(), *n, log); err != nil {
			log.Error("geopackage", "err", err)
			os.Exit(1)
		}
		log.Info("geopackage written", "path", *gpkgPath, "parcels", *n, "took", time.Since(start).Round(time.Millisecond))
	}
	if *pgDSN != "" {
		start := time.Now()
		if err := writePostGIS(context.Background(), *pgDSN, *table, newGen(), *n, log); err != nil {
			log.Error("postgis", "err", err)
			os.Exit(1)
		}
		log.Info("postgis table written", "table", *table, "parcels", *n, "took", time.Since(start).Round(time.Millisecond))
	}
}

func progress(log *slog.Logger, what string, i, n int) {
	if i > 0 && i%100_000 == 0 {
		log.Info(what, "done", i, "of", n)
	}
}

func writeGeoPackage(path, table string, g *generator, n int, log *slog.Logger) error {
	w, err := gpkg.Create(path, table, proj.WebMercator, "POLYGON", fields)
	if err != nil {
		return err
	}
	for i := range n {
		p := g.parcel(i)
		if sale, ok := p.values[8].(time.Time); ok {
			p.values[8] = sale.Format("2006-01-02")
		}
		if err := w.Add(p.values, p.geom); err != nil {
			w.Close()
			return err
		}
		progress(log, "geopackage", i, n)
	}
	return w.Close()
}

func writePostGIS(ctx context.Context, dsn, table string, g *generator, n int, log *slog.Logger) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{table}.Sanitize()
	for _, q := range []string{
		"CREATE EXTENSION IF NOT EXISTS postgis",
		"DROP TABLE IF EXISTS " + ident,
		"CREATE TABLE " + ident + ` (gid bigint NOT NULL, parcel_id varchar(16), owner varchar(64), land_use varchar(8),
			zoning varchar(8), assessed_value double precision, area_m2 double precision, year_built integer, last_sale date,
			county varchar(16), address varchar(64), geom geometry(Polygon, 3857))`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	cols := []string{"gid", "parcel_id", "owner", "land_use", "zoning", "assessed_value", "area_m2", "year_built", "last_sale", "county", "address", "geom"}
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		p := g.parcel(i)
		progress(log, "postgis", i, n)
		i++
		geom, err := ewkb(p.geom, proj.WebMercator)
		if err != nil {
			return nil, err
		}
		return append(p.values, geom), nil
	})
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, cols, src); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	for _, q := range []string{
		"ALTER TABLE " + ident + " ADD PRIMARY KEY (gid)",
		"CREATE INDEX ON " + ident + " USING gist (geom)",
		"ANALYZE " + ident,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// ewkb encodes a geometry as PostGIS extended WKB with its SRID, which binary COPY into a
// geometry column reads.
func ewkb(g orb.Geometry, srid int) ([]byte, error) {
	b, err := wkb.Marshal(g, binary.LittleEndian)
	if err != nil {
		return nil, err
	}
	typ := binary.LittleEndian.Uint32(b[1:5]) | 0x20000000
	out := make([]byte, 0, len(b)+4)
	out = append(out, b[0])
	out = binary.LittleEndian.AppendUint32(out, typ)
	out = binary.LittleEndian.AppendUint32(out, uint32(srid))
	return append(out, b[5:]...), nil
}
