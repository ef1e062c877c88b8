package geodesy_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/geodesy"
)

// pairs covers what Vincenty's method and spherical shortcuts get wrong: nearly antipodal and
// exactly antipodal points, the antimeridian, the poles, coincident and nearly coincident
// points, beside ordinary short and long distances. meters is what
// `geod -I +ellps=WGS84 -f %.6f -F %.6f` printed (PROJ 9.1.1); TestDistanceAgainstGeod asks geod
// again at test time, TestDistanceTable checks the recorded value where geod is not installed.
var pairs = []struct {
	name                   string
	lon1, lat1, lon2, lat2 float64
	meters                 float64
}{
	{"London-Paris", -0.1278, 51.5074, 2.3522, 48.8566, 343923.120091},
	{"NewYork-LosAngeles", -74.0060, 40.7128, -118.2437, 34.0522, 3944422.231490},
	{"Tokyo-Sydney", 139.6917, 35.6895, 151.2093, -33.8688, 7792963.055309},
	{"SaoPaulo-CapeTown", -46.6333, -23.5505, 18.4241, -33.9249, 6355601.720920},
	{"Reykjavik-Anchorage", -21.9426, 64.1466, -149.9003, 61.2181, 5438984.492364},
	{"about a metre", 2.3522, 48.8566, 2.3522, 48.856609, 1.000863},
	{"coincident", -3.7038, 40.4168, -3.7038, 40.4168, 0},
	{"a micro-degree on the equator", 0, 0, 0.000001, 0, 0.111319},
	{"along the equator", 0, 0, 90, 0, 10018754.171395},
	{"near antipodal (the issue's pair)", 0, 0, 179.7, 0.5, 19944127.420750},
	{"near antipodal", 0, 0, 179.5, 0.5, 19936288.578965},
	{"antipodal on the equator", 0, 0, 180, 0, 20003931.458625},
	{"antipodal off the equator", 30, 20, -150, -20, 20003931.458625},
	{"nearly antipodal at mid latitude", -75.2, 41.5, 104.6, -41.3, 19979408.554513},
	{"across the antimeridian", 179.9, 10, -179.9, -10, 2211820.589373},
	{"Fiji-Samoa", 178.4419, -18.1416, -171.7514, -13.8333, 1152542.468574},
	{"pole to pole", 0, -90, 0, 90, 20003931.458625},
	{"at the north pole, two longitudes", 45, 90, -135, 90, 0},
	{"over the north pole", 0, 89.9, 180, 89.9, 22338.795683},
	{"near the south pole", 10, -89.99, -170, -89.99, 2233.879591},
	{"to the south pole", 77, -60, 0, -90, 3347892.909822},
}

// geodDistances runs PROJ's geod (Debian proj-bin) on every pair. Without geod the test is
// skipped, unless MAPFARM_REQUIRE_SERVICES is set (scripts/test.sh sets it and installs geod).
func geodDistances(t *testing.T) []float64 {
	t.Helper()
	geod, err := exec.LookPath("geod")
	if err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatal("geod (Debian proj-bin) is not installed; scripts/test.sh installs it")
		}
		t.Skip("geod not installed (apt-get install proj-bin)")
	}
	var in bytes.Buffer
	for _, p := range pairs {
		fmt.Fprintf(&in, "%.10g %.10g %.10g %.10g\n", p.lat1, p.lon1, p.lat2, p.lon2)
	}
	cmd := exec.Command(geod, "-I", "+ellps=WGS84", "-f", "%.6f", "-F", "%.6f")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("geod: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pairs) {
		t.Fatalf("geod printed %d lines for %d pairs:\n%s", len(lines), len(pairs), out)
	}
	ds := make([]float64, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("geod line %q", l)
		}
		if ds[i], err = strconv.ParseFloat(f[2], 64); err != nil {
			t.Fatalf("geod line %q: %v", l, err)
		}
	}
	return ds
}

// TestDistanceAgainstGeod demands the distance PROJ's geod gives, within a millimetre, for
// every pair, and reports the largest difference.
func TestDistanceAgainstGeod(t *testing.T) {
	want := geodDistances(t)
	var worst float64
	for i, p := range pairs {
		got, err := geodesy.Distance(orb.Point{p.lon1, p.lat1}, orb.Point{p.lon2, p.lat2})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		d := math.Abs(got - want[i])
		worst = max(worst, d)
		if d > 0.001 {
			t.Errorf("%s: %.6f m, geod says %.6f m (%.3g m apart)", p.name, got, want[i], got-want[i])
		}
		if math.Abs(want[i]-p.meters) > 1e-6 {
			t.Errorf("%s: geod now says %.6f m, the table records %.6f m", p.name, want[i], p.meters)
		}
	}
	t.Logf("largest difference from geod over %d pairs: %.3g mm", len(pairs), worst*1000)
}

// TestDistanceTable checks the recorded geod distances without geod, within a millimetre.
func TestDistanceTable(t *testing.T) {
	for _, p := range pairs {
		got, err := geodesy.Distance(orb.Point{p.lon1, p.lat1}, orb.Point{p.lon2, p.lat2})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if math.Abs(got-p.meters) > 0.001 {
			t.Errorf("%s: %.6f m, geod says %.6f m", p.name, got, p.meters)
		}
	}
}

// TestDistanceIsAMetric checks, on random points, what any distance must satisfy: symmetry,
// the triangle inequality, zero only between coincident points (a pole is one point at every
// longitude), and no more than half a
// meridian (the longest geodesic on WGS 84 joins antipodes through the poles).
func TestDistanceIsAMetric(t *testing.T) {
	const halfMeridian = 20003931.458625
	r := rand.New(rand.NewPCG(15, 2))
	point := func() orb.Point {
		// Uniform on the sphere, with a few points on the poles and the antimeridian.
		switch r.IntN(20) {
		case 0:
			return orb.Point{r.Float64()*360 - 180, 90}
		case 1:
			return orb.Point{180, math.Asin(2*r.Float64()-1) * 180 / math.Pi}
		}
		return orb.Point{r.Float64()*360 - 180, math.Asin(2*r.Float64()-1) * 180 / math.Pi}
	}
	dist := func(p, q orb.Point) float64 {
		d, err := geodesy.Distance(p, q)
		if err != nil {
			t.Fatalf("%v–%v: %v", p, q, err)
		}
		return d
	}
	for range 2000 {
		a, b, c := point(), point(), point()
		ab, ba, bc, ac := dist(a, b), dist(b, a), dist(b, c), dist(a, c)
		if math.Abs(ab-ba) > 1e-6 {
			t.Errorf("%v–%v: %.6f m one way, %.6f m back", a, b, ab, ba)
		}
		if ac > ab+bc+1e-6 {
			t.Errorf("%v–%v–%v: %.6f m direct, %.6f m via the middle", a, b, c, ac, ab+bc)
		}
		samePlace := a == b || (math.Abs(a[1]) == 90 && a[1] == b[1])
		if ab > halfMeridian+1e-6 || (ab == 0) != samePlace {
			t.Errorf("%v–%v: %.6f m", a, b, ab)
		}
		if d := dist(a, a); d != 0 {
			t.Errorf("%v to itself: %.6f m", a, d)
		}
	}
}

func TestDistanceErrors(t *testing.T) {
	for _, p := range [][2]orb.Point{
		{{0, 91}, {0, 0}}, {{0, 0}, {0, -90.001}},
		{{math.NaN(), 0}, {0, 0}}, {{0, 0}, {math.Inf(1), 0}},
	} {
		if _, err := geodesy.Distance(p[0], p[1]); err == nil {
			t.Errorf("%v: no error", p)
		}
	}
}
