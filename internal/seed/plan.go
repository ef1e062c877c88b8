package seed

import (
	"fmt"
	"iter"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// BundleUnit is the planned work of one bundle of one layer: its metatiles, split into parts
// of at most Spec.PartTiles tiles, each rendered by one task, and one merge that writes the
// bundle. Delete jobs have no parts: the merge deletes the bundle's tiles of the cover.
type BundleUnit struct {
	// Seq counts the units of the job from 0 in planning order; the coordinator's checkpoint
	// is the number of units enqueued.
	Seq       int64
	Layer     int
	Bundle    tilecache.Bundle
	Metatiles []tilecache.Metatile
	// Parts[i] is the range Metatiles[Parts[i][0]:Parts[i][1]].
	Parts [][2]int
	// Tiles is the number of tiles of the bundle's metatiles; for a delete job, the number of
	// tiles of the area's cover in the bundle (what the merge deletes).
	Tiles int64
}

// Plan yields the job's bundle units in a fixed order (layers, then levels, then bundle rows
// and columns), starting with unit number from. It streams: memory is one bundle's metatiles,
// whatever the size of the job. The error is for a spec that cannot be planned. A refresh job
// (Spec.Refresh) is planned by [DirtyPlan].
func Plan(s *Spec, from int64) (iter.Seq[BundleUnit], error) {
	if s.Refresh() {
		return DirtyPlan(s, s.Dirty, s.Reach, from)
	}
	cover, err := s.Scheme.Cover(s.AOI(), s.Levels...)
	if err != nil {
		return nil, fmt.Errorf("seed: plan job %s: %w", s.ID, err)
	}
	bundles, err := cover.Bundles(s.MetatileSize)
	if err != nil {
		return nil, fmt.Errorf("seed: plan job %s: %w", s.ID, err)
	}
	return func(yield func(BundleUnit) bool) {
		var seq int64
		for layer := range s.Layers {
			for b, metas := range bundles {
				if seq < from {
					seq++
					continue
				}
				var u BundleUnit
				if s.Mode == Delete {
					// A delete removes exactly the tiles of the cover, not whole metatiles.
					u = BundleUnit{Seq: seq, Layer: layer, Bundle: b, Metatiles: metas}
					for range cover.TilesIn(b) {
						u.Tiles++
					}
				} else {
					u = renderUnit(s, seq, layer, b, metas)
				}
				seq++
				if !yield(u) {
					return
				}
			}
		}
	}, nil
}

// renderUnit is the unit that renders a bundle's metatiles: their tiles, in parts of at most
// s.PartTiles tiles (whole metatiles, at least one per part).
func renderUnit(s *Spec, seq int64, layer int, b tilecache.Bundle, metas []tilecache.Metatile) BundleUnit {
	u := BundleUnit{Seq: seq, Layer: layer, Bundle: b, Metatiles: metas}
	for _, m := range metas {
		u.Tiles += int64(m.Rows * m.Cols)
	}
	perPart := max(1, s.PartTiles/(s.MetatileSize*s.MetatileSize))
	for i := 0; i < len(metas); i += perPart {
		u.Parts = append(u.Parts, [2]int{i, min(i+perPart, len(metas))})
	}
	return u
}

// Count returns the number of tiles of the job's area of interest (all layers; a refresh job's
// dirty tiles), for the progress estimate before planning ends.
func Count(s *Spec) (int64, error) {
	if s.Refresh() {
		covers, err := dirtyCovers(s, s.Dirty, s.Reach)
		if err != nil {
			return 0, fmt.Errorf("seed: count job %s: %w", s.ID, err)
		}
		var n int64
		for _, c := range covers {
			t, _ := c.Count()
			n += t
		}
		return n * int64(len(s.Layers)), nil
	}
	cover, err := s.Scheme.Cover(s.AOI(), s.Levels...)
	if err != nil {
		return 0, fmt.Errorf("seed: count job %s: %w", s.ID, err)
	}
	n, _ := cover.Count()
	return n * int64(len(s.Layers)), nil
}
