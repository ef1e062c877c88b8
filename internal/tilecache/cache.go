package tilecache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mapfarm/mapfarm/internal/blob"
)

// Store is the object storage a cache lives in. internal/blob's MinIO and
// Disk stores satisfy it. Keys and errors follow that package: a missing
// object gives an error wrapping fs.ErrNotExist.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
	Stat(ctx context.Context, key string) (blob.Info, error)
	Put(ctx context.Context, key string, data []byte, contentType string) error
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string, fn func(blob.Info) error) error
}

// ErrTileNotFound is wrapped by errors for a tile that is not in the cache.
// It wraps fs.ErrNotExist, so errors.Is(err, fs.ErrNotExist) holds too.
var ErrTileNotFound = fmt.Errorf("tilecache: tile not found: %w", fs.ErrNotExist)

// FusedLayer is the folder of a fused map cache ("_alllayers"), which is
// also what GetCacheName returns for it.
const FusedLayer = "_alllayers"

// Options configures a [Cache]. The zero value of each field means its
// default.
type Options struct {
	// Root is the cache root: the folder holding conf.xml, conf.cdi and the
	// layer folders, such as "caches/World/Layers". Empty means the store's
	// top level.
	Root string
	// Layer is the layer folder: FusedLayer (the default) for a fused map
	// cache, or the layer's name for a per-layer cache.
	Layer string
	// Format is the storage layout; zero means CompactV2.
	Format StorageFormat
	// TileFormat is Esri's CacheTileFormat (PNG, PNG8, PNG24, PNG32, JPEG,
	// MIXED), or PBF for gzipped vector tiles; empty means PNG. It sets the exploded file extension (MIXED
	// caches are read as .png, then .jpg).
	TileFormat string
	// Index caches bundle indexes; nil means a private IndexCache with
	// default options. Share one among the caches of one store.
	Index *IndexCache
}

// Cache reads and writes the tiles of one layer folder of a tile cache in
// one storage layout. It is safe for concurrent use; writes follow the
// one-writer-per-bundle rule (see [Cache.NewBundleWriter]).
type Cache struct {
	store      Store
	root       string
	layer      string
	dir        string // root/layer: parent of the level folders
	format     StorageFormat
	tileFormat string
	ext        string
	index      *IndexCache
}

// New returns a cache over store. It does not touch the store.
func New(store Store, opts Options) (*Cache, error) {
	if store == nil {
		return nil, errors.New("tilecache: nil store")
	}
	if opts.Layer == "" {
		opts.Layer = FusedLayer
	}
	if opts.Format == 0 {
		opts.Format = CompactV2
	}
	if opts.TileFormat == "" {
		opts.TileFormat = "PNG"
	}
	if opts.Format < Exploded || opts.Format > CompactV2 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidFormat, int(opts.Format))
	}
	if strings.Contains(opts.Layer, "/") {
		return nil, fmt.Errorf("tilecache: layer folder %q contains a slash", opts.Layer)
	}
	dir := path.Join(opts.Root, opts.Layer)
	if err := blob.ValidateKey(dir); err != nil {
		return nil, fmt.Errorf("tilecache: cache folder: %w", err)
	}
	ext, err := tileFormatExt(opts.TileFormat)
	if err != nil {
		return nil, err
	}
	if opts.Index == nil {
		opts.Index = NewIndexCache(IndexCacheOptions{})
	}
	return &Cache{
		store:      store,
		root:       opts.Root,
		layer:      opts.Layer,
		dir:        dir,
		format:     opts.Format,
		tileFormat: strings.ToUpper(opts.TileFormat),
		ext:        ext,
		index:      opts.Index,
	}, nil
}

// Format returns the cache's storage layout.
func (c *Cache) Format() StorageFormat { return c.format }

// Dir returns the key prefix of the cache's level folders (root/layer).
func (c *Cache) Dir() string { return c.dir }

// levelDir is the key of a level folder: "L" + 2 decimal digits.
func (c *Cache) levelDir(level int) string {
	return c.dir + "/" + levelName(level)
}

// rowDir is the key prefix of a row folder of the exploded layout, with its trailing slash.
func (c *Cache) rowDir(level, row int) string {
	return c.levelDir(level) + "/" + rowName(row) + "/"
}

// TileKey returns the object key of an exploded tile:
// dir/Lnn/Rxxxxxxxx/Cxxxxxxxx.ext, row and column in 8 lower-case hex digits.
func (c *Cache) TileKey(t Tile) string {
	return c.tileKeyExt(t, c.ext)
}

func (c *Cache) tileKeyExt(t Tile, ext string) string {
	return c.rowDir(t.Level, t.Row) + colName(t.Col, ext)
}

// listRow calls fn for every tile file stored in one row of bundle b of the exploded layout
// (objects whose names are not tile names are skipped).
func (c *Cache) listRow(ctx context.Context, b Bundle, row int, fn func(t Tile, in blob.Info)) error {
	prefix := c.rowDir(b.TopLeft.Level, row)
	return c.store.List(ctx, prefix, func(in blob.Info) error {
		col, _, ok := parseColName(strings.TrimPrefix(in.Key, prefix))
		if t := (Tile{Level: b.TopLeft.Level, Row: row, Col: col}); ok && b.Contains(t) {
			fn(t, in)
		}
		return nil
	})
}

// BundleKey returns the object key of a compact bundle: dir/Lnn/RrrrrCcccc.bundle.
// A V1 index is the same key with extension .bundlx.
func (c *Cache) BundleKey(b Bundle) string {
	return c.levelDir(b.TopLeft.Level) + "/" + b.Name() + ".bundle"
}

func bundlxKey(bundleKey string) string { return strings.TrimSuffix(bundleKey, ".bundle") + ".bundlx" }

// ReadTile returns the bytes of tile t. A tile that is not stored gives an
// error wrapping ErrTileNotFound. From a compact bundle whose index is
// cached, it costs one ranged GET.
func (c *Cache) ReadTile(ctx context.Context, t Tile) ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("%w: %v", ErrInvalidTile, t)
	}
	switch c.format {
	case Exploded:
		return c.readExploded(ctx, t)
	default:
		return c.readCompact(ctx, t)
	}
}

func (c *Cache) readExploded(ctx context.Context, t Tile) ([]byte, error) {
	exts := []string{c.ext}
	if c.tileFormat == "MIXED" {
		exts = []string{"png", "jpg"}
	}
	for _, ext := range exts {
		data, err := c.store.Get(ctx, c.tileKeyExt(t, ext))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tilecache: read tile %v: %w", t, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("%w: %v", ErrTileNotFound, t)
}

// source returns the index source of the bundle key.
func (c *Cache) source(key string) bundleSource {
	if c.format == CompactV1 {
		return v1Source{store: c.store, key: key}
	}
	return v2Source{store: c.store, key: key}
}

func (c *Cache) readCompact(ctx context.Context, t Tile) ([]byte, error) {
	key := c.BundleKey(BundleOf(t))
	src := c.source(key)
	// A bundle can be replaced between reading its index and reading a
	// tile; the tile read detects that (length word mismatch, or a range
	// past the end), drops the index and tries once more.
	for attempt := 0; ; attempt++ {
		ix, err := c.index.get(ctx, key, src)
		if err != nil {
			return nil, fmt.Errorf("tilecache: read tile %v: %w", t, err)
		}
		if ix == nil {
			return nil, fmt.Errorf("%w: %v (no bundle)", ErrTileNotFound, t)
		}
		var data []byte
		if c.format == CompactV1 {
			data, err = c.readV1(ctx, key, ix, t)
		} else {
			data, err = c.readV2(ctx, key, ix, t)
		}
		if err == nil || errors.Is(err, ErrTileNotFound) || ctx.Err() != nil {
			return data, err
		}
		if attempt == 1 || !(errors.Is(err, ErrCorruptBundle) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, blob.ErrInvalidRange)) {
			return nil, fmt.Errorf("tilecache: read tile %v: %w", t, err)
		}
		c.index.Invalidate(key)
	}
}

func (c *Cache) readV2(ctx context.Context, key string, ix *bundleIndex, t Tile) ([]byte, error) {
	off, size, ok := ix.v2Entry(rowMajor(t))
	if !ok {
		return nil, fmt.Errorf("%w: %v", ErrTileNotFound, t)
	}
	// Read the legacy length word too, and check it: it catches a bundle
	// replaced since its index was read.
	rec, err := c.index.readRange(ctx, c.store, key, ix, off-4, size+4)
	if err != nil {
		return nil, err
	}
	if int64(len(rec)) != size+4 || int64(binary.LittleEndian.Uint32(rec)) != size {
		return nil, fmt.Errorf("%w: %s: tile %v record does not match the index", ErrCorruptBundle, key, t)
	}
	return rec[4:], nil
}

func (c *Cache) readV1(ctx context.Context, key string, ix *bundleIndex, t Tile) ([]byte, error) {
	off, ok := ix.v1Entry(rowMajor(t))
	if !ok {
		return nil, fmt.Errorf("%w: %v", ErrTileNotFound, t)
	}
	// The header's largest-tile size lets one request fetch any tile.
	want := min(4+max(ix.maxTile, 0), ix.size-off)
	for range 2 {
		rec, err := c.index.readRange(ctx, c.store, key, ix, off, want)
		if err != nil {
			return nil, err
		}
		data, err := v1Record(rec, off, ix.size)
		if errors.Is(err, errShortRead) && len(rec) >= 4 {
			want = 4 + int64(binary.LittleEndian.Uint32(rec))
			continue
		}
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, fmt.Errorf("%w: %v", ErrTileNotFound, t)
		}
		return data, nil
	}
	return nil, fmt.Errorf("%w: %s: tile %v record longer than the bundle", ErrCorruptBundle, key, t)
}

// v2Source loads V2 indexes: Stat, then one ranged GET of header and index.
type v2Source struct {
	store Store
	key   string
}

func (s v2Source) version(ctx context.Context) (string, error) {
	in, err := s.store.Stat(ctx, s.key)
	if err != nil {
		return "", err
	}
	return infoVersion(in), nil
}

func (s v2Source) load(ctx context.Context) (*bundleIndex, string, error) {
	in, err := s.store.Stat(ctx, s.key)
	if err != nil {
		return nil, "", err
	}
	head, err := s.store.GetRange(ctx, s.key, 0, v2DataStart)
	if err != nil {
		return nil, "", err
	}
	ix, err := parseIndexV2(head, in.Size)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s.key, err)
	}
	return ix, infoVersion(in), nil
}

// v1Source loads V1 indexes: the .bundlx and the bundle's header.
type v1Source struct {
	store Store
	key   string
}

// stat returns the version of the bundle and .bundlx pair, and the bundle's
// Info: two Stats.
func (s v1Source) stat(ctx context.Context) (string, blob.Info, error) {
	in, err := s.store.Stat(ctx, s.key)
	if err != nil {
		return "", in, err
	}
	inx, err := s.store.Stat(ctx, bundlxKey(s.key))
	if err != nil {
		return "", in, err
	}
	return infoVersion(in) + "+" + infoVersion(inx), in, nil
}

func (s v1Source) version(ctx context.Context) (string, error) {
	v, _, err := s.stat(ctx)
	return v, err
}

func (s v1Source) load(ctx context.Context) (*bundleIndex, string, error) {
	v, in, err := s.stat(ctx)
	if err != nil {
		return nil, "", err
	}
	bundlx, err := s.store.Get(ctx, bundlxKey(s.key))
	if err != nil {
		return nil, "", err
	}
	header, err := s.store.GetRange(ctx, s.key, 0, v1HeaderSize)
	if err != nil {
		return nil, "", err
	}
	ix, err := parseIndexV1(header, bundlx, in.Size)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", s.key, err)
	}
	return ix, v, nil
}

// tileContentType returns the MIME type of tile bytes.
func tileContentType(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	}
	return "application/octet-stream"
}

// NewBundleWriter returns a writer for the tiles of bundle b. The caller
// must make sure that at most one writer works on a bundle at a time (the
// seeding planner gives each bundle to one task): a compact bundle is
// rewritten whole, and two concurrent writers would lose each other's
// tiles. Exploded caches use the same unit so that the rule is the same for
// every layout.
func (c *Cache) NewBundleWriter(b Bundle) (*BundleWriter, error) {
	if !b.Valid() {
		return nil, fmt.Errorf("%w: bundle %v not aligned", ErrInvalidTile, b.TopLeft)
	}
	return &BundleWriter{c: c, b: b, changes: make(map[int][]byte)}, nil
}

// BundleWriter collects tile writes and deletions for one bundle and applies
// them with Flush. It is not safe for concurrent use.
type BundleWriter struct {
	c        *Cache
	b        Bundle
	changes  map[int][]byte // row-major position → data; nil = delete
	truncate bool
}

// Bundle returns the writer's bundle.
func (w *BundleWriter) Bundle() Bundle { return w.b }

// Put records data as the new content of tile t, which must lie in the
// writer's bundle. data must not be empty, and must not be modified until
// Flush returns.
func (w *BundleWriter) Put(t Tile, data []byte) error {
	if !w.b.Contains(t) {
		return fmt.Errorf("%w %v: not in bundle %v", ErrInvalidTile, t, w.b)
	}
	if len(data) == 0 {
		return fmt.Errorf("tilecache: tile %v: empty data", t)
	}
	w.changes[rowMajor(t)] = data
	return nil
}

// Delete records that tile t is to be removed.
func (w *BundleWriter) Delete(t Tile) error {
	if !w.b.Contains(t) {
		return fmt.Errorf("%w %v: not in bundle %v", ErrInvalidTile, t, w.b)
	}
	w.changes[rowMajor(t)] = nil
	return nil
}

// Truncate makes Flush start from an empty bundle instead of merging with
// the stored one: every stored tile of the bundle that was not Put is
// removed.
func (w *BundleWriter) Truncate() { w.truncate = true }

// Pending returns the number of tiles put or deleted since the last Flush.
func (w *BundleWriter) Pending() int { return len(w.changes) }

// Flush applies the recorded changes. A compact bundle is read (if it
// exists and Truncate was not called), merged with the changes and written
// back whole; a bundle left with no tiles is deleted. Writes are idempotent:
// the same tiles always give the same bytes, and a bundle whose bytes would
// not change is not written again. After Flush the writer is empty and can
// be reused.
func (w *BundleWriter) Flush(ctx context.Context) error {
	if len(w.changes) == 0 && !w.truncate {
		return nil
	}
	var err error
	switch w.c.format {
	case Exploded:
		err = w.flushExploded(ctx)
	default:
		err = w.flushCompact(ctx)
	}
	if err != nil {
		return fmt.Errorf("tilecache: write bundle %v: %w", w.b, err)
	}
	clear(w.changes)
	w.truncate = false
	return nil
}

func (w *BundleWriter) flushExploded(ctx context.Context) error {
	c := w.c
	if w.truncate {
		for r := range BundleSize {
			var stale []string
			err := c.listRow(ctx, w.b, w.b.TopLeft.Row+r, func(t Tile, in blob.Info) {
				if _, put := w.changes[rowMajor(t)]; !put {
					stale = append(stale, in.Key)
				}
			})
			if err != nil {
				return err
			}
			for _, key := range stale {
				if err := c.store.Delete(ctx, key); err != nil {
					return err
				}
			}
		}
	}
	positions := make([]int, 0, len(w.changes))
	for pos := range w.changes {
		positions = append(positions, pos)
	}
	slices.Sort(positions)
	// One object per tile: up to explodedWriters requests at once (a full
	// bundle is 16,384 PUTs, which one at a time take minutes on MinIO).
	// Each tile's own requests stay in order.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(explodedWriters)
	for _, pos := range positions {
		t := w.b.tileAt(pos)
		data := w.changes[pos]
		g.Go(func() error {
			if data == nil {
				return c.deleteExploded(gctx, t)
			}
			ext := c.ext
			if c.tileFormat == "MIXED" && tileContentType(data) == "image/jpeg" {
				ext = "jpg"
			}
			if err := c.store.Put(gctx, c.tileKeyExt(t, ext), data, tileContentType(data)); err != nil {
				return err
			}
			if c.tileFormat == "MIXED" { // a tile has one file: drop the other type
				other := map[string]string{"png": "jpg", "jpg": "png"}[ext]
				return c.store.Delete(gctx, c.tileKeyExt(t, other))
			}
			return nil
		})
	}
	return g.Wait()
}

// explodedWriters is how many tile objects a flush of the exploded layout
// writes or deletes at once.
const explodedWriters = 16

func (c *Cache) deleteExploded(ctx context.Context, t Tile) error {
	exts := []string{c.ext}
	if c.tileFormat == "MIXED" {
		exts = []string{"png", "jpg"}
	}
	for _, ext := range exts {
		if err := c.store.Delete(ctx, c.tileKeyExt(t, ext)); err != nil {
			return err
		}
	}
	return nil
}

func (w *BundleWriter) flushCompact(ctx context.Context) error {
	c := w.c
	key := c.BundleKey(w.b)
	xkey := bundlxKey(key)
	defer c.index.Invalidate(key)

	var oldBundle, oldIndex []byte
	set := newBundleSet()
	// Read the stored bundle: to merge with it, and to skip a write that
	// would not change it.
	{
		var err error
		oldBundle, err = c.store.Get(ctx, key)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			oldBundle = nil
		case err != nil:
			return err
		}
		if oldBundle != nil && c.format == CompactV1 {
			oldIndex, err = c.store.Get(ctx, xkey)
			if errors.Is(err, fs.ErrNotExist) {
				oldIndex = nil
			} else if err != nil {
				return err
			}
		}
		if oldBundle != nil && !w.truncate {
			var old bundleSet
			if c.format == CompactV1 {
				if oldIndex == nil {
					return fmt.Errorf("%w: %s has no .bundlx", ErrCorruptBundle, key)
				}
				old, err = decodeV1(oldBundle, oldIndex)
			} else {
				old, err = decodeV2(oldBundle)
			}
			if err != nil {
				return fmt.Errorf("merge with stored bundle (use Truncate to replace it): %w", err)
			}
			set = old
		}
	}
	empty := true
	for pos, data := range w.changes {
		set[pos] = data
	}
	for _, data := range set {
		if data != nil {
			empty = false
			break
		}
	}
	if empty {
		if err := c.store.Delete(ctx, key); err != nil {
			return err
		}
		if c.format == CompactV1 {
			return c.store.Delete(ctx, xkey)
		}
		return nil
	}
	const ctype = "application/octet-stream"
	if c.format == CompactV1 {
		bundle, bundlx, err := set.encodeV1(w.b)
		if err != nil {
			return err
		}
		if bytes.Equal(bundle, oldBundle) && bytes.Equal(bundlx, oldIndex) {
			return nil
		}
		// Data first, index second: a reader that sees the new index finds
		// the data it points to.
		if err := c.store.Put(ctx, key, bundle, ctype); err != nil {
			return err
		}
		return c.store.Put(ctx, xkey, bundlx, ctype)
	}
	bundle, err := set.encodeV2()
	if err != nil {
		return err
	}
	if bytes.Equal(bundle, oldBundle) {
		return nil
	}
	return c.store.Put(ctx, key, bundle, ctype)
}

// Root returns the cache root (the folder of conf.xml).
func (c *Cache) Root() string { return c.root }

// Layer returns the layer folder name.
func (c *Cache) Layer() string { return c.layer }

// StoredTiles returns the tiles of bundle b that are stored, in row-major
// order: from the (cached) bundle index for compact layouts, from one List
// per tile row for the exploded layout. Seeding in "recreate empty" mode and
// verification use it.
func (c *Cache) StoredTiles(ctx context.Context, b Bundle) ([]Tile, error) {
	return c.StoredTilesSince(ctx, b, time.Time{})
}

// StoredTilesSince is StoredTiles without the tiles written before since
// (zero: no limit): for the exploded layout each tile object's modification
// time counts, for compact layouts the bundle's (a bundle is written whole,
// so all its tiles are as old as it). Seeding's refresh-before date uses it.
func (c *Cache) StoredTilesSince(ctx context.Context, b Bundle, since time.Time) ([]Tile, error) {
	if !b.Valid() {
		return nil, fmt.Errorf("%w: bundle %v not aligned", ErrInvalidTile, b.TopLeft)
	}
	var out []Tile
	if c.format != Exploded {
		key := c.BundleKey(b)
		if !since.IsZero() {
			in, err := c.store.Stat(ctx, key)
			if errors.Is(err, fs.ErrNotExist) || (err == nil && in.ModTime.Before(since)) {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("tilecache: stored tiles of %v: %w", b, err)
			}
		}
		ix, err := c.index.get(ctx, key, c.source(key))
		if err != nil {
			return nil, fmt.Errorf("tilecache: stored tiles of %v: %w", b, err)
		}
		if ix == nil {
			return nil, nil
		}
		for pos, v := range ix.entries {
			// V1 indexes point absent tiles at the zero "empty tile"
			// records between the header and the data (ArcGIS and MapProxy
			// append tile records after them).
			if v != 0 && (c.format == CompactV2 || v >= v1DataStart) {
				out = append(out, b.tileAt(pos))
			}
		}
		return out, nil
	}
	for r := range BundleSize {
		var cols []int
		err := c.listRow(ctx, b, b.TopLeft.Row+r, func(t Tile, in blob.Info) {
			if since.IsZero() || !in.ModTime.Before(since) {
				cols = append(cols, t.Col)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("tilecache: stored tiles of %v: %w", b, err)
		}
		slices.Sort(cols)
		for _, col := range slices.Compact(cols) {
			out = append(out, Tile{Level: b.TopLeft.Level, Row: b.TopLeft.Row + r, Col: col})
		}
	}
	return out, nil
}
