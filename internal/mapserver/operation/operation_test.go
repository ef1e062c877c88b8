package operation_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/quote"
)

// A front end tells a client fault from a missing thing from a refusal over a limit by
// errors.Is and errors.As alone, and never echoes a whole hostile value.
func TestRequestErrorKinds(t *testing.T) {
	invalid := operation.Invalid("where clause %q", "NAME = ")
	if !errors.Is(invalid, operation.ErrInvalidArgument) || errors.Is(invalid, operation.ErrNotFound) {
		t.Errorf("Invalid: Is(ErrInvalidArgument) %v, Is(ErrNotFound) %v; want true, false",
			errors.Is(invalid, operation.ErrInvalidArgument), errors.Is(invalid, operation.ErrNotFound))
	}
	missing := operation.NotFound("layer %d", 42)
	if !errors.Is(missing, operation.ErrNotFound) || !errors.Is(missing, operation.ErrInvalidArgument) {
		t.Errorf("NotFound: not both ErrNotFound and ErrInvalidArgument: %v", missing)
	}
	if missing.Error() != "layer 42" {
		t.Errorf("NotFound message %q, want %q", missing.Error(), "layer 42")
	}
	over := operation.OverLimit(limits.Vertices, "%d vertices", 200000)
	var le *limits.Error
	if !errors.As(over, &le) || le.Limit != limits.Vertices || !errors.Is(over, operation.ErrInvalidArgument) {
		t.Errorf("OverLimit: As *limits.Error %v (%+v), Is(ErrInvalidArgument) %v", errors.As(over, &le), le,
			errors.Is(over, operation.ErrInvalidArgument))
	}
	if errors.As(invalid, &le) {
		t.Errorf("Invalid carries a limit: %+v", le)
	}
	huge := strings.Repeat("x", 1<<20)
	if msg := operation.Invalid("field %q", huge).Error(); len(msg) > quote.MaxLen+100 {
		t.Errorf("a 1 MiB value is echoed in %d bytes of message", len(msg))
	}
}

// Geometries go to their schema form and back unchanged, with their system; polygon rings come
// back as exterior and hole whichever way they were wound.
func TestGeometryRoundTrip(t *testing.T) {
	sr := proj.SR{WKID: proj.WebMercator}
	for _, g := range []orb.Geometry{
		orb.Point{1, 2},
		orb.MultiPoint{{1, 2}, {3, 4}},
		orb.LineString{{0, 0}, {10, 0}, {10, 10}},
		orb.Polygon{
			{{0, 0}, {0, 10}, {10, 10}, {10, 0}, {0, 0}}, // clockwise: exterior
			{{2, 2}, {4, 2}, {4, 4}, {2, 4}, {2, 2}},     // counter-clockwise: hole
		},
	} {
		out := operation.GeometryOut(g, sr)
		back, gotSR, err := operation.GeometryIn(out, "Geometry")
		if err != nil {
			t.Errorf("%T: %v", g, err)
			continue
		}
		if !gotSR.Same(sr) {
			t.Errorf("%T: system %v, want %v", g, gotSR, sr)
		}
		if !orb.Equal(back, g) {
			t.Errorf("%T: back as %v, want %v", g, back, g)
		}
	}
	if _, _, err := operation.GeometryIn(&gisxml.PointN{X: 1, Y: math.NaN()}, "Geometry"); !errors.Is(err, operation.ErrInvalidArgument) {
		t.Errorf("a NaN coordinate: %v, want a client fault", err)
	}
	if _, _, err := operation.GeometryIn(nil, "Geometry"); !errors.Is(err, operation.ErrInvalidArgument) {
		t.Errorf("no geometry: %v, want a client fault", err)
	}
}
