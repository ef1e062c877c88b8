package geodesy_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/geodesy"
)

// City pairs with the distance PROJ's geod (Karney's algorithm) gives, to the millimetre:
// echo "lat1 lon1 lat2 lon2" | geod +ellps=WGS84 -I +units=m
var pairs = []struct {
	lon1, lat1, lon2, lat2, meters float64
	name                           string
}{
	{-0.1278, 51.5074, 2.3522, 48.8566, 343923.120, "London-Paris"},
	{-74.0060, 40.7128, -118.2437, 34.0522, 3944422.231, "NewYork-LosAngeles"},
	{139.6917, 35.6895, 151.2093, -33.8688, 7792963.055, "Tokyo-Sydney"},
	{-46.6333, -23.5505, 18.4241, -33.9249, 6355601.721, "SaoPaulo-CapeTown"},
	{37.6173, 55.7558, 116.4074, 39.9042, 5809150.567, "Moscow-Beijing"},
	{-43.1729, -22.9068, -58.3816, -34.6037, 1967090.634, "Rio-BuenosAires"},
	{28.9784, 41.0082, 31.2357, 30.0444, 1233425.375, "Istanbul-Cairo"},
	{-122.4194, 37.7749, -157.8583, 21.3069, 3857000.781, "SanFrancisco-Honolulu"},
	{103.8198, 1.3521, 106.8456, -6.2088, 901164.989, "Singapore-Jakarta"},
	{-3.7038, 40.4168, -3.7038, 40.4168, 0, "Madrid-Madrid"},
	{-21.9426, 64.1466, -149.9003, 61.2181, 5438984.492, "Reykjavik-Anchorage"},
	{0, 0, 90, 0, 10018754.171, "along the equator"},
	{0, -90, 0, 90, 20003931.459, "pole to pole"},
}

func TestDistanceTable(t *testing.T) {
	for _, p := range pairs {
		got, err := geodesy.Distance(orb.Point{p.lon1, p.lat1}, orb.Point{p.lon2, p.lat2})
		if err != nil {
			t.Fatal(err)
		}
		// The table is rounded to the millimetre.
		if math.Abs(got-p.meters) > 0.0015 {
			t.Errorf("%s: %.4f m, geod says %.3f m", p.name, got, p.meters)
		}
	}
}

// TestDistanceAgainstGeod runs PROJ's geod itself (Debian proj-bin) and demands 1 mm.
func TestDistanceAgainstGeod(t *testing.T) {
	geod, err := exec.LookPath("geod")
	if err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") == "1" {
			t.Fatal("geod (Debian proj-bin) is not installed; scripts/test.sh installs it")
		}
		t.Skip("geod not installed (apt-get install proj-bin)")
	}
	var in bytes.Buffer
	for _, p := range pairs {
		fmt.Fprintf(&in, "%g %g %g %g\n", p.lat1, p.lon1, p.lat2, p.lon2)
	}
	cmd := exec.Command(geod, "+ellps=WGS84", "-I", "+units=m", "-f", "%.6f")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pairs) {
		t.Fatalf("geod printed %d lines for %d pairs", len(lines), len(pairs))
	}
	for i, p := range pairs {
		f := strings.Fields(lines[i])
		want, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("geod line %q", lines[i])
		}
		got, _ := geodesy.Distance(orb.Point{p.lon1, p.lat1}, orb.Point{p.lon2, p.lat2})
		if math.Abs(got-want) > 0.001 {
			t.Errorf("%s: %.4f m, geod %.4f m (Δ %.2g m)", p.name, got, want, got-want)
		}
	}
}

func TestDistanceErrors(t *testing.T) {
	for _, p := range [][2]orb.Point{{{0, 91}, {0, 0}}, {{math.NaN(), 0}, {0, 0}}, {{0, 0}, {math.Inf(1), 0}}} {
		if _, err := geodesy.Distance(p[0], p[1]); err == nil {
			t.Errorf("%v: no error", p)
		}
	}
	// Nearly antipodal points still get an answer (on the sphere), within half a percent.
	d, err := geodesy.Distance(orb.Point{0, 0}, orb.Point{179.5, 0.5})
	if err != nil || math.Abs(d-19936288.579)/19936288.579 > 0.005 {
		t.Errorf("near antipode: %v, %v", d, err)
	}
}
