package task

// Lanes: an interactive render goes on QueueInteractive or, when it is expensive, on QueueHeavy,
// which every worker serves with fewer slots than it has (worker.Params.HeavySlots). A handful of
// allowed but costly renders (4096×4096 images, selection buffers up to their limit) then cannot
// take every slot, and the ordinary renders beside them keep their latency.
//
// The cost is a render's pixels times the full-size surfaces it draws: one for the image, one
// more for every layer drawn in a group of its own (a selection buffer, a translucent layer),
// which the renderer composites from an image of the same size. Memory and drawing time both
// grow with it.

// DefaultHeavyPixels is the cost from which a render is heavy unless configured otherwise:
// 2048×2048 pixels on one surface (16 MiB of RGBA).
const DefaultHeavyPixels = 2048 * 2048

// ExportMapCost is the cost of an ExportMap: Width×Height times its surfaces.
func ExportMapCost(p ExportMap) int64 {
	surfaces := int64(1)
	for _, l := range p.Layers {
		if !l.Visible || l.Drawing == nil {
			continue
		}
		d := l.Drawing
		if d.ShowBuffer && d.BufferDistance > 0 && len(d.Selection) > 0 {
			surfaces++
		}
		if d.Transparency > 0 && d.Transparency < 100 {
			surfaces++
		}
	}
	return pixels(p.Width, p.Height) * surfaces
}

// ExportScaleBarCost is the cost of an ExportScaleBar: its pixels.
func ExportScaleBarCost(p ExportScaleBar) int64 { return pixels(p.Width, p.Height) }

func pixels(w, h int) int64 { return int64(max(w, 0)) * int64(max(h, 0)) }

// InteractiveQueue is the queue of an interactive render of cost: QueueHeavy from heavyPixels
// on, QueueInteractive below it or when heavyPixels is not positive (no heavy lane).
func InteractiveQueue(cost, heavyPixels int64) string {
	if heavyPixels > 0 && cost >= heavyPixels {
		return QueueHeavy
	}
	return QueueInteractive
}

// IsInteractive reports whether queue q holds interactive renders, whose clients wait for a
// Result: QueueInteractive and QueueHeavy.
func IsInteractive(q string) bool { return q == QueueInteractive || q == QueueHeavy }
