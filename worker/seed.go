package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// seeder holds what both seeding handlers share: the job store, a cache of job specs (specs
// never change once created) and the queue client that enqueues merges.
type seeder struct {
	p     Params
	jobs  *seed.Jobs
	queue *asynq.Client

	mu      sync.Mutex
	specs   map[string]*seed.Spec
	anchors *labelAnchors
}

func newSeeder(p Params) *seeder {
	return &seeder{p: p, jobs: seed.NewJobs(p.Redis), queue: asynq.NewClientFromRedisClient(p.Redis), specs: map[string]*seed.Spec{},
		anchors: &labelAnchors{m: map[*orb.Point]anchor{}}}
}

// spec returns a job's spec, from memory when it was read before.
func (s *seeder) spec(ctx context.Context, id string) (*seed.Spec, error) {
	s.mu.Lock()
	sp, ok := s.specs[id]
	s.mu.Unlock()
	if ok {
		return sp, nil
	}
	sp, err := s.jobs.Spec(ctx, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.specs) >= 64 {
		clear(s.specs)
	}
	s.specs[id] = sp
	s.mu.Unlock()
	return sp, nil
}

// lastTry reports whether a failed task will not be retried again.
func lastTry(ctx context.Context) bool {
	n, _ := asynq.GetRetryCount(ctx)
	m, ok := asynq.GetMaxRetry(ctx)
	return !ok || n >= m
}

// seedRenderHandler renders one part of a bundle: each metatile with its buffer, cut into
// tiles, encoded, and written as one staging object; it then records the part and, when the
// bundle's last part is done, enqueues the bundle's merge. Tiles of a metatile that fails to
// draw count as failed (the job's failure budget decides); a store or Redis error fails the
// task, which asynq retries (task.SeedMaxRetry times) before the part's tiles count as failed.
type seedRenderHandler struct{ s *seeder }

// ProcessTask implements asynq.Handler.
func (h *seedRenderHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	job, err := task.DecodeSeedRender(t.Payload())
	if err != nil {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	if stop, err := h.s.jobs.Cancelled(ctx, job.Job); err != nil || stop {
		return err
	}
	b := tilecache.Bundle{TopLeft: job.Bundle}
	bid := seed.BundleID(job.Layer, b)
	if done, err := h.s.jobs.PartRecorded(ctx, job.Job, bid, job.Part); err != nil {
		return err
	} else if done {
		n, err := h.s.jobs.PartDone(ctx, job.Job, bid, job.Part, seed.PartCounts{})
		if err != nil {
			return err
		}
		return h.s.mergeIfComplete(ctx, job, n)
	}
	counts, err := h.render(ctx, job, b)
	if err != nil {
		if !lastTry(ctx) {
			return err
		}
		h.s.p.Logger.Warn("seed part failed", "job", job.Job, "bundle", bid, "part", job.Part, "err", err)
		counts = seed.PartCounts{Failed: int64(tileCount(job.Metatiles))}
	}
	n, rerr := h.s.jobs.PartDone(ctx, job.Job, bid, job.Part, counts)
	if rerr != nil {
		return rerr
	}
	if merr := h.s.mergeIfComplete(ctx, job, n); merr != nil {
		return merr
	}
	return err
}

func tileCount(ms [][4]int) int {
	n := 0
	for _, m := range ms {
		n += m[2] * m[3]
	}
	return n
}

// mergeIfComplete enqueues the bundle's merge once all its parts are done. A merge enqueued
// before (same task id) is not enqueued twice.
func (s *seeder) mergeIfComplete(ctx context.Context, job task.SeedRender, partsDone int) error {
	if partsDone < job.Parts {
		return nil
	}
	mt, err := task.NewSeedMerge(task.SeedMerge{Job: job.Job, Layer: job.Layer, Bundle: job.Bundle, Parts: job.Parts})
	if err != nil {
		return err
	}
	if _, err := s.queue.EnqueueContext(ctx, mt); err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("seed: enqueue merge: %w", err)
	}
	return nil
}

func (h *seedRenderHandler) render(ctx context.Context, job task.SeedRender, b tilecache.Bundle) (seed.PartCounts, error) {
	var counts seed.PartCounts
	sp, err := h.s.spec(ctx, job.Job)
	if err != nil {
		return counts, err
	}
	m, err := h.s.mapOf(sp)
	if err != nil {
		return counts, err
	}
	cache, err := sp.Cache(h.s.p.Tiles, job.Layer, nil)
	if err != nil {
		return counts, err
	}
	var have map[tilecache.Tile]bool
	if sp.Mode == seed.RecreateEmpty {
		if have, err = storedTiles(ctx, h.s.p.Tiles, cache, b, sp.RefreshBefore); err != nil {
			return counts, err
		}
	}
	format, err := tileFormat(sp.Scheme.Format)
	if err != nil {
		return counts, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	states := layerStates(m, sp.Layers[job.Layer].ID)
	bg := m.Def.BackgroundColor.NRGBA()
	if sp.Layers[job.Layer].ID >= 0 {
		bg = color.NRGBA{}
	}
	var changes []seed.Change
	var buf bytes.Buffer
	for _, mt := range task.Metatiles(b.TopLeft.Level, job.Metatiles) {
		n := int64(mt.Rows * mt.Cols)
		if have != nil {
			all := true
			for t := range mt.Tiles() {
				if !have[t] {
					all = false
					break
				}
			}
			if all {
				counts.Kept += n
				continue
			}
		}
		if sp.SkipEmpty && nothingToDraw(sp, m, mt, states) {
			// No feature near the metatile: every tile would be background only.
			for t := range mt.Tiles() {
				if have[t] {
					counts.Kept++
					continue
				}
				counts.Empty++
				if sp.Mode == seed.RecreateAll {
					changes = append(changes, seed.Change{Tile: t})
				}
			}
			continue
		}
		img, area, err := h.drawMetatile(ctx, sp, m, mt, states, bg, format)
		if err != nil {
			if ctx.Err() != nil {
				return counts, ctx.Err()
			}
			h.s.p.Logger.Warn("seed metatile failed", "job", job.Job, "metatile", mt.String(), "err", err)
			counts.Failed += n
			continue
		}
		for t := range mt.Tiles() {
			if have[t] {
				counts.Kept++
				continue
			}
			r, _ := area.TileRect(t)
			sub := img.SubImage(r).(*image.RGBA)
			if sp.SkipEmpty && uniform(sub, bg) {
				counts.Empty++
				if sp.Mode == seed.RecreateAll {
					changes = append(changes, seed.Change{Tile: t})
				}
				continue
			}
			buf.Reset()
			if err := render.Encode(&buf, sub, format, render.EncodeOptions{Quality: sp.Quality}); err != nil {
				counts.Failed++
				continue
			}
			changes = append(changes, seed.Change{Tile: t, Data: bytes.Clone(buf.Bytes())})
			counts.Done++
		}
		h.s.p.Renderer.Release(img)
	}
	key := seed.StagingKey(job.Job, job.Layer, b, job.Part)
	if err := h.s.p.Tiles.Put(ctx, key, seed.EncodeStaging(changes), "application/octet-stream"); err != nil {
		return counts, fmt.Errorf("seed: stage part: %w", err)
	}
	return counts, nil
}

func (h *seedRenderHandler) drawMetatile(ctx context.Context, sp *seed.Spec, m *catalog.Map, mt tilecache.Metatile, states []mapdraw.LayerState, bg color.NRGBA, format render.Format) (*image.RGBA, tilecache.RenderArea, error) {
	area, err := sp.Scheme.MetatileArea(mt, sp.Buffer)
	if err != nil {
		return nil, area, err
	}
	req := mapdraw.Request{
		Map:    m,
		View:   render.View{Extent: area.Bound, Width: area.Width, Height: area.Height, DPI: float64(sp.Scheme.DPI)},
		Layers: states, Format: format, Background: &bg,
	}
	rm, err := mapdraw.Build(req)
	if err != nil {
		return nil, area, err
	}
	rm = h.s.withStableLabels(rm, m, (area.Bound.Max[0]-area.Bound.Min[0])/float64(area.Width))
	img, err := h.s.p.Renderer.Draw(ctx, rm, req.View)
	return img, area, err
}

// nothingToDraw reports whether no feature of a drawn layer lies within the metatile's render
// area (its tiles plus the buffer), so that the metatile would hold nothing but background.
func nothingToDraw(sp *seed.Spec, m *catalog.Map, mt tilecache.Metatile, states []mapdraw.LayerState) bool {
	area, err := sp.Scheme.MetatileArea(mt, sp.Buffer)
	if err != nil {
		return false
	}
	for _, st := range states {
		if !st.Visible {
			continue
		}
		l, ok := m.Layer(st.ID)
		if !ok {
			return false
		}
		found := false
		l.Data.Search(area.Bound, func(*feature.Feature) bool { found = true; return false })
		if found {
			return false
		}
	}
	return true
}

// mapOf finds the job's map in the worker's catalog.
func (s *seeder) mapOf(sp *seed.Spec) (*catalog.Map, error) {
	svc, ok := s.p.Catalog.Service(sp.Service)
	if !ok {
		return nil, fmt.Errorf("%w: service %q: %w", errUnknown, sp.Service, asynq.SkipRetry)
	}
	m, ok := svc.Map(sp.Map)
	if !ok {
		return nil, fmt.Errorf("%w: map %q of service %q: %w", errUnknown, sp.Map, sp.Service, asynq.SkipRetry)
	}
	return m, nil
}

// layerStates draws every default-visible layer with labels for a fused cache (layer -1), or
// just the one layer.
func layerStates(m *catalog.Map, layer int) []mapdraw.LayerState {
	var out []mapdraw.LayerState
	for _, l := range m.Layers {
		if layer >= 0 && l.ID != layer {
			continue
		}
		out = append(out, mapdraw.LayerState{ID: l.ID, Visible: layer >= 0 || l.Def.Visible, ShowLabels: true,
			DefinitionExpression: l.Def.DefinitionExpression})
	}
	return out
}

// tileFormat maps Esri's CacheTileFormat to the renderer's format.
func tileFormat(name string) (render.Format, error) {
	switch strings.ToUpper(name) {
	case "", "PNG", "PNG24":
		return render.PNG, nil
	case "PNG8":
		return render.PNG8, nil
	case "PNG32":
		return render.PNG32, nil
	case "JPEG", "JPG":
		return render.JPG, nil
	case "MIXED":
		return render.JPGPNG, nil
	}
	return 0, fmt.Errorf("seed: unknown tile format %q", name)
}

// uniform reports whether every pixel of img is c (premultiplied as image.RGBA stores it).
func uniform(img *image.RGBA, c color.NRGBA) bool {
	p := color.RGBAModel.Convert(c).(color.RGBA)
	want := [4]byte{p.R, p.G, p.B, p.A}
	w := img.Rect.Dx() * 4
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		i := img.PixOffset(img.Rect.Min.X, y)
		row := img.Pix[i : i+w]
		for x := 0; x < w; x += 4 {
			if row[x] != want[0] || row[x+1] != want[1] || row[x+2] != want[2] || row[x+3] != want[3] {
				return false
			}
		}
	}
	return true
}

// storedTiles returns the tiles of bundle b that are stored (and, when refreshBefore is set,
// were stored at or after it).
func storedTiles(ctx context.Context, store tilecache.Store, c *tilecache.Cache, b tilecache.Bundle, refreshBefore time.Time) (map[tilecache.Tile]bool, error) {
	have := map[tilecache.Tile]bool{}
	switch c.Format() {
	case tilecache.Exploded:
		// One listing per row folder of the bundle.
		for row := b.TopLeft.Row; row < b.TopLeft.Row+tilecache.BundleSize; row++ {
			prefix := fmt.Sprintf("%s/L%02d/R%08x/", c.Dir(), b.TopLeft.Level, row)
			err := store.List(ctx, prefix, func(info blob.Info) error {
				var col int
				if _, err := fmt.Sscanf(strings.TrimPrefix(info.Key, prefix), "C%08x", &col); err != nil {
					return nil
				}
				t := tilecache.Tile{Level: b.TopLeft.Level, Row: row, Col: col}
				if b.Contains(t) && (refreshBefore.IsZero() || !info.ModTime.Before(refreshBefore)) {
					have[t] = true
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("seed: list stored tiles: %w", err)
			}
		}
		return have, nil
	default:
		key := c.BundleKey(b)
		if !refreshBefore.IsZero() {
			info, err := store.Stat(ctx, key)
			if errors.Is(err, fs.ErrNotExist) || (err == nil && info.ModTime.Before(refreshBefore)) {
				return have, nil
			}
			if err != nil {
				return nil, fmt.Errorf("seed: stat bundle: %w", err)
			}
		}
		data, err := store.Get(ctx, key)
		if errors.Is(err, fs.ErrNotExist) {
			return have, nil
		}
		if err != nil {
			return nil, fmt.Errorf("seed: read bundle: %w", err)
		}
		var tiles map[tilecache.Tile][]byte
		if c.Format() == tilecache.CompactV1 {
			idx, err := store.Get(ctx, strings.TrimSuffix(key, ".bundle")+".bundlx")
			if err != nil {
				return nil, fmt.Errorf("seed: read bundle index: %w", err)
			}
			tiles, err = tilecache.DecodeCompactV1(b, data, idx)
			if err != nil {
				return nil, err
			}
		} else if tiles, err = tilecache.DecodeCompactV2(b, data); err != nil {
			return nil, err
		}
		for t := range tiles {
			have[t] = true
		}
		return have, nil
	}
}

// seedMergeHandler is the one writer of a bundle: it reads the bundle's staged parts, applies
// them to the stored bundle with a tilecache.BundleWriter (which rewrites it whole and
// deterministically, so a repeated merge writes the same bytes) and records the bundle. For a
// delete job it deletes the bundle's tiles in the area of interest instead.
type seedMergeHandler struct{ s *seeder }

// ProcessTask implements asynq.Handler.
func (h *seedMergeHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	job, err := task.DecodeSeedMerge(t.Payload())
	if err != nil {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	if stop, err := h.s.jobs.Cancelled(ctx, job.Job); err != nil || stop {
		return err
	}
	b := tilecache.Bundle{TopLeft: job.Bundle}
	bid := seed.BundleID(job.Layer, b)
	if done, err := h.s.jobs.MergeRecorded(ctx, job.Job, bid); err != nil || done {
		return err
	}
	deleted, err := h.merge(ctx, job, b)
	if err != nil {
		if !lastTry(ctx) {
			return err
		}
		h.s.p.Logger.Warn("seed merge failed", "job", job.Job, "bundle", bid, "err", err)
		if rerr := h.s.jobs.MergeDone(ctx, job.Job, bid, true, 0, 0); rerr != nil {
			return rerr
		}
		return err
	}
	if err := h.s.jobs.MergeDone(ctx, job.Job, bid, false, deleted, 0); err != nil {
		return err
	}
	for part := range job.Parts {
		if err := h.s.p.Tiles.Delete(ctx, seed.StagingKey(job.Job, job.Layer, b, part)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			h.s.p.Logger.Warn("seed: delete staging part", "job", job.Job, "bundle", bid, "err", err)
		}
	}
	return nil
}

// merge writes the bundle and returns the number of tiles deleted by a delete job.
func (h *seedMergeHandler) merge(ctx context.Context, job task.SeedMerge, b tilecache.Bundle) (int64, error) {
	sp, err := h.s.spec(ctx, job.Job)
	if err != nil {
		return 0, err
	}
	cache, err := sp.Cache(h.s.p.Tiles, job.Layer, nil)
	if err != nil {
		return 0, err
	}
	w, err := cache.NewBundleWriter(b)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	var deleted int64
	if sp.Mode == seed.Delete {
		aoi := sp.AOI().Bound()
		for _, mt := range task.Metatiles(b.TopLeft.Level, job.Metatiles) {
			for t := range mt.Tiles() {
				tb, err := sp.Scheme.TileBounds(t)
				if err != nil || !tb.Intersects(aoi) {
					continue
				}
				if err := w.Delete(t); err != nil {
					return 0, err
				}
				deleted++
			}
		}
	} else {
		for part := range job.Parts {
			data, err := h.s.p.Tiles.Get(ctx, seed.StagingKey(job.Job, job.Layer, b, part))
			if errors.Is(err, fs.ErrNotExist) {
				continue // a part that failed for good
			}
			if err != nil {
				return 0, fmt.Errorf("seed: read staging part: %w", err)
			}
			changes, err := seed.DecodeStaging(b.TopLeft.Level, data)
			if err != nil {
				return 0, err
			}
			for _, c := range changes {
				if c.Data == nil {
					err = w.Delete(c.Tile)
				} else {
					err = w.Put(c.Tile, c.Data)
				}
				if err != nil {
					return 0, err
				}
			}
		}
	}
	if err := w.Flush(ctx); err != nil {
		return 0, fmt.Errorf("seed: write bundle %v: %w", b, err)
	}
	return deleted, nil
}
