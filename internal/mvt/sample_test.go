package mvt_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/golden"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// measureValidity turns on the measure of how many polygons GEOS finds invalid (through
// ogrinfo's slow SQLite dialect): MAPFARM_MVT_MEASURE=1.
func measureValidity() bool { return os.Getenv("MAPFARM_MVT_MEASURE") != "" }

// sample opens a table of a GeoPackage of data/sample through the
// GeoPackage provider.
func sample(t testing.TB, file, table string) feature.Source {
	t.Helper()
	f, err := gpkg.Open(filepath.Join("..", "..", "data", "sample", file))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	src, err := f.Source(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// zxy is a Web Mercator tile.
type zxy struct{ z, x, y int }

// tilesOver returns the Web Mercator tiles of level z over a lon/lat box.
func tilesOver(t testing.TB, z int, lonlat orb.Bound) []zxy {
	t.Helper()
	s := tilecache.WebMercator()
	b := orb.Bound{Min: proj.ToMercator(lonlat.Min), Max: proj.ToMercator(lonlat.Max)}
	r, err := s.TilesCovering(z, b)
	if err != nil {
		t.Fatal(err)
	}
	var out []zxy
	for tl := range r.All() {
		out = append(out, zxy{tl.Level, tl.Col, tl.Row})
	}
	return out
}

// ogrCounts has GDAL's MVT driver read a tile file and returns its
// feature count per layer (geometries not clipped to the tile, so that
// features kept in the buffer count).
func ogrCounts(t testing.TB, path string) map[string]int {
	t.Helper()
	out, err := exec.Command("ogrinfo", "-ro", "-so", "-al", "-oo", "CLIP=NO", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %s: %v\n%s", path, err, out)
	}
	counts := map[string]int{}
	re := regexp.MustCompile(`(?m)^Layer name: (.*)$\n(?:.*\n)*?Feature Count: (\d+)`)
	for _, m := range re.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		counts[string(m[1])] = n
	}
	return counts
}

// polyCount is the number of features of the polygon layers in a tile.
func polyCount(st mvtcheck.Stats, layers []mvt.Layer) int {
	n := 0
	for _, l := range layers {
		if l.Source.Info().GeometryType == feature.Polygon {
			n += st.Features[l.Name]
		}
	}
	return n
}

// ogrValid returns the number of features of a polygon layer of a tile
// and how many of them GEOS finds valid (through GDAL's SQLite dialect).
func ogrValid(t testing.TB, path, layer string) (n, valid int) {
	t.Helper()
	out, err := exec.Command("ogrinfo", "-ro", "-q", "-oo", "CLIP=NO", path, "-dialect", "sqlite",
		"-sql", "SELECT count(*) AS n, sum(ST_IsValid(geometry)) AS v FROM \""+layer+"\"").CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %s: %v\n%s", path, err, out)
	}
	m := regexp.MustCompile(`n \(Integer\) = (\d+)\s+v \(Integer\) = (\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("ogrinfo %s: no counts in\n%s", path, out)
	}
	n, _ = strconv.Atoi(string(m[1]))
	valid, _ = strconv.Atoi(string(m[2]))
	return n, valid
}

func needOGR(t *testing.T) {
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") == "1" {
			t.Fatal("ogrinfo (gdal-bin) is not installed")
		}
		t.Skip("ogrinfo (gdal-bin) is not installed")
	}
}

// TestSampleTiles encodes tiles of the world and usa sample data at
// several zooms, checks every tile with mvtcheck, has GDAL's MVT driver
// decode them with the same feature counts, and where nothing is
// simplified away wants as many features in a tile as the provider finds
// intersecting the tile's buffered extent.
func TestSampleTiles(t *testing.T) {
	needOGR(t)
	world := []mvt.Layer{
		{Name: "countries", Source: sample(t, "world_countries_50m_3857.gpkg", "countries"), Fields: []string{"NAME", "ISO_N3"}},
		{Name: "country_points", Source: sample(t, "world_country_points_50m_3857.gpkg", "country_points"), Fields: []string{"NAME"}},
	}
	usa := []mvt.Layer{
		{Name: "states", Source: sample(t, "us_states_10m_3857.gpkg", "states"), Fields: []string{"NAME"}},
		{Name: "counties", Source: sample(t, "us_counties_10m_3857.gpkg", "counties"), Fields: []string{"NAME", "GEOID"}},
	}
	type set struct {
		layers []mvt.Layer
		tiles  []zxy
		exact  bool // nothing is simplified away at this zoom: counts must equal the provider's
	}
	whole := orb.Bound{Min: orb.Point{-180, -85}, Max: orb.Point{180, 85}}
	texas := orb.Bound{Min: orb.Point{-98.2, 30.0}, Max: orb.Point{-97.5, 30.6}}
	sets := []set{
		{world, tilesOver(t, 0, whole), false},
		{world, tilesOver(t, 2, whole), false},
		{world, tilesOver(t, 3, whole), false},
		{world, tilesOver(t, 7, orb.Bound{Min: orb.Point{2, 45}, Max: orb.Point{8, 50}}), true},
		{usa, tilesOver(t, 4, orb.Bound{Min: orb.Point{-125, 25}, Max: orb.Point{-67, 49}}), false},
		{usa, tilesOver(t, 8, texas), true},
		// Not exact: at z7 a unit is 76 m, and Kenton County's bound
		// enters the buffered box of tile 7/34/48 by 28 m: the sliver
		// rounds to nothing and is rightly dropped.
		{usa, tilesOver(t, 7, orb.Bound{Min: orb.Point{-84, 35}, Max: orb.Point{-75, 40}}), false},
		{usa, tilesOver(t, 10, texas), true},
		{usa, tilesOver(t, 9, orb.Bound{Min: orb.Point{-80, 36}, Max: orb.Point{-76, 39}}), true},
		{usa, tilesOver(t, 12, orb.Bound{Min: orb.Point{-97.8, 30.2}, Max: orb.Point{-97.7, 30.3}}), true},
	}
	enc, err := mvt.NewEncoder(mvt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	total, exact := 0, 0
	invalid, polys := map[int]int{}, map[int]int{}
	polyFeatures := map[int]int{}
	for _, s := range sets {
		for i, tl := range s.tiles {
			tile, err := mvt.WebMercatorTile(tl.z, tl.x, tl.y)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%d/%d/%d", tl.z, tl.x, tl.y)
			// Every other tile is gzipped: GDAL reads both.
			zenc := enc
			if i%2 == 1 {
				zenc, _ = mvt.NewEncoder(mvt.Options{Gzip: true})
			}
			res, err := zenc.Encode(ctx, tile, s.layers)
			if err != nil {
				t.Fatalf("tile %s: %v", name, err)
			}
			// Every polygon ring simple (MVT 2.1 §4.3.4.4), in every tile.
			probs, st := mvtcheck.Check(res.Data, mvtcheck.Options{MaxBuffer: mvt.DefaultBuffer, SimpleRings: true})
			if len(probs) > 0 {
				t.Errorf("tile %s: %d problems, first %v", name, len(probs), probs[0])
			}
			polyFeatures[tl.z] += polyCount(st, s.layers)
			if res.Features == 0 {
				continue
			}
			// GDAL reads every tile of the sets where counts must be exact, and every fourth of
			// the others (one ogrinfo each; the validator above has read them all).
			if !s.exact && i%4 != 0 {
				continue
			}
			total++
			path := filepath.Join(dir, name+".pbf")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, res.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			ogr := ogrCounts(t, path)
			// A measure, not an assertion (docs/vector-tiles.md, "Simple
			// rings"): how many polygons GEOS finds invalid, on the first
			// tiles of each set (ogrinfo's SQLite dialect is slow).
			for _, l := range s.layers {
				if !measureValidity() || i >= 3 || l.Source.Info().GeometryType != feature.Polygon || ogr[l.Name] == 0 {
					continue
				}
				n, valid := ogrValid(t, path, l.Name)
				invalid[tl.z] += n - valid
				polys[tl.z] += n
			}
			b := tile.Bound
			pad := float64(mvt.DefaultBuffer) / mvt.DefaultExtent * (b.Max[0] - b.Min[0])
			buffered := orb.Bound{Min: orb.Point{b.Min[0] - pad, b.Min[1] - pad}, Max: orb.Point{b.Max[0] + pad, b.Max[1] + pad}}
			for _, l := range s.layers {
				if ogr[l.Name] != st.Features[l.Name] {
					t.Errorf("tile %s layer %s: GDAL reads %d features, mvtcheck %d", name, l.Name, ogr[l.Name], st.Features[l.Name])
				}
				want, err := l.Source.Count(ctx, &feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: buffered}})
				if err != nil {
					t.Fatal(err)
				}
				if s.exact {
					exact += want
				}
				switch got := ogr[l.Name]; {
				case s.exact && got != want:
					t.Errorf("tile %s layer %s: %d features, the provider finds %d in the buffered tile", name, l.Name, got, want)
				case got > want:
					t.Errorf("tile %s layer %s: %d features, more than the provider's %d", name, l.Name, got, want)
				}
			}
		}
	}
	t.Logf("%d non-empty tiles read by GDAL; %d features checked against the provider's count", total, exact)
	for z := range 13 {
		if polyFeatures[z] > 0 {
			t.Logf("z%d: %d polygon features; %d of %d not valid for GEOS (first tiles, MAPFARM_MVT_MEASURE=1)",
				z, polyFeatures[z], invalid[z], polys[z])
		}
	}
	if total < 50 {
		t.Errorf("only %d non-empty tiles checked", total)
	}
}

// TestSchemeTile encodes tiles of a geographic tiling scheme (a cache's
// own scheme, not Web Mercator) from the 4326 sample data.
func TestSchemeTile(t *testing.T) {
	states := sample(t, "us_states_10m_4326.gpkg", "states")
	s := tilecache.Geographic()
	r, err := s.TilesCovering(4, orb.Bound{Min: orb.Point{-125, 25}, Max: orb.Point{-67, 49}})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := mvt.NewEncoder(mvt.Options{})
	seen := 0
	for tl := range r.All() {
		tile, err := mvt.SchemeTile(s, tl)
		if err != nil {
			t.Fatal(err)
		}
		res, err := enc.Encode(context.Background(), tile, []mvt.Layer{{Name: "states", Source: states}})
		if err != nil {
			t.Fatalf("tile %s: %v", tl, err)
		}
		if probs, _ := mvtcheck.Check(res.Data, mvtcheck.Options{MaxBuffer: mvt.DefaultBuffer}); len(probs) > 0 {
			t.Errorf("tile %s: %v", tl, probs)
		}
		want, _ := states.Count(context.Background(), &feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: tile.Bound}})
		if res.Features < want {
			t.Errorf("tile %s: %d features, the provider finds %d in the tile alone", tl, res.Features, want)
		}
		seen += res.Features
	}
	if seen == 0 {
		t.Error("no state in any tile")
	}
	if _, err := enc.Encode(context.Background(), mvt.Tile{Bound: orb.Bound{Max: orb.Point{1, 1}}, SR: proj.SR{WKID: proj.WebMercator}}, []mvt.Layer{{Name: "states", Source: states}}); err == nil {
		t.Error("a 4326 source in a Web Mercator tile was encoded")
	}
}

// TestGoldenTile compares a world tile with testdata/world-1-0-0.pbf;
// MAPFARM_UPDATE_GOLDEN=1 rewrites it (internal/golden). A change in these bytes is a change in every
// stored vector tile: look at why before updating.
func TestGoldenTile(t *testing.T) {
	layers := []mvt.Layer{
		{Name: "countries", Source: sample(t, "world_countries_50m_3857.gpkg", "countries"), Fields: []string{"NAME", "ISO_N3"}},
		{Name: "country_points", Source: sample(t, "world_country_points_50m_3857.gpkg", "country_points"), Fields: []string{"NAME"}},
	}
	tile, _ := mvt.WebMercatorTile(1, 0, 0)
	enc, _ := mvt.NewEncoder(mvt.Options{})
	res, err := enc.Encode(context.Background(), tile, layers)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "world-1-0-0.pbf"), res.Data)
}
