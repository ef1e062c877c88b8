package proj_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// clientWKTs reads testdata/srs: the WKTs GDAL, PROJ, QGIS, ArcGIS Server and the ArcGIS JS
// SDK write for WGS 84 and Web Mercator, and look-alikes of other systems, each with the WKID
// its name says it is (0: another system).
func clientWKTs(t *testing.T) map[string]int {
	t.Helper()
	files, err := filepath.Glob("testdata/srs/*.txt")
	if err != nil || len(files) < 30 {
		t.Fatalf("testdata/srs: %d files, %v", len(files), err)
	}
	out := map[string]int{}
	for _, f := range files {
		wkid, err := strconv.Atoi(strings.SplitN(filepath.Base(f), ".", 2)[0])
		if err != nil {
			t.Fatalf("%s: name does not start with a WKID", f)
		}
		out[f] = wkid
	}
	return out
}

func readWKT(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFromWKTClients: every spelling of WGS 84 and Web Mercator clients send is recognised as
// its WKID, and the systems that resemble them are not.
func TestFromWKTClients(t *testing.T) {
	for f, want := range clientWKTs(t) {
		text := readWKT(t, f)
		sr, err := proj.FromWKT(text)
		if err != nil {
			t.Errorf("%s: FromWKT: %v", f, err)
			continue
		}
		if sr.WKID != want {
			t.Errorf("%s: FromWKT = WKID %d, want %d", f, sr.WKID, want)
		}
		if want == 0 && sr.Text != strings.TrimSpace(text) {
			t.Errorf("%s: FromWKT of another system = %+v, want its text", f, sr)
		}
	}
}

// TestWKTBuiltinSystems: in this build (with or without PROJ), a WGS 84 or Web Mercator WKT
// given as text is described as the built-in system and transforms with it: 10° of longitude
// on the equator is 1113194.9 m.
func TestWKTBuiltinSystems(t *testing.T) {
	sys := proj.NewSystems(0)
	for f, want := range clientWKTs(t) {
		if want == 0 {
			continue
		}
		sr := proj.SR{Text: readWKT(t, f)}
		c, err := sys.CRS(sr)
		if err != nil {
			t.Errorf("%s: CRS: %v", f, err)
			continue
		}
		if c.SR.WKID != want || c.Geographic != (want == proj.WGS84) {
			t.Errorf("%s: CRS = WKID %d geographic %v, want %d", f, c.SR.WKID, c.Geographic, want)
		}
		other := proj.SR{WKID: proj.WebMercator}
		if want != proj.WGS84 {
			other = proj.SR{WKID: proj.WGS84}
		}
		tr, err := sys.Transformer(other, sr)
		if err != nil {
			t.Errorf("%s: Transformer from %v: %v", f, other, err)
			continue
		}
		in, out := orb.Point{1113194.9079327357, 0}, orb.Point{10, 0}
		if want != proj.WGS84 {
			in, out = out, in
		}
		got, err := tr.Point(in)
		if err != nil || math.Abs(got[0]-out[0]) > 1e-6 || math.Abs(got[1]-out[1]) > 1e-6 {
			t.Errorf("%s: %v → %v = %v, %v; want %v", f, other, in, got, err, out)
		}
	}
}

// TestWKTParametersDecide: a recognised WKT with one parameter changed (every occurrence of
// it) is not the built-in system any more, whatever its name says.
func TestWKTParametersDecide(t *testing.T) {
	esri := readWKT(t, "testdata/srs/102100.arcgis-js-sdk.txt")
	ogc := readWKT(t, "testdata/srs/3857.gdal-wkt1.txt")
	wkt2 := readWKT(t, "testdata/srs/3857.gdal-wkt2.txt")
	geo := readWKT(t, "testdata/srs/4326.gdal-wkt2.txt")
	for _, tc := range []struct{ what, text, old, new string }{
		{"false easting", esri, `"False_Easting",0.0`, `"False_Easting",500000.0`},
		{"central meridian", esri, `"Central_Meridian",0.0`, `"Central_Meridian",10.0`},
		{"standard parallel", esri, `"Standard_Parallel_1",0.0`, `"Standard_Parallel_1",45.0`},
		{"auxiliary sphere type", esri, `"Auxiliary_Sphere_Type",0.0`, `"Auxiliary_Sphere_Type",2.0`},
		{"unit", esri, `UNIT["Meter",1.0]`, `UNIT["Foot_US",0.3048006096012192]`},
		{"ellipsoid", esri, `6378137.0,298.257223563`, `6378137.0,298.257222101`},
		{"prime meridian", esri, `PRIMEM["Greenwich",0.0]`, `PRIMEM["Paris",2.33722917]`},
		{"method", esri, `Mercator_Auxiliary_Sphere"]`, `Transverse_Mercator"]`},
		{"unknown parameter", esri, `PARAMETER["False_Northing",0.0]`, `PARAMETER["Azimuth",0.0]`},
		{"another code (OGC)", ogc, `AUTHORITY["EPSG","3857"]]`, `AUTHORITY["EPSG","3395"]]`},
		{"scale factor (OGC)", ogc, `"scale_factor",1`, `"scale_factor",0.9996`},
		{"false northing (WKT2)", wkt2, `"False northing",0`, `"False northing",100`},
		{"ellipsoid (WKT2 geographic)", geo, `"WGS 84",6378137,298.257223563`, `"GRS 1980",6378137,298.257222101`},
		{"degrees (WKT2 geographic)", geo, `ANGLEUNIT["degree",0.0174532925199433]`, `ANGLEUNIT["grad",0.015707963267949]`},
		{"three axes (WKT2 geographic)", geo, `CS[ellipsoidal,2]`, `CS[ellipsoidal,3]`},
	} {
		changed := strings.ReplaceAll(tc.text, tc.old, tc.new)
		if changed == tc.text {
			t.Fatalf("%s: %q not in the text", tc.what, tc.old)
		}
		sr, err := proj.FromWKT(changed)
		if err != nil || sr.WKID != 0 || sr.Text != changed {
			t.Errorf("%s changed: FromWKT = %+v, %v; want the text, not a built-in system", tc.what, sr, err)
		}
	}
}

// TestWKTRefusesText: text that is not the WKT of a coordinate system is ErrInvalid, from
// FromWKT and from Systems (before any engine, PROJ's included, sees it).
func TestWKTRefusesText(t *testing.T) {
	deep := strings.Repeat("A[", 40) + "1" + strings.Repeat("]", 40)
	sys := proj.NewSystems(0)
	for _, text := range []string{
		"foo", "zz", "WGS", "WGS 84", "EPSG:4326", "+proj=longlat +datum=WGS84", "4326",
		`GEOGCS`, `GEOGCS[`, `GEOGCS[]`, `GEOGCS["WGS 84"`, `GEOGCS["WGS 84")`, `GEOGCS["WGS 84"] x`,
		`GEOGCS["WGS 84",]`, `GEOGCS["WGS 84" 1]`, `GEOGCS["unterminated]`, `GEOGCS["a",1.2.3]`,
		`UNIT["metre",1]`, `FOO["bar"]`, `"GEOGCS"`, deep, "GEOGCS" + deep[1:],
	} {
		if sr, err := proj.FromWKT(text); !errors.Is(err, proj.ErrInvalid) {
			t.Errorf("FromWKT(%q) = %+v, %v; want ErrInvalid", text, sr, err)
		}
		if _, err := sys.CRS(proj.SR{Text: text}); !errors.Is(err, proj.ErrInvalid) {
			t.Errorf("CRS(%q) error = %v, want ErrInvalid", text, err)
		}
	}
	// The grammar's corners that are valid: parentheses, spaces, a doubled quote in a string.
	for _, text := range []string{
		`GEOGCS("WGS 84",DATUM("WGS_1984",SPHEROID("WGS 84",6378137,298.257223563)),PRIMEM("Greenwich",0),UNIT("degree",0.0174532925199433))`,
		" GEOGCS [ \"WGS 84\" , DATUM [ \"WGS_1984\" , SPHEROID [ \"WGS 84\" , 6378137 , 298.257223563 ] ] ,\n PRIMEM [ \"Greenwich\" , 0 ] , UNIT [ \"degree\" , 1.74532925199433E-2 ] ] \n",
		`GEOGCS["say ""WGS 84""",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]]`,
	} {
		if sr, err := proj.FromWKT(text); err != nil || sr.WKID != proj.WGS84 {
			t.Errorf("FromWKT(%q) = %+v, %v; want WKID 4326", text, sr, err)
		}
	}
}

// BenchmarkFromWKT reads the longest client string of testdata/srs (GDAL's WKT2 of 3857, about
// 1.5 KB), as every request that gives its spatial reference as WKT does once.
func BenchmarkFromWKT(b *testing.B) {
	text, err := os.ReadFile("testdata/srs/3857.gdal-wkt2.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if sr, err := proj.FromWKT(string(text)); err != nil || sr.WKID != proj.WebMercator {
			b.Fatal(sr, err)
		}
	}
}
