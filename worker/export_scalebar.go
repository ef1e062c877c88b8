package worker

import (
	"bytes"
	"context"
	"fmt"
	"image"

	"github.com/hibiken/asynq"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
)

// exportScaleBarHandler draws one ExportScaleBar image, reports it to the waiting api and writes
// it to the store under the key the api chose, as exportMapHandler does (deliver).
type exportScaleBarHandler struct{ p Params }

// ProcessTask implements asynq.Handler.
func (h *exportScaleBarHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	job, err := task.DecodeExportScaleBar(t.Payload())
	if err != nil {
		if id, ok := asynq.GetTaskID(ctx); ok {
			h.report(ctx, id, task.Result{Error: err.Error()})
		}
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	report := func(r task.Result) { h.report(ctx, job.ID, r) }
	_, _, err = drawAndDeliver(ctx, h.p.Store, job.Key, job.Inline, func(ctx context.Context) ([]byte, render.Format, error) {
		return DrawScaleBar(ctx, h.p.Renderer, job)
	}, report)
	if err != nil {
		return fmt.Errorf("export scale bar: %w", err)
	}
	return nil
}

// DrawScaleBar draws and encodes the image an ExportScaleBar task asks for, as a worker does;
// the api's tests draw with it too.
func DrawScaleBar(ctx context.Context, r *render.Renderer, job task.ExportScaleBar) ([]byte, render.Format, error) {
	format, err := render.ParseFormat(job.Format)
	if err != nil {
		return nil, 0, err
	}
	bar := mapdraw.ScaleBarFromPayload(job.Bar)
	v := render.View{Extent: orb.Bound{Max: orb.Point{1, 1}}, Width: job.Width, Height: job.Height, DPI: job.DPI}
	var buf bytes.Buffer
	err = r.DrawFuncEncoded(ctx, &buf, v, format, render.EncodeOptions{},
		func(ctx context.Context, s render.Surface) error {
			_, err := r.DrawScaleBar(ctx, s, bar, job.Width, job.Height, job.DPI)
			return err
		},
		func(ctx context.Context) (*image.RGBA, error) {
			if err := v.Validate(); err != nil {
				return nil, err
			}
			img := image.NewRGBA(image.Rect(0, 0, job.Width, job.Height))
			_, err := r.DrawScaleBar(ctx, render.NewGGSurface(img, r.Fonts()), bar, job.Width, job.Height, job.DPI)
			return img, err
		})
	return buf.Bytes(), format, err
}

// report pushes the result for the waiting api; a result nobody collects expires.
func (h *exportScaleBarHandler) report(ctx context.Context, requestID string, r task.Result) {
	if err := reportResult(ctx, h.p.Redis, h.p.ID, requestID, r); err != nil {
		h.p.Logger.Error("report result", "request_id", requestID, "err", err)
	}
}
