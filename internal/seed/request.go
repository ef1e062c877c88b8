package seed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
	"github.com/mapfarm/mapfarm/internal/vectortile"
)

// ErrBadRequest is wrapped by errors for a seeding request that cannot be served.
var ErrBadRequest = errors.New("seed: bad request")

// DefaultPartTiles is the most tiles one render task draws: 256 (16 metatiles of 4×4), small
// enough that a full bundle of 16,384 tiles is spread over 64 tasks.
const DefaultPartTiles = 256

// DefaultMaxFailures is the default failure budget, in tiles.
const DefaultMaxFailures = 1000

// Request is what an operator asks for (the JSON body of POST /admin/seed).
type Request struct {
	// ID names the job; empty means a generated one.
	ID      string `json:"id,omitempty"`
	Service string `json:"service"`
	// Map is the map name; empty means the service's default map.
	Map string `json:"map,omitempty"`
	// Extent is [xmin, ymin, xmax, ymax] in the map's SR; empty (with no Polygon) means the
	// map's full extent.
	Extent []float64 `json:"extent,omitempty"`
	// Polygon is the area of interest as rings of [x, y] in the map's SR.
	Polygon [][][2]float64 `json:"polygon,omitempty"`
	// Levels lists the levels to seed; empty means every level of the cache.
	Levels []int `json:"levels,omitempty"`
	// Mode is recreateAll (default), recreateEmpty or delete.
	Mode string `json:"mode,omitempty"`
	// RefreshBefore (RFC 3339), with recreateEmpty, also renders tiles stored before it.
	RefreshBefore string `json:"refreshBefore,omitempty"`
	// SkipEmpty overrides the cache's skipEmpty.
	SkipEmpty *bool `json:"skipEmpty,omitempty"`
	// MaxFailures is the failure budget in tiles; 0 means DefaultMaxFailures.
	MaxFailures int64 `json:"maxFailures,omitempty"`
	// PartTiles is the most tiles per render task; 0 means DefaultPartTiles.
	PartTiles int `json:"partTiles,omitempty"`
	// Format chooses the cache: empty (or "raster", or the cache's image format) for the map's
	// raster cache, "pbf" (or "mvt", "vector") for its vector tile cache (VectorCacheRoot).
	Format string `json:"format,omitempty"`
}

// FormatPBF is Spec.Format of a vector tile cache.
const FormatPBF = "pbf"

// parseFormat reads Request.Format: "" for the raster cache, FormatPBF for the vector one.
func parseFormat(s string) (string, error) {
	switch strings.ToLower(s) {
	case "", "raster", "image", "png", "png8", "png24", "png32", "jpeg", "jpg", "mixed":
		return "", nil
	case "pbf", "mvt", "vector":
		return FormatPBF, nil
	}
	return "", bad("format %q: want pbf (vector tiles) or empty (the raster cache)", s)
}

// VectorScheme is the tiling scheme of vector tile caches: Web Mercator (GoogleMapsCompatible)
// with tiles of vectortile.TileSize (512 px, as ArcGIS's vector tile services and packages), so
// that level z is Web Mercator zoom z (one tile for the world at level 0); levels 0 to
// vectorstyle.DefaultMaxZoom, the levels the VectorTileServer serves (its last level holds what
// clients overzoom, so a seeded tile of it is the served one); tile format PBF.
func VectorScheme() tilecache.Scheme {
	s := tilecache.WebMercator()
	s.LODs = s.LODs[:vectorstyle.DefaultMaxZoom+1]
	f := float64(vectortile.TileSize) / float64(s.TileCols)
	for i := range s.LODs {
		s.LODs[i].Resolution /= f
		s.LODs[i].Scale /= f
	}
	s.TileCols, s.TileRows = vectortile.TileSize, vectortile.TileSize
	s.Format = "PBF"
	return s
}

// VectorReach is the reach, in pixels of VectorScheme, of a change in a vector tile cache: a
// tile holds the features within the encoder's buffer around it (mvt.DefaultBuffer of
// mvt.DefaultExtent units, 8 px of a 512-px tile), and a metatile reads its data one unit
// further (vectortile.Builder.Metatile), so a changed envelope widened by 9 px at a level finds
// every tile of that level whose bytes it can change.
const VectorReach = ((mvt.DefaultBuffer+1)*vectortile.TileSize + mvt.DefaultExtent - 1) / mvt.DefaultExtent

// vectorLevels returns the levels of vector scheme v whose resolutions the raster scheme's
// levels have: a 256-px Web Mercator cache of levels 0 to 7 gives vector levels 0 to 6 (vector
// level z has the resolution of raster level z+1).
func vectorLevels(v, raster tilecache.Scheme) []int {
	var levels []int
	for _, l := range raster.LODs {
		z := int(math.Round(math.Log2(v.LODs[0].Resolution / l.Resolution)))
		if _, ok := v.LOD(z); ok && !slices.Contains(levels, z) {
			levels = append(levels, z)
		}
	}
	slices.Sort(levels)
	return levels
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, quote.Sprintf(format, args...))
}

// Drawing is how the tiles of a map's cache are drawn, besides the map's own data and style:
// the tiling scheme (tile geometry, image format, quality), the metatile size and the buffer
// around a metatile. Seeding jobs (NewSpec) and tiles rendered on demand both take it from the
// map's cache section through DrawingOf, so that a tile drawn on demand is the tile a seeding
// job stores.
type Drawing struct {
	Scheme       tilecache.Scheme
	MetatileSize int
	Buffer       int
	Quality      int
}

// DrawingOf returns how m's cache tiles are drawn; the error (wrapping ErrBadRequest) is for
// a map without a cache section or with a scheme that cannot be built.
func DrawingOf(m *catalog.Map) (Drawing, error) {
	c := m.Def.Cache
	if c == nil {
		return Drawing{}, bad("map %s has no cache (add a cache section to its definition)", m.Name)
	}
	scheme, err := c.TileScheme(m.SR)
	if err != nil {
		return Drawing{}, bad("%v", err)
	}
	if scheme.Extent == (orb.Bound{}) {
		// A custom scheme in a system with no preset extent (EPSG:5070, say): as in Esri's
		// caches, the map's full extent bounds the levels' rows and columns. Left empty, the
		// matrix ended at x = 0 and y = 0, and tiles east or south of those lines were never
		// seeded.
		scheme.Extent = m.FullExtent
		if err := scheme.Validate(); err != nil {
			return Drawing{}, bad("map %s: cache: full extent %v: %v", m.Name, m.FullExtent, err)
		}
	}
	return Drawing{Scheme: scheme, MetatileSize: c.MetatileSize, Buffer: c.Buffer, Quality: c.Quality}, nil
}

// NewSpec resolves a request against the catalog into a job spec named id.
func NewSpec(cat *catalog.Catalog, r Request, id string, now time.Time) (*Spec, error) {
	svc, ok := cat.Service(r.Service)
	if !ok {
		return nil, bad("no service %q", r.Service)
	}
	m, ok := svc.Map(r.Map)
	if !ok {
		return nil, bad("service %s has no map %q", svc.Name, r.Map)
	}
	c := m.Def.Cache
	if c == nil {
		return nil, bad("map %s of service %s has no cache (add a cache section to its definition)", m.Name, svc.Name)
	}
	d, err := DrawingOf(m)
	if err != nil {
		return nil, err
	}
	scheme := d.Scheme
	mode, err := ParseMode(r.Mode)
	if err != nil {
		return nil, bad("%v", err)
	}
	format, err := parseFormat(r.Format)
	if err != nil {
		return nil, err
	}
	root, storage := CacheRoot(svc.Name, m.Name), c.Storage
	if format == FormatPBF {
		// The vector cache: Web Mercator at 512 px, the zooms of the raster cache's levels,
		// compact V2 bundles of gzipped tiles as in a VTPK, in a root of its own.
		if !webMercator(m.SR.WKID) {
			return nil, bad("map %s is in WKID %d: vector tile caches are seeded for maps in Web Mercator (3857)", m.Name, m.SR.WKID)
		}
		v := VectorScheme()
		levels := vectorLevels(v, scheme)
		if len(levels) == 0 {
			return nil, bad("map %s: its cache has no level of the resolution of a vector tile level (zooms 0 to %d)", m.Name, v.LODs[len(v.LODs)-1].LevelID)
		}
		scheme = v
		if len(r.Levels) == 0 {
			r.Levels = levels
		}
		root, storage = VectorCacheRoot(svc.Name, m.Name), tilecache.CompactV2
	}
	s := &Spec{
		ID: id, Service: svc.Name, Map: m.Name, Root: root, Format: format,
		Scheme: scheme, Storage: storage, Mode: mode,
		MetatileSize: d.MetatileSize, Buffer: d.Buffer, SkipEmpty: c.SkipEmpty, Quality: d.Quality,
		PartTiles: r.PartTiles, MaxFailures: r.MaxFailures, Created: now.UTC(),
	}
	if s.PartTiles <= 0 {
		s.PartTiles = DefaultPartTiles
	}
	s.PartTiles = max(s.PartTiles, s.MetatileSize*s.MetatileSize)
	if s.MaxFailures <= 0 {
		s.MaxFailures = DefaultMaxFailures
	}
	if r.SkipEmpty != nil {
		s.SkipEmpty = *r.SkipEmpty
	}
	if c.LayerCaches && format == "" {
		for _, l := range m.Layers {
			s.Layers = append(s.Layers, Layer{ID: l.ID, Folder: l.Name})
		}
	} else {
		s.Layers = []Layer{{ID: -1, Folder: tilecache.FusedLayer}}
	}
	switch {
	case len(r.Polygon) > 0:
		for _, ring := range r.Polygon {
			var rg orb.Ring
			for _, p := range ring {
				rg = append(rg, orb.Point(p))
			}
			if len(rg) < 3 {
				return nil, bad("polygon ring of %d points: want at least 3", len(rg))
			}
			if rg[0] != rg[len(rg)-1] {
				rg = append(rg, rg[0])
			}
			s.Polygon = append(s.Polygon, rg)
		}
		s.Extent = s.Polygon.Bound()
	case len(r.Extent) == 4:
		s.Extent = orb.Bound{Min: orb.Point{r.Extent[0], r.Extent[1]}, Max: orb.Point{r.Extent[2], r.Extent[3]}}
		if s.Extent.Max[0] <= s.Extent.Min[0] || s.Extent.Max[1] <= s.Extent.Min[1] {
			return nil, bad("extent %v is empty or inverted: want [xmin, ymin, xmax, ymax]", r.Extent)
		}
	case len(r.Extent) == 0:
		s.Extent = m.FullExtent
	default:
		return nil, bad("extent has %d numbers: want [xmin, ymin, xmax, ymax]", len(r.Extent))
	}
	if len(r.Levels) == 0 {
		s.Levels = scheme.Levels()
	} else {
		for _, l := range r.Levels {
			if _, ok := scheme.LOD(l); !ok {
				return nil, bad("level %d is not a level of the cache (levels %v)", l, scheme.Levels())
			}
		}
		s.Levels = append([]int(nil), r.Levels...)
	}
	if r.RefreshBefore != "" {
		t, err := time.Parse(time.RFC3339, r.RefreshBefore)
		if err != nil {
			return nil, bad("refreshBefore %q is not an RFC 3339 time", r.RefreshBefore)
		}
		s.RefreshBefore = t
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if strings.ContainsAny(s.Root, " \t\n") {
		return nil, bad("cache root %q holds white space", s.Root)
	}
	return s, nil
}

// webMercator reports whether wkid is Web Mercator (EPSG's and Esri's ids).
func webMercator(wkid int) bool {
	switch wkid {
	case 3857, 102100, 102113, 900913:
		return true
	}
	return false
}

// StartRequests returns the seeding requests a one-process farm submits when it starts: one
// per map whose cache has seedAtStart, over the map's full extent at every level of the cache,
// in mode recreateEmpty so that tiles stored by an earlier start are kept.
func StartRequests(cat *catalog.Catalog) []Request {
	var out []Request
	for _, svc := range cat.Services() {
		for _, m := range svc.Maps {
			if c := m.Def.Cache; c != nil && c.SeedAtStart {
				out = append(out, Request{Service: svc.Name, Map: m.Name, Mode: string(RecreateEmpty)})
			}
		}
	}
	return out
}

// Admin is the operator's side of jobs, as the api's admin endpoints serve it: it resolves
// requests against the catalog and stores the jobs in Redis; the coordinator does the rest.
type Admin struct {
	Jobs    *Jobs
	Catalog *catalog.Catalog
	// NewID names jobs that the request does not name.
	NewID func() string
}

// Submit creates a job from a request.
func (a *Admin) Submit(ctx context.Context, r Request) (Status, error) {
	id := r.ID
	if id == "" {
		id = a.NewID()
	}
	if err := ValidID(id); err != nil {
		return Status{}, err
	}
	s, err := NewSpec(a.Catalog, r, id, time.Now())
	if err != nil {
		return Status{}, err
	}
	if err := a.Jobs.Create(ctx, s); err != nil {
		return Status{}, err
	}
	return a.Jobs.Status(ctx, id)
}

// Status returns a job's status; an id that is not well formed names no job.
func (a *Admin) Status(ctx context.Context, id string) (Status, error) {
	if ValidID(id) != nil {
		return Status{}, ErrNoJob
	}
	return a.Jobs.Status(ctx, id)
}

// Cancel cancels a job and returns its status.
func (a *Admin) Cancel(ctx context.Context, id string) (Status, error) {
	if ValidID(id) != nil {
		return Status{}, ErrNoJob
	}
	if err := a.Jobs.Cancel(ctx, id); err != nil {
		return Status{}, err
	}
	return a.Jobs.Status(ctx, id)
}

// List returns the status of the most recent jobs, newest first, without their specs.
func (a *Admin) List(ctx context.Context, limit int) ([]Status, error) {
	ids, err := a.Jobs.List(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(ids))
	for _, id := range ids {
		st, err := a.Jobs.Status(ctx, id)
		if errors.Is(err, ErrNoJob) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st.Spec = nil
		out = append(out, st)
	}
	return out, nil
}
