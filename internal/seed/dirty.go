package seed

import (
	"fmt"
	"iter"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// dirtyCovers returns, for every level of s (s.Levels, or all of the scheme's), the cover of
// the envelopes widened by reach pixels of that level (a symbol or label drawn for a feature
// reaches that far beyond its envelope, so a change can alter tiles the envelope itself does
// not touch) and of s.DirtyPolygons as they are (an operator's expire names its tiles exactly).
// Envelopes and polygons are in the scheme's coordinates. A level no widened envelope reaches
// has a cover too (the matrix clips it away at iteration).
func dirtyCovers(s *Spec, envelopes []orb.Bound, reach int) ([]*tilecache.Cover, error) {
	if reach < 0 {
		return nil, fmt.Errorf("seed: reach %d px is negative", reach)
	}
	if len(envelopes) == 0 && len(s.DirtyPolygons) == 0 {
		return nil, nil
	}
	levels := s.Levels
	if len(levels) == 0 {
		levels = s.Scheme.Levels()
	}
	covers := make([]*tilecache.Cover, 0, len(levels))
	for _, level := range levels {
		lod, ok := s.Scheme.LOD(level)
		if !ok {
			return nil, fmt.Errorf("seed: dirty tiles: %w: %d", tilecache.ErrUnknownLevel, level)
		}
		d := float64(reach) * lod.Resolution
		aoi := make(orb.Collection, 0, len(envelopes)+len(s.DirtyPolygons))
		for _, e := range envelopes {
			aoi = append(aoi, widen(e, d))
		}
		for _, p := range s.DirtyPolygons {
			aoi = append(aoi, p)
		}
		c, err := s.Scheme.Cover(aoi, level)
		if err != nil {
			return nil, fmt.Errorf("seed: dirty tiles at level %d: %w", level, err)
		}
		covers = append(covers, c)
	}
	return covers, nil
}

// widen grows e by d on every side. An envelope with no area (a point, a horizontal line) is
// still a bound the cover places: its edges touch the tiles they lie in.
func widen(e orb.Bound, d float64) orb.Bound {
	return orb.Bound{Min: orb.Point{e.Min[0] - d, e.Min[1] - d}, Max: orb.Point{e.Max[0] + d, e.Max[1] + d}}
}

// DirtyTiles yields the tiles that changes with the given envelopes (in the scheme's
// coordinates) make dirty at every level of s, each envelope widened by reach pixels, with the
// tiles of s.DirtyPolygons (not widened): level by level, then row by row. A tile touched by
// several envelopes is yielded once.
func DirtyTiles(s *Spec, envelopes []orb.Bound, reach int) (iter.Seq[tilecache.Tile], error) {
	covers, err := dirtyCovers(s, envelopes, reach)
	if err != nil {
		return nil, err
	}
	return func(yield func(tilecache.Tile) bool) {
		for _, c := range covers {
			for t := range c.Tiles() {
				if !yield(t) {
					return
				}
			}
		}
	}, nil
}

// DirtyPlan is [Plan] for the tiles of [DirtyTiles]: it merges them by bundle and metatile into
// the bundle units seeding uses (each bundle once per layer, its metatiles that hold a dirty
// tile, split into parts of s.PartTiles), numbered from 0, layers then levels then bundles,
// starting with unit number from (the coordinator's checkpoint, as for Plan). A
// refresh renders whole metatiles, as seeding does, so a unit may render tiles beside the dirty
// ones; its Tiles counts them. The spec's own area of interest is not used.
func DirtyPlan(s *Spec, envelopes []orb.Bound, reach int, from int64) (iter.Seq[BundleUnit], error) {
	if s.Mode == Delete {
		return nil, fmt.Errorf("seed: dirty plan of job %s: a refresh renders, it does not delete", s.ID)
	}
	covers, err := dirtyCovers(s, envelopes, reach)
	if err != nil {
		return nil, fmt.Errorf("seed: dirty plan of job %s: %w", s.ID, err)
	}
	perLevel := make([]iter.Seq2[tilecache.Bundle, []tilecache.Metatile], len(covers))
	for i, c := range covers {
		if perLevel[i], err = c.Bundles(s.MetatileSize); err != nil {
			return nil, fmt.Errorf("seed: dirty plan of job %s: %w", s.ID, err)
		}
	}
	return func(yield func(BundleUnit) bool) {
		var seq int64
		for layer := range s.Layers {
			for _, bundles := range perLevel {
				for b, metas := range bundles {
					if seq >= from && !yield(renderUnit(s, seq, layer, b, metas)) {
						return
					}
					seq++
				}
			}
		}
	}, nil
}
