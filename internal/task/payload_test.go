package task_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/task"
)

func TestExportScaleBarPayload(t *testing.T) {
	job := task.ExportScaleBar{ID: "r1", Width: 400, Height: 40, DPI: 96, Format: "png32", Key: "outputs/r1.png",
		Bar: task.ScaleBar{Kind: "single", PixelsPerUnit: 10, Divisions: 3, UnitLabel: "km",
			Fill1: task.Color{1, 2, 3, 255}, Number: task.NumberFormat{Digits: 2, Separator: true}}}
	tk, err := task.NewExportScaleBar(job, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Type() != task.TypeExportScaleBar {
		t.Errorf("type %q", tk.Type())
	}
	got, err := task.DecodeExportScaleBar(tk.Payload())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, job) {
		t.Errorf("round trip: %+v, want %+v", got, job)
	}
	if _, err := task.DecodeExportScaleBar([]byte("{")); err == nil {
		t.Error("bad payload decoded")
	}
}

// TestExportMapOptional: a payload without the optional drawing options decodes, and the
// options survive a round trip through the task constructor.
func TestExportMapOptional(t *testing.T) {
	bare := `{"v":5,"p":{"id":"r","service":"world","map":"Layers","extent":[0,0,1,1],"width":10,"height":10,"dpi":96,
		"layers":[{"id":1,"visible":true,"showLabels":false}],"format":"png","key":"k"}}`
	job, err := task.DecodeExportMap([]byte(bare))
	if err != nil || job.Layers[0].Drawing != nil || job.Graphics != nil {
		t.Fatalf("payload without options: %+v, %v", job, err)
	}
	job.Layers[0].Drawing = &task.Drawing{Transparency: 30, Selection: []int64{4},
		Renderer: &task.Renderer{Type: "simple", Symbol: &task.Symbol{Type: "simpleFill", Color: task.Color{9, 0, 0, 255}}}}
	job.Graphics = []task.Graphic{{Kind: "marker", Parts: [][][2]float64{{{1, 2}}}}}
	tk, err := task.NewExportMap(job, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	back, err := task.DecodeExportMap(tk.Payload())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, job) {
		t.Errorf("round trip: %+v, want %+v", back, job)
	}
}

// TestEmptyLabelsSurvive: a drawing description with no label classes turns labels off, so the
// empty list must not become "use the layer's" on the way to the worker.
func TestEmptyLabelsSurvive(t *testing.T) {
	b, err := json.Marshal(task.LayerOverride{ID: 1, Drawing: &task.Drawing{Labels: []task.Label{}}})
	if err != nil {
		t.Fatal(err)
	}
	var back task.LayerOverride
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Drawing.Labels == nil {
		t.Errorf("empty label classes decoded as nil from %s", b)
	}
}

// A payload of another version — one written as version 1 did, with no envelope, or one of
// version 2, whose drawings were the service definition's types — is refused with ErrVersion,
// not read as if it were current.
func TestPayloadVersion(t *testing.T) {
	v2 := []byte(`{"v":2,"p":{"requestId":"r1","service":"world","map":"Layers","extent":[0,0,1,1],"width":10,"height":10,"dpi":96,"format":"png","key":"k"}}`)
	if _, err := task.DecodeExportMap(v2); !errors.Is(err, task.ErrVersion) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("a version 2 payload: err = %v, want ErrVersion naming version 2", err)
	}
	old := []byte(`{"requestId":"r1","service":"world","map":"Layers","extent":[0,0,1,1],"width":10,"height":10,"dpi":96,"format":"png","key":"k"}`)
	if _, err := task.DecodeExportMap(old); !errors.Is(err, task.ErrVersion) || !strings.Contains(err.Error(), "version 0") {
		t.Errorf("an unversioned payload: err = %v, want ErrVersion naming version 0", err)
	}
	future := []byte(`{"v":99,"p":{"job":"j"}}`)
	if _, err := task.DecodeSeedRender(future); !errors.Is(err, task.ErrVersion) {
		t.Errorf("a version 99 payload: err = %v, want ErrVersion", err)
	}
	tk, err := task.NewSeedMerge(task.SeedMerge{Job: "j", Layer: -1, Parts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(tk.Payload()), `{"v":5,"p":{`) {
		t.Errorf("payload %s does not start with its version", tk.Payload())
	}
	if m, err := task.DecodeSeedMerge(tk.Payload()); err != nil || m.Job != "j" || m.Parts != 2 {
		t.Errorf("round trip: %+v, %v", m, err)
	}
}

// TestPayloadsArePlain: the payload types are the task package's own. It imports none of the
// packages that define service definitions, drawing or data, so a change there cannot change
// what a queued task means.
func TestPayloadsArePlain(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"/internal/servicedef", "/internal/mapdraw", "/internal/render", "/internal/catalog", "/internal/feature"} {
			if strings.HasSuffix(dep, banned) {
				t.Errorf("internal/task depends on %s", dep)
			}
		}
	}
}

// A result travels as its JSON and then the image's raw bytes (no base64), and a plain JSON
// result from an earlier build still reads.
func TestResultFrame(t *testing.T) {
	img := []byte("\x89PNG\r\n\x1a\n\x00\x01binary\nwith newlines")
	r := task.Result{Key: "outputs/x.png", ContentType: "image/png", Size: len(img), Data: img, Worker: "w:1"}
	b, err := task.EncodeResult(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, img) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(img))) {
		t.Errorf("the image is not carried raw: %q", b)
	}
	back, err := task.DecodeResult(b)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	noData := task.Result{Error: "boom", ClientError: true}
	if b, _ := task.EncodeResult(noData); true {
		if back, err := task.DecodeResult(b); err != nil || !reflect.DeepEqual(back, noData) {
			t.Errorf("a result without an image: %+v, %v", back, err)
		}
	}
	old, _ := json.Marshal(r)
	if back, err := task.DecodeResult(old); err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("a JSON result: %+v, %v", back, err)
	}
}
