package queries_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/mapservertest"
)

// A query whose geometry tests are slow (a DE-9IM relation against a polygon of 5,000
// vertices, seconds of work over the countries) stops at its deadline, however few rows it has
// read: the scan looks at its context before every row.
func TestSlowQueryStopsAtItsDeadline(t *testing.T) {
	checkRelationDeadline(t, 5000, 1500*time.Millisecond)
}

// The largest filter geometry a request may carry (limits.DefaultMaxVertices, 100,000
// vertices; the query with one ran 15 minutes) stops at its deadline too: one row's
// DE-9IM test of it takes a few hundred milliseconds (0.3 s on the 2-core test machine), and
// the scan looks at its context between rows (3.8 s under -race: the bound is loose).
func TestLargestPolygonStopsAtItsDeadline(t *testing.T) {
	checkRelationDeadline(t, limits.DefaultMaxVertices, 10*time.Second)
}

// checkRelationDeadline runs a DE-9IM relation query with a polygon of n vertices over the
// countries under a 300 ms deadline and wants it answered within bound.
func checkRelationDeadline(t *testing.T, n int, bound time.Duration) {
	f := mapservertest.New(t)
	var pts gisxml.ArrayOfPoint
	for i := range n + 1 {
		a := 2 * math.Pi * float64(i%n) / float64(n)
		r := 1.5e7 * (1 + 0.05*math.Sin(37*a)) // a wavy ring over most of the world
		pts = append(pts, &gisxml.PointN{X: r * math.Cos(a), Y: 0.6 * r * math.Sin(a)})
	}
	filter := &gisxml.SpatialFilter{
		SpatialRel:            gisxml.SpatialRelRelation,
		SpatialRelDescription: "T*T***T**",
		FilterGeometry:        &gisxml.PolygonN{RingArray: gisxml.ArrayOfRing{{Path: gisxml.Path{PointArray: pts}}}},
	}
	svc, _ := f.Cat.Service("world")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.Srv.Do(ctx, &mapserver.Call{Service: svc}, "QueryFeatureCount", &gisxml.QueryFeatureCount{LayerID: 1, QueryFilter: filter})
	took := time.Since(start)
	t.Logf("%d vertices: answered after %v", n, took)
	if took > bound {
		t.Errorf("the query ran %v past its 300 ms deadline", took)
	}
	if err == nil {
		t.Skipf("the query finished within its deadline (%v): the machine is faster than this test assumes", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a query past its deadline: %v, want it to wrap context.DeadlineExceeded", err)
	}
}
