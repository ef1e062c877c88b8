package task

import "testing"

// A render's cost is its pixels times its full-size surfaces, and the queue follows from it.
func TestLanes(t *testing.T) {
	buffered := &Drawing{Selection: []int64{1}, ShowBuffer: true, BufferDistance: 1e7}
	for _, tc := range []struct {
		name  string
		job   ExportMap
		cost  int64
		queue string
	}{
		{"256×256", ExportMap{Width: 256, Height: 256}, 256 * 256, QueueInteractive},
		{"2048×2047", ExportMap{Width: 2048, Height: 2047}, 2048 * 2047, QueueInteractive},
		{"2048×2048", ExportMap{Width: 2048, Height: 2048}, 2048 * 2048, QueueHeavy},
		{"4096×4096", ExportMap{Width: 4096, Height: 4096}, 4096 * 4096, QueueHeavy},
		{"1500×1500 with a buffer", ExportMap{Width: 1500, Height: 1500, Layers: []LayerOverride{{Visible: true, Drawing: buffered}}}, 2 * 1500 * 1500, QueueHeavy},
		{"1500×1500 with a hidden buffered layer", ExportMap{Width: 1500, Height: 1500, Layers: []LayerOverride{{Visible: false, Drawing: buffered}}}, 1500 * 1500, QueueInteractive},
		{"1000×1000, a translucent layer", ExportMap{Width: 1000, Height: 1000, Layers: []LayerOverride{{Visible: true, Drawing: &Drawing{Transparency: 40}}}}, 2 * 1000 * 1000, QueueInteractive},
		{"negative width", ExportMap{Width: -5, Height: 100}, 0, QueueInteractive},
	} {
		if got := ExportMapCost(tc.job); got != tc.cost {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.cost)
		}
		if got := InteractiveQueue(ExportMapCost(tc.job), DefaultHeavyPixels); got != tc.queue {
			t.Errorf("%s: queue %s, want %s", tc.name, got, tc.queue)
		}
	}
	if got := InteractiveQueue(ExportScaleBarCost(ExportScaleBar{Width: 4096, Height: 4096}), DefaultHeavyPixels); got != QueueHeavy {
		t.Errorf("a 4096×4096 scale bar goes on %s, want %s", got, QueueHeavy)
	}
	if got := InteractiveQueue(1<<40, 0); got != QueueInteractive {
		t.Errorf("with no threshold a render goes on %s, want %s", got, QueueInteractive)
	}
	for q, want := range map[string]bool{QueueInteractive: true, QueueHeavy: true, QueueSeed: false} {
		if IsInteractive(q) != want {
			t.Errorf("IsInteractive(%s) = %v", q, !want)
		}
	}
}
