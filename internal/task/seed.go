package task

import (
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Seeding task types. Both go on QueueSeed; their asynq ids are deterministic, so enqueueing
// the same unit twice (a coordinator restarted mid-plan) is refused by asynq while the first
// is queued, and a unit delivered twice does the same work twice (see internal/seed).
const (
	// TypeSeedRender renders a run of one bundle's metatiles into a staging object.
	TypeSeedRender = "seed:render"
	// TypeSeedMerge writes one bundle from its staged parts (or deletes its tiles).
	TypeSeedMerge = "seed:merge"
)

// SeedMaxRetry is how often a seeding task is retried before its tiles count as failed.
const SeedMaxRetry = 3

// SeedTimeout bounds one seeding task.
const SeedTimeout = 10 * time.Minute

// SeedRender is one part of a bundle: Metatiles are [row, col, rows, cols] at the bundle's
// level.
type SeedRender struct {
	Job       string         `json:"job"`
	Layer     int            `json:"layer"`
	Bundle    tilecache.Tile `json:"bundle"`
	Part      int            `json:"part"`
	Parts     int            `json:"parts"`
	Metatiles [][4]int       `json:"metatiles"`
}

// Tiles is how many tiles the part's metatiles hold.
func (p SeedRender) Tiles() int {
	n := 0
	for _, m := range p.Metatiles {
		n += m[2] * m[3]
	}
	return n
}

// Merge is the merge task of the part's bundle, due once all of the bundle's parts are recorded.
func (p SeedRender) Merge() (*asynq.Task, error) {
	return NewSeedMerge(SeedMerge{Job: p.Job, Layer: p.Layer, Bundle: p.Bundle, Parts: p.Parts})
}

// SeedMerge writes a bundle from its Parts staged parts; with no parts (a delete job) it
// deletes the tiles of Metatiles.
type SeedMerge struct {
	Job       string         `json:"job"`
	Layer     int            `json:"layer"`
	Bundle    tilecache.Tile `json:"bundle"`
	Parts     int            `json:"parts"`
	Metatiles [][4]int       `json:"metatiles,omitempty"`
}

// MetatileList converts metatiles to the payload form.
func MetatileList(ms []tilecache.Metatile) [][4]int {
	out := make([][4]int, len(ms))
	for i, m := range ms {
		out[i] = [4]int{m.TopLeft.Row, m.TopLeft.Col, m.Rows, m.Cols}
	}
	return out
}

// Metatiles converts the payload form back, at level.
func Metatiles(level int, list [][4]int) []tilecache.Metatile {
	out := make([]tilecache.Metatile, len(list))
	for i, m := range list {
		out[i] = tilecache.Metatile{TopLeft: tilecache.Tile{Level: level, Row: m[0], Col: m[1]}, Rows: m[2], Cols: m[3]}
	}
	return out
}

// SeedRenderID is the asynq task id of a part: "<job>/<layer>/<level>/<bundle>/<part>".
func SeedRenderID(job string, layer int, b tilecache.Bundle, part int) string {
	return fmt.Sprintf("%s/%d/%s/%d", job, layer, b, part)
}

// SeedMergeID is the asynq task id of a bundle's merge: "<job>/<layer>/<level>/<bundle>".
func SeedMergeID(job string, layer int, b tilecache.Bundle) string {
	return fmt.Sprintf("%s/%d/%s", job, layer, b)
}

func seedOpts(id string) []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueSeed), asynq.TaskID(id), asynq.MaxRetry(SeedMaxRetry), asynq.Timeout(SeedTimeout)}
}

// NewSeedRender builds the task of one part.
func NewSeedRender(p SeedRender) (*asynq.Task, error) {
	b, err := encode(TypeSeedRender, p)
	if err != nil {
		return nil, err
	}
	id := SeedRenderID(p.Job, p.Layer, tilecache.Bundle{TopLeft: p.Bundle}, p.Part)
	return asynq.NewTask(TypeSeedRender, b, seedOpts(id)...), nil
}

// NewSeedMerge builds the task of one bundle's merge.
func NewSeedMerge(p SeedMerge) (*asynq.Task, error) {
	b, err := encode(TypeSeedMerge, p)
	if err != nil {
		return nil, err
	}
	id := SeedMergeID(p.Job, p.Layer, tilecache.Bundle{TopLeft: p.Bundle})
	return asynq.NewTask(TypeSeedMerge, b, seedOpts(id)...), nil
}

// DecodeSeedRender reads a SeedRender payload.
func DecodeSeedRender(b []byte) (SeedRender, error) { return decode[SeedRender](TypeSeedRender, b) }

// DecodeSeedMerge reads a SeedMerge payload.
func DecodeSeedMerge(b []byte) (SeedMerge, error) { return decode[SeedMerge](TypeSeedMerge, b) }

// TypeCacheMetatile renders the metatile of a cache tile asked for on demand (GetMapTile or
// GetLayerTile of a missing tile, when the map's cache has onDemand). It goes on the
// interactive queue; the worker reports a Result like ExportMap's.
const TypeCacheMetatile = "cache:metatile"

// CacheMetatile asks for every tile of one metatile of a map's cache, drawn exactly as a
// seeding job draws them (scheme, buffer, format and quality as given). The worker answers with
// a Result whose Data holds the tiles in the staging format (seed.EncodeStaging), or, when that
// is larger than MaxInlineBytes, whose Key names the object of the tile store holding them.
type CacheMetatile struct {
	ID      string `json:"id"` // the asynq task id
	TraceID string `json:"traceId,omitempty"`
	Service string `json:"service"`
	Map     string `json:"map"`
	// LayerID is -1 for the fused cache, or the layer whose own cache the tile is of.
	LayerID int              `json:"layerId"`
	Scheme  tilecache.Scheme `json:"scheme"`
	Level   int              `json:"level"`
	// Metatile is [row, col, rows, cols] at Level, clipped to the level's matrix.
	Metatile [4]int `json:"metatile"`
	Buffer   int    `json:"buffer"`
	Quality  int    `json:"quality"`
	// Key is where the tiles go when they are too large for the Result.
	Key string `json:"key"`
}

// NewCacheMetatile builds the interactive task of an on-demand metatile.
func NewCacheMetatile(p CacheMetatile, timeout time.Duration) (*asynq.Task, error) {
	return interactive(TypeCacheMetatile, p.ID, p, timeout)
}

// DecodeCacheMetatile reads a CacheMetatile payload.
func DecodeCacheMetatile(b []byte) (CacheMetatile, error) {
	return decode[CacheMetatile](TypeCacheMetatile, b)
}
