package task

import (
	"time"

	"github.com/hibiken/asynq"
)

// TypeExportScaleBar is the task type of ExportScaleBar renders.
const TypeExportScaleBar = "scalebar:export"

// ExportScaleBar asks for one scale bar image. The api resolves the request's map scale, units and
// symbols into Bar; the worker only draws and encodes.
type ExportScaleBar struct {
	ID     string   `json:"id"` // the asynq task id and the image's unguessable name
	Width  int      `json:"width"`
	Height int      `json:"height"`
	DPI    float64  `json:"dpi"`
	Bar    ScaleBar `json:"bar"`
	// Format is the output format name, as for ExportMap.
	Format string `json:"format"`
	// Key is the object key the image is written to.
	Key string `json:"key"`
	// Inline: the image goes back in the answer only, as for ExportMap.
	Inline bool `json:"inline,omitempty"`
}

// NewExportScaleBar builds the asynq task for an ExportScaleBar on the interactive queue; its asynq
// id is the request id.
func NewExportScaleBar(p ExportScaleBar, timeout time.Duration) (*asynq.Task, error) {
	return interactive(TypeExportScaleBar, p.ID, p, timeout)
}

// DecodeExportScaleBar reads an ExportScaleBar payload.
func DecodeExportScaleBar(b []byte) (ExportScaleBar, error) {
	return decode[ExportScaleBar](TypeExportScaleBar, b)
}
