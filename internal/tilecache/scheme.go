package tilecache

import (
	"errors"
	"fmt"
	"image"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/paulmach/orb"
)

// ErrUnknownLevel is wrapped by errors for a level id the scheme has no LOD
// for.
var ErrUnknownLevel = errors.New("tilecache: level not in tiling scheme")

// ErrInvalidScheme is wrapped by [Scheme.Validate] errors.
var ErrInvalidScheme = errors.New("tilecache: invalid tiling scheme")

// LOD is one level of detail of a tiling scheme (Esri's LODInfo).
type LOD struct {
	LevelID int
	// Scale is the map scale denominator at the scheme's DPI.
	Scale float64
	// Resolution is the size of one pixel in map units.
	Resolution float64
}

// SpatialReference is the coordinate system of a tiling scheme as conf.xml
// records it: a projected (PCS) or geographic (GCS) system with its WKT,
// well-known id and Esri's coordinate-grid parameters.
type SpatialReference struct {
	// Geographic is true for a geographic system (xsi:type
	// typens:GeographicCoordinateSystem), false for a projected one.
	Geographic    bool
	WKT           string
	XOrigin       float64
	YOrigin       float64
	XYScale       float64
	ZOrigin       float64
	ZScale        float64
	MOrigin       float64
	MScale        float64
	XYTolerance   float64
	ZTolerance    float64
	MTolerance    float64
	HighPrecision bool
	WKID          int
	// LatestWKID is written only when non-zero.
	LatestWKID int
}

// Scheme is a tiling scheme: where tiles are, how big, at which levels, and
// what image format they hold. Coordinates are in the units of
// SpatialReference (metres for Web Mercator, degrees for geographic).
type Scheme struct {
	SpatialReference SpatialReference
	// Origin is the top-left corner of tile row 0, column 0 of every level.
	Origin orb.Point
	// Extent bounds the tiled area: a level has as many rows and columns as
	// it takes to cover Extent from Origin. It is not conf.xml data (Esri
	// leaves it to the service's full extent); the presets set the whole
	// world.
	Extent orb.Bound
	// TileCols and TileRows are the tile width and height in pixels.
	TileCols int
	TileRows int
	DPI      int
	// Format is Esri's CacheTileFormat: PNG, PNG8, PNG24, PNG32, JPEG or
	// MIXED; PBF for a cache of vector tiles (gzipped Mapbox Vector Tiles,
	// as in a VTPK's bundles).
	Format string
	// CompressionQuality is the JPEG quality (0 when not JPEG).
	CompressionQuality int
	Antialiasing       bool
	// LODs are the levels, in ascending LevelID order.
	LODs []LOD
}

// Constants of the common online schemes.
const (
	// webMercatorHalf is half the width of the Web Mercator world in metres.
	webMercatorHalf = 20037508.342787
	// webMercatorScale0 is the scale of level 0 of the online Web Mercator
	// scheme at 96 DPI.
	webMercatorScale0 = 591657527.591555
	// metersPerInch converts scale to resolution: res = scale·metersPerInch/DPI.
	// Esri uses 39.37 inches per metre (the US survey inch, 0.0254000508 m),
	// which is what makes the online scheme's level 0 resolution
	// 156543.033928 m from scale 591657527.591555 at 96 DPI (0.0254 exactly
	// would give 156542.72).
	metersPerInch = 1 / 39.37
	// geographicScale0 is the scale of level 0 of the online geographic
	// scheme: 0.703125° of the WGS 84 equator per pixel at 96 DPI.
	geographicScale0 = 295828763.7957775
)

// webMercatorWKT is the WKT Esri writes for WKID 3857 (as in the sample
// conf.xml).
const webMercatorWKT = `PROJCS["WGS_1984_Web_Mercator_Auxiliary_Sphere",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Mercator_Auxiliary_Sphere"],PARAMETER["False_Easting",0.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",0.0],PARAMETER["Standard_Parallel_1",0.0],PARAMETER["Auxiliary_Sphere_Type",0.0],UNIT["Meter",1.0],AUTHORITY["EPSG",3857]]`

// wgs84WKT is the WKT Esri writes for WKID 4326.
const wgs84WKT = `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433],AUTHORITY["EPSG",4326]]`

// WebMercator returns the common online Web Mercator scheme (WKID 3857):
// origin (-20037508.342787, 20037508.342787), 256×256 px PNG tiles at 96 DPI,
// levels 0 to 23, level 0 at scale 591657527.591555 and each level half the
// scale of the one above, resolution = scale/(96·39.37) (Esri's inch of
// 0.0254000508 m; level 0 = 156543.0339 m/px as in Esri's conf.xml). Each
// call returns a new value.
func WebMercator() Scheme {
	lods := make([]LOD, 24)
	for i := range lods {
		scale := webMercatorScale0 / float64(uint64(1)<<i)
		lods[i] = LOD{LevelID: i, Scale: scale, Resolution: scale * metersPerInch / 96}
	}
	return Scheme{
		SpatialReference: SpatialReference{
			WKT:           webMercatorWKT,
			XOrigin:       -22041257.77387803,
			YOrigin:       -32799975.422359161,
			XYScale:       142878261.42550784,
			ZOrigin:       -100000,
			ZScale:        10000,
			MOrigin:       -100000,
			MScale:        10000,
			XYTolerance:   0.001,
			ZTolerance:    0.0002,
			MTolerance:    0.0002,
			HighPrecision: true,
			WKID:          3857,
		},
		Origin:   orb.Point{-webMercatorHalf, webMercatorHalf},
		Extent:   orb.Bound{Min: orb.Point{-webMercatorHalf, -webMercatorHalf}, Max: orb.Point{webMercatorHalf, webMercatorHalf}},
		TileCols: 256,
		TileRows: 256,
		DPI:      96,
		Format:   "PNG",
		LODs:     lods,
	}
}

// Geographic returns the common online geographic scheme (WKID 4326):
// origin (-180, 90), 256×256 px PNG tiles at 96 DPI, levels 0 to 20, level 0
// at 0.703125°/px (2×1 tiles for the world) and scale 295828763.795777 (the
// resolution in metres along the equator at 96 DPI), halving per level.
// Each call returns a new value.
func Geographic() Scheme {
	lods := make([]LOD, 21)
	for i := range lods {
		div := float64(uint64(1) << i)
		lods[i] = LOD{LevelID: i, Scale: geographicScale0 / div, Resolution: 0.703125 / div}
	}
	return Scheme{
		SpatialReference: SpatialReference{
			Geographic:    true,
			WKT:           wgs84WKT,
			XOrigin:       -400,
			YOrigin:       -400,
			XYScale:       999999999.99999988,
			ZOrigin:       -100000,
			ZScale:        10000,
			MOrigin:       -100000,
			MScale:        10000,
			XYTolerance:   8.983152841195215e-09,
			ZTolerance:    0.001,
			MTolerance:    0.001,
			HighPrecision: true,
			WKID:          4326,
		},
		Origin:   orb.Point{-180, 90},
		Extent:   orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, 90}},
		TileCols: 256,
		TileRows: 256,
		DPI:      96,
		Format:   "PNG",
		LODs:     lods,
	}
}

// Validate checks that the scheme can be used: positive tile size and DPI,
// at least one LOD, LevelIDs ascending within 0…MaxLevel, positive
// resolutions, and an Extent that lies right of and below Origin. Errors
// wrap [ErrInvalidScheme].
func (s Scheme) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidScheme, fmt.Sprintf(format, a...))
	}
	switch {
	case s.TileCols <= 0 || s.TileRows <= 0 || s.TileCols > 8192 || s.TileRows > 8192:
		return bad("tile size %d×%d px", s.TileCols, s.TileRows)
	case s.DPI <= 0:
		return bad("dpi %d", s.DPI)
	case len(s.LODs) == 0:
		return bad("no levels")
	case !finite(s.Origin[0]) || !finite(s.Origin[1]):
		return bad("origin %v", s.Origin)
	case !finite(s.Extent.Min[0]) || !finite(s.Extent.Min[1]) || !finite(s.Extent.Max[0]) || !finite(s.Extent.Max[1]):
		return bad("extent %v", s.Extent)
	case s.Extent.Max[0] <= s.Origin[0] || s.Extent.Min[1] >= s.Origin[1]:
		return bad("extent %v does not lie right of and below origin %v", s.Extent, s.Origin)
	}
	if _, err := tileFormatExt(s.Format); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidScheme, err)
	}
	for i, l := range s.LODs {
		if l.LevelID < 0 || l.LevelID > MaxLevel || (i > 0 && l.LevelID <= s.LODs[i-1].LevelID) {
			return bad("level ids must ascend within 0…%d, got %d at position %d", MaxLevel, l.LevelID, i)
		}
		if !(l.Resolution > 0) || !finite(l.Resolution) || !(l.Scale > 0) || !finite(l.Scale) {
			return bad("level %d: scale %v, resolution %v", l.LevelID, l.Scale, l.Resolution)
		}
	}
	return nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// LOD returns the level of detail with the given level id.
func (s Scheme) LOD(level int) (LOD, bool) {
	i, ok := slices.BinarySearchFunc(s.LODs, level, func(l LOD, id int) int { return l.LevelID - id })
	if !ok {
		return LOD{}, false
	}
	return s.LODs[i], true
}

// Levels returns the scheme's level ids in ascending order.
func (s Scheme) Levels() []int {
	ids := make([]int, len(s.LODs))
	for i, l := range s.LODs {
		ids[i] = l.LevelID
	}
	return ids
}

// lod is LOD with an error wrapping ErrUnknownLevel.
func (s Scheme) lod(level int) (LOD, error) {
	l, ok := s.LOD(level)
	if !ok {
		return LOD{}, fmt.Errorf("%w: %d", ErrUnknownLevel, level)
	}
	return l, nil
}

// tileSpan returns the width and height of one tile of level l in map units.
func (s Scheme) tileSpan(l LOD) (w, h float64) {
	return l.Resolution * float64(s.TileCols), l.Resolution * float64(s.TileRows)
}

// cellEps is the tolerance, in tiles, for coordinates that fall on a tile
// boundary up to rounding.
const cellEps = 1e-6

// MatrixSize returns how many rows and columns of tiles the level has: as
// many as cover Extent from Origin (at least 1, at most MaxIndex+1).
func (s Scheme) MatrixSize(level int) (rows, cols int, err error) {
	l, err := s.lod(level)
	if err != nil {
		return 0, 0, err
	}
	rows, cols = s.matrixSize(l)
	return rows, cols, nil
}

// matrixSize is [Scheme.MatrixSize] for a level already looked up.
func (s Scheme) matrixSize(l LOD) (rows, cols int) {
	w, h := s.tileSpan(l)
	return countCells((s.Origin[1] - s.Extent.Min[1]) / h), countCells((s.Extent.Max[0] - s.Origin[0]) / w)
}

// countCells turns a length in tiles into a whole number of tiles.
// The tolerance grows with n: the online schemes' rounded scales leave
// their deepest levels about 1e-6 tiles wider than the world.
func countCells(n float64) int {
	c := math.Ceil(n - max(cellEps, n*1e-10))
	switch {
	case !(c >= 1):
		return 1
	case c > MaxIndex:
		return MaxIndex + 1
	}
	return int(c)
}

// Contains reports whether t is a tile of the scheme: valid, at one of its
// levels, and inside the level's matrix.
func (s Scheme) Contains(t Tile) bool {
	if !t.Valid() {
		return false
	}
	rows, cols, err := s.MatrixSize(t.Level)
	return err == nil && t.Row < rows && t.Col < cols
}

// TileBounds returns the map extent of tile t. It does not check that t
// lies inside the level's matrix.
func (s Scheme) TileBounds(t Tile) (orb.Bound, error) {
	l, err := s.lod(t.Level)
	if err != nil {
		return orb.Bound{}, err
	}
	w, h := s.tileSpan(l)
	minX := s.Origin[0] + float64(t.Col)*w
	maxY := s.Origin[1] - float64(t.Row)*h
	return orb.Bound{Min: orb.Point{minX, maxY - h}, Max: orb.Point{minX + w, maxY}}, nil
}

// TileRange is the rectangle of tiles from (MinRow, MinCol) to (MaxRow,
// MaxCol), inclusive, of one level. It is empty when MaxRow < MinRow or
// MaxCol < MinCol.
type TileRange struct {
	Level                          int
	MinRow, MinCol, MaxRow, MaxCol int
}

// Empty reports whether the range has no tiles.
func (r TileRange) Empty() bool { return r.MaxRow < r.MinRow || r.MaxCol < r.MinCol }

// Count returns the number of tiles in the range.
func (r TileRange) Count() int64 {
	if r.Empty() {
		return 0
	}
	return int64(r.MaxRow-r.MinRow+1) * int64(r.MaxCol-r.MinCol+1)
}

// Contains reports whether t lies in the range.
func (r TileRange) Contains(t Tile) bool {
	return t.Level == r.Level && t.Row >= r.MinRow && t.Row <= r.MaxRow && t.Col >= r.MinCol && t.Col <= r.MaxCol
}

// All yields the range's tiles in row-major order.
func (r TileRange) All() iter.Seq[Tile] {
	return func(yield func(Tile) bool) {
		for row := r.MinRow; row <= r.MaxRow; row++ {
			for col := r.MinCol; col <= r.MaxCol; col++ {
				if !yield(Tile{Level: r.Level, Row: row, Col: col}) {
					return
				}
			}
		}
	}
}

// emptyRange is a TileRange with no tiles.
func emptyRange(level int) TileRange {
	return TileRange{Level: level, MinRow: 0, MaxRow: -1, MinCol: 0, MaxCol: -1}
}

// toCells converts a map point to fractional tile units of level l: x grows
// with columns, y with rows (downwards).
func (s Scheme) toCells(l LOD, p orb.Point) (x, y float64) {
	w, h := s.tileSpan(l)
	return (p[0] - s.Origin[0]) / w, (s.Origin[1] - p[1]) / h
}

// cellSpan returns the cells an interval [a, b] (in tile units, a ≤ b)
// overlaps with positive length; a degenerate interval gives the one cell it
// lies in.
func cellSpan(a, b float64) (lo, hi int) {
	flo, fhi := math.Floor(a+cellEps), math.Ceil(b-cellEps)-1
	if fhi < flo {
		flo = math.Floor((a+b)/2 + cellEps)
		fhi = flo
	}
	return clampInt(flo), clampInt(fhi)
}

// clampInt converts f to int, limiting it to a range that cannot overflow
// later arithmetic.
func clampInt(f float64) int {
	switch {
	case math.IsNaN(f):
		return 0
	case f < -1:
		return -1
	case f > MaxIndex+1:
		return MaxIndex + 1
	}
	return int(f)
}

// TilesCovering returns the tiles of the level whose area overlaps b (a
// degenerate b, such as a point, gives the tile it lies in), clipped to the
// level's matrix. Edges of b that fall on tile boundaries do not pull in the
// neighbouring tiles.
func (s Scheme) TilesCovering(level int, b orb.Bound) (TileRange, error) {
	l, err := s.lod(level)
	if err != nil {
		return TileRange{}, err
	}
	return s.tilesCovering(l, b), nil
}

// tilesCovering is [Scheme.TilesCovering] for a level already looked up.
func (s Scheme) tilesCovering(l LOD, b orb.Bound) TileRange {
	level := l.LevelID
	rows, cols := s.matrixSize(l)
	x0, y0 := s.toCells(l, orb.Point{b.Min[0], b.Max[1]})
	x1, y1 := s.toCells(l, orb.Point{b.Max[0], b.Min[1]})
	if !(x0 <= x1) || !(y0 <= y1) {
		return emptyRange(level)
	}
	c0, c1 := cellSpan(x0, x1)
	r0, r1 := cellSpan(y0, y1)
	r := TileRange{Level: level, MinRow: max(r0, 0), MaxRow: min(r1, rows-1), MinCol: max(c0, 0), MaxCol: min(c1, cols-1)}
	if r.Empty() {
		return emptyRange(level)
	}
	return r
}

// Metatile returns the n×n metatile holding t (see [MetatileOf]), clipped
// to the level's matrix.
func (s Scheme) Metatile(t Tile, n int) (Metatile, error) {
	m, err := MetatileOf(t, n)
	if err != nil {
		return Metatile{}, err
	}
	rows, cols, err := s.MatrixSize(t.Level)
	if err != nil {
		return Metatile{}, err
	}
	if !s.Contains(t) {
		return Metatile{}, fmt.Errorf("%w %v: outside the level's %d×%d matrix", ErrInvalidTile, t, rows, cols)
	}
	m.Rows = min(m.Rows, rows-m.TopLeft.Row)
	m.Cols = min(m.Cols, cols-m.TopLeft.Col)
	return m, nil
}

// RenderArea is what to draw for a metatile: a Width×Height pixel image of
// the map extent Bound, which is the metatile's tiles plus Buffer pixels on
// every side (so that labels and symbols crossing a tile edge are drawn
// whole, once).
type RenderArea struct {
	Metatile Metatile
	Bound    orb.Bound
	Width    int
	Height   int
	Buffer   int
	// TileCols and TileRows are the scheme's tile size in pixels.
	TileCols, TileRows int
}

// MetatileArea returns the render area of m with buffer pixels around it.
// buffer must not be negative.
func (s Scheme) MetatileArea(m Metatile, buffer int) (RenderArea, error) {
	if buffer < 0 {
		return RenderArea{}, fmt.Errorf("tilecache: negative metatile buffer %d", buffer)
	}
	l, err := s.lod(m.TopLeft.Level)
	if err != nil {
		return RenderArea{}, err
	}
	if m.Rows <= 0 || m.Cols <= 0 {
		return RenderArea{}, fmt.Errorf("tilecache: empty metatile %v", m)
	}
	w, h := s.tileSpan(l)
	buf := float64(buffer) * l.Resolution
	minX := s.Origin[0] + float64(m.TopLeft.Col)*w - buf
	maxY := s.Origin[1] - float64(m.TopLeft.Row)*h + buf
	return RenderArea{
		Metatile: m,
		Bound: orb.Bound{
			Min: orb.Point{minX, maxY - float64(m.Rows)*h - 2*buf},
			Max: orb.Point{minX + float64(m.Cols)*w + 2*buf, maxY},
		},
		Width:    m.Cols*s.TileCols + 2*buffer,
		Height:   m.Rows*s.TileRows + 2*buffer,
		Buffer:   buffer,
		TileCols: s.TileCols,
		TileRows: s.TileRows,
	}, nil
}

// TileRect returns the pixel rectangle of tile t within the render area's
// image, for cutting the metatile image into tiles. ok is false when t is
// not one of the metatile's tiles.
func (a RenderArea) TileRect(t Tile) (r image.Rectangle, ok bool) {
	if !a.Metatile.Contains(t) {
		return image.Rectangle{}, false
	}
	x := a.Buffer + (t.Col-a.Metatile.TopLeft.Col)*a.TileCols
	y := a.Buffer + (t.Row-a.Metatile.TopLeft.Row)*a.TileRows
	return image.Rect(x, y, x+a.TileCols, y+a.TileRows), true
}

// tileFormatExt returns the file extension of Esri's CacheTileFormat. MIXED
// caches hold both "png" and "jpg"; its extension is "png", and readers try
// both.
func tileFormatExt(format string) (string, error) {
	switch strings.ToUpper(format) {
	case "PNG", "PNG8", "PNG24", "PNG32", "MIXED":
		return "png", nil
	case "JPEG", "JPG":
		return "jpg", nil
	case "LERC":
		return "lerc", nil
	case "PBF":
		return "pbf", nil // vector tiles (Mapbox Vector Tile), gzipped
	}
	return "", fmt.Errorf("tilecache: unknown tile format %q", format)
}
