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
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/task"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// seeder holds what both seeding handlers share: the job store, a cache of job specs (specs
// never change once created) and the queue client that enqueues merges.
type seeder struct {
	p     Params
	jobs  *seed.Jobs
	queue *task.Queue
	// vector builds the tiles of vector tile caches (gzipped, as stored); nil when the catalog
	// cannot be tiled, and vector jobs then fail.
	vector *vectortile.Builder

	specs *memcache.Cache[string, *seed.Spec] // by job id
}

// specBytes is what one job spec counts for in the seeder's spec cache, bounded by specsBytes
// (64 specs: a worker serves few jobs at a time).
const (
	specBytes  = 4 << 10
	specsBytes = 64 * specBytes
)

func newSeeder(p Params) *seeder {
	s := &seeder{p: p, jobs: seed.NewJobs(p.Redis), queue: task.NewQueue(p.Redis), specs: memcache.New[string, *seed.Spec]("seed job specs", specsBytes)}
	if p.Catalog != nil {
		// Vector tiles are stored gzipped once, as served with Content-Encoding.
		opts := p.VectorTiles
		opts.Gzip = true
		s.vector, _ = vectortile.New(vectortile.Params{Services: p.Catalog, Options: opts})
	}
	return s
}

// spec returns a job's spec, from memory when it was read before.
func (s *seeder) spec(ctx context.Context, id string) (*seed.Spec, error) {
	if sp, ok := s.specs.Get(id); ok {
		return sp, nil
	}
	sp, err := s.jobs.Spec(ctx, id)
	if err != nil {
		return nil, err
	}
	s.specs.Add(id, sp, specBytes)
	return sp, nil
}

// lastTry reports whether a failed task will not be retried again.
func lastTry(ctx context.Context) bool {
	n, _ := asynq.GetRetryCount(ctx)
	m, ok := asynq.GetMaxRetry(ctx)
	return !ok || n >= m
}

// liveBundle returns the bundle at topLeft of a seed task of job, and the bundle's id; live is
// false when the job was cancelled, and the task has nothing to do.
func (s *seeder) liveBundle(ctx context.Context, job string, layer int, topLeft tilecache.Tile) (b tilecache.Bundle, bid string, live bool, err error) {
	if stop, err := s.jobs.Cancelled(ctx, job); err != nil || stop {
		return b, "", false, err
	}
	b = tilecache.Bundle{TopLeft: topLeft}
	return b, seed.BundleID(layer, b), true, nil
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
	b, bid, live, err := h.s.liveBundle(ctx, job.Job, job.Layer, job.Bundle)
	if err != nil || !live {
		return err
	}
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
		counts = seed.PartCounts{Failed: int64(job.Tiles())}
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

// mergeIfComplete enqueues the bundle's merge once all its parts are done. A merge enqueued
// before (same task id) is not enqueued twice.
func (s *seeder) mergeIfComplete(ctx context.Context, job task.SeedRender, partsDone int) error {
	if partsDone < job.Parts {
		return nil
	}
	mt, err := job.Merge()
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
		stored, err := cache.StoredTilesSince(ctx, b, sp.RefreshBefore)
		if err != nil {
			return counts, fmt.Errorf("seed: stored tiles: %w", err)
		}
		have = make(map[tilecache.Tile]bool, len(stored))
		for _, t := range stored {
			have[t] = true
		}
	}
	if sp.Vector() {
		return h.renderVector(ctx, job, b, sp, m, have)
	}
	format, err := tileFormat(sp.Scheme.Format)
	if err != nil {
		return counts, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	states := layerStates(m, sp.Layers[job.Layer].ID)
	bg := background(m, sp.Layers[job.Layer].ID)
	var changes []seed.Change
	var buf bytes.Buffer
	for _, mt := range task.Metatiles(b.TopLeft.Level, job.Metatiles) {
		n := int64(mt.Rows * mt.Cols)
		if haveAll(have, mt) {
			counts.Kept += n
			continue
		}
		if sp.SkipEmpty && nothingToDraw(ctx, sp, m, mt, states) {
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
		img, area, err := h.s.drawMetatile(ctx, sp.Scheme, sp.Buffer, m, mt, states, bg, format)
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
			if sp.SkipEmpty && uniform(tileImage(img, area, t), bg) {
				counts.Empty++
				if sp.Mode == seed.RecreateAll {
					changes = append(changes, seed.Change{Tile: t})
				}
				continue
			}
			data, err := encodeTile(&buf, img, area, t, format, sp.Quality)
			if err != nil {
				counts.Failed++
				continue
			}
			changes = append(changes, seed.Change{Tile: t, Data: data})
			counts.Done++
		}
		h.s.p.Renderer.Release(img)
	}
	return counts, h.stage(ctx, job, b, changes)
}

// renderVector builds the part's vector tiles, metatile by metatile: each metatile's data is
// read once (vectortile.Builder.Metatile) and cut into its tiles, gzipped as stored and served.
// A tile with no feature is empty: left out with skipEmpty, stored (an empty tile) without.
// The staging object and the counting are the raster part's.
func (h *seedRenderHandler) renderVector(ctx context.Context, job task.SeedRender, b tilecache.Bundle, sp *seed.Spec, m *catalog.Map, have map[tilecache.Tile]bool) (seed.PartCounts, error) {
	var counts seed.PartCounts
	if h.s.vector == nil {
		return counts, fmt.Errorf("seed: this worker cannot build vector tiles: %w", asynq.SkipRetry)
	}
	var changes []seed.Change
	for _, mt := range task.Metatiles(b.TopLeft.Level, job.Metatiles) {
		n := int64(mt.Rows * mt.Cols)
		if haveAll(have, mt) {
			counts.Kept += n
			continue
		}
		tiles, err := h.s.vector.Metatile(ctx, sp.Service, m.Name, sp.Scheme, mt)
		if err != nil {
			if ctx.Err() != nil {
				return counts, ctx.Err()
			}
			h.s.p.Logger.Warn("seed vector metatile failed", "job", job.Job, "metatile", mt.String(), "err", err)
			counts.Failed += n
			continue
		}
		for _, vt := range tiles {
			switch {
			case have[vt.Tile]:
				counts.Kept++
			case vt.Result.Features == 0 && sp.SkipEmpty:
				counts.Empty++
				if sp.Mode == seed.RecreateAll {
					changes = append(changes, seed.Change{Tile: vt.Tile})
				}
			default:
				if vt.Result.Thinned {
					// Stored as built: the tile's feature limit left features out, which the
					// stored bytes cannot say (docs/vector-tiles.md).
					h.s.p.Logger.Warn("seed vector tile thinned", "job", job.Job, "tile", vt.Tile.String(), "features", vt.Result.Features)
				}
				changes = append(changes, seed.Change{Tile: vt.Tile, Data: vt.Result.Data})
				counts.Done++
			}
		}
	}
	return counts, h.stage(ctx, job, b, changes)
}

// haveAll reports whether have, the tiles the part keeps (nil: none), holds every tile of mt.
func haveAll(have map[tilecache.Tile]bool, mt tilecache.Metatile) bool {
	if have == nil {
		return false
	}
	for t := range mt.Tiles() {
		if !have[t] {
			return false
		}
	}
	return true
}

// stage writes a part's changes to its staging object, raster and vector parts alike.
func (h *seedRenderHandler) stage(ctx context.Context, job task.SeedRender, b tilecache.Bundle, changes []seed.Change) error {
	key := seed.StagingKey(job.Job, job.Layer, b, job.Part)
	if err := h.s.p.Tiles.Put(ctx, key, seed.EncodeStaging(changes), "application/octet-stream"); err != nil {
		return fmt.Errorf("seed: stage part: %w", err)
	}
	return nil
}

// drawMetatile draws metatile mt of a cache with buffer pixels around it: the one way cache
// tiles are drawn, by seeding and on demand alike (see cacheMetatileHandler), so that the same
// tile always has the same bytes. The caller releases the image to the renderer.
func (s *seeder) drawMetatile(ctx context.Context, scheme tilecache.Scheme, buffer int, m *catalog.Map, mt tilecache.Metatile, states []mapdraw.LayerState, bg color.NRGBA, format render.Format) (*image.RGBA, tilecache.RenderArea, error) {
	area, err := scheme.MetatileArea(mt, buffer)
	if err != nil {
		return nil, area, err
	}
	req := mapdraw.Request{
		Map:    m,
		View:   render.View{Extent: area.Bound, Width: area.Width, Height: area.Height, DPI: float64(scheme.DPI)},
		Layers: states, Format: format, Background: &bg,
	}
	rm, err := mapdraw.Build(ctx, req)
	if err != nil {
		return nil, area, err
	}
	rm = s.withStableLabels(rm, m, (area.Bound.Max[0]-area.Bound.Min[0])/float64(area.Width))
	img, err := s.p.Renderer.Draw(ctx, rm, req.View)
	return img, area, err
}

// tileImage is tile t's part of a metatile image.
func tileImage(img *image.RGBA, area tilecache.RenderArea, t tilecache.Tile) *image.RGBA {
	r, _ := area.TileRect(t)
	return img.SubImage(r).(*image.RGBA)
}

// encodeTile cuts tile t out of a metatile image and encodes it; buf is scratch space.
func encodeTile(buf *bytes.Buffer, img *image.RGBA, area tilecache.RenderArea, t tilecache.Tile, format render.Format, quality int) ([]byte, error) {
	buf.Reset()
	if err := render.Encode(buf, tileImage(img, area, t), format, render.EncodeOptions{Quality: quality}); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// background is the colour a cache's tiles are drawn on: the map's background for the fused
// cache (layer -1), transparent for a layer's own cache.
func background(m *catalog.Map, layer int) color.NRGBA {
	if layer >= 0 {
		return color.NRGBA{}
	}
	return m.Def.BackgroundColor.NRGBA()
}

// nothingToDraw reports whether no feature of a drawn layer lies within the metatile's render
// area (its tiles plus the buffer), so that the metatile would hold nothing but background.
func nothingToDraw(ctx context.Context, sp *seed.Spec, m *catalog.Map, mt tilecache.Metatile, states []mapdraw.LayerState) bool {
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
		// One feature whose box meets the area is enough; a failed read draws, to be safe.
		n, err := l.Data.Count(ctx, &feature.Query{Bound: &area.Bound, Columns: []int{}, NoGeometry: true, Limit: 1})
		if err != nil || n > 0 {
			return false
		}
	}
	return true
}

// mapOf finds the job's map in the worker's catalog.
func (s *seeder) mapOf(sp *seed.Spec) (*catalog.Map, error) {
	return s.mapNamed(sp.Service, sp.Map)
}

// mapNamed finds a map in the worker's catalog.
func (s *seeder) mapNamed(service, name string) (*catalog.Map, error) {
	svc, ok := s.p.Catalog.Service(service)
	if !ok {
		return nil, fmt.Errorf("%w: service %q: %w", errUnknown, service, asynq.SkipRetry)
	}
	m, ok := svc.Map(name)
	if !ok {
		return nil, fmt.Errorf("%w: map %q of service %q: %w", errUnknown, name, service, asynq.SkipRetry)
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

// seedMergeHandler is the one writer of a bundle: it reads the bundle's staged parts, applies
// them to the stored bundle with a tilecache.BundleWriter (which rewrites it whole and
// deterministically, so a repeated merge writes the same bytes) and records the bundle. For a
// delete job it deletes exactly the bundle's tiles of the area of interest's cover instead
// (for envelopes and polygons alike), keeping the bundle's other tiles.
type seedMergeHandler struct{ s *seeder }

// ProcessTask implements asynq.Handler.
func (h *seedMergeHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	job, err := task.DecodeSeedMerge(t.Payload())
	if err != nil {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	b, bid, live, err := h.s.liveBundle(ctx, job.Job, job.Layer, job.Bundle)
	if err != nil || !live {
		return err
	}
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
		// Exactly the tiles of the area's cover (a polygon's, not its envelope's); the other
		// tiles of the bundle stay, as the writer merges with the stored bundle.
		cover, err := sp.Scheme.Cover(sp.AOI(), b.TopLeft.Level)
		if err != nil {
			return 0, fmt.Errorf("seed: cover of job %s: %w: %w", sp.ID, err, asynq.SkipRetry)
		}
		for t := range cover.TilesIn(b) {
			if err := w.Delete(t); err != nil {
				return 0, err
			}
			deleted++
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
	// Every api drops what it keeps of the bundle's tiles now, not when the job ends
	// (docs/freshness.md); a lost message costs only the apis' trust window.
	v := refresh.Invalidation{Root: sp.Root, Folders: []string{sp.Layers[job.Layer].Folder}, Ranges: []tilecache.TileRange{{Level: b.TopLeft.Level,
		MinRow: b.TopLeft.Row, MinCol: b.TopLeft.Col, MaxRow: b.TopLeft.Row + tilecache.BundleSize - 1, MaxCol: b.TopLeft.Col + tilecache.BundleSize - 1}}}
	if err := refresh.Publish(ctx, h.s.p.Redis, v); err != nil {
		h.s.p.Logger.Warn("seed: tell the apis of a rewritten bundle", "job", job.Job, "bundle", b.String(), "err", err)
	}
	return deleted, nil
}

// cacheMetatileHandler draws the metatile of a cache tile asked for on demand (GetMapTile or
// GetLayerTile of a missing tile, when the map's cache has onDemand). It draws exactly as a
// seeding job does (drawMetatile: the same scheme, buffer, stable labels, format and quality,
// all given by the task), so an on-demand tile has the bytes the seeded tile would have, and
// returns every tile of the metatile to the waiting api in the staging format. It writes
// nothing to the cache: a bundle's only writer is its seeding merge.
type cacheMetatileHandler struct{ s *seeder }

// ProcessTask implements asynq.Handler.
func (h *cacheMetatileHandler) ProcessTask(ctx context.Context, t *asynq.Task) error {
	job, err := task.DecodeCacheMetatile(t.Payload())
	if err != nil {
		return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	start := time.Now()
	data, err := h.render(ctx, job)
	res := task.Result{ContentType: "application/octet-stream", Size: len(data), RenderNanos: time.Since(start).Nanoseconds()}
	switch {
	case errors.Is(err, asynq.SkipRetry):
		res.Error, res.ClientError = err.Error(), true
		h.report(ctx, job, res)
		return err
	case err != nil:
		if retried, _ := asynq.GetRetryCount(ctx); retried >= 1 {
			h.report(ctx, job, task.Result{Error: err.Error()})
		}
		return err
	}
	if len(data) <= task.MaxInlineBytes {
		res.Data = data
	} else {
		if err := h.s.p.Tiles.Put(ctx, job.Key, data, "application/octet-stream"); err != nil {
			if retried, _ := asynq.GetRetryCount(ctx); retried >= 1 {
				h.report(ctx, job, task.Result{Error: "store: " + err.Error()})
			}
			return fmt.Errorf("cache metatile: %w", err)
		}
		res.Key = job.Key
	}
	h.report(ctx, job, res)
	return nil
}

// render draws the metatile and returns its tiles in the staging format.
func (h *cacheMetatileHandler) render(ctx context.Context, job task.CacheMetatile) ([]byte, error) {
	m, err := h.s.mapNamed(job.Service, job.Map)
	if err != nil {
		return nil, err
	}
	if job.LayerID >= 0 {
		if _, ok := m.Layer(job.LayerID); !ok {
			return nil, fmt.Errorf("%w: map %s has no layer %d: %w", errUnknown, m.Name, job.LayerID, asynq.SkipRetry)
		}
	}
	format, err := tileFormat(job.Scheme.Format)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	mt := tilecache.Metatile{TopLeft: tilecache.Tile{Level: job.Level, Row: job.Metatile[0], Col: job.Metatile[1]}, Rows: job.Metatile[2], Cols: job.Metatile[3]}
	img, area, err := h.s.drawMetatile(ctx, job.Scheme, job.Buffer, m, mt, layerStates(m, job.LayerID), background(m, job.LayerID), format)
	if err != nil {
		return nil, fmt.Errorf("cache metatile %v: %w", mt, err)
	}
	defer h.s.p.Renderer.Release(img)
	var changes []seed.Change
	var buf bytes.Buffer
	for t := range mt.Tiles() {
		data, err := encodeTile(&buf, img, area, t, format, job.Quality)
		if err != nil {
			return nil, fmt.Errorf("cache metatile %v: encode tile %v: %w", mt, t, err)
		}
		changes = append(changes, seed.Change{Tile: t, Data: data})
	}
	return seed.EncodeStaging(changes), nil
}

// report pushes the result for the waiting api; a result nobody collects expires.
func (h *cacheMetatileHandler) report(ctx context.Context, job task.CacheMetatile, r task.Result) {
	if err := reportResult(ctx, h.s.p.Redis, h.s.p.ID, job.ID, r); err != nil {
		h.s.p.Logger.Error("report result", "request_id", job.TraceID, "task_id", job.ID, "err", err)
	}
}
