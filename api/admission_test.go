package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/rest"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// restLaneServer is an api over the sample services whose SOAP endpoint and REST API share one
// Admission, of the limits lim and the heavy lane lane; its logs go nowhere.
func restLaneServer(tb testing.TB, lim limits.Request, lane HeavyLane) *Server {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cat := catalogtest.Samples(tb)
	ops := mapserver.New(mapserver.Params{Catalog: cat, NewID: NewID, Logger: logger,
		Limits: mapserver.Limits{MaxImageWidth: 4096, MaxImageHeight: 4096, MaxRecordCount: 1000}})
	adm := NewAdmission(lim, lane, nil)
	return New(Params{Ops: ops, Codec: soap.NewCodec(testNS, soap.Limits{}), MaxBodyBytes: 1 << 20, OutputTTL: time.Minute, Logger: logger,
		Admission: adm, REST: rest.New(rest.Params{Ops: ops, Services: cat, MaxRecordCount: 1000, Admit: adm.Operation, Logger: logger,
			OperationTimeout: time.Minute})})
}

// REST runs its operations under the api's one Admission, as SOAP does: with the heavy lane's
// only slot held (as by a heavy SOAP request in progress), a REST query with a multipoint of
// HeavyLane.Vertices points waits for it and is refused 503 busy at its deadline, a small one
// beside it answers at once, and one over maxVertices is refused 400 naming the limit.
func TestRESTUsesTheHeavyLane(t *testing.T) {
	srv := restLaneServer(t, limits.Request{MaxVertices: 100}, HeavyLane{Slots: 1, Vertices: 50})

	release, err := srv.lane.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	query := func(n int) (map[string]any, time.Duration) {
		var pts []string
		for i := range n {
			pts = append(pts, fmt.Sprintf("[%d,%d]", i*1000, i*500))
		}
		form := url.Values{"geometry": {`{"points":[` + strings.Join(pts, ",") + `],"spatialReference":{"wkid":3857}}`},
			"geometryType": {"esriGeometryMultipoint"}, "spatialRel": {"esriSpatialRelIntersects"}, "returnCountOnly": {"true"}, "f": {"json"}}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, "POST", "/arcgis/rest/services/world/MapServer/1/query", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		start := time.Now()
		srv.Handler().ServeHTTP(rec, req)
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%d points: HTTP %d, not JSON: %.200s", n, rec.Code, rec.Body)
		}
		return v, time.Since(start)
	}
	if v, took := query(10); errorCode(v) != 0 || v["count"] == nil || took > 250*time.Millisecond {
		t.Errorf("10-point query beside a busy lane: %v in %v, want a count at once", v, took)
	}
	v, took := query(60)
	if errorCode(v) != 503 || !strings.Contains(fmt.Sprint(v), "busy") || took < 250*time.Millisecond {
		t.Errorf("60-point query while the lane is full: %v in %v, want 503 busy at its deadline", v, took)
	}
	if v, _ := query(101); errorCode(v) != 400 || !strings.Contains(fmt.Sprint(v), "maxVertices") {
		t.Errorf("101-point query: %v, want 400 naming maxVertices", v)
	}
}
