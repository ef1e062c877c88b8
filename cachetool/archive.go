package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"image"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/tilearchive"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// Offline archives (PMTiles v3, MBTiles 1.3; internal/tilearchive) hold tiles of the Web
// Mercator grid, zoom z having 2^z × 2^z tiles. A cache can be exported to one when its scheme
// is that grid: Web Mercator (WKID 3857 or Esri's 102100, 102113, 900913), the origin at the
// world's top-left corner, square tiles of 256 or 512 px, and every level's resolution that of
// a whole zoom for that tile size (the level's zoom need not equal its LevelID). Other schemes
// are refused: a geographic cache, a State Plane cache or one with custom resolutions has tiles
// that no XYZ client could place.

// earthHalf is half the Web Mercator world's width in metres (π·6378137).
const earthHalf = math.Pi * 6378137

// archiveZooms returns the zoom of every level of a scheme that archives can hold, or why the
// scheme cannot be exported.
func archiveZooms(s tilecache.Scheme) (map[int]int, error) {
	refuse := func(why string, a ...any) error {
		return fmt.Errorf("export: only Web Mercator caches on the XYZ grid (GoogleMapsCompatible: WKID 3857, origin at the world's top-left, 256 or 512 px tiles, a whole zoom per level) can be written to PMTiles or MBTiles; this cache's %s", fmt.Sprintf(why, a...))
	}
	switch s.SpatialReference.WKID {
	case 3857, 102100, 102113, 900913:
	default:
		return nil, refuse("spatial reference is WKID %d", s.SpatialReference.WKID)
	}
	if math.Abs(s.Origin[0]+earthHalf) > 1e-3 || math.Abs(s.Origin[1]-earthHalf) > 1e-3 {
		return nil, refuse("origin is %v", s.Origin)
	}
	if s.TileCols != s.TileRows || (s.TileCols != 256 && s.TileCols != 512) {
		return nil, refuse("tiles are %d×%d px", s.TileCols, s.TileRows)
	}
	zooms := map[int]int{}
	for _, l := range s.LODs {
		z := math.Log2(2 * earthHalf / (float64(s.TileCols) * l.Resolution))
		if math.Abs(z-math.Round(z)) > 1e-6 || z < -0.5 || z > 30.5 {
			return nil, refuse("level %d has resolution %g m, not a whole zoom", l.LevelID, l.Resolution)
		}
		zooms[l.LevelID] = int(math.Round(z))
	}
	return zooms, nil
}

// archiveFormat is the archive format name of a cache's tile format.
func archiveFormat(cacheFormat string) (string, error) {
	switch strings.ToUpper(cacheFormat) {
	case "", "PNG", "PNG8", "PNG24", "PNG32":
		return "png", nil
	case "JPEG", "JPG":
		return "jpg", nil
	case "PBF", "MVT":
		return "pbf", nil
	}
	return "", fmt.Errorf("export: tile format %s cannot be written to an archive, whose tiles have one format (png, jpg or pbf)", cacheFormat)
}

// mercatorToLonLat converts Web Mercator metres to degrees.
func mercatorToLonLat(x, y float64) (lon, lat float64) {
	lon = x / earthHalf * 180
	lat = (2*math.Atan(math.Exp(y/6378137)) - math.Pi/2) * 180 / math.Pi
	return max(-180, min(180, lon)), max(-85.0511287798066, min(85.0511287798066, lat))
}

// lonLatToMercator converts degrees to Web Mercator metres.
func lonLatToMercator(lon, lat float64) (x, y float64) {
	lat = max(-85.0511287798066, min(85.0511287798066, lat))
	return lon / 180 * earthHalf, 6378137 * math.Log(math.Tan(math.Pi/4+lat*math.Pi/360))
}

// layerFields collects the vector_layers of an archive from the vector tiles written to it:
// each layer's name, attribute names with their TileJSON types, and the zooms it appears at.
type layerFields struct {
	layers map[string]*tilearchive.VectorLayer
}

func (lf *layerFields) add(zoom int, tile []byte) error {
	raw := tile
	if len(tile) >= 2 && tile[0] == 0x1f && tile[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(tile))
		if err != nil {
			return err
		}
		if raw, err = io.ReadAll(io.LimitReader(zr, 1<<30)); err != nil {
			return err
		}
	}
	layers, err := mvtcheck.Decode(raw)
	if err != nil {
		return err
	}
	if lf.layers == nil {
		lf.layers = map[string]*tilearchive.VectorLayer{}
	}
	for _, l := range layers {
		vl := lf.layers[l.Name]
		if vl == nil {
			vl = &tilearchive.VectorLayer{ID: l.Name, MinZoom: zoom, MaxZoom: zoom, Fields: map[string]string{}}
			lf.layers[l.Name] = vl
		}
		vl.MinZoom, vl.MaxZoom = min(vl.MinZoom, zoom), max(vl.MaxZoom, zoom)
		for _, f := range l.Features {
			for k, v := range f.Properties {
				switch v.(type) {
				case string:
					vl.Fields[k] = "String"
				case bool:
					if vl.Fields[k] == "" {
						vl.Fields[k] = "Boolean"
					}
				default:
					if vl.Fields[k] == "" || vl.Fields[k] == "Boolean" {
						vl.Fields[k] = "Number"
					}
				}
			}
		}
	}
	return nil
}

func (lf *layerFields) list() []tilearchive.VectorLayer {
	var out []tilearchive.VectorLayer
	for _, l := range lf.layers {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// exportArchive writes a cache folder to a PMTiles or MBTiles file (by the file's extension).
func exportArchive(ctx context.Context, store tilecache.Store, root, folder, name, file string, stderr io.Writer) (int, error) {
	info, cdi, err := tilecache.ReadMetadata(ctx, store, root)
	if err != nil {
		return 0, fmt.Errorf("cache %s: %w", root, err)
	}
	zooms, err := archiveZooms(info.Scheme)
	if err != nil {
		return 0, err
	}
	format, err := archiveFormat(info.Scheme.Format)
	if err != nil {
		return 0, err
	}
	w, err := tilearchive.Create(file)
	if err != nil {
		return 0, err
	}
	var lf layerFields
	nb, nt := 0, 0
	start := time.Now()
	err = scanBundles(ctx, store, root, folder, info, func(bt bundleTiles) error {
		if bt.err != nil {
			return fmt.Errorf("bundle %v (%s): %w", bt.bundle, bt.key, bt.err)
		}
		tiles := make([]tilecache.Tile, 0, len(bt.tiles))
		for t := range bt.tiles {
			tiles = append(tiles, t)
		}
		slices.SortFunc(tiles, func(a, b tilecache.Tile) int { return cmp.Or(cmp.Compare(a.Row, b.Row), cmp.Compare(a.Col, b.Col)) })
		for _, t := range tiles {
			z, ok := zooms[t.Level]
			if !ok {
				return fmt.Errorf("tile %v: level %d is not in conf.xml", t, t.Level)
			}
			data := bt.tiles[t]
			if format == "pbf" {
				if err := lf.add(z, data); err != nil {
					return fmt.Errorf("tile %v is not a vector tile: %w", t, err)
				}
			}
			if err := w.Put(tilearchive.ZXY{Z: z, X: t.Col, Y: t.Row}, data); err != nil {
				return err
			}
		}
		nb++
		nt += len(tiles)
		fmt.Fprintf(stderr, "\rexport: %d bundles, %d tiles, %.0f tiles/s   ", nb, nt, float64(nt)/max(time.Since(start).Seconds(), 1e-3))
		return ctx.Err()
	})
	fmt.Fprintln(stderr)
	if err != nil {
		w.Abort()
		return nt, err
	}
	if nt == 0 {
		w.Abort()
		return 0, fmt.Errorf("export: cache %s/%s holds no tiles", root, folder)
	}
	ext := cdi
	if ext == (orb.Bound{}) {
		ext = info.Scheme.Extent
	}
	md := tilearchive.Metadata{Name: name, Format: format, Description: "exported by cachetool from " + root + "/" + folder,
		VectorLayers: lf.list()}
	md.Bounds[0], md.Bounds[1] = mercatorToLonLat(ext.Min[0], ext.Min[1])
	md.Bounds[2], md.Bounds[3] = mercatorToLonLat(ext.Max[0], ext.Max[1])
	md.Center = [3]float64{(md.Bounds[0] + md.Bounds[2]) / 2, (md.Bounds[1] + md.Bounds[3]) / 2, 0}
	if err := w.Close(md); err != nil {
		return nt, err
	}
	return nt, nil
}

// importBudget is how many bytes of tiles an import holds before it writes the bundle with the
// most of them (a bundle written again later is merged by its writer).
const importBudget = 256 << 20

// importArchive reads a PMTiles or MBTiles file into a cache root of the store: tiles at level
// = zoom, in a Web Mercator scheme of the archive's tile size (tileSize; 0: a raster tile's own
// size, 512 px for vector tiles, as ArcGIS's vector tile services), levels 0 to the archive's
// highest zoom, with conf.xml and conf.cdi (the archive's bounds).
func importArchive(ctx context.Context, file string, store tilecache.Store, root, folder string, storage tilecache.StorageFormat, tileSize int, stderr io.Writer) (int, error) {
	r, err := tilearchive.Open(file)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	md := r.Metadata()
	var cacheFormat string
	switch md.Format {
	case "png":
		cacheFormat = "PNG"
	case "jpg", "jpeg":
		cacheFormat = "JPEG"
	case "pbf":
		cacheFormat = "PBF"
	default:
		return 0, fmt.Errorf("import: %s: tile format %q: only png, jpg and pbf archives can be imported", file, md.Format)
	}
	c, err := tilecache.New(store, tilecache.Options{Root: root, Layer: folder, Format: storage, TileFormat: cacheFormat})
	if err != nil {
		return 0, err
	}
	pending := map[tilecache.Bundle]map[tilecache.Tile][]byte{}
	held, nt, maxZoom := 0, 0, -1
	start := time.Now()
	flush := func(b tilecache.Bundle) error {
		bw, err := c.NewBundleWriter(b)
		if err != nil {
			return err
		}
		for t, data := range pending[b] {
			if err := bw.Put(t, data); err != nil {
				return err
			}
			held -= len(data)
		}
		delete(pending, b)
		return bw.Flush(ctx)
	}
	for z, data := range r.Tiles() {
		if data == nil {
			break
		}
		if tileSize == 0 {
			tileSize = 512
			if md.Format != "pbf" {
				cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
				if err != nil {
					return nt, fmt.Errorf("import: tile %v: %w", z, err)
				}
				if cfg.Width != cfg.Height || (cfg.Width != 256 && cfg.Width != 512) {
					return nt, fmt.Errorf("import: tile %v is %d×%d px: want 256 or 512 px square tiles (-tile-size)", z, cfg.Width, cfg.Height)
				}
				tileSize = cfg.Width
			}
		}
		t := tilecache.Tile{Level: z.Z, Row: z.Y, Col: z.X}
		b := tilecache.BundleOf(t)
		if pending[b] == nil {
			pending[b] = map[tilecache.Tile][]byte{}
		}
		pending[b][t] = bytes.Clone(data)
		held += len(data)
		nt++
		maxZoom = max(maxZoom, z.Z)
		for held > importBudget {
			var big tilecache.Bundle
			most := -1
			for b, ts := range pending {
				if len(ts) > most || len(ts) == most && b.TopLeft.String() < big.TopLeft.String() {
					big, most = b, len(ts)
				}
			}
			if err := flush(big); err != nil {
				return nt, err
			}
		}
		if nt%1000 == 0 {
			fmt.Fprintf(stderr, "\rimport: %d tiles, %.0f tiles/s   ", nt, float64(nt)/max(time.Since(start).Seconds(), 1e-3))
		}
		if err := ctx.Err(); err != nil {
			return nt, err
		}
	}
	if err := r.Err(); err != nil {
		return nt, err
	}
	if nt == 0 {
		return 0, fmt.Errorf("import: %s holds no tiles", file)
	}
	bundles := make([]tilecache.Bundle, 0, len(pending))
	for b := range pending {
		bundles = append(bundles, b)
	}
	slices.SortFunc(bundles, func(a, b tilecache.Bundle) int { return strings.Compare(a.TopLeft.String(), b.TopLeft.String()) })
	for _, b := range bundles {
		if err := flush(b); err != nil {
			return nt, err
		}
	}
	fmt.Fprintf(stderr, "\rimport: %d tiles, %.0f tiles/s   \n", nt, float64(nt)/max(time.Since(start).Seconds(), 1e-3))
	s := mercatorScheme(tileSize, maxZoom)
	s.Format = cacheFormat
	ext := s.Extent
	if md.Bounds != ([4]float64{}) {
		ext.Min[0], ext.Min[1] = lonLatToMercator(md.Bounds[0], md.Bounds[1])
		ext.Max[0], ext.Max[1] = lonLatToMercator(md.Bounds[2], md.Bounds[3])
	}
	if err := c.WriteMetadata(ctx, tilecache.CacheInfo{Scheme: s, Storage: storage}, ext); err != nil {
		return nt, err
	}
	return nt, nil
}

// mercatorScheme is the Web Mercator scheme of tileSize-px tiles with levels 0 to maxZoom
// (level = zoom): the online scheme's resolutions and scales, divided by tileSize/256.
func mercatorScheme(tileSize, maxZoom int) tilecache.Scheme {
	s := tilecache.WebMercator()
	s.LODs = s.LODs[:min(maxZoom+1, len(s.LODs))]
	f := float64(tileSize) / 256
	for i := range s.LODs {
		s.LODs[i].Resolution /= f
		s.LODs[i].Scale /= f
	}
	s.TileCols, s.TileRows = tileSize, tileSize
	return s
}
