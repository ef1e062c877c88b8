package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
)

// exportMapHandler renders one ExportMapImage request, writes it to the store under the key
// the api chose, and pushes the Result to the task's done list.
type exportMapHandler struct{ p Params }

// ProcessTask implements asynq.Handler.
func (h *exportMapHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	job, err := task.DecodeExportMap(t.Payload())
	if err != nil {
		h.reportUndecodable(ctx, err)
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	log := h.p.Logger.With("task_type", task.TypeExportMap, "request_id", job.TraceID, "task_id", job.ID, "service", job.Service)
	start := time.Now()
	report := func(r task.Result) { h.report(ctx, job, r) }
	size, renderTime, err := drawAndDeliver(ctx, h.p.Store, job.Key, job.Inline, func(ctx context.Context) ([]byte, render.Format, error) {
		return DrawExportMap(ctx, h.p.Catalog, h.p.Renderer, job)
	}, report)
	if err != nil {
		return fmt.Errorf("export map: %w", err)
	}
	log.Debug("rendered", "bytes", size, "render_ms", float64(renderTime.Microseconds())/1000, "total_ms", float64(time.Since(start).Microseconds())/1000)
	return nil
}

var errUnknown = errors.New("unknown service or map")

// DrawExportMap draws and encodes the image an ExportMap task asks for, resolving its service
// and map in cat: what a worker does with the task before it reports and stores the bytes. The
// api's tests draw with it too, so their stand-in for the farm cannot drift from the worker.
func DrawExportMap(ctx context.Context, cat *catalog.Catalog, r *render.Renderer, job task.ExportMap) ([]byte, render.Format, error) {
	format, err := render.ParseFormat(job.Format)
	if err != nil {
		return nil, 0, err
	}
	svc, ok := cat.Service(job.Service)
	if !ok {
		return nil, 0, fmt.Errorf("%w: service %q", errUnknown, job.Service)
	}
	m, ok := svc.Map(job.Map)
	if !ok {
		return nil, 0, fmt.Errorf("%w: map %q of service %q", errUnknown, job.Map, job.Service)
	}
	req := mapdraw.RequestFromPayload(m, job, format)
	req.Overviews = true // an answer, drawn once: see mapdraw.Request
	data, err := mapdraw.Draw(ctx, r, req)
	return data, format, err
}

// report pushes the result for the waiting api; a result nobody collects expires.
func (h *exportMapHandler) report(ctx context.Context, job task.ExportMap, r task.Result) {
	if err := reportResult(ctx, h.p.Redis, h.p.ID, job.ID, r); err != nil {
		h.p.Logger.Error("report result", "request_id", job.TraceID, "task_id", job.ID, "err", err)
	}
}

// reportUndecodable tells the waiting api that the task's payload could not be read (another
// build's payload version, most likely), instead of leaving it to time out; the task's asynq id
// is the render's id.
func (h *exportMapHandler) reportUndecodable(ctx context.Context, err error) {
	if id, ok := asynq.GetTaskID(ctx); ok {
		if rerr := reportResult(ctx, h.p.Redis, h.p.ID, id, task.Result{Error: err.Error()}); rerr != nil {
			h.p.Logger.Error("report result", "task_id", id, "err", rerr)
		}
	}
}
