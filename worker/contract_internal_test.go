package worker

import (
	"bytes"
	"context"
	"image/png"
	"log/slog"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog/catalogtest"

	"github.com/redis/go-redis/v9"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// The contract between the api's tests and the farm: a job with every option (transparent
// colour, background, selection colour, a layer's drawing and selection, graphics) drawn by a
// real worker through Redis gives the very bytes DrawExportMap gives, which the api's tests
// use as their farm.
func TestWorkerDrawsWhatItsStandInDraws(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t), DB: testenv.RedisDB(t)})
	t.Cleanup(func() { rdb.Close() })
	cat := catalogtest.Samples(t)
	r, err := render.NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	w := New(Params{Redis: rdb, Catalog: cat, Queues: []string{task.QueueInteractive}, Renderer: r, Store: &memStore{objs: map[string][]byte{}},
		Logger: slog.New(slog.DiscardHandler)})
	runWorker(t, w)

	job := task.ExportMap{ID: "contract-" + t.Name(), Service: "world", Map: "Layers", Extent: [4]float64{-2e7, -1e7, 2e7, 1e7},
		Width: 400, Height: 200, DPI: 96, Format: "png32", Key: "outputs/contract.png", Inline: true,
		Background:     &[4]uint8{10, 20, 30, 255},
		Transparent:    &[3]uint8{10, 20, 30},
		SelectionColor: &[4]uint8{255, 0, 255, 255},
		Layers: []task.LayerOverride{
			{ID: 0, Visible: true},
			{ID: 1, Visible: true, Drawing: &task.Drawing{Selection: []int64{1, 2, 3}, Transparency: 20,
				Renderer: &task.Renderer{Type: "simple", Symbol: &task.Symbol{Type: "simpleFill", FillStyle: "solid", Color: task.Color{200, 180, 120, 255},
					Outline: &task.Outline{Color: task.Color{60, 60, 60, 255}, Width: 0.5}}}}},
		},
		Graphics: []task.Graphic{{Kind: "text", Parts: [][][2]float64{{{0, 0}}}, Text: "contract",
			Font: &task.GraphicFont{Font: task.Font{Size: 14, Bold: true}, Color: task.Color{0, 0, 0, 255}}}},
	}
	want, _, err := DrawExportMap(context.Background(), cat, r, job)
	if err != nil {
		t.Fatal(err)
	}
	res, err := farm.NewClient(rdb, 20*time.Second).Export(context.Background(), job)
	if err != nil || res.Error != "" {
		t.Fatalf("through the worker: %+v, %v", res, err)
	}
	if !bytes.Equal(res.Data, want) {
		t.Fatalf("the worker drew %d bytes, its stand-in %d: they differ", len(res.Data), len(want))
	}
	img, err := png.Decode(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, a := img.At(60, 100).RGBA(); a != 0 { // the Pacific at 140°W on the equator
		t.Error("the transparent colour (the background) is not transparent: the option was dropped")
	}
}
