package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/feature/geojson"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/provider"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// metaStore is what the refresher needs of the tile store: whether a map's vector cache root
// holds a conf.xml (the vector cache was seeded).
type metaStore interface {
	Stat(ctx context.Context, key string) (blob.Info, error)
}

// refresherParams configure a refresher.
type refresherParams struct {
	catalog     *catalog.Catalog
	connections map[string]*provider.Connection
	jobs        *seed.Jobs
	backlog     *refresh.Backlog
	logger      *slog.Logger
	metrics     *metrics.Metrics // nil: none
	// store, when set, is where the refresher looks for the maps' seeded vector caches, which
	// get refresh jobs beside the raster ones; invalidate, when set, tells every api to drop
	// the vector tiles of the dirty areas it keeps (built on demand, or read from a cache).
	store      metaStore
	invalidate func(context.Context, refresh.Invalidation) error
	// maxEntries is the most backlog entries one refresh job takes; default 1000.
	maxEntries int64
	// retry is the pause before a consumer reconnects (or looks for the changelog again);
	// default 5 s.
	retry time.Duration
	// poll is the consumers' safety-net poll (changes.Consumer.Poll); default 30 s.
	poll time.Duration
	// stateFile, when set, is the SQLite file of the file-backed layers' state
	// (changes.FileState): with it, GeoPackage and GeoJSON layers are looked at every filePoll
	// (default 10 s).
	stateFile string
	filePoll  time.Duration
}

// refresher turns the changes of the maps' data into refresh jobs (docs/freshness.md):
//
//   - a consumer per PostGIS connection whose layers are drawn by a cached map and whose
//     database has the changelog installed hands each batch of changes to record, which
//     carries the envelopes into each map's spatial reference and adds them to the backlog of
//     every cache whose map draws the layer; the batch is acknowledged only then, so a
//     coordinator killed in between reads the same changes again;
//   - a pass (exec) submits, for each cache that is due under its refresh policy and has no
//     job running, one seeding job (mode recreateAll) whose spec carries the dirty envelopes
//     (seed.DirtyPlan plans it), and removes what it took from the backlog once the job is
//     stored: a coordinator killed in between submits it again (rendering twice is harmless).
type refresher struct {
	p     refresherParams
	owner string
	// layers maps a connection and a layer key (the changelog's) to the caches drawing it.
	layers map[string]map[string][]drawnBy
	// files are the GeoPackage and GeoJSON layers drawn by a cached map, by file and table.
	files []*fileLayer
	wake  chan struct{}
}

// fileLayer is a file-backed layer drawn by cached maps.
type fileLayer struct {
	key, path, table string // key: "<path>#<table>" (the FileState's layer key)
	geojson          bool
	by               []drawnBy
}

// drawnBy is a cache whose map draws a layer: the map, and the cache folder the layer is in.
type drawnBy struct {
	service string
	m       *catalog.Map
	folder  string
}

func newRefresher(p refresherParams, owner string) *refresher {
	if p.maxEntries <= 0 {
		p.maxEntries = 1000
	}
	if p.retry <= 0 {
		p.retry = 5 * time.Second
	}
	if p.poll <= 0 {
		p.poll = 30 * time.Second
	}
	if p.filePoll <= 0 {
		p.filePoll = 10 * time.Second
	}
	if p.logger == nil {
		p.logger = slog.Default()
	}
	r := &refresher{p: p, owner: owner, layers: map[string]map[string][]drawnBy{}, wake: make(chan struct{}, 1)}
	if p.catalog == nil {
		return r
	}
	for _, svc := range p.catalog.Services() {
		for _, m := range svc.Maps {
			c := m.Def.Cache
			if c == nil {
				continue
			}
			for _, l := range m.Layers {
				folder := tilecache.FusedLayer
				if c.LayerCaches {
					folder = l.Name
				}
				by := drawnBy{service: svc.Name, m: m, folder: folder}
				switch d := l.Def.Source.(type) {
				case gpkg.Definition:
					r.addFile(d.File+"#"+d.Table, d.File, d.Table, false, by)
					continue
				case geojson.Definition:
					r.addFile(d.File, d.File, "", true, by)
					continue
				}
				d, ok := l.Def.Source.(postgis.Definition)
				if !ok || d.Table == "" {
					continue
				}
				key := d.Table
				if _, name, ok := strings.Cut(d.Table, "."); ok {
					key = name
				}
				if r.layers[d.Connection] == nil {
					r.layers[d.Connection] = map[string][]drawnBy{}
				}
				r.layers[d.Connection][key] = append(r.layers[d.Connection][key], by)
			}
		}
	}
	return r
}

// addFile records a file-backed layer drawn by a cached map.
func (r *refresher) addFile(key, path, table string, isGeoJSON bool, by drawnBy) {
	for _, f := range r.files {
		if f.key == key {
			f.by = append(f.by, by)
			return
		}
	}
	r.files = append(r.files, &fileLayer{key: key, path: path, table: table, geojson: isGeoJSON, by: []drawnBy{by}})
}

// watchFiles looks at the file-backed layers every filePoll until ctx ends: a GeoPackage's
// changed rows (row digests) or a replaced GeoJSON file (the whole layer) go to the backlog of
// every cache drawing them, and are acknowledged in the state file only then. The first look
// at a layer records its baseline.
func (r *refresher) watchFiles(ctx context.Context) {
	if r.p.stateFile == "" || len(r.files) == 0 {
		return
	}
	if err := os.MkdirAll(filepath.Dir(r.p.stateFile), 0o700); err != nil {
		r.p.logger.Warn("refresh: file layers are not followed", "err", err)
		return
	}
	st, err := changes.OpenFileState(r.p.stateFile)
	if err != nil {
		r.p.logger.Warn("refresh: file layers are not followed", "err", err)
		return
	}
	defer st.Close()
	t := time.NewTicker(r.p.filePoll)
	defer t.Stop()
	for {
		r.scanFiles(ctx, st)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scanFiles looks at every file-backed layer once.
func (r *refresher) scanFiles(ctx context.Context, st *changes.FileState) {
	for _, f := range r.files {
		if ctx.Err() != nil {
			return
		}
		var scan *changes.FileScan
		var err error
		if f.geojson {
			scan, err = st.GeoJSON(ctx, f.key, f.path)
		} else {
			scan, err = st.GeoPackage(ctx, f.key, f.path, f.table)
		}
		if err != nil {
			r.p.logger.Warn("refresh: look at a file layer", "file", f.path, "table", f.table, "err", err)
			continue
		}
		if scan.Unchanged {
			continue
		}
		if !scan.Baseline {
			d := scan.Dirty
			if !d.Whole && len(d.Envelopes) > 0 && d.SRID == 0 {
				d.Whole, d.Envelopes = true, nil // envelopes in a system we cannot name
			}
			if len(d.Envelopes) > 0 || d.Whole { // else written, but no row changed
				if err := r.recordFor(ctx, f.by, d); err != nil {
					r.p.logger.Warn("refresh: record a file layer's changes", "file", f.path, "err", err)
					continue
				}
			}
		}
		if err := st.Ack(ctx, scan); err != nil {
			r.p.logger.Warn("refresh: acknowledge a file layer's changes", "file", f.path, "err", err)
		}
	}
}

// watch runs a consumer per connection until ctx ends.
func (r *refresher) watch(ctx context.Context, done func()) {
	n := 0
	for name := range r.layers {
		conn, ok := r.p.connections[name]
		if !ok {
			r.p.logger.Warn("refresh: no connection named by a layer", "connection", name)
			continue
		}
		n++
		go func() {
			defer done()
			r.consume(ctx, conn)
		}()
	}
	for range len(r.layers) - n {
		done()
	}
}

// consume reads one connection's changelog until ctx ends, reconnecting after a failure.
func (r *refresher) consume(ctx context.Context, conn *provider.Connection) {
	log := r.p.logger.With("connection", conn.Name)
	quiet := false // "not installed" is said once
	for ctx.Err() == nil {
		err := r.consumeOnce(ctx, conn, &quiet, log)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("refresh: change consumer stopped; reconnecting", "err", err, "retry", r.p.retry)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.p.retry):
		}
	}
}

func (r *refresher) consumeOnce(ctx context.Context, conn *provider.Connection, quiet *bool, log *slog.Logger) error {
	dsn, password, err := conn.Resolve()
	if err != nil {
		return err
	}
	c, err := changes.ListenAs(ctx, dsn, password)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	ok, err := c.Installed(ctx)
	if err != nil {
		return err
	}
	if !ok {
		if !*quiet {
			log.Info("refresh: no change capture on this connection (mapfarm changes install); its layers' caches are refreshed by cachetool expire only")
			*quiet = true
		}
		return nil
	}
	*quiet = false
	c.Poll, c.Log = r.p.poll, log
	return c.Run(ctx, r.p.retry, func(ctx context.Context, ds []changes.Dirty) error { return r.record(ctx, conn.Name, ds) })
}

// record adds the dirty layers of one batch to the backlog of every cache drawing them.
func (r *refresher) record(ctx context.Context, connection string, ds []changes.Dirty) error {
	for _, d := range ds {
		if err := r.recordFor(ctx, r.layers[connection][d.Layer], d); err != nil {
			return err
		}
	}
	return nil
}

// recordFor adds one dirty layer to the backlog of the caches drawing it, and wakes the pass.
func (r *refresher) recordFor(ctx context.Context, bys []drawnBy, d changes.Dirty) error {
	now := time.Now()
	for _, by := range bys {
		e, err := entryOf(by, d, now)
		if err != nil {
			// An envelope that cannot be carried into the map's SR: the whole cache is dirty.
			r.p.logger.Warn("refresh: changed area not in the map's spatial reference; the whole cache is dirty", "layer", d.Layer, "map", by.m.Name, "err", err)
			e = refresh.Entry{At: now, Source: d.Layer, Whole: true, Folders: []string{by.folder}}
		}
		if err := r.p.backlog.Add(ctx, refresh.CacheKey(by.service, by.m.Name), e); err != nil {
			return err
		}
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return nil
}

// entryOf is the backlog entry of a dirty layer for one cache: its envelopes in the map's SR.
func entryOf(by drawnBy, d changes.Dirty, now time.Time) (refresh.Entry, error) {
	e := refresh.Entry{At: now, Source: d.Layer, Whole: d.Whole, Folders: []string{by.folder}}
	if d.Whole || len(d.Envelopes) == 0 {
		return e, nil
	}
	from := proj.SR{WKID: d.SRID}
	if d.SRID == 0 || by.m.SR.Same(from) {
		e.Envelopes = d.Envelopes
		return e, nil
	}
	t, err := by.m.Systems.Transformer(from, by.m.SR)
	if err != nil {
		return e, err
	}
	in, err := d.In(t)
	if err != nil {
		return e, err
	}
	e.Envelopes = in.Envelopes
	return e, nil
}

// exec submits the refresh jobs that are due.
func (r *refresher) exec(ctx context.Context) {
	pending, err := r.p.backlog.Pending(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.p.logger.Warn("refresh: read the backlog", "err", err)
		}
		return
	}
	now := time.Now()
	r.publish(pending, now)
	if len(pending) == 0 {
		return
	}
	busy, err := r.busyRoots(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.p.logger.Warn("refresh: list active jobs", "err", err)
		}
		return
	}
	for _, w := range pending {
		if ctx.Err() != nil {
			return
		}
		service, mapName, _ := strings.Cut(w.Cache, "/")
		m := r.mapOf(service, mapName)
		if m != nil && !due(m.Def.Cache, w, now) {
			continue
		}
		if busy[seed.CacheRoot(service, mapName)] || busy[seed.VectorCacheRoot(service, mapName)] {
			// One job at a time per cache: a bundle has one writer. The map's raster and vector
			// caches take the same backlog, so a job on either holds back both.
			continue
		}
		lock := "refresh." + validIDPart(w.Cache)
		ok, err := r.p.jobs.Lock(ctx, lock, r.owner, 30*time.Second)
		if err != nil || !ok {
			continue
		}
		if err := r.submit(ctx, w.Cache, service, m, now); err != nil && ctx.Err() == nil {
			r.p.logger.Warn("refresh: submit a refresh job", "cache", w.Cache, "err", err)
		}
		if err := r.p.jobs.Unlock(context.WithoutCancel(ctx), lock, r.owner); err != nil {
			r.p.logger.Warn("refresh: unlock", "cache", w.Cache, "err", err)
		}
	}
}

// due reports whether a cache's backlog is due for a refresh job under its policy.
func due(c *servicedef.Cache, w refresh.Waiting, now time.Time) bool {
	if c == nil || w.Forced {
		return true
	}
	age := now.Sub(w.Oldest)
	if c.MaxStaleness > 0 && age >= c.MaxStaleness {
		return true
	}
	switch c.Refresh.Mode {
	case servicedef.RefreshEvery:
		return age >= c.Refresh.Every
	case servicedef.RefreshManual:
		return false
	}
	return true
}

// mapOf returns the catalog's map, or nil.
func (r *refresher) mapOf(service, mapName string) *catalog.Map {
	if r.p.catalog == nil {
		return nil
	}
	svc, ok := r.p.catalog.Service(service)
	if !ok {
		return nil
	}
	m, ok := svc.Map(mapName)
	if !ok {
		return nil
	}
	return m
}

// busyRoots returns the cache roots of the active jobs.
func (r *refresher) busyRoots(ctx context.Context) (map[string]bool, error) {
	ids, err := r.p.jobs.Active(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, id := range ids {
		sp, err := r.p.jobs.Spec(ctx, id)
		if errors.Is(err, seed.ErrNoJob) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[sp.Root] = true
	}
	return out, nil
}

// submit takes a cache's backlog into its refresh jobs: one of the map's raster cache and,
// when the map has a seeded vector cache (vectorSeeded), one of its vector cache, both of the
// same dirty areas. Every api is told first to drop the vector tiles of those areas it keeps.
func (r *refresher) submit(ctx context.Context, cache, service string, m *catalog.Map, now time.Time) error {
	t, err := r.p.backlog.Take(ctx, cache, r.p.maxEntries)
	if err != nil {
		return err
	}
	if m == nil || m.Def.Cache == nil {
		r.p.logger.Warn("refresh: the backlog names a map without a cache; dropped", "cache", cache)
		return r.p.backlog.Done(ctx, cache, t, now)
	}
	r.dropVectorTiles(ctx, service, m, t)
	sp, err := refreshSpec(r.p.catalog, service, m, t, now, false)
	if err != nil {
		return err
	}
	specs := []*seed.Spec{sp}
	vector, err := r.vectorSeeded(ctx, service, m)
	if err != nil {
		return err
	}
	if vector {
		vsp, err := refreshSpec(r.p.catalog, service, m, t, now, true)
		if err != nil {
			return err
		}
		specs = append(specs, vsp)
	}
	submitted := 0
	for _, sp := range specs {
		if sp == nil {
			continue // nothing drawn changed
		}
		// A second job that fails to be stored leaves the backlog as it was: the next pass
		// submits both again (the first renders twice, which is harmless).
		if err := r.p.jobs.Create(ctx, sp); err != nil {
			return err
		}
		submitted++
		r.p.logger.Info("refresh job submitted", "job", sp.ID, "cache", cache, "vector", sp.Vector(), "areas", len(t.Entries),
			"whole", t.Whole, "envelopes", len(sp.Dirty), "polygons", len(sp.DirtyPolygons))
	}
	if err := r.p.backlog.Done(ctx, cache, t, now); err != nil {
		return err
	}
	if mt := r.p.metrics; mt != nil && submitted > 0 {
		mt.RefreshJobs.Add(float64(submitted))
		mt.RefreshAreas.Add(float64(len(t.Entries)))
	}
	return nil
}

// vectorSeeded reports whether a map has a seeded vector cache: a conf.xml in its vector cache
// root (written when a vector seeding job ends). A first vector seeding job still running
// holds the cache busy (exec), so the changes made meanwhile wait for it and are refreshed
// after it.
func (r *refresher) vectorSeeded(ctx context.Context, service string, m *catalog.Map) (bool, error) {
	if r.p.store == nil {
		return false, nil
	}
	_, err := r.p.store.Stat(ctx, seed.VectorCacheRoot(service, m.Name)+"/"+tilecache.ConfXML)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("refresh: look for the vector cache of %s/%s: %w", service, m.Name, err)
	}
	return true, nil
}

// dropVectorTiles tells every api to drop the vector tiles of t's dirty areas it keeps in
// memory (vectortileserver.Handler.ForgetTiles): at every vector tile level, not only the
// cached ones, since a vector tile of any zoom may have been built on demand from the changed
// data. The areas are widened by seed.VectorReach; a map not in Web Mercator, or a wholly dirty
// cache, drops every vector tile of the map. A lost message leaves the memory's own age limit.
func (r *refresher) dropVectorTiles(ctx context.Context, service string, m *catalog.Map, t *refresh.Taken) {
	if r.p.invalidate == nil {
		return
	}
	v := refresh.Invalidation{Root: seed.VectorCacheRoot(service, m.Name), Folders: []string{tilecache.FusedLayer}}
	vs := seed.VectorScheme()
	if !t.Whole && vs.Extent != (orb.Bound{}) && m.SR.Same(proj.SR{WKID: 3857}) {
		for _, level := range vs.Levels() {
			lod, _ := vs.LOD(level)
			d := float64(seed.VectorReach) * lod.Resolution
			for _, e := range t.Entries {
				areas := slices.Clone(e.Envelopes)
				for i := range areas {
					areas[i] = orb.Bound{Min: orb.Point{areas[i].Min[0] - d, areas[i].Min[1] - d}, Max: orb.Point{areas[i].Max[0] + d, areas[i].Max[1] + d}}
				}
				for _, p := range e.Polygons {
					areas = append(areas, p.Bound())
				}
				for _, a := range areas {
					if rg, err := vs.TilesCovering(level, a); err == nil && !rg.Empty() {
						v.Ranges = append(v.Ranges, rg)
					}
				}
			}
		}
		if len(v.Ranges) == 0 {
			return // nothing within the vector tiles' world
		}
	}
	if err := r.p.invalidate(ctx, v); err != nil {
		r.p.logger.Warn("refresh: tell the apis of the changed vector tiles", "map", m.Name, "err", err)
	}
}

// refreshSpec is the seeding job of what t took: the dirty envelopes at every level of the
// cache, widened by the cache's buffer (seed.DirtyPlan), with the expired polygons' tiles, in
// the cache folders they came from; the whole map when t is whole. With vector, it is the job
// of the map's vector cache (seed.FormatPBF: its levels, its one fused folder whatever folders
// the areas came from, and the reach of a vector tile's buffer, seed.VectorReach). Nil when
// nothing is left to render.
func refreshSpec(cat *catalog.Catalog, service string, m *catalog.Map, t *refresh.Taken, now time.Time, vector bool) (*seed.Spec, error) {
	id := validIDPart("refresh-"+service+"-"+m.Name) + "-" + strconv.FormatInt(now.UnixMilli(), 36)
	req := seed.Request{Service: service, Map: m.Name, Mode: string(seed.RecreateAll)}
	if vector {
		id += "-vector"
		req.Format = seed.FormatPBF
	}
	sp, err := seed.NewSpec(cat, req, id, now)
	if err != nil {
		return nil, err
	}
	folders := map[string]bool{}
	all := vector // a vector cache has one folder, which every layer is drawn in
	var envs []orb.Bound
	var polys []orb.Polygon
	for _, e := range t.Entries {
		if len(e.Folders) == 0 {
			all = true
		}
		for _, f := range e.Folders {
			folders[f] = true
		}
		envs = append(envs, e.Envelopes...)
		polys = append(polys, e.Polygons...)
	}
	if t.Whole {
		all = true // the cache is dirty past the backlog's cap: which folders is not known
	}
	if !all {
		var keep []seed.Layer
		for _, l := range sp.Layers {
			if folders[l.Folder] {
				keep = append(keep, l)
			}
		}
		sp.Layers = keep
	}
	if len(sp.Layers) == 0 {
		return nil, nil
	}
	if t.Whole {
		return sp, nil // the map's full extent, every level
	}
	if len(envs) == 0 && len(polys) == 0 {
		return nil, nil
	}
	sp.Dirty, sp.DirtyPolygons, sp.Reach = envs, polys, sp.Buffer
	if vector {
		sp.Reach = seed.VectorReach
	}
	var u orb.Bound
	for i, e := range envs {
		if i == 0 {
			u = e
		}
		u = u.Union(e)
	}
	for i, p := range polys {
		if i == 0 && len(envs) == 0 {
			u = p.Bound()
		}
		u = u.Union(p.Bound())
	}
	// The extent (what conf.cdi grows by) must have an area: a point is widened by the reach
	// at the finest level.
	if lod, ok := sp.Scheme.LOD(sp.Levels[len(sp.Levels)-1]); ok {
		d := float64(max(sp.Reach, 1)) * lod.Resolution
		u = orb.Bound{Min: orb.Point{u.Min[0] - d, u.Min[1] - d}, Max: orb.Point{u.Max[0] + d, u.Max[1] + d}}
	}
	sp.Extent = u
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	return sp, nil
}

// validIDPart makes s fit in a job id: characters other than letters, digits, '.', '_' and
// '-' become '_', and it is cut to 100 bytes.
func validIDPart(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}

// publish sets the backlog metrics.
func (r *refresher) publish(pending []refresh.Waiting, now time.Time) {
	mt := r.p.metrics
	if mt == nil {
		return
	}
	mt.RefreshBacklog.Reset()
	mt.RefreshOldest.Reset()
	for _, w := range pending {
		mt.RefreshBacklog.WithLabelValues(w.Cache).Set(float64(w.Entries))
		mt.RefreshOldest.WithLabelValues(w.Cache).Set(now.Sub(w.Oldest).Seconds())
	}
}
