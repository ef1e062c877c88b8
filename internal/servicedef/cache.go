package servicedef

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"gopkg.in/yaml.v3"

	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Cache is a map's tile cache (the map's `cache` key; nil when the map is
// not cached). It says how the cache is tiled and stored and how seeding
// renders it; the cache operations read what was stored (conf.xml), not
// this.
type Cache struct {
	// Scheme (`scheme`, default webMercator) is the tiling scheme:
	// webMercator (the common online scheme, maps in 3857/102100/900913),
	// geographic (the common online WGS 84 scheme, maps in 4326) or custom
	// (Origin, TileSize, DPI and LODs given here).
	Scheme string
	// Origin (`origin`, `[x, y]`, required for custom) is the top-left
	// corner of tile row 0, column 0, in the map's SR. For the presets it
	// replaces the preset's origin when set.
	Origin *orb.Point
	// TileSize (`tileSize`, default 256) is the tile width and height in
	// pixels.
	TileSize int
	// DPI (`dpi`, default 96) is the scheme's dots per inch.
	DPI int
	// LODs (`lods`, required for custom) are the levels: a list of
	// `{level, resolution}` or `{level, scale}` (the other is derived
	// from DPI), level ids ascending.
	LODs []tilecache.LOD
	// MinLevel (`minLevel`, default 0) and MaxLevel (`maxLevel`, default
	// the scheme's last level) bound the levels the cache holds; the
	// stored scheme (conf.xml) lists only these.
	MinLevel, MaxLevel int
	// Format (`format`, default PNG) is the tile image format: PNG, PNG8,
	// PNG24, PNG32, JPEG or MIXED (JPEG where opaque, else PNG32).
	Format string
	// Quality (`quality`, default 75) is the JPEG quality, 1 to 100.
	Quality int
	// Storage (`storage`, default compactV2) is the layout: compactV2,
	// compact (V1) or exploded.
	Storage tilecache.StorageFormat
	// MetatileSize (`metatileSize`, default 4) is the number of tiles
	// across a metatile rendered as one image: a power of two, 1 to 16.
	MetatileSize int
	// Buffer (`buffer`, default 64) is the number of pixels drawn around
	// a metatile so that labels and symbols crossing its edge are drawn
	// whole and once; 0 to 512.
	Buffer int
	// OnDemand (`onDemand`, default false): GetMapTile renders a missing
	// tile (and stores it) instead of answering a fault.
	OnDemand bool
	// LayerCaches (`layerCaches`, default false): one cache per layer
	// (folders named after the layers) instead of one fused cache
	// (`_alllayers`).
	LayerCaches bool
	// SkipEmpty (`skipEmpty`, default true): seeding does not store tiles
	// in which nothing but the background was drawn.
	SkipEmpty bool
	// SeedAtStart (`seedAtStart`, default false): `mapfarm serve` submits
	// a seeding job for the whole cache when it starts (mode
	// recreateEmpty: tiles stored by an earlier start are kept). For
	// small sample caches; other roles and cachetool ignore it.
	SeedAtStart bool
	// Refresh (`refresh`, default immediate) is when changes of the map's
	// data re-render the cache's tiles (docs/freshness.md): `immediate`
	// (as soon as the coordinator sees them), `every <duration>` (the
	// changes of that long in one job, such as "every 10m") or `manual`
	// (only `cachetool expire`, and maxStaleness, submit refresh jobs).
	Refresh RefreshPolicy
	// MaxStaleness (`maxStaleness`, a duration, default 0: none) is the
	// longest a change may wait before its refresh job is submitted,
	// whatever the policy (manual included).
	MaxStaleness time.Duration
	// OnDemandTTL (`onDemandTTL`, a duration, default 10s, 1s to 24h) is
	// how long an api keeps a tile drawn on demand (onDemand) in memory
	// before drawing it again; a refresh of its area drops it at once.
	OnDemandTTL time.Duration
}

// RefreshPolicy is a cache's `refresh` key.
type RefreshPolicy struct {
	// Mode is RefreshImmediate, RefreshEvery or RefreshManual.
	Mode string
	// Every is the period of RefreshEvery.
	Every time.Duration
}

// Refresh modes.
const (
	RefreshImmediate = "immediate"
	RefreshEvery     = "every"
	RefreshManual    = "manual"
)

// String spells the policy as the definition does.
func (p RefreshPolicy) String() string {
	if p.Mode == RefreshEvery {
		return RefreshEvery + " " + p.Every.String()
	}
	return p.Mode
}

// Limits of the refresh keys.
const (
	minRefreshEvery = time.Second
	maxRefreshEvery = 7 * 24 * time.Hour
	minOnDemandTTL  = time.Second
	maxOnDemandTTL  = 24 * time.Hour
	// DefaultOnDemandTTL is the default onDemandTTL: the bundle-index cache's trust window.
	DefaultOnDemandTTL = 10 * time.Second
)

// parseRefresh reads `immediate`, `manual` or `every <duration>`.
func parseRefresh(s string) (RefreshPolicy, error) {
	f := strings.Fields(s)
	switch {
	case len(f) == 1 && f[0] == RefreshImmediate, len(f) == 1 && f[0] == RefreshManual:
		return RefreshPolicy{Mode: f[0]}, nil
	case len(f) == 2 && f[0] == RefreshEvery:
		d, err := time.ParseDuration(f[1])
		if err != nil || d < minRefreshEvery || d > maxRefreshEvery {
			return RefreshPolicy{}, fmt.Errorf("cache refresh %q: the period must be a duration from %v to %v, such as \"every 10m\"", s, minRefreshEvery, maxRefreshEvery)
		}
		return RefreshPolicy{Mode: RefreshEvery, Every: d}, nil
	}
	return RefreshPolicy{}, fmt.Errorf("cache refresh %q: want immediate, manual or \"every <duration>\" (such as \"every 10m\")", s)
}

// Cache scheme names.
const (
	SchemeWebMercator = "webMercator"
	SchemeGeographic  = "geographic"
	SchemeCustom      = "custom"
)

// tileFormats are the CacheTileFormat values a cache may use.
var tileFormats = []string{"PNG", "PNG8", "PNG24", "PNG32", "JPEG", "MIXED"}

// TileScheme returns the cache's tiling scheme for a map in sr: the preset
// or custom scheme with the cache's tile size, DPI, format and levels.
func (c *Cache) TileScheme(sr proj.SR) (tilecache.Scheme, error) {
	var s tilecache.Scheme
	switch c.Scheme {
	case SchemeGeographic:
		s = tilecache.Geographic()
	case SchemeCustom:
		s = tilecache.WebMercator()
		if sr.IsGeographic() {
			s = tilecache.Geographic()
		}
		s.LODs = append([]tilecache.LOD(nil), c.LODs...)
		if !sr.Known() {
			s.SpatialReference = tilecache.SpatialReference{WKID: sr.WKID, WKT: sr.WKT()}
			s.Extent = orb.Bound{}
		}
	default:
		s = tilecache.WebMercator()
	}
	if sr.Known() {
		p := sr.Precision()
		s.SpatialReference = tilecache.SpatialReference{
			Geographic: sr.IsGeographic(), WKT: sr.WKT(),
			XOrigin: p.XOrigin, YOrigin: p.YOrigin, XYScale: p.XYScale, ZOrigin: p.ZOrigin, ZScale: p.ZScale,
			MOrigin: p.MOrigin, MScale: p.MScale, XYTolerance: p.XYTolerance, ZTolerance: p.ZTolerance, MTolerance: p.MTolerance,
			HighPrecision: true, WKID: sr.WKID, LatestWKID: sr.LatestWKID(),
		}
		if s.SpatialReference.LatestWKID == s.SpatialReference.WKID {
			s.SpatialReference.LatestWKID = 0
		}
	}
	if c.Origin != nil {
		s.Origin = *c.Origin
	}
	if c.TileSize > 0 && c.TileSize != s.TileCols {
		// Same ground resolution per pixel: only the tile grows.
		s.TileCols, s.TileRows = c.TileSize, c.TileSize
	}
	if c.DPI > 0 && c.DPI != s.DPI {
		for i := range s.LODs {
			s.LODs[i].Scale = s.LODs[i].Scale * float64(c.DPI) / float64(s.DPI)
		}
		s.DPI = c.DPI
	}
	s.Format = c.Format
	if s.Format == "JPEG" || s.Format == "MIXED" {
		s.CompressionQuality = c.Quality
	}
	s.Antialiasing = true
	var lods []tilecache.LOD
	for _, l := range s.LODs {
		if l.LevelID >= c.MinLevel && l.LevelID <= c.MaxLevel {
			lods = append(lods, l)
		}
	}
	s.LODs = lods
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("servicedef: cache scheme: %w", err)
	}
	return s, nil
}

// cache decodes a map's `cache` key; m's spatial reference must be set.
func (l *loader) cache(n *yaml.Node, m *Map) *Cache {
	c := &Cache{Scheme: SchemeWebMercator, TileSize: 256, DPI: 96, MinLevel: 0, MaxLevel: -1, Format: "PNG", Quality: 75,
		Storage: tilecache.CompactV2, MetatileSize: 4, Buffer: 64, SkipEmpty: true,
		Refresh: RefreshPolicy{Mode: RefreshImmediate}, OnDemandTTL: DefaultOnDemandTTL}
	var schemeNode, lodsNode, formatNode, metaNode, bufNode, maxNode *yaml.Node
	before := len(l.probs)
	if !l.fields(n, "cache", map[string]func(*yaml.Node){
		"scheme":   func(v *yaml.Node) { schemeNode = v; c.Scheme = l.str(v, "scheme") },
		"origin":   func(v *yaml.Node) { c.Origin = l.point(v, "origin") },
		"tileSize": func(v *yaml.Node) { c.TileSize = l.int(v, "tileSize") },
		"dpi":      func(v *yaml.Node) { c.DPI = l.int(v, "dpi") },
		"lods":     func(v *yaml.Node) { lodsNode = v },
		"minLevel": func(v *yaml.Node) { c.MinLevel = l.int(v, "minLevel") },
		"maxLevel": func(v *yaml.Node) { maxNode = v; c.MaxLevel = l.int(v, "maxLevel") },
		"format":   func(v *yaml.Node) { formatNode = v; c.Format = strings.ToUpper(l.str(v, "format")) },
		"quality":  func(v *yaml.Node) { c.Quality = l.int(v, "quality") },
		"storage": func(v *yaml.Node) {
			s := l.str(v, "storage")
			f, err := tilecache.ParseStorageFormat(s)
			if err != nil {
				l.errorf(resolve(v), "cache storage %q: want compactV2, compact or exploded", s)
				return
			}
			c.Storage = f
		},
		"metatileSize": func(v *yaml.Node) { metaNode = v; c.MetatileSize = l.int(v, "metatileSize") },
		"buffer":       func(v *yaml.Node) { bufNode = v; c.Buffer = l.int(v, "buffer") },
		"onDemand":     func(v *yaml.Node) { c.OnDemand = l.bool(v, "onDemand") },
		"layerCaches":  func(v *yaml.Node) { c.LayerCaches = l.bool(v, "layerCaches") },
		"skipEmpty":    func(v *yaml.Node) { c.SkipEmpty = l.bool(v, "skipEmpty") },
		"seedAtStart":  func(v *yaml.Node) { c.SeedAtStart = l.bool(v, "seedAtStart") },
		"refresh": func(v *yaml.Node) {
			p, err := parseRefresh(l.str(v, "refresh"))
			if err != nil {
				l.errorf(resolve(v), "%v", err)
				return
			}
			c.Refresh = p
		},
		"maxStaleness": func(v *yaml.Node) {
			d, err := time.ParseDuration(l.str(v, "maxStaleness"))
			if err != nil || d < 0 {
				l.errorf(resolve(v), "cache maxStaleness %q: want a duration such as 30m (0: none)", resolve(v).Value)
				return
			}
			c.MaxStaleness = d
		},
		"onDemandTTL": func(v *yaml.Node) {
			d, err := time.ParseDuration(l.str(v, "onDemandTTL"))
			if err != nil || d < minOnDemandTTL || d > maxOnDemandTTL {
				l.errorf(resolve(v), "cache onDemandTTL %q: want a duration from %v to %v", resolve(v).Value, minOnDemandTTL, maxOnDemandTTL)
				return
			}
			c.OnDemandTTL = d
		},
	}) {
		return nil
	}
	at := resolve(n)
	switch c.Scheme {
	case SchemeWebMercator:
		if !m.SpatialReference.IsWebMercator() && m.SpatialReference.WKID != 0 {
			l.errorf(resolveOr(schemeNode, at), "cache scheme webMercator needs a Web Mercator map (3857, 102100, 900913), not %d: use geographic or custom", m.SpatialReference.WKID)
		}
	case SchemeGeographic:
		if !m.SpatialReference.IsGeographic() && m.SpatialReference.WKID != 0 {
			l.errorf(resolveOr(schemeNode, at), "cache scheme geographic needs a map in 4326, not %d: use webMercator or custom", m.SpatialReference.WKID)
		}
	case SchemeCustom:
		if c.Origin == nil {
			l.errorf(at, "cache scheme custom: missing required key \"origin\" ([x, y] of the top-left corner)")
		}
		if lodsNode == nil {
			l.errorf(at, "cache scheme custom: missing required key \"lods\"")
		}
	default:
		l.errorf(resolveOr(schemeNode, at), "cache scheme %q: want webMercator, geographic or custom", c.Scheme)
	}
	if lodsNode != nil {
		if c.Scheme != SchemeCustom {
			l.errorf(resolve(lodsNode), "cache lods apply only to scheme custom")
		}
		c.LODs = l.lods(lodsNode, c.DPI)
	}
	if c.TileSize < 16 || c.TileSize > 1024 {
		l.errorf(at, "cache tileSize must be from 16 to 1024 pixels, not %d", c.TileSize)
	}
	if c.DPI < 1 || c.DPI > 1200 {
		l.errorf(at, "cache dpi must be from 1 to 1200, not %d", c.DPI)
	}
	if !contains(tileFormats, c.Format) {
		l.errorf(resolveOr(formatNode, at), "cache format %q: want one of %s", c.Format, strings.Join(tileFormats, ", "))
	}
	if c.Quality < 1 || c.Quality > 100 {
		l.errorf(at, "cache quality must be from 1 to 100, not %d", c.Quality)
	}
	if ms := c.MetatileSize; ms < 1 || ms > 16 || ms&(ms-1) != 0 {
		l.errorf(resolveOr(metaNode, at), "cache metatileSize must be a power of two from 1 to 16, not %d", ms)
	}
	if c.Buffer < 0 || c.Buffer > 512 {
		l.errorf(resolveOr(bufNode, at), "cache buffer must be from 0 to 512 pixels, not %d", c.Buffer)
	}
	if len(l.probs) > before {
		return c
	}
	if c.MaxLevel < 0 {
		c.MaxLevel = math.MaxInt32
	}
	if c.MinLevel < 0 || c.MinLevel > c.MaxLevel {
		l.errorf(resolveOr(maxNode, at), "cache levels: minLevel %d and maxLevel %d are not an ascending range from 0", c.MinLevel, c.MaxLevel)
		return c
	}
	s, err := c.TileScheme(m.SpatialReference)
	if err != nil {
		l.errorf(at, "cache: %v", err)
		return c
	}
	c.MaxLevel = min(c.MaxLevel, s.LODs[len(s.LODs)-1].LevelID)
	return c
}

// lods decodes a custom scheme's levels.
func (l *loader) lods(n *yaml.Node, dpi int) []tilecache.LOD {
	var out []tilecache.LOD
	l.seq(n, "lods", func(it *yaml.Node) {
		lod := tilecache.LOD{LevelID: -1}
		l.fields(it, "lod", map[string]func(*yaml.Node){
			"level":      func(v *yaml.Node) { lod.LevelID = l.int(v, "level") },
			"scale":      func(v *yaml.Node) { lod.Scale = l.nonNeg(v, "scale") },
			"resolution": func(v *yaml.Node) { lod.Resolution = l.nonNeg(v, "resolution") },
		})
		const inchMetres = 0.0254000508
		switch {
		case lod.LevelID < 0:
			l.errorf(resolve(it), "lod: missing required key \"level\"")
			return
		case lod.Resolution == 0 && lod.Scale == 0:
			l.errorf(resolve(it), "lod %d: give resolution or scale", lod.LevelID)
			return
		case lod.Resolution == 0:
			lod.Resolution = lod.Scale * inchMetres / float64(max(dpi, 1))
		case lod.Scale == 0:
			lod.Scale = lod.Resolution * float64(max(dpi, 1)) / inchMetres
		}
		if len(out) > 0 && out[len(out)-1].LevelID >= lod.LevelID {
			l.errorf(resolve(it), "lod levels must ascend: %d after %d", lod.LevelID, out[len(out)-1].LevelID)
		}
		out = append(out, lod)
	})
	return out
}

// point decodes [x, y].
func (l *loader) point(n *yaml.Node, what string) *orb.Point {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		l.errorf(n, "%s must be [x, y]", what)
		return nil
	}
	return &orb.Point{l.float(n.Content[0], what), l.float(n.Content[1], what)}
}

func resolveOr(n, def *yaml.Node) *yaml.Node {
	if n != nil {
		return resolve(n)
	}
	return def
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
