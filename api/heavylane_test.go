package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/soap"
	"github.com/mapfarm/mapfarm/internal/task"
)

func TestHeavyLaneClassifies(t *testing.T) {
	l := HeavyLane{}.withDefaults()
	for _, tc := range []struct {
		size limits.Size
		want bool
	}{
		{limits.Size{}, false},
		{limits.Size{Vertices: 499, IDs: 9_999, Points: 9_999}, false},
		{limits.Size{Vertices: 500}, true},
		{limits.Size{IDs: 10_000}, true},
		{limits.Size{Points: 10_000}, true},
	} {
		if got := l.heavy(tc.size); got != tc.want {
			t.Errorf("heavy(%+v) = %v, want %v", tc.size, got, tc.want)
		}
	}
}

// newLaneServer is an api over the sample services with the heavy lane configured as lane; its
// exports go to export, its logs nowhere.
func newLaneServer(t *testing.T, export exporterFunc, lane HeavyLane) *Server {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ops := mapserver.New(mapserver.Params{Catalog: catalogtest.Samples(t), Exporter: export, Logger: logger, NewID: NewID,
		Limits: mapserver.Limits{MaxImageWidth: 4096, MaxImageHeight: 4096, MaxRecordCount: 1000}})
	return New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute,
		Logger: logger, Metrics: metrics.New(), HeavyLane: lane})
}

// exportSized is exportBody with an ImageWidth of width, padded with whitespace to at least
// n bytes (whitespace between elements is no content: the request decodes the same).
func exportSized(width string, n int) string {
	b := strings.Replace(exportBody, "<ImageWidth>64</ImageWidth>", "<ImageWidth>"+width+"</ImageWidth>", 1)
	if pad := n - len(b); pad > 0 {
		b = strings.Replace(b, "<MapDescription>", strings.Repeat(" ", pad)+"<MapDescription>", 1)
	}
	return b
}

// Heavy requests take turns in the heavy lane (1 slot): a second heavy request waits while the
// first runs, a normal request beside them never waits, a heavy request whose deadline passes
// while it waits gets a soap:Server fault saying the server is busy, and a heavy request whose
// client leaves gives its slot to the next.
func TestHeavyLaneQueuesHeavyRequestsOnly(t *testing.T) {
	started := make(chan int, 8) // the ImageWidth of each export the farm was asked for
	export := exporterFunc(func(ctx context.Context, job task.ExportMap) (task.Result, error) {
		started <- job.Width
		if job.Width == 65 { // the first heavy request: runs until its client leaves
			<-ctx.Done()
			return task.Result{}, ctx.Err()
		}
		return task.Result{}, errors.New("no farm in this test")
	})
	srv := newLaneServer(t, export, HeavyLane{Slots: 1, BodyBytes: 4000})
	h := srv.Handler()
	post := func(ctx context.Context, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "POST", "/arcgis/services/world/MapServer", strings.NewReader(body)))
		return rec
	}
	waiting := func() float64 {
		return value(t, srv.lane.waiting)
	}
	awaitWaiting := func(want float64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); waiting() != want; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("mapfarm_heavy_lane_requests{state=waiting} = %g, want %g", waiting(), want)
			}
		}
	}
	expectStarted := func(want int) {
		t.Helper()
		select {
		case got := <-started:
			if got != want {
				t.Fatalf("the farm was asked for width %d, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the export of width %d never started", want)
		}
	}

	// A: heavy, holds the slot until its client leaves.
	ctxA, leaveA := context.WithCancel(context.Background())
	defer leaveA()
	doneA := make(chan *httptest.ResponseRecorder, 1)
	go func() { doneA <- post(ctxA, exportSized("65", 5000)) }()
	expectStarted(65)

	// B: heavy, its deadline passes while it waits: a busy fault, and it never reached the farm.
	ctxB, cancelB := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelB()
	if rec := post(ctxB, exportSized("66", 5000)); rec.Code != 503 || !strings.Contains(rec.Body.String(), "<faultcode>soap:Server</faultcode>") ||
		!strings.Contains(rec.Body.String(), "busy with other large requests") {
		t.Errorf("heavy request past its deadline in the queue: got %d %s, want 503 soap:Server saying the server is busy", rec.Code, rec.Body)
	}
	if got := value(t, srv.lane.refused); got != 1 {
		t.Errorf("mapfarm_heavy_lane_timeouts_total = %g, want 1", got)
	}

	// C: heavy, waits for the slot.
	doneC := make(chan *httptest.ResponseRecorder, 1)
	go func() { doneC <- post(context.Background(), exportSized("67", 5000)) }()
	awaitWaiting(1)

	// N: normal, runs at once beside them.
	if rec := post(context.Background(), exportSized("64", 0)); !strings.Contains(rec.Body.String(), "soap:Server") {
		t.Errorf("normal request: got %d %s, want the farm's fault", rec.Code, rec.Body)
	}
	expectStarted(64)
	select {
	case w := <-started:
		t.Fatalf("the farm was asked for width %d while the first heavy request held the lane", w)
	default:
	}

	// A's client leaves: its slot goes to C.
	leaveA()
	if rec := <-doneA; rec.Code != statusClientClosed {
		t.Errorf("heavy request whose client left: got %d, want %d", rec.Code, statusClientClosed)
	}
	expectStarted(67)
	if rec := <-doneC; !strings.Contains(rec.Body.String(), "no farm in this test") && !strings.Contains(rec.Body.String(), "soap:Server") {
		t.Errorf("queued heavy request: got %d %s, want the farm's answer", rec.Code, rec.Body)
	}
	awaitWaiting(0)
	if got := value(t, srv.lane.running); got != 0 {
		t.Errorf("mapfarm_heavy_lane_requests{state=running} = %g after every request, want 0", got)
	}
}

// A request is heavy by what it carries once decoded, not only by its body: a query polygon of
// HeavyLane.Vertices vertices waits for the slot; one of fewer does not.
func TestHeavyLaneByVertices(t *testing.T) {
	srv := newLaneServer(t, exporterFunc(nil), HeavyLane{Slots: 1, Vertices: 50})
	query := func(n int) string {
		return soapEnvelope(`<gis:QueryFeatureCount><MapName>Layers</MapName><LayerID>1</LayerID><QueryFilter xsi:type="gis:SpatialFilter">` +
			`<FilterGeometry xsi:type="gis:PolygonN">` + polygonXML(n) + `</FilterGeometry><SpatialRel>esriSpatialRelIntersects</SpatialRel></QueryFilter></gis:QueryFeatureCount>`)
	}
	// Hold the only slot, as a heavy request in progress would.
	release, err := srv.lane.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	post := func(body string) *httptest.ResponseRecorder {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequestWithContext(ctx, "POST", "/arcgis/services/world/MapServer", strings.NewReader(body)))
		return rec
	}
	if rec := post(query(10)); rec.Code != 200 {
		t.Errorf("10-vertex query beside a busy lane: got %d %s, want 200", rec.Code, rec.Body)
	}
	if rec := post(query(50)); rec.Code != 503 || !strings.Contains(rec.Body.String(), "busy with other large requests") {
		t.Errorf("50-vertex query while the lane is full: got %d %s, want 503 busy", rec.Code, rec.Body)
	}
}

// value is the current value of a gauge or counter.
func value(t *testing.T, c prometheus.Metric) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return m.GetCounter().GetValue()
}
