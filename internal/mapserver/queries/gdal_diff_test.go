package queries_test

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// gdalIDs asks GDAL (SQLite with SpatiaLite functions, through ogrinfo) for the fids of a
// GeoPackage table's rows passing a SQL condition. The condition is spliced into SQL here only
// because GDAL is the test oracle.
func gdalIDs(t *testing.T, gpkg, table, cond string) []int {
	t.Helper()
	// SQLite's LIKE ignores ASCII case where ours does not, so the conditions use GLOB.
	// SpatiaLite predicates answer -1 for a NULL geometry, which SQLite takes as true: the
	// conditions compare them with 1.
	sql := fmt.Sprintf("SELECT fid FROM %s WHERE %s", table, cond)
	return testenv.OGRFids(t, gpkg, sql)
}

// wkt writes a filter geometry as WKT for SpatiaLite.
func wkt(g gisxml.GeometryKind) string {
	pts := func(ps gisxml.ArrayOfPoint) string {
		var b []string
		for _, p := range ps {
			pn := p.(*gisxml.PointN)
			b = append(b, fmt.Sprintf("%g %g", pn.X, pn.Y))
		}
		return strings.Join(b, ",")
	}
	switch g := g.(type) {
	case *gisxml.EnvelopeN:
		return fmt.Sprintf("POLYGON((%g %g,%g %g,%g %g,%g %g,%g %g))", g.XMin, g.YMin, g.XMax, g.YMin, g.XMax, g.YMax, g.XMin, g.YMax, g.XMin, g.YMin)
	case *gisxml.PointN:
		return fmt.Sprintf("POINT(%g %g)", g.X, g.Y)
	case *gisxml.MultipointN:
		var ps []string
		for _, p := range g.PointArray {
			pn := p.(*gisxml.PointN)
			ps = append(ps, fmt.Sprintf("(%g %g)", pn.X, pn.Y))
		}
		return "MULTIPOINT(" + strings.Join(ps, ",") + ")"
	case *gisxml.PolylineN:
		var ls []string
		for _, p := range g.PathArray {
			ls = append(ls, "("+pts(p.PathPart().PointArray)+")")
		}
		return "MULTILINESTRING(" + strings.Join(ls, ",") + ")"
	case *gisxml.PolygonN:
		var rs []string
		for _, r := range g.RingArray {
			rs = append(rs, "("+pts(r.PointArray)+")")
		}
		return "POLYGON(" + strings.Join(rs, ",") + ")"
	}
	panic(fmt.Sprintf("wkt: %T", g))
}

func pts(xy ...float64) gisxml.ArrayOfPoint {
	var out gisxml.ArrayOfPoint
	for i := 0; i+1 < len(xy); i += 2 {
		out = append(out, &gisxml.PointN{X: xy[i], Y: xy[i+1]})
	}
	return out
}

// TestDifferentialGDAL compares QueryFeatureIDs and QueryFeatureCount with GDAL on the sample
// GeoPackages: where clauses, envelope (bbox) filters, and exact predicates against
// SpatiaLite's (ST_Intersects, ST_Within, ST_Contains, ST_Touches, ST_Crosses, ST_Overlaps,
// ST_Relate).
func TestDifferentialGDAL(t *testing.T) {
	if _, err := exec.LookPath("ogrinfo"); err != nil {
		t.Skip("ogrinfo (gdal-bin) is not installed")
	}
	f := mapservertest.New(t)
	const counties = "../../../data/sample/us_counties_10m_3857.gpkg"
	const countries = "../../../data/sample/world_countries_50m_4326.gpkg"
	const points = "../../../data/sample/world_country_points_50m_4326.gpkg"

	// A triangle over the US south-west and a line across the Rockies, in Web Mercator.
	triangle := &gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{{Path: gisxml.Path{PointArray: pts(
		-13000000, 3900000, -11500000, 5200000, -11000000, 3800000, -13000000, 3900000)}}}}
	line := &gisxml.PolylineN{PathArray: gisxml.ArrayOfPath{&gisxml.Path{PointArray: pts(-12500000, 4300000, -11700000, 4900000, -11000000, 4700000)}}}
	multi := &gisxml.MultipointN{PointArray: pts(-13160000, 4030000, -8240000, 4970000, -10600000, 3470000)}
	onePoint := &gisxml.PointN{X: -13160000, Y: 4030000}
	// A polygon with a hole over Europe, in degrees (exterior clockwise, hole counter-clockwise).
	donut := &gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{
		{Path: gisxml.Path{PointArray: pts(-5, 40, 5, 55, 25, 55, 25, 40, -5, 40)}},
		{Path: gisxml.Path{PointArray: pts(5, 45, 15, 45, 15, 50, 5, 50, 5, 45)}},
	}}
	europeBox := &gisxml.EnvelopeN{XMin: -10, YMin: 35, XMax: 30, YMax: 60}

	type tc struct {
		name    string
		service string
		layer   int
		gpkg    string
		table   string
		filter  gisxml.QueryFilterKind
		gdal    string // SQL condition for GDAL
	}
	spatial := func(clause string, rel gisxml.SpatialRelEnum, g gisxml.GeometryKind, desc string) *gisxml.SpatialFilter {
		return &gisxml.SpatialFilter{QueryFilter: gisxml.QueryFilter{WhereClause: clause}, SpatialRel: rel, FilterGeometry: g, SpatialRelDescription: desc}
	}
	gf := func(g gisxml.GeometryKind, srid int) string {
		return fmt.Sprintf("ST_GeomFromText('%s',%d)", wkt(g), srid)
	}
	bbox := func(xmin, ymin, xmax, ymax float64) string {
		// -spat semantics: the feature's bounding box intersects the box.
		return fmt.Sprintf("ST_MaxX(geom) >= %g AND ST_MinX(geom) <= %g AND ST_MaxY(geom) >= %g AND ST_MinY(geom) <= %g", xmin, xmax, ymin, ymax)
	}
	cases := []tc{
		{"all", "usa", 1, counties, "counties", mapservertest.Where(""), "1=1"},
		{"eq", "usa", 1, counties, "counties", mapservertest.Where("STATEFP = '06'"), "STATEFP = '06'"},
		{"neq", "usa", 1, counties, "counties", mapservertest.Where("STATEFP <> '48'"), "STATEFP <> '48'"},
		{"in", "usa", 1, counties, "counties", mapservertest.Where("STATEFP IN ('06', '41', '53')"), "STATEFP IN ('06','41','53')"},
		{"not in", "usa", 1, counties, "counties", mapservertest.Where("STATEFP NOT IN ('06', '41', '53')"), "STATEFP NOT IN ('06','41','53')"},
		{"like prefix", "usa", 1, counties, "counties", mapservertest.Where("NAME LIKE 'San %'"), "NAME GLOB 'San *'"},
		{"like inner", "usa", 1, counties, "counties", mapservertest.Where("NAME LIKE '%ville%'"), "NAME GLOB '*ville*'"},
		{"like single", "usa", 1, counties, "counties", mapservertest.Where("NAME LIKE 'L_ke'"), "NAME GLOB 'L?ke'"},
		{"not like", "usa", 1, counties, "counties", mapservertest.Where("NAME NOT LIKE '%a%' AND STATEFP = '13'"), "NAME NOT GLOB '*a*' AND STATEFP = '13'"},
		{"between", "usa", 1, counties, "counties", mapservertest.Where("fid BETWEEN 100 AND 250"), "fid BETWEEN 100 AND 250"},
		{"not between", "usa", 1, counties, "counties", mapservertest.Where("fid NOT BETWEEN 10 AND 3000"), "fid NOT BETWEEN 10 AND 3000"},
		{"or and", "usa", 1, counties, "counties", mapservertest.Where("(STATEFP = '06' OR STATEFP = '32') AND NAME < 'M'"), "(STATEFP = '06' OR STATEFP = '32') AND NAME < 'M'"},
		{"not", "usa", 1, counties, "counties", mapservertest.Where("NOT (STATE = 'Texas')"), "NOT (STATE = 'Texas')"},
		{"upper", "usa", 1, counties, "counties", mapservertest.Where("UPPER(NAME) = 'ORANGE'"), "UPPER(NAME) = 'ORANGE'"},
		{"lower like", "usa", 1, counties, "counties", mapservertest.Where("LOWER(NAME) LIKE 'mc%'"), "LOWER(NAME) LIKE 'mc%'"},
		{"arith", "usa", 1, counties, "counties", mapservertest.Where("fid * 2 + 1 < 41"), "fid * 2 + 1 < 41"},
		{"mod", "usa", 1, counties, "counties", mapservertest.Where("MOD(fid, 7) = 3"), "fid % 7 = 3"},
		{"gte string", "usa", 1, counties, "counties", mapservertest.Where("GEOID >= '55000'"), "GEOID >= '55000'"},
		{"is null", "usa", 1, counties, "counties", mapservertest.Where("NAME IS NULL"), "NAME IS NULL"},
		{"is not null", "usa", 1, counties, "counties", mapservertest.Where("NAME IS NOT NULL AND STATEFP = '02'"), "NAME IS NOT NULL AND STATEFP = '02'"},
		{"char length", "usa", 1, counties, "counties", mapservertest.Where("CHAR_LENGTH(NAME) > 12"), "LENGTH(NAME) > 12"},
		{"substring", "usa", 1, counties, "counties", mapservertest.Where("SUBSTRING(GEOID FROM 3 FOR 3) = '001'"), "SUBSTR(GEOID, 3, 3) = '001'"},
		{"countries like", "world_geographic", 1, countries, "countries", mapservertest.Where("NAME LIKE 'B%'"), "NAME GLOB 'B*'"},
		{"countries iso", "world_geographic", 1, countries, "countries", mapservertest.Where("ISO_N3 > '500'"), "ISO_N3 > '500'"},

		{"index intersects", "usa", 1, counties, "counties", mapservertest.EnvelopeFilter("", gisxml.SpatialRelIndexIntersects, -13000000, 4000000, -12000000, 5000000), bbox(-13000000, 4000000, -12000000, 5000000)},
		{"envelope intersects + where", "usa", 1, counties, "counties", mapservertest.EnvelopeFilter("STATEFP = '06'", gisxml.SpatialRelEnvelopeIntersects, -13500000, 3800000, -12500000, 4500000), "STATEFP = '06' AND " + bbox(-13500000, 3800000, -12500000, 4500000)},
		{"envelope intersects world", "world_geographic", 1, countries, "countries", mapservertest.EnvelopeFilter("", gisxml.SpatialRelEnvelopeIntersects, -10, 35, 30, 60), bbox(-10, 35, 30, 60)},
		{"points envelope", "world_geographic", 0, points, "country_points", mapservertest.EnvelopeFilter("", gisxml.SpatialRelEnvelopeIntersects, -10, 35, 30, 60), bbox(-10, 35, 30, 60)},

		{"intersects envelope", "usa", 1, counties, "counties", mapservertest.EnvelopeFilter("", gisxml.SpatialRelIntersects, -13000000, 4000000, -12000000, 5000000), "ST_Intersects(geom, " + gf(&gisxml.EnvelopeN{XMin: -13000000, YMin: 4000000, XMax: -12000000, YMax: 5000000}, 3857) + ") = 1"},
		{"intersects envelope + where", "usa", 1, counties, "counties", mapservertest.EnvelopeFilter("NAME LIKE '%o%'", gisxml.SpatialRelIntersects, -10000000, 3500000, -9000000, 4500000), "NAME GLOB '*o*' AND ST_Intersects(geom, " + gf(&gisxml.EnvelopeN{XMin: -10000000, YMin: 3500000, XMax: -9000000, YMax: 4500000}, 3857) + ") = 1"},
		{"intersects polygon", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelIntersects, triangle, ""), "ST_Intersects(geom, " + gf(triangle, 3857) + ") = 1"},
		{"intersects line", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelIntersects, line, ""), "ST_Intersects(geom, " + gf(line, 3857) + ") = 1"},
		{"intersects multipoint", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelIntersects, multi, ""), "ST_Intersects(geom, " + gf(multi, 3857) + ") = 1"},
		{"intersects point", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelIntersects, onePoint, ""), "ST_Intersects(geom, " + gf(onePoint, 3857) + ") = 1"},
		{"contains (feature inside polygon)", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelContains, triangle, ""), "ST_Within(geom, " + gf(triangle, 3857) + ") = 1"},
		{"within (point inside feature)", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelWithin, onePoint, ""), "ST_Contains(geom, " + gf(onePoint, 3857) + ") = 1"},
		{"crosses line", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelCrosses, line, ""), "ST_Crosses(" + gf(line, 3857) + ", geom) = 1"},
		{"overlaps polygon", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelOverlaps, triangle, ""), "ST_Overlaps(" + gf(triangle, 3857) + ", geom) = 1"},
		{"touches polygon", "usa", 0, "../../../data/sample/us_states_10m_3857.gpkg", "states", spatial("", gisxml.SpatialRelTouches, triangle, ""), "ST_Touches(" + gf(triangle, 3857) + ", geom) = 1"},
		{"relation interior", "usa", 1, counties, "counties", spatial("", gisxml.SpatialRelRelation, triangle, "T********"), "ST_Relate(" + gf(triangle, 3857) + ", geom, 'T********') = 1"},
		{"relation boundary", "usa", 1, counties, "counties", spatial("STATEFP = '04'", gisxml.SpatialRelRelation, line, "*T*******"), "STATEFP = '04' AND ST_Relate(" + gf(line, 3857) + ", geom, '*T*******') = 1"},
		{"donut intersects", "world_geographic", 1, countries, "countries", spatial("", gisxml.SpatialRelIntersects, donut, ""), "ST_Intersects(geom, " + gf(donut, 4326) + ") = 1"},
		{"donut contains", "world_geographic", 1, countries, "countries", spatial("", gisxml.SpatialRelContains, donut, ""), "ST_Within(geom, " + gf(donut, 4326) + ") = 1"},
		{"points in donut", "world_geographic", 0, points, "country_points", spatial("", gisxml.SpatialRelIntersects, donut, ""), "ST_Intersects(geom, " + gf(donut, 4326) + ") = 1"},
		{"points in box", "world_geographic", 0, points, "country_points", spatial("NAME > 'L'", gisxml.SpatialRelContains, europeBox, ""), "NAME > 'L' AND ST_Within(geom, " + gf(europeBox, 4326) + ") = 1"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := gdalIDs(t, c.gpkg, c.table, c.gdal)
			got := f.IDs(c.service, c.layer, c.filter)
			if !slices.Equal(got, want) {
				t.Errorf("ids differ from GDAL: %d ids, GDAL %d\nonly ours: %v\nonly GDAL: %v", len(got), len(want), minus(got, want), minus(want, got))
			}
			if n := f.Count(c.service, c.layer, c.filter); n != len(want) {
				t.Errorf("count %d, GDAL %d", n, len(want))
			}
		})
	}
}

func minus(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}
