package mapservertest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mapfarm/mapfarm/internal/app/providers"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// Provider parity: when a test PostgreSQL is available (scripts/test.sh provides one), every
// fixture also opens the sample services with each GeoPackage table copied into PostGIS, and
// every data operation a test runs (queries, identify, find, statistics, related records,
// attachments, popups, raster values, hyperlinks, exports and their images) runs on both
// catalogs and must give the same answer. So each query case and golden image of the packages
// that use the fixture is a parity case too.

// Main runs the tests of m, then drops the PostGIS copy of the samples if one was made: call it
// from the TestMain of a package that uses the fixture.
func Main(m *testing.M) int {
	code := m.Run()
	if pgSamples.drop != nil {
		if err := pgSamples.drop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	return code
}

// pgSamples is the PostGIS copy of the sample GeoPackages, made once per test binary (the one
// state of the package: the copy costs seconds, and Main drops it).
var pgSamples struct {
	once sync.Once
	dsn  string
	drop func() error
	err  error
}

// parityOps are the operations that read feature data: their answers must not depend on the
// provider. Describing operations are left out: they report provider metadata (field byte
// lengths, sampled vertex counts) that may differ.
var parityOps = setOf("QueryFeatureCount", "QueryFeatureCount2", "QueryFeatureIDs", "QueryFeatureIDs2",
	"QueryFeatureData", "QueryFeatureData2", "QueryRowCount", "QueryRowIDs", "QueryData", "QueryDataStatistics",
	"Find", "Identify", "QueryRelatedRecords", "QueryRelatedRecords2", "QueryAttachmentInfos", "QueryAttachmentInfos2",
	"QueryAttachmentData", "QueryAttachmentData2", "QueryHTMLPopups", "QueryHTMLPopups2", "QueryRasterValue",
	"QueryRasterValue2", "QueryHyperlinks", "GenerateDataClasses", "ExportMapImage", "ComputeScale", "ToMapPoints")

func setOf(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// postgisCatalog opens the sample services with their tables read from PostGIS, or returns nil
// when there is no test PostgreSQL (and none is required).
func postgisCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	admin := os.Getenv(testenv.EnvPostgres)
	if admin == "" {
		return nil
	}
	cfg, err := servicedef.Load(catalogtest.SamplesPath(t), providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]gpkg.Definition{} // PostGIS table → GeoPackage source
	rewrite := func(def *servicedef.Source, attachments bool) {
		src, ok := (*def).(gpkg.Definition)
		if !ok {
			return
		}
		name := strings.ToLower(strings.TrimSuffix(filepath.Base(src.File), ".gpkg") + "_" + src.Table)
		tables[name] = src
		if attachments {
			tables[servicedef.AttachmentTable(name)] = gpkg.Definition{File: src.File, Table: servicedef.AttachmentTable(src.Table)}
		}
		*def = postgis.Definition{Connection: "parity", Table: name}
	}
	for _, s := range cfg.Services {
		for _, m := range s.Maps {
			for _, l := range m.Layers {
				rewrite(&l.Source, l.Attachments)
			}
			for _, tb := range m.Tables {
				rewrite(&tb.Source, false)
			}
		}
	}
	pgSamples.once.Do(func() {
		pgSamples.dsn, pgSamples.drop, pgSamples.err = testenv.CreatePostgresDB(admin)
		for name, src := range tables {
			if pgSamples.err != nil {
				return
			}
			fid := "fid"
			if strings.HasSuffix(name, "__ATTACH") {
				fid = "ATTACHMENTID"
			}
			pgSamples.err = testenv.CopyGeoPackage(pgSamples.dsn, src.File, src.Table, name, fid)
		}
	})
	if pgSamples.err != nil {
		t.Fatalf("PostGIS copy of the samples: %v", pgSamples.err)
	}
	cfg.Connections = map[string]*servicedef.Connection{"parity": {Name: "parity", DSN: pgSamples.dsn}}
	c, err := catalog.Open(context.Background(), cfg, providers.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkParity runs an operation that ran on the GeoPackage catalog again on the PostGIS one and
// fails the test when the answers differ.
func (f *Fixture) checkParity(service, op string, req any, resp any, err error) {
	f.T.Helper()
	if f.PG == nil || !parityOps[op] {
		return
	}
	svc, ok := f.PG.Cat.Service(service)
	if !ok {
		return
	}
	pgResp, pgErr := f.PG.Srv.Do(context.Background(), &mapserver.Call{Service: svc}, op, req)
	switch {
	case (err == nil) != (pgErr == nil):
		f.T.Errorf("provider parity: %s on %s: GeoPackage error %v, PostGIS error %v", op, service, err, pgErr)
	case err != nil:
		for _, kind := range []error{mapserver.ErrInvalidArgument, mapserver.ErrNotFound} {
			if errors.Is(err, kind) != errors.Is(pgErr, kind) {
				f.T.Errorf("provider parity: %s on %s: GeoPackage error %v, PostGIS error %v", op, service, err, pgErr)
			}
		}
	default:
		a, b := normalize(reflect.ValueOf(resp)), normalize(reflect.ValueOf(pgResp))
		if !reflect.DeepEqual(a, b) {
			f.T.Errorf("provider parity: %s on %s: the PostGIS answer differs from the GeoPackage one\nGeoPackage: %s\nPostGIS:    %s",
				op, service, clip(fmt.Sprintf("%+v", a)), clip(fmt.Sprintf("%+v", b)))
		}
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// normalize returns a copy of a response with the output URLs cleared (they name stored
// copies by request).
func normalize(v reflect.Value) any {
	c := reflect.New(v.Type()).Elem()
	c.Set(deepCopy(v))
	clearVolatile(c)
	return c.Interface()
}

func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Elem().Type())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	case reflect.Float64:
		// Aggregates a database computes (averages, standard deviations) agree with Go's to
		// about 1e-15 relative, not bit for bit: compare every float to 12 significant digits
		// (the providers' own parity table allows 1e-9; for Web Mercator coordinates 12 digits
		// is a hundredth of a millimetre).
		c := reflect.New(v.Type()).Elem()
		c.SetFloat(roundSignificant(v.Float(), 12))
		return c
	}
	return v
}

// roundSignificant rounds x to n significant decimal digits.
func roundSignificant(x float64, n int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', n, 64), 64)
	return f
}

func clearVolatile(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			clearVolatile(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			switch v.Type().Field(i).Name {
			case "URL", "ImageURL":
				if f.CanSet() {
					f.Set(reflect.Zero(f.Type()))
				}
				continue
			}
			clearVolatile(f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			clearVolatile(v.Index(i))
		}
	}
}

// PostGISSamples opens the sample services on the PostGIS copy of their tables (made once per
// test binary) and returns it with the copy's connection string, or nil and "" when there is no
// test PostgreSQL.
func PostGISSamples(t testing.TB) (*catalog.Catalog, string) {
	t.Helper()
	c := postgisCatalog(t)
	if c == nil {
		return nil, ""
	}
	return c, pgSamples.dsn
}
