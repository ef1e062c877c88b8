package vectortile

import (
	"context"
	"fmt"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// MetatileTile is one tile of a metatile.
type MetatileTile struct {
	Tile   tilecache.Tile
	Result *mvt.Result
}

// Metatile builds every tile of metatile mt of tiling scheme s of map mapName ("" the default
// map) of a service with one read of each layer's data, as seeding does: the features of each
// layer the metatile's level holds whose boxes meet the metatile grown by the encoder's buffer
// are read once (definition expression applied, the tile attributes only) into memory, and each
// tile is encoded from them. A tile has the bytes Tile gives it (the same features in the same
// order). Tiles come in mt.Tiles() order. Memory is the metatile's features.
func (b *Builder) Metatile(ctx context.Context, service, mapName string, s tilecache.Scheme, mt tilecache.Metatile) ([]MetatileTile, error) {
	lod, ok := s.LOD(mt.TopLeft.Level)
	if !ok || !mt.TopLeft.Valid() || !s.Contains(mt.TopLeft) {
		return nil, fmt.Errorf("%w: metatile %s is not in the tiling scheme", ErrNotFound, mt)
	}
	first, err := mvt.SchemeTile(s, mt.TopLeft)
	if err != nil {
		return nil, fmt.Errorf("vectortile: %w", err)
	}
	plan, err := b.plan(service, mapName, first.SR)
	if err != nil {
		return nil, err
	}
	// The area every tile's query stays within: the metatile plus the buffer of its tiles.
	area := first.Bound
	for t := range mt.Tiles() {
		tb, err := s.TileBounds(t)
		if err != nil {
			return nil, fmt.Errorf("vectortile: %w", err)
		}
		area = area.Union(tb)
	}
	opts := b.enc.Options()
	grow := (first.Bound.Max[0] - first.Bound.Min[0]) * float64(opts.Buffer+1) / float64(opts.Extent)
	area = area.Pad(grow)

	scale := lod.Scale * float64(s.TileCols) / TileSize
	last := mt.TopLeft.Level == s.LODs[len(s.LODs)-1].LevelID
	var layers []mvt.Layer
	for i := range plan.layers {
		l := &plan.layers[i]
		if !l.shows(scale, last) {
			continue
		}
		mem, err := readArea(ctx, l.layer, area)
		if err != nil {
			return nil, fmt.Errorf("vectortile: %s metatile %s: layer %s: %w", service, mt, l.layer.Name, err)
		}
		layers = append(layers, mvt.Layer{Name: l.layer.Name, Source: mem, Fields: l.layer.Fields})
	}
	out := make([]MetatileTile, 0, mt.Rows*mt.Cols)
	for t := range mt.Tiles() {
		tile, err := mvt.SchemeTile(s, t)
		if err != nil {
			return nil, fmt.Errorf("vectortile: %w", err)
		}
		res, err := b.enc.Encode(ctx, tile, layers)
		if err != nil {
			return nil, fmt.Errorf("vectortile: %s tile %s: %w", service, t, err)
		}
		out = append(out, MetatileTile{Tile: t, Result: res})
	}
	return out, nil
}

// readArea reads the features of a layer whose boxes meet area (its definition expression
// applied, its tile attributes only) into an in-memory layer with the source's schema.
func readArea(ctx context.Context, l mvt.Layer, area orb.Bound) (*feature.Layer, error) {
	info := l.Source.Info()
	cols := make([]int, 0, len(l.Fields))
	for _, name := range l.Fields {
		if i := info.FieldIndex(name); i >= 0 {
			cols = append(cols, i)
		}
	}
	var feats []feature.Feature
	err := l.Source.Scan(ctx, &feature.Query{Bound: &area, Where: l.Where, Columns: cols, AnyOrder: true}, func(f *feature.Feature) error {
		feats = append(feats, *f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return feature.NewLayer(info.Name, info.SR, info.GeometryType, info.Fields, feats), nil
}
