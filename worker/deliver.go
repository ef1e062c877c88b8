package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
)

// drawAndDeliver draws an image task's image and ends the task: a failed draw as renderFailed
// does, an image drawn by delivering it (deliver). It returns the image's size and how long the
// draw took, for the task's log.
func drawAndDeliver(ctx context.Context, store Store, key string, inline bool,
	draw func(context.Context) ([]byte, render.Format, error), report func(task.Result)) (int, time.Duration, error) {
	start := time.Now()
	data, format, err := draw(ctx)
	renderTime := time.Since(start)
	if err != nil {
		return 0, renderTime, renderFailed(ctx, err, report)
	}
	return len(data), renderTime, deliver(ctx, store, key, inline, data, format, renderTime, report)
}

// renderFailed ends an image task whose render failed with err. The client's own errors (a
// bad request, an unknown service or map, an image too large, an invalid view or format) are
// reported at once and not retried; any other is retried once before it is reported.
func renderFailed(ctx context.Context, err error, report func(task.Result)) error {
	var bad *mapdraw.ErrBadRequest
	if errors.As(err, &bad) || errors.Is(err, errUnknown) || errors.Is(err, render.ErrImageTooLarge) ||
		errors.Is(err, render.ErrInvalidView) || errors.Is(err, render.ErrUnsupportedFormat) {
		report(task.Result{Error: err.Error(), ClientError: true})
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	if retried, _ := asynq.GetRetryCount(ctx); retried >= 1 {
		report(task.Result{Error: err.Error()})
	}
	return err
}

// deliver hands a rendered image to the waiting api (report) and writes it to the store under
// key. An image that fits in the Result goes to the api first, which answers from those bytes
// and serves the image URL from memory until the write lands, so the object store's write
// latency is off the request's path; one asked inline (as MIME data) is in the answer only. A
// larger image is written first and the api told where. A failed write fails the task, and
// asynq renders and writes it again (reported to the api on the retry).
func deliver(ctx context.Context, store Store, key string, inline bool, data []byte, format render.Format,
	renderTime time.Duration, report func(task.Result)) error {
	res := task.Result{Key: key, ContentType: format.ContentType(), Size: len(data), RenderNanos: renderTime.Nanoseconds()}
	if len(data) <= task.MaxInlineBytes {
		res.Data = data
		report(res)
		if inline {
			return nil
		}
	}
	if err := store.Put(ctx, key, data, format.ContentType()); err != nil {
		if retried, _ := asynq.GetRetryCount(ctx); retried >= 1 {
			report(task.Result{Error: "store: " + err.Error()})
		}
		return err
	}
	if res.Data == nil {
		report(res)
	}
	return nil
}
