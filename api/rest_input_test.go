package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// A REST server error is logged at ERROR with the request id its answer carries, also when the
// client sent none (or one the api refused and replaced).
func TestRESTErrorLogCarriesTheAnswersRequestID(t *testing.T) {
	logs := &testenv.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := sampleAPI(t, func(p *sampleParams) {
		p.Ops.Logger, p.API.Logger, p.REST.Logger = logger, logger, logger
		p.Ops.Exporter = exporterFunc(func(context.Context, task.ExportMap) (task.Result, error) {
			return task.Result{}, errors.New("minio: connection refused")
		})
	})
	for _, sent := range []string{"", "bad id with spaces"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/arcgis/rest/services/world/MapServer/export?bbox=-180,-90,180,90&size=64,64&f=json", nil)
		if sent != "" {
			req.Header.Set("X-Request-Id", sent)
		}
		h.ServeHTTP(rec, req)
		id := rec.Header().Get("X-Request-Id")
		if id == "" || id == sent || !strings.Contains(rec.Body.String(), `"code":500`) {
			t.Fatalf("sent id %q: answer id %q, body %s; want a fresh id and a 500", sent, id, rec.Body)
		}
		var line string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=ERROR") && strings.Contains(l, "rest operation failed") {
				line = l
			}
		}
		if !strings.Contains(line, "request_id="+id+" ") {
			t.Errorf("sent id %q: the ERROR line lacks the answer's id %s: %q", sent, id, line)
		}
	}
}

// HEAD is answered on the REST resources as GET is (status and content type), on the JSON
// resources, the services directory's pages and the map viewer, as it is on tiles.
func TestRESTHead(t *testing.T) {
	h, _ := restServer(t, Security{})
	for path, ctype := range map[string]string{
		"/arcgis/rest/info?f=json":                             "application/json",
		"/arcgis/rest/services?f=json":                         "application/json",
		"/arcgis/rest/services/world/MapServer?f=pjson":        "application/json",
		"/arcgis/rest/services/world/MapServer/1?f=json":       "application/json",
		"/arcgis/rest/services":                                "text/html",
		"/arcgis/rest/services/world/MapServer":                "text/html",
		"/arcgis/rest/services/world/MapServer/1/query?f=html": "text/html",
		"/arcgis/rest/services/world/MapServer/viewer":         "text/html",
		"/arcgis/rest/services/world/MapServer/layers?f=json":  "application/json",
	} {
		get := httptest.NewRecorder()
		h.ServeHTTP(get, httptest.NewRequest(http.MethodGet, path, nil))
		head := httptest.NewRecorder()
		h.ServeHTTP(head, httptest.NewRequest(http.MethodHead, path, nil))
		if head.Code != http.StatusOK || head.Code != get.Code || !strings.HasPrefix(head.Header().Get("Content-Type"), ctype) {
			t.Errorf("HEAD %s: %d %q (GET: %d %q), want 200 %s", path, head.Code, head.Header().Get("Content-Type"), get.Code, get.Header().Get("Content-Type"), ctype)
		}
	}
}
