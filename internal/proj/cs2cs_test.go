//go:build proj

package proj_test

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

	"github.com/mapfarm/mapfarm/internal/proj"
)

// TestMatchesCS2CS checks that PROJ through mapfarm answers what PROJ's own cs2cs answers, to
// 1 cm, for a table of systems (UTM, national Albers, LAEA Europe, Lambert-93, a state plane
// in US feet, polar stereographic north and south, Esri systems, datum shifts to OSGB36,
// NAD27 and CH1903+) and points, both ways.
func TestMatchesCS2CS(t *testing.T) {
	cs2cs, err := exec.LookPath("cs2cs")
	if err != nil {
		if os.Getenv("MAPFARM_REQUIRE_SERVICES") != "" {
			t.Fatalf("cs2cs (Debian proj-bin) is required: %v", err)
		}
		t.Skip("cs2cs not installed (Debian proj-bin); scripts/test.sh installs it")
	}
	lonlat := func(ps ...float64) []orb.Point {
		out := make([]orb.Point, 0, len(ps)/2)
		for i := 0; i+1 < len(ps); i += 2 {
			out = append(out, orb.Point{ps[i], ps[i+1]})
		}
		return out
	}
	// inSwap/outSwap: cs2cs reads and writes the authority's axis order, latitude first for
	// EPSG's geographic systems and northing first for 3035; mapfarm always uses x, y.
	tests := []struct {
		from, to        int
		inSwap, outSwap bool
		pts             []orb.Point
	}{
		{4326, 32633, true, false, lonlat(15, 52, 12.5, 41.9, 9.1, 0.5)},
		{4326, 32618, true, false, lonlat(-74.006, 40.7128)},
		{4326, 32755, true, false, lonlat(151.2, -33.87)},
		{4326, 5070, true, false, lonlat(-98, 39, -122.4, 37.8, -70, 44, -80.2, 25.8)},
		{4326, 3035, true, true, lonlat(10, 52, -9, 38.7, 25, 60, 2.35, 48.85)},
		{4326, 2154, true, false, lonlat(2.35, 48.85, 5.37, 43.3, -1.55, 47.2)},
		{4326, 2263, true, false, lonlat(-73.98, 40.75, -73.5, 40.9)},
		{4326, 3413, true, false, lonlat(-45, 75, 100, 85, -150, 70)},
		{4326, 3031, true, false, lonlat(0, -75, 160, -80, -60, -65)},
		{4326, 27700, true, false, lonlat(-0.1276, 51.5072, -3.19, 55.95)},
		{4326, 2056, true, false, lonlat(7.44, 46.95, 8.54, 47.37)},
		{4326, 4267, true, true, lonlat(-98, 39, -77, 38.9)},
		{4326, 3857, true, false, lonlat(-74, 40.7, 179.9, -60)},
		{4326, 102003, true, false, lonlat(-98, 39, -110, 45)},
		{4326, 54030, true, false, lonlat(100, 20, -60, -30)},
		{5070, 4326, false, true, lonlat(-12000, 1600000, 1500000, 2500000)},
		{3035, 4326, true, true, lonlat(4321000, 3210000, 2000000, 4000000)},
		{2154, 3035, false, true, lonlat(652000, 6862000, 900000, 6300000)},
		{27700, 4326, false, true, lonlat(530000, 180000, 325000, 673000)},
		{3857, 5070, false, false, lonlat(-10909310, 4721671, -8238310, 4970072)},
		{3413, 3031, false, false, lonlat(0, 0)},
	}
	sys := proj.NewSystems(0)
	var worst float64
	var worstAt string
	for _, tc := range tests {
		name := fmt.Sprintf("%d→%d", tc.from, tc.to)
		tr, err := sys.Transformer(proj.SR{WKID: tc.from}, proj.SR{WKID: tc.to})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := append([]orb.Point(nil), tc.pts...)
		if err := tr.Forward(got); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		want := runCS2CS(t, cs2cs, authority(tc.from), authority(tc.to), tc.pts, tc.inSwap, tc.outSwap)
		// 1 cm: in the target's unit for a projected system, in degrees (1 cm is 9e-8° of
		// latitude, and of longitude on the equator; less elsewhere, so this is strict) for a
		// geographic one.
		tol := 0.01 / tr.Target.MetersPerUnit
		if tr.Target.Geographic {
			tol = 0.01 / proj.MetersPerDegree
		}
		for i := range got {
			d := math.Max(math.Abs(got[i][0]-want[i][0]), math.Abs(got[i][1]-want[i][1]))
			m := d * tr.Target.MetersPerUnit
			if m > worst {
				worst, worstAt = m, fmt.Sprintf("%s %v", name, tc.pts[i])
			}
			if !(d <= tol) {
				t.Errorf("%s %v: mapfarm %.9f, %.9f; cs2cs %.9f, %.9f (off by %.3g m)", name, tc.pts[i], got[i][0], got[i][1], want[i][0], want[i][1], m)
			}
		}
		if tc.to == 54030 {
			continue // PROJ's Robinson inverse is an approximation (metres), cs2cs's too
		}
		back := append([]orb.Point(nil), got...)
		if err := tr.Inverse(back); err != nil {
			t.Errorf("%s inverse: %v", name, err)
			continue
		}
		for i := range back {
			if d := math.Max(math.Abs(back[i][0]-tc.pts[i][0]), math.Abs(back[i][1]-tc.pts[i][1])); d*tr.Source.MetersPerUnit > 0.01 {
				t.Errorf("%s: round trip %v → %v → %v", name, tc.pts[i], got[i], back[i])
			}
		}
	}
	t.Logf("largest difference from cs2cs: %.3g m (%s), over %d systems pairs", worst, worstAt, len(tests))
}

// authority names a WKID for cs2cs: EPSG's, else Esri's.
func authority(wkid int) string {
	if wkid >= 53000 && wkid < 200000 && wkid != 900913 {
		return "ESRI:" + strconv.Itoa(wkid)
	}
	return "EPSG:" + strconv.Itoa(wkid)
}

func runCS2CS(t *testing.T, cs2cs, from, to string, pts []orb.Point, inSwap, outSwap bool) []orb.Point {
	t.Helper()
	var in strings.Builder
	for _, p := range pts {
		a, b := p[0], p[1]
		if inSwap {
			a, b = b, a
		}
		fmt.Fprintf(&in, "%.12f %.12f\n", a, b)
	}
	cmd := exec.Command(cs2cs, "-f", "%.12f", from, to)
	cmd.Stdin = strings.NewReader(in.String())
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cs2cs %s %s: %v: %s", from, to, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(pts) {
		t.Fatalf("cs2cs %s %s: %d lines for %d points: %q", from, to, len(lines), len(pts), out.String())
	}
	res := make([]orb.Point, len(pts))
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Fatalf("cs2cs line %q", l)
		}
		a, err1 := strconv.ParseFloat(f[0], 64)
		b, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("cs2cs %s %s: line %q", from, to, l)
		}
		if outSwap {
			a, b = b, a
		}
		res[i] = orb.Point{a, b}
	}
	return res
}
