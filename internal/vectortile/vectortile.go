// Package vectortile builds one Mapbox vector tile of a map of a service: the map's layers, read
// through the catalog's providers, encoded by internal/mvt. It is what the VectorTileServer
// routes answer on demand and what seeding stores.
//
// A tile is either z/x/y of Web Mercator (GoogleMapsCompatible; WebMercatorTile) or a tile of a
// cache's own tiling scheme (Tile, any tilecache.Scheme). Layers are read in the tile's
// coordinate system: a map in that system is read as it is, any other through feature.Reprojected
// from the stored data.
//
// Which features a tile holds follows the service definition as the raster map does:
//
//   - a layer is in tiles when its vectorTiles.include says so (default: the layer's
//     visibility), named as in the service, with the attributes of servicedef.Layer.TileFields
//     (published fields only) and the object ID as the feature id;
//   - its definition expression filters its features;
//   - its scale range and vectorTiles.minZoom say which levels hold it. A tile is drawn 512
//     pixels wide (ArcGIS's vector tile levels; MapLibre's default tile size), so a tile whose
//     level has scale S at its own tile size shows at scales from s = S × size / 512 down to
//     s / 2, and holds every layer visible somewhere in between; the last level of the scheme
//     (clients overzoom it) holds the layers visible at any larger scale too.
//
// The Builder keeps, per service, map and coordinate system, the layers' sources, fields and
// parsed definition expressions (the catalog never changes while the process runs); a tile
// costs one feature.Source.Scan per layer it holds.
package vectortile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

// TileSize is the width in pixels a vector tile is drawn at, which turns a level into the scales
// it shows at.
const TileSize = 512

// ErrNotFound is wrapped by the error of a tile that does not exist: no such service or map, or
// a tile outside the tiling scheme or past the last zoom.
var ErrNotFound = errors.New("vectortile: not found")

// Services finds a service by name; *catalog.Catalog is one.
type Services interface {
	Service(name string) (*catalog.Service, bool)
}

// Params configure a Builder.
type Params struct {
	// Services are the services whose maps are tiled.
	Services Services
	// Options are the encoder's: extent, buffer, simplification, the limits of a tile, gzip
	// (mvt.Options; zero fields take its defaults).
	Options mvt.Options
	// MaxZoom is the last Web Mercator zoom WebMercatorTile builds (vectorstyle.DefaultMaxZoom
	// when 0): clients overzoom its tiles, so it holds the layers of every larger scale.
	MaxZoom int
}

// Builder builds tiles. It is safe for concurrent use.
type Builder struct {
	p     Params
	enc   *mvt.Encoder
	wm    tilecache.Scheme
	mu    sync.Mutex
	plans map[planKey]*mapPlan
}

// New returns a Builder.
func New(p Params) (*Builder, error) {
	if p.Services == nil {
		return nil, errors.New("vectortile: no services")
	}
	if p.MaxZoom == 0 {
		p.MaxZoom = vectorstyle.DefaultMaxZoom
	}
	wm := tilecache.WebMercator()
	if p.MaxZoom < 0 || p.MaxZoom > wm.LODs[len(wm.LODs)-1].LevelID {
		return nil, fmt.Errorf("vectortile: max zoom %d: want 0 to %d", p.MaxZoom, wm.LODs[len(wm.LODs)-1].LevelID)
	}
	wm.LODs = wm.LODs[:p.MaxZoom+1]
	enc, err := mvt.NewEncoder(p.Options)
	if err != nil {
		return nil, fmt.Errorf("vectortile: %w", err)
	}
	return &Builder{p: p, enc: enc, wm: wm, plans: map[planKey]*mapPlan{}}, nil
}

// MaxZoom is the last Web Mercator zoom WebMercatorTile builds.
func (b *Builder) MaxZoom() int { return b.p.MaxZoom }

// Options returns the encoder's options, defaults filled in.
func (b *Builder) Options() mvt.Options { return b.enc.Options() }

// WebMercatorTile builds tile z/x/y of Web Mercator (x the column from the west, y the row from
// the north) of map mapName ("" the default map) of a service.
func (b *Builder) WebMercatorTile(ctx context.Context, service, mapName string, z, x, y int) (*mvt.Result, error) {
	return b.Tile(ctx, service, mapName, b.wm, tilecache.Tile{Level: z, Row: y, Col: x})
}

// Tile builds tile t of the tiling scheme s (a cache's own; tilecache.WebMercator for z/x/y) of
// map mapName ("" the default map) of a service.
func (b *Builder) Tile(ctx context.Context, service, mapName string, s tilecache.Scheme, t tilecache.Tile) (*mvt.Result, error) {
	lod, ok := s.LOD(t.Level)
	if !ok || !t.Valid() || !s.Contains(t) {
		return nil, fmt.Errorf("%w: tile %s is not in the tiling scheme", ErrNotFound, t)
	}
	tile, err := mvt.SchemeTile(s, t)
	if err != nil {
		return nil, fmt.Errorf("vectortile: %w", err)
	}
	plan, err := b.plan(service, mapName, tile.SR)
	if err != nil {
		return nil, err
	}
	scale := lod.Scale * float64(s.TileCols) / TileSize
	last := t.Level == s.LODs[len(s.LODs)-1].LevelID
	layers := make([]mvt.Layer, 0, len(plan.layers))
	for i := range plan.layers {
		if l := &plan.layers[i]; l.shows(scale, last) {
			layers = append(layers, l.layer)
		}
	}
	res, err := b.enc.Encode(ctx, tile, layers)
	if err != nil {
		return nil, fmt.Errorf("vectortile: %s tile %s: %w", service, t, err)
	}
	return res, nil
}

// WebMercator returns the Web Mercator scheme WebMercatorTile builds, levels 0 to MaxZoom.
func (b *Builder) WebMercator() tilecache.Scheme { return b.wm }

// LayerInfo describes one layer of a map's tiles.
type LayerInfo struct {
	// Name is the layer's name in the tiles; Description the layer's.
	Name, Description string
	// Fields are the attributes its features carry.
	Fields []feature.Field
	// MinZoom and MaxZoom are the first and last level of the scheme whose tiles hold the
	// layer; MinZoom > MaxZoom when none does.
	MinZoom, MaxZoom int
	// Extent is the extent of the layer's data in the scheme's coordinate system.
	Extent orb.Bound
}

// Layers describes the layers of the tiles of map mapName ("" the default map) of a service in
// tiling scheme s, in map order, for documents that list them (TileJSON's vector_layers).
func (b *Builder) Layers(service, mapName string, s tilecache.Scheme) ([]LayerInfo, error) {
	if len(s.LODs) == 0 {
		return nil, fmt.Errorf("%w: a tiling scheme without levels", ErrNotFound)
	}
	tile, err := mvt.SchemeTile(s, tilecache.Tile{Level: s.LODs[0].LevelID})
	if err != nil {
		return nil, fmt.Errorf("vectortile: %w", err)
	}
	plan, err := b.plan(service, mapName, tile.SR)
	if err != nil {
		return nil, err
	}
	out := make([]LayerInfo, 0, len(plan.layers))
	for _, l := range plan.layers {
		info := l.layer.Source.Info()
		li := LayerInfo{Name: l.layer.Name, Description: l.description, Extent: info.Extent, MinZoom: 1, MaxZoom: 0}
		for _, f := range l.layer.Fields {
			if i := info.FieldIndex(f); i >= 0 {
				li.Fields = append(li.Fields, info.Fields[i])
			}
		}
		first := true
		for i, lod := range s.LODs {
			if l.shows(lod.Scale*float64(s.TileCols)/TileSize, i == len(s.LODs)-1) {
				if first {
					li.MinZoom, first = lod.LevelID, false
				}
				li.MaxZoom = lod.LevelID
			}
		}
		out = append(out, li)
	}
	return out, nil
}

// planKey names the layers of a map read in one coordinate system.
type planKey struct {
	service, mapName, sr string
}

// mapPlan is what a map's tiles read: its layers in tiles, in map order (layer 0 first).
type mapPlan struct {
	layers []layerPlan
}

// layerPlan is one layer of the tiles: what to read, and at which scales.
type layerPlan struct {
	layer       mvt.Layer
	description string
	scales      symbology.ScaleRange
	minZoom     float64
}

// shows reports whether the layer is in a tile shown at scales from scale down to scale / 2
// (down to any scale when last), by the same zooms as its style layers (vectorstyle.ZoomFor).
func (l *layerPlan) shows(scale float64, last bool) bool {
	zoom := vectorstyle.ZoomFor(scale)
	if last {
		return l.scales.MaxScale == 0 || vectorstyle.ZoomFor(l.scales.MaxScale) > zoom
	}
	return zoom+1 > l.minZoom &&
		(l.scales.MinScale == 0 || vectorstyle.ZoomFor(l.scales.MinScale) < zoom+1) &&
		(l.scales.MaxScale == 0 || vectorstyle.ZoomFor(l.scales.MaxScale) > zoom)
}

// plan returns the layers of a map read in sr, made once.
func (b *Builder) plan(service, mapName string, sr proj.SR) (*mapPlan, error) {
	svc, ok := b.p.Services.Service(service)
	if !ok {
		return nil, fmt.Errorf("%w: no service %q", ErrNotFound, service)
	}
	m, ok := svc.Map(mapName)
	if !ok {
		return nil, fmt.Errorf("%w: no map %q in service %s", ErrNotFound, mapName, svc.Name)
	}
	key := planKey{service: strings.ToLower(svc.Name), mapName: strings.ToLower(m.Name), sr: sr.String()}
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.plans[key]; ok {
		return p, nil
	}
	p := &mapPlan{}
	for _, l := range m.Layers {
		if !l.Def.InVectorTiles() {
			continue
		}
		src := l.Data
		if !sr.IsZero() && !src.Info().SR.IsZero() && !src.Info().SR.Same(sr) {
			var err error
			if src, err = feature.Reprojected(feature.Stored(l.Data), sr, m.Systems); err != nil {
				return nil, fmt.Errorf("vectortile: service %s layer %s in %s: %w", svc.Name, l.Name, sr, err)
			}
		}
		expr, err := mapdraw.ParseWhere(l.Def.DefinitionExpression, src.Info().Fields)
		if err != nil {
			return nil, fmt.Errorf("vectortile: service %s layer %s: definition expression: %w", svc.Name, l.Name, err)
		}
		p.layers = append(p.layers, layerPlan{
			layer:       mvt.Layer{Name: l.Name, Source: src, Fields: l.Def.TileFields(), Where: expr},
			description: l.Def.Description,
			scales:      symbology.ScaleRange{MinScale: l.MinScale, MaxScale: l.MaxScale},
			minZoom:     float64(l.Def.VectorTiles.MinZoom),
		})
	}
	b.plans[key] = p
	return p, nil
}
