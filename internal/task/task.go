// Package task defines the work the farm queues: the task type names, their queues, their JSON
// payloads and the results workers report back. The api and the coordinator build tasks with
// the constructors here; the worker registers one handler per type name. Nothing here renders
// or stores anything.
//
// Payloads are this package's own plain structs: a service and map by name, the layers' states,
// the view, the format and the options (drawing.go holds the drawing descriptions, graphics and
// scale bars), never the service-definition or drawing types, so the worker resolves the map and
// its data sources from its own catalog and a refactoring elsewhere cannot change what a queued
// task means. Every payload travels in a versioned envelope (PayloadVersion); a worker refuses a
// payload of another version with ErrVersion and never retries it.
//
// Interactive results travel back on a Redis list named by DoneKey: the worker pushes one
// Result, the api blocks on the list (BLPOP) for at most its render timeout. That is quicker
// than polling asynq's task state, and a result nobody waits for expires.
package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Queues. Workers weigh interactive and seed 6:1, so seeding never starves interactive renders;
// QueueHeavy, the interactive renders of high cost (lanes.go), has a lane of its own in every
// worker, with fewer slots, so that expensive renders never hold them all.
const (
	QueueInteractive = "interactive"
	QueueHeavy       = "heavy"
	QueueSeed        = "seed"
)

// QueuePriorities names every queue with the asynq weight a worker gives it within its lane
// (QueueHeavy is alone in its lane).
func QueuePriorities() map[string]int {
	return map[string]int{QueueInteractive: 6, QueueHeavy: 6, QueueSeed: 1}
}

// Task type names.
const (
	TypeExportMap = "map:export"
)

// ResultTTL is how long an unclaimed result stays in Redis.
const ResultTTL = 2 * time.Minute

// DoneKey names the Redis list a task's result is pushed to.
func DoneKey(id string) string { return "mapfarm:done:" + id }

// AbandonedKey names the Redis key that marks an interactive task its client stopped waiting
// for (internal/farm sets it, for ResultTTL): a worker that meets the task again, on a retry,
// drops it undrawn.
func AbandonedKey(id string) string { return "mapfarm:abandoned:" + id }

// LayerOverride is what a request changes of one layer for one render.
type LayerOverride struct {
	ID                   int    `json:"id"`
	Visible              bool   `json:"visible"`
	ShowLabels           bool   `json:"showLabels"`
	DefinitionExpression string `json:"definitionExpression,omitempty"`
	// Drawing is the request's drawing description and selection of the layer, when it has any.
	Drawing *Drawing `json:"drawing,omitempty"`
}

// ExportMap asks for one map image.
type ExportMap struct {
	// ID names the render: the asynq task id and the image's unguessable name.
	ID string `json:"id"`
	// TraceID is the id of the HTTP request that asked for it, so logs follow the job from the
	// api to the worker.
	TraceID string `json:"traceId,omitempty"`
	Service string `json:"service"`
	Map     string `json:"map"`
	// Extent is xmin, ymin, xmax, ymax in the map's spatial reference (or SpatialReference),
	// already fitted to the image's aspect ratio.
	Extent [4]float64 `json:"extent"`
	// SpatialReference, when set, is the system the map is drawn in, when it is not the map's
	// own: its data are projected on the fly.
	SpatialReference *SpatialReference `json:"sr,omitempty"`
	Width            int               `json:"width"`
	Height           int               `json:"height"`
	DPI              float64           `json:"dpi"`
	Rotation         float64           `json:"rotation,omitempty"`
	// Layers lists every layer's state for this render, in drawing order (bottom first).
	Layers []LayerOverride `json:"layers"`
	// Background overrides the map's background colour (RGBA), when set.
	Background *[4]uint8 `json:"background,omitempty"`
	// Transparent, when set, is the colour made fully transparent in the output (RGB).
	Transparent *[3]uint8 `json:"transparent,omitempty"`
	// Format is the output format: "png", "png8", "png24", "png32", "jpg", "gif", … (see
	// internal/render's formats).
	Format string `json:"format"`
	// Key is the object key the image is written to.
	Key string `json:"key"`
	// Inline says the client takes the image in the answer (MIME data): the worker sends the
	// bytes back and writes nothing to the store, unless they are over MaxInlineBytes.
	Inline bool `json:"inline,omitempty"`
	// SelectionColor is the MapDescription's selection colour (RGBA), when set.
	SelectionColor *[4]uint8 `json:"selectionColor,omitempty"`
	// Graphics are the MapDescription's custom graphics, drawn over the map.
	Graphics []Graphic `json:"graphics,omitempty"`
}

// SpatialReference names a coordinate system: its WKID, or its well-known text.
type SpatialReference struct {
	WKID int    `json:"wkid,omitempty"`
	WKT  string `json:"wkt,omitempty"`
}

// MaxInlineBytes is the largest image a worker sends back in its Result; larger ones are only
// written to the store, before the result is reported.
const MaxInlineBytes = 8 << 20

// Result is what a worker reports for an interactive task.
type Result struct {
	Key         string `json:"key,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Size        int    `json:"size,omitempty"`
	Data        []byte `json:"data,omitempty"`
	RenderNanos int64  `json:"renderNanos,omitempty"`
	// Worker names the worker process that did the task (host:pid).
	Worker string `json:"worker,omitempty"`
	// Error is set when the task failed; ClientError tells a bad request from a server fault.
	Error       string `json:"error,omitempty"`
	ClientError bool   `json:"clientError,omitempty"`
}

// EncodeResult writes a Result as it travels through Redis: its JSON without the image, a
// newline, then the image's bytes as they are (no base64: a Redis string holds bytes).
func EncodeResult(r Result) ([]byte, error) {
	data := r.Data
	r.Data = nil
	head, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("task: encode result: %w", err)
	}
	out := make([]byte, 0, len(head)+1+len(data))
	out = append(append(append(out, head...), '\n'), data...)
	return out, nil
}

// DecodeResult reads what EncodeResult wrote (and a plain JSON Result, as earlier builds wrote
// it: JSON never holds a raw newline).
func DecodeResult(b []byte) (Result, error) {
	var r Result
	head, data, framed := bytes.Cut(b, []byte{'\n'})
	if err := json.Unmarshal(head, &r); err != nil {
		return Result{}, fmt.Errorf("task: decode result: %w", err)
	}
	if framed && len(data) > 0 {
		r.Data = data
	}
	return r, nil
}

// NewExportMap builds the asynq task for an ExportMap; its asynq id is the request id, so a
// retried enqueue cannot duplicate it.
func NewExportMap(p ExportMap, timeout time.Duration) (*asynq.Task, error) {
	return interactive(TypeExportMap, p.ID, p, timeout)
}

// DecodeExportMap reads an ExportMap payload.
func DecodeExportMap(b []byte) (ExportMap, error) { return decode[ExportMap](TypeExportMap, b) }

// interactive builds a task on the interactive queue: one retry, due within timeout, with the
// request id as its asynq id so that a retried enqueue cannot duplicate it.
func interactive(typ, id string, payload any, timeout time.Duration) (*asynq.Task, error) {
	b, err := encode(typ, payload)
	if err != nil {
		return nil, err
	}
	return asynq.NewTask(typ, b,
		asynq.Queue(QueueInteractive),
		asynq.TaskID(id),
		asynq.MaxRetry(1),
		asynq.Timeout(timeout),
		asynq.Deadline(time.Now().Add(timeout)),
	), nil
}

// PayloadVersion is the version of every task payload this build writes and reads. A change
// that alters what a payload means bumps it, so a worker of another build refuses the task
// (ErrVersion, never retried) instead of mis-reading it: during a rolling upgrade, run workers
// of the new version before the api and coordinator that enqueue for them, or drain the queues.
//
// Version 5 (this build) added ExportMap.SpatialReference (a map drawn in another system than
// its own: an older worker would draw the extent in the map's system); version 4 added
// ExportMap.Inline and the results' raw image frame (EncodeResult); version 3 made the drawing
// types the payload's own (drawing.go).
const PayloadVersion = 5

// ErrVersion is wrapped by the error of a payload of another version than PayloadVersion.
var ErrVersion = errors.New("task payload of another version")

// envelope is the wire form of every payload: its version, then the payload itself.
type envelope struct {
	V int             `json:"v"`
	P json.RawMessage `json:"p"`
}

// encode writes a payload in its versioned envelope.
func encode(typ string, payload any) ([]byte, error) {
	p, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("task: encode %s: %w", typ, err)
	}
	b, err := json.Marshal(envelope{V: PayloadVersion, P: p})
	if err != nil {
		return nil, fmt.Errorf("task: encode %s: %w", typ, err)
	}
	return b, nil
}

// decode reads a task payload of type T from its envelope, refusing other versions (version 1
// payloads had no envelope and read as version 0).
func decode[T any](typ string, b []byte) (T, error) {
	var p T
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return p, fmt.Errorf("task: decode %s: %w", typ, err)
	}
	if env.V != PayloadVersion {
		return p, fmt.Errorf("task: %s: %w: version %d, this build reads version %d; run matching mapfarm versions or drain the queue",
			typ, ErrVersion, env.V, PayloadVersion)
	}
	if err := json.Unmarshal(env.P, &p); err != nil {
		return p, fmt.Errorf("task: decode %s: %w", typ, err)
	}
	return p, nil
}
