package mapserver_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// A query whose geometry tests are slow (a DE-9IM relation against a polygon of 5,000
// vertices, seconds of work over the countries) stops at its deadline, however few rows it has
// read: the scan looks at its context before every row.
func TestSlowQueryStopsAtItsDeadline(t *testing.T) {
	f := newFixture(t)
	var pts gisxml.ArrayOfPoint
	const n = 5000
	for i := range n + 1 {
		a := 2 * math.Pi * float64(i%n) / n
		r := 1.5e7 * (1 + 0.05*math.Sin(37*a)) // a wavy ring over most of the world
		pts = append(pts, &gisxml.PointN{X: r * math.Cos(a), Y: 0.6 * r * math.Sin(a)})
	}
	filter := &gisxml.SpatialFilter{
		SpatialRel:            gisxml.SpatialRelRelation,
		SpatialRelDescription: "T*T***T**",
		FilterGeometry:        &gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{{Path: gisxml.Path{PointArray: pts}}}},
	}
	svc, _ := f.cat.Service("world")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.srv.Do(ctx, &mapserver.Call{Service: svc}, "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: filter})
	took := time.Since(start)
	if took > 1500*time.Millisecond {
		t.Errorf("the query ran %v past its 300 ms deadline", took)
	}
	if err == nil {
		t.Skipf("the query finished within its deadline (%v): the machine is faster than this test assumes", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a query past its deadline: %v, want it to wrap context.DeadlineExceeded", err)
	}
}
