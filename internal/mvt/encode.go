package mvt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/tilecache"
	"github.com/mapfarm/mapfarm/internal/where"
)

// Defaults of Options, documented in docs/vector-tiles.md.
const (
	// DefaultExtent is the number of integer units across a tile.
	DefaultExtent = 4096
	// DefaultBuffer is the margin, in extent units, kept around the tile
	// so that lines and fills join without seams (64 of 4096: 4 pixels of a
	// 256-pixel tile, tegola's default).
	DefaultBuffer = 64
	// DefaultTolerance is the Douglas-Peucker tolerance in extent units: a
	// quarter of a pixel of a 256-pixel tile at extent 4096.
	DefaultTolerance = 4
	// DefaultMaxFeatures is the number of features past which a tile is
	// thinned.
	DefaultMaxFeatures = 100_000
	// DefaultMaxBytes is the size (before compression) past which a tile
	// is refused.
	DefaultMaxBytes = 8 << 20
	// DefaultTimeout is the time limit of one tile.
	DefaultTimeout = 30 * time.Second
	// MaxExtent bounds Options.Extent: coordinates then stay far inside
	// int32, whatever the buffer.
	MaxExtent = 1 << 16
)

// ErrTooLarge is wrapped by the error of a tile larger than Options.MaxBytes.
var ErrTooLarge = errors.New("mvt: tile larger than the byte limit")

// ErrInvalidTile is wrapped by errors about a tile or layer that cannot be
// encoded (an empty bound, a layer without a name, a source in another
// coordinate system, an unknown attribute).
var ErrInvalidTile = errors.New("mvt: invalid tile request")

// Tile is the area of one vector tile in map units.
type Tile struct {
	// Bound is the tile's extent in map units; its top-left corner is
	// tile coordinate (0, 0).
	Bound orb.Bound
	// SR is the coordinate system of Bound. When it is not zero, every
	// layer's source must report the same one.
	SR proj.SR
}

// WebMercatorTile returns tile z/x/y of Web Mercator (GoogleMapsCompatible):
// x the column from the west, y the row from the north.
func WebMercatorTile(z, x, y int) (Tile, error) {
	t, err := SchemeTile(tilecache.WebMercator(), tilecache.Tile{Level: z, Row: y, Col: x})
	if err != nil {
		return Tile{}, fmt.Errorf("mvt: web mercator tile %d/%d/%d: %w", z, x, y, err)
	}
	return t, nil
}

// SchemeTile returns tile t of a cache's tiling scheme. The tile must be in
// the scheme's matrix.
func SchemeTile(s tilecache.Scheme, t tilecache.Tile) (Tile, error) {
	if !t.Valid() || !s.Contains(t) {
		return Tile{}, fmt.Errorf("%w: tile %s not in the tiling scheme", ErrInvalidTile, t)
	}
	b, err := s.TileBounds(t)
	if err != nil {
		return Tile{}, fmt.Errorf("mvt: tile %s: %w", t, err)
	}
	sr := proj.SR{WKID: s.SpatialReference.WKID}
	if sr.WKID == 0 {
		sr.Text = s.SpatialReference.WKT
	}
	return Tile{Bound: b, SR: sr}, nil
}

// Layer is one layer of a tile: a name and the features of a source.
type Layer struct {
	// Name is the layer's name in the tile; unique within a tile.
	Name string
	// Source gives the features, in the tile's coordinate system.
	Source feature.Source
	// Fields names the attribute columns written with each feature
	// (case-insensitive names of Source.Info().Fields); none when empty.
	// The object ID is the feature id and need not be listed.
	Fields []string
	// Where, when not nil, keeps only the features for which it is TRUE
	// (a definition expression).
	Where *where.Expr
}

// Options configures an Encoder. Zero fields take the defaults above.
type Options struct {
	// Extent is the number of units across the tile (default 4096, at
	// most MaxExtent).
	Extent int
	// Buffer is the margin around the tile in extent units (default 64;
	// negative for none).
	Buffer int
	// Tolerance is the simplification tolerance in extent units (default
	// 4; negative for none, leaving only the rounding to integers).
	Tolerance float64
	// MaxFeatures thins the tile past this many features (default 100,000).
	MaxFeatures int
	// MaxBytes refuses a tile past this many bytes before compression
	// (default 8 MiB).
	MaxBytes int
	// Timeout is the time limit of one tile (default 30 s).
	Timeout time.Duration
	// Gzip compresses Result.Data with gzip, to be stored once and served
	// with Content-Encoding: gzip.
	Gzip bool
}

// Encoder encodes tiles. It holds its options and a pool of gzip writers,
// and is safe for concurrent use.
type Encoder struct {
	opts        Options
	gzipWriters sync.Pool // *gzip.Writer
}

// NewEncoder returns an encoder with opts, defaults filled in.
func NewEncoder(opts Options) (*Encoder, error) {
	if opts.Extent == 0 {
		opts.Extent = DefaultExtent
	}
	if opts.Extent < 0 || opts.Extent > MaxExtent {
		return nil, fmt.Errorf("%w: extent %d not in 1..%d", ErrInvalidTile, opts.Extent, MaxExtent)
	}
	switch {
	case opts.Buffer == 0:
		opts.Buffer = DefaultBuffer
	case opts.Buffer < 0:
		opts.Buffer = 0
	case opts.Buffer > opts.Extent:
		return nil, fmt.Errorf("%w: buffer %d larger than the extent %d", ErrInvalidTile, opts.Buffer, opts.Extent)
	}
	switch {
	case opts.Tolerance == 0:
		opts.Tolerance = DefaultTolerance
	case opts.Tolerance < 0 || math.IsNaN(opts.Tolerance):
		opts.Tolerance = 0
	}
	if opts.MaxFeatures <= 0 {
		opts.MaxFeatures = DefaultMaxFeatures
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Encoder{opts: opts}, nil
}

// Options returns the encoder's options with the defaults filled in.
func (e *Encoder) Options() Options { return e.opts }

// Result is an encoded tile.
type Result struct {
	// Data is the tile, gzip-compressed when Gzipped.
	Data []byte
	// Gzipped reports that Data is gzip-compressed.
	Gzipped bool
	// Size is the tile's size before compression.
	Size int
	// Features is the number of features written, over all layers.
	Features int
	// Dropped is the number of features read whose geometry vanished in
	// the tile (clipped away, or collapsed by simplification and
	// rounding), or that have no geometry MVT can hold.
	Dropped int
	// Thinned reports that MaxFeatures was reached and features were left
	// out: the tile is incomplete and must say so to its client.
	Thinned bool
}

// errFull stops a scan when the tile has MaxFeatures features.
var errFull = errors.New("tile full")

// Encode encodes the layers' features in tile t. Layers with no feature
// in the tile are left out; a tile with none is a valid empty tile (zero
// bytes before compression).
func (e *Encoder) Encode(ctx context.Context, t Tile, layers []Layer) (*Result, error) {
	if !(t.Bound.Max[0] > t.Bound.Min[0] && t.Bound.Max[1] > t.Bound.Min[1]) ||
		!finite(t.Bound.Min[0], t.Bound.Min[1], t.Bound.Max[0], t.Bound.Max[1]) {
		return nil, fmt.Errorf("%w: empty or infinite tile bound %v", ErrInvalidTile, t.Bound)
	}
	names := make(map[string]bool, len(layers))
	for _, l := range layers {
		if l.Name == "" || names[l.Name] || l.Source == nil {
			return nil, fmt.Errorf("%w: layer name %q empty or repeated, or no source", ErrInvalidTile, l.Name)
		}
		names[l.Name] = true
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()

	ext := float64(e.opts.Extent)
	buf := float64(e.opts.Buffer)
	tr := e.transform(t)
	box := orb.Bound{Min: orb.Point{-buf, -buf}, Max: orb.Point{ext + buf, ext + buf}}
	query := orb.Bound{
		Min: orb.Point{t.Bound.Min[0] - buf/tr.sx, t.Bound.Min[1] - buf/tr.sy},
		Max: orb.Point{t.Bound.Max[0] + buf/tr.sx, t.Bound.Max[1] + buf/tr.sy},
	}

	res := &Result{}
	var out []byte
	g := newGeomBuilder(box, e.opts.Tolerance)
	for _, l := range layers {
		if res.Thinned {
			continue
		}
		lw, err := e.layer(ctx, t, l, tr, query, g, res, e.opts.MaxBytes-len(out))
		if err != nil {
			return nil, err
		}
		if lw != nil && lw.count > 0 {
			out = lw.appendTo(out)
		}
	}
	res.Size = len(out)
	if !e.opts.Gzip {
		res.Data = out
		return res, nil
	}
	z, err := e.gzip(out)
	if err != nil {
		return nil, err
	}
	res.Data, res.Gzipped = z, true
	return res, nil
}

// transform maps tile t's map units to its tile coordinates.
func (e *Encoder) transform(t Tile) transform {
	ext := float64(e.opts.Extent)
	return transform{
		minX: t.Bound.Min[0], maxY: t.Bound.Max[1],
		sx: ext / (t.Bound.Max[0] - t.Bound.Min[0]),
		sy: ext / (t.Bound.Max[1] - t.Bound.Min[1]),
	}
}

// Gzip compresses an encoded tile as tiles are stored and served gzip-encoded (Options.Gzip):
// gzip at its default level (BenchmarkGzipLevels: the faster levels save a few ms on a dense
// tile but make it 10-15% larger).
func Gzip(tile []byte) ([]byte, error) {
	return gzipWith(gzip.NewWriter(nil), tile)
}

// gzip is Gzip with a writer of the encoder's pool: a writer's tables are most of what
// compressing a small tile allocates.
func (e *Encoder) gzip(tile []byte) ([]byte, error) {
	zw, _ := e.gzipWriters.Get().(*gzip.Writer)
	if zw == nil {
		zw = gzip.NewWriter(nil)
	}
	defer e.gzipWriters.Put(zw)
	return gzipWith(zw, tile)
}

func gzipWith(zw *gzip.Writer, tile []byte) ([]byte, error) {
	z := bytes.NewBuffer(make([]byte, 0, len(tile)/2+64))
	zw.Reset(z)
	if _, err := zw.Write(tile); err != nil {
		return nil, fmt.Errorf("mvt: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("mvt: gzip: %w", err)
	}
	return z.Bytes(), nil
}

// layer scans one layer's features into a layer writer; room is the number
// of bytes the tile has left.
func (e *Encoder) layer(ctx context.Context, t Tile, l Layer, tr transform, query orb.Bound, g *geomBuilder, res *Result, room int) (*layerWriter, error) {
	info := l.Source.Info()
	if !t.SR.IsZero() && !info.SR.IsZero() && !t.SR.Same(info.SR) {
		return nil, fmt.Errorf("%w: layer %s: source %s is in %s, the tile in %s", ErrInvalidTile, l.Name, info.Name, info.SR, t.SR)
	}
	cols := make([]int, 0, len(l.Fields))
	keys := make([]string, 0, len(l.Fields))
	for _, name := range l.Fields {
		i := info.FieldIndex(name)
		if i < 0 {
			return nil, fmt.Errorf("%w: layer %s: no field %q in %s", ErrInvalidTile, l.Name, name, info.Name)
		}
		cols = append(cols, i)
		keys = append(keys, info.Fields[i].Name)
	}
	lw := newLayerWriter(l.Name, uint32(e.opts.Extent), keys)
	// No Resolution: PostGIS would send TWKB, a third of the bytes but about 30% more of the
	// database's CPU than WKB for a dense z14 tile (bench/vtsqlcpu.sh), and the database is the
	// farm's scarce part.
	q := &feature.Query{Bound: &query, Where: l.Where, Columns: cols}
	err := l.Source.Scan(ctx, q, func(f *feature.Feature) error {
		if res.Features >= e.opts.MaxFeatures {
			res.Thinned = true
			return errFull
		}
		gt, cmds := g.build(f.Geom, tr)
		if gt == geomUnknown {
			res.Dropped++
			return nil
		}
		if err := lw.add(f, cols, gt, cmds); err != nil {
			return fmt.Errorf("layer %s feature %d: %w", l.Name, f.ID, err)
		}
		res.Features++
		if lw.size() > room {
			return fmt.Errorf("%w: more than %d bytes in layer %s", ErrTooLarge, e.opts.MaxBytes, l.Name)
		}
		if res.Features%256 == 0 {
			return ctx.Err()
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, fmt.Errorf("mvt: layer %s: %w", l.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mvt: layer %s: %w", l.Name, err)
	}
	return lw, nil
}

func finite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}
