// Package seed holds tile-cache seeding jobs: what a job asks for (Spec), how it is cut into
// work units that give every storage bundle exactly one writer (Plan), and its state and
// progress in Redis (Jobs). The api creates and cancels jobs, the coordinator plans and
// finishes them, the workers render and record progress; all three go through this package,
// so the Redis layout is written down in one place (docs/seeding.md):
//
//	mapfarm:seed:jobs               ZSET  job id → creation time (every job, for listing)
//	mapfarm:seed:active             SET   ids of jobs the coordinator still works on
//	mapfarm:seed:job:<id>           HASH  spec (JSON), state, counters, checkpoint, times
//	mapfarm:seed:job:<id>:units     SET   finished units ("p:<layer>/<bundle>/<part>",
//	                                      "m:<layer>/<bundle>"), so a unit delivered twice
//	                                      counts once
//	mapfarm:seed:job:<id>:parts     HASH  "<layer>/<bundle>" → rendered parts of the bundle
//
// A bundle's tiles are rendered by one or more render tasks ("parts": runs of the bundle's
// metatiles), each of which writes its tiles to a staging object; when the last part is done,
// one merge task reads the parts and rewrites the bundle. The merge task is the bundle's only
// writer.
package seed

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/quote"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Mode is what a job does to the tiles of its area.
type Mode string

// Modes, after ArcGIS's Manage Tile Cache update modes.
const (
	// RecreateAll renders every tile of the area again.
	RecreateAll Mode = "recreateAll"
	// RecreateEmpty renders only tiles that are not stored (or are older than
	// RefreshBefore): a resume.
	RecreateEmpty Mode = "recreateEmpty"
	// Delete removes the area's tiles.
	Delete Mode = "delete"
)

// ParseMode accepts the mode names in any case, and ArcGIS's RECREATE_ALL_TILES,
// RECREATE_EMPTY_TILES and DELETE_TILES.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.ReplaceAll(s, "_", "")) {
	case "", "recreateall", "recreatealltiles", "all":
		return RecreateAll, nil
	case "recreateempty", "recreateemptytiles", "empty", "resume":
		return RecreateEmpty, nil
	case "delete", "deletetiles", "truncate":
		return Delete, nil
	}
	return "", fmt.Errorf("seed: unknown mode %q: want recreateAll, recreateEmpty or delete", s)
}

// States of a job.
const (
	StatePlanning  = "planning"  // units are being enqueued
	StateRunning   = "running"   // every unit is enqueued; waiting for them
	StateDone      = "done"      // finished; metadata written
	StateFailed    = "failed"    // stopped by the failure budget or a planning error
	StateCancelled = "cancelled" // stopped by the operator
)

// Terminal reports whether a job in state s is over.
func Terminal(s string) bool { return s == StateDone || s == StateFailed || s == StateCancelled }

// Layer is one cache folder a job seeds: the fused cache (LayerID -1, FusedLayer) or one
// layer's cache.
type Layer struct {
	ID     int    `json:"id"`
	Folder string `json:"folder"`
}

// Spec is everything a job needs, resolved from the service definition when the job is
// created: workers and the coordinator read it from Redis and need nothing else to know what
// to do (workers still draw from their own catalog).
type Spec struct {
	ID      string `json:"id"`
	Service string `json:"service"`
	Map     string `json:"map"`
	// Root is the cache root in the store (conf.xml lives there).
	Root    string                  `json:"root"`
	Layers  []Layer                 `json:"layers"`
	Scheme  tilecache.Scheme        `json:"scheme"`
	Storage tilecache.StorageFormat `json:"storage"`
	// Extent is the area of interest as an envelope; Polygon, when not empty, is the area of
	// interest instead (in the map's SR).
	Extent  orb.Bound   `json:"extent"`
	Polygon orb.Polygon `json:"polygon,omitempty"`
	Levels  []int       `json:"levels"`
	Mode    Mode        `json:"mode"`
	// Format is the kind of tiles: "" for the map's raster cache (images of Scheme.Format),
	// FormatPBF for its vector tile cache (gzipped Mapbox Vector Tiles in VectorScheme, under
	// VectorCacheRoot).
	Format string `json:"format,omitempty"`
	// RefreshBefore, with RecreateEmpty, also renders tiles stored before it.
	RefreshBefore time.Time `json:"refreshBefore,omitzero"`
	MetatileSize  int       `json:"metatileSize"`
	Buffer        int       `json:"buffer"`
	SkipEmpty     bool      `json:"skipEmpty"`
	Quality       int       `json:"quality"`
	// PartTiles is the most tiles one render task draws (whole metatiles).
	PartTiles int `json:"partTiles"`
	// MaxFailures is the failure budget: the job stops once more tiles than this failed.
	MaxFailures int64     `json:"maxFailures"`
	Created     time.Time `json:"created"`

	// Dirty, when not empty, makes the job a refresh of changed data: it renders the tiles
	// these envelopes (in the map's SR) touch at each level, widened by Reach pixels
	// ([DirtyPlan]), instead of the area of interest; Extent should hold their union.
	Dirty []orb.Bound `json:"dirty,omitempty"`
	Reach int         `json:"reach,omitempty"`
	// DirtyPolygons, beside Dirty, are areas (in the map's SR) whose tiles at each level are
	// rendered as they are, not widened by Reach: the tile cover of an operator's expire by
	// polygon.
	DirtyPolygons []orb.Polygon `json:"dirtyPolygons,omitempty"`
}

// Refresh reports whether the job is a refresh of changed data (Dirty or DirtyPolygons), which
// renders the dirty tiles ([DirtyPlan]) instead of its area of interest.
func (s *Spec) Refresh() bool { return len(s.Dirty) > 0 || len(s.DirtyPolygons) > 0 }

// AOI returns the job's area of interest.
func (s *Spec) AOI() orb.Geometry {
	if len(s.Polygon) > 0 {
		return s.Polygon
	}
	return s.Extent
}

// Cache opens the cache of one of the job's layers on store.
func (s *Spec) Cache(store tilecache.Store, layer int, index *tilecache.IndexCache) (*tilecache.Cache, error) {
	if layer < 0 || layer >= len(s.Layers) {
		return nil, fmt.Errorf("seed: job %s has no layer %d", s.ID, layer)
	}
	return tilecache.New(store, tilecache.Options{Root: s.Root, Layer: s.Layers[layer].Folder, Format: s.Storage,
		TileFormat: s.Scheme.Format, Index: index})
}

// Vector reports whether the job seeds vector tiles.
func (s *Spec) Vector() bool { return s.Format == FormatPBF }

// Info returns the job's conf.xml content.
func (s *Spec) Info() tilecache.CacheInfo {
	return tilecache.CacheInfo{Scheme: s.Scheme, Storage: s.Storage}
}

// MaxIDLen is the longest job id: ids are parts of Redis keys, task ids, store keys and URLs.
const MaxIDLen = 128

// ErrBadID is matched by the error for a job id that is not well formed (see ValidID).
var ErrBadID = errors.New("seed: bad job id")

// idError is a job id that is not well formed; it matches ErrBadID and ErrBadRequest.
type idError struct{ msg string }

func (e *idError) Error() string { return e.msg }

func (e *idError) Is(target error) bool { return target == ErrBadID || target == ErrBadRequest }

// ValidID checks a job id: 1 to MaxIDLen characters of A–Z, a–z, 0–9, '.', '_' and '-',
// starting with a letter or digit. The error matches ErrBadID and ErrBadRequest, and quotes
// at most the id's first 40 characters.
func ValidID(id string) error {
	bad := func(why string) error {
		return &idError{msg: fmt.Sprintf("seed: job id %q %s", quote.Clip(id, 40), why)}
	}
	switch {
	case id == "":
		return bad("is empty")
	case len(id) > MaxIDLen:
		return bad(fmt.Sprintf("is %d characters long: the limit is %d", len(id), MaxIDLen))
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		alnum := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
		if !alnum && (i == 0 || ch != '.' && ch != '_' && ch != '-') {
			return bad("may hold only letters, digits, '.', '_' and '-', and must start with a letter or digit")
		}
	}
	return nil
}

// Validate checks a spec before it is stored.
func (s *Spec) Validate() error {
	var errs []error
	if err := ValidID(s.ID); err != nil {
		errs = append(errs, err)
	}
	if len(s.Layers) == 0 {
		errs = append(errs, errors.New("no cache layer"))
	}
	if err := s.Scheme.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(s.Levels) == 0 {
		errs = append(errs, errors.New("no levels"))
	}
	for _, l := range s.Levels {
		if _, ok := s.Scheme.LOD(l); !ok {
			errs = append(errs, fmt.Errorf("level %d is not a level of the cache (%v)", l, s.Scheme.Levels()))
		}
	}
	if len(s.Polygon) == 0 && (s.Extent.Max[0] <= s.Extent.Min[0] || s.Extent.Max[1] <= s.Extent.Min[1]) {
		errs = append(errs, errors.New("empty area of interest"))
	}
	if _, err := tilecache.MetatileOf(tilecache.Tile{}, s.MetatileSize); err != nil {
		errs = append(errs, err)
	}
	if s.PartTiles < s.MetatileSize*s.MetatileSize {
		errs = append(errs, fmt.Errorf("partTiles %d is less than one metatile", s.PartTiles))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("seed: invalid job: %w", err)
	}
	return nil
}

// CacheRoot is the cache root of a map in the store: "arcgiscache/<service>/<map>", holding
// conf.xml, conf.cdi and the layer folders, as ArcGIS's arcgiscache/<service>/<map>/_alllayers.
func CacheRoot(service, mapName string) string {
	return string(AppendCacheRoot(make([]byte, 0, len(cacheRootPrefix)+len(service)+1+len(mapName)), service, mapName))
}

// AppendCacheRoot appends CacheRoot(service, mapName) to dst: a hot path looks a root up in a
// map by string(AppendCacheRoot(buf[:0], …)), which Go does without allocating.
func AppendCacheRoot(dst []byte, service, mapName string) []byte {
	dst = append(dst, cacheRootPrefix...)
	dst = append(dst, service...)
	dst = append(dst, '/')
	return append(dst, mapName...)
}

const cacheRootPrefix = "arcgiscache/"

// VectorCacheRoot is the cache root of a map's vector tiles: "arcgiscache/<service>/<map>_vector",
// beside the raster cache's root and distinct from it, holding conf.xml (tile format PBF),
// conf.cdi and the fused folder _alllayers of compact bundles of gzipped tiles
// (docs/vector-tiles.md).
func VectorCacheRoot(service, mapName string) string {
	return CacheRoot(service, mapName) + "_vector"
}

// StagingPrefix is where a job's render tasks leave their tiles for the merge tasks.
func StagingPrefix(job string) string { return "seedtmp/" + job + "/" }

// StagingKey is the staging object of one part of a bundle.
func StagingKey(job string, layer int, b tilecache.Bundle, part int) string {
	return fmt.Sprintf("%s%d/L%02d/%s/%d.part", StagingPrefix(job), layer, b.TopLeft.Level, b.Name(), part)
}

// BundleID names a bundle of a job's layer in unit names and task ids: "<layer>/<level>/<name>".
func BundleID(layer int, b tilecache.Bundle) string {
	return fmt.Sprintf("%d/%s", layer, b.String())
}
