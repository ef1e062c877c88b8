package tilecache

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
)

// Limits of a valid [Tile].
const (
	// MaxLevel is the highest level id a tile may have. Level folders are
	// named with two decimal digits ("L00" … "L99").
	MaxLevel = 99
	// MaxIndex is the highest row or column a tile may have: the SOAP
	// interface carries them as xs:int.
	MaxIndex = math.MaxInt32
)

// ErrInvalidTile is wrapped by errors about tile coordinates that are out
// of range or cannot be parsed.
var ErrInvalidTile = errors.New("tilecache: invalid tile")

// Tile addresses one tile of a tiling scheme: the level id of its LOD, and
// its row and column counted from the scheme's top-left origin (row 0 is the
// top row, column 0 the left column). It is the only tile-coordinate type in
// mapfarm: API handlers, job payloads, object keys and cachetool all use it.
type Tile struct {
	Level int
	Row   int
	Col   int
}

// Valid reports whether the tile's numbers are in range: 0 ≤ Level ≤
// MaxLevel and 0 ≤ Row, Col ≤ MaxIndex. Whether a scheme has that level and
// that many rows is [Scheme.Contains].
func (t Tile) Valid() bool {
	return t.Level >= 0 && t.Level <= MaxLevel &&
		t.Row >= 0 && t.Row <= MaxIndex &&
		t.Col >= 0 && t.Col <= MaxIndex
}

// String formats the tile as "level/row/col", in decimal, such as "5/12/9".
// [ParseTile] reads it back.
func (t Tile) String() string {
	return strconv.Itoa(t.Level) + "/" + strconv.Itoa(t.Row) + "/" + strconv.Itoa(t.Col)
}

// ParseTile parses "level/row/col" (decimal, no signs, as written by
// [Tile.String]) and checks [Tile.Valid]. Errors wrap [ErrInvalidTile].
func ParseTile(s string) (Tile, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Tile{}, fmt.Errorf("%w %q: want level/row/col", ErrInvalidTile, s)
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 10 || strings.TrimLeft(p, "0123456789") != "" {
			return Tile{}, fmt.Errorf("%w %q: %q is not a decimal number", ErrInvalidTile, s, p)
		}
		v, err := strconv.Atoi(p)
		if err != nil {
			return Tile{}, fmt.Errorf("%w %q: %w", ErrInvalidTile, s, err)
		}
		n[i] = v
	}
	t := Tile{Level: n[0], Row: n[1], Col: n[2]}
	if !t.Valid() {
		return Tile{}, fmt.Errorf("%w %q: out of range", ErrInvalidTile, s)
	}
	return t, nil
}

// BundleSize is the number of rows and of columns of tiles in one compact
// bundle (Esri's PacketSize).
const BundleSize = 128

// bundleTiles is the number of tiles in one bundle.
const bundleTiles = BundleSize * BundleSize

// Bundle is a block of BundleSize×BundleSize tiles of one level, the unit of
// compact storage, named by its top-left tile (whose row and column are
// multiples of BundleSize). The exploded layout uses the same blocks as
// units of work, so every layout has one writer per bundle.
type Bundle struct {
	TopLeft Tile
}

// BundleOf returns the bundle that holds t.
func BundleOf(t Tile) Bundle {
	return Bundle{TopLeft: Tile{
		Level: t.Level,
		Row:   t.Row - t.Row%BundleSize,
		Col:   t.Col - t.Col%BundleSize,
	}}
}

// Contains reports whether t lies in the bundle.
func (b Bundle) Contains(t Tile) bool {
	return t.Level == b.TopLeft.Level &&
		t.Row >= b.TopLeft.Row && t.Row < b.TopLeft.Row+BundleSize &&
		t.Col >= b.TopLeft.Col && t.Col < b.TopLeft.Col+BundleSize
}

// Valid reports whether the bundle's top-left tile is valid and aligned.
func (b Bundle) Valid() bool {
	return b.TopLeft.Valid() && b.TopLeft.Row%BundleSize == 0 && b.TopLeft.Col%BundleSize == 0
}

// Name is the bundle's file name without extension, "R" + row + "C" + col of
// the top-left tile in lower-case hex, at least 4 digits: "R0080C0000".
func (b Bundle) Name() string {
	return fmt.Sprintf("R%04xC%04x", b.TopLeft.Row, b.TopLeft.Col)
}

// String formats the bundle as "level/Name", such as "8/R0080C0000".
func (b Bundle) String() string {
	return strconv.Itoa(b.TopLeft.Level) + "/" + b.Name()
}

// rowMajor is the position of t in the bundle's row-major order, as used by
// the compact V2 index: 128·(row%128) + col%128.
func rowMajor(t Tile) int {
	return BundleSize*(t.Row%BundleSize) + t.Col%BundleSize
}

// colMajor is the position of t in the column-major order of the compact V1
// index: 128·(col%128) + row%128.
func colMajor(t Tile) int {
	return BundleSize*(t.Col%BundleSize) + t.Row%BundleSize
}

// tileAt returns the tile of the bundle at row-major position pos.
func (b Bundle) tileAt(pos int) Tile {
	return Tile{Level: b.TopLeft.Level, Row: b.TopLeft.Row + pos/BundleSize, Col: b.TopLeft.Col + pos%BundleSize}
}

// Metatile is a block of tiles rendered as one image and then cut, named by
// its top-left tile. Rows and Cols are its size in tiles; at the right and
// bottom edge of a level's matrix they may be smaller than the metatile
// size the scheme was asked for.
type Metatile struct {
	TopLeft    Tile
	Rows, Cols int
}

// ErrMetatileSize is wrapped by errors for a metatile size that is not a
// power of two from 1 to BundleSize: only those tile whole bundles, so that
// no metatile spans two bundles.
var ErrMetatileSize = errors.New("tilecache: metatile size must be a power of two from 1 to 128")

// checkMetaSize validates a metatile size.
func checkMetaSize(n int) error {
	if n < 1 || n > BundleSize || n&(n-1) != 0 {
		return fmt.Errorf("%w, got %d", ErrMetatileSize, n)
	}
	return nil
}

// MetatileOf returns the n×n metatile that holds t, aligned to multiples of
// n (so that it never crosses a bundle boundary), with its full size n×n.
// [Scheme.Metatile] clips it to the level's matrix. n must be a power of two
// from 1 to BundleSize.
func MetatileOf(t Tile, n int) (Metatile, error) {
	if err := checkMetaSize(n); err != nil {
		return Metatile{}, err
	}
	return Metatile{
		TopLeft: Tile{Level: t.Level, Row: t.Row - t.Row%n, Col: t.Col - t.Col%n},
		Rows:    n,
		Cols:    n,
	}, nil
}

// Contains reports whether t is one of the metatile's tiles.
func (m Metatile) Contains(t Tile) bool {
	return t.Level == m.TopLeft.Level &&
		t.Row >= m.TopLeft.Row && t.Row < m.TopLeft.Row+m.Rows &&
		t.Col >= m.TopLeft.Col && t.Col < m.TopLeft.Col+m.Cols
}

// Bundle returns the bundle the metatile lies in.
func (m Metatile) Bundle() Bundle { return BundleOf(m.TopLeft) }

// Tiles yields the metatile's tiles in row-major order.
func (m Metatile) Tiles() iter.Seq[Tile] {
	return func(yield func(Tile) bool) {
		for r := range m.Rows {
			for c := range m.Cols {
				if !yield(Tile{Level: m.TopLeft.Level, Row: m.TopLeft.Row + r, Col: m.TopLeft.Col + c}) {
					return
				}
			}
		}
	}
}

// String formats the metatile as "level/row/col+RxC", such as "5/8/12+4x4".
func (m Metatile) String() string {
	return fmt.Sprintf("%s+%dx%d", m.TopLeft, m.Rows, m.Cols)
}

// ParseTilePath reads the path of an exploded tile inside a cache folder,
// "Lnn/Rxxxxxxxx/Cxxxxxxxx.ext" (decimal level, row and column in 8 hex digits, as TileKey
// writes them), and returns the tile and its extension (lower case).
func ParseTilePath(p string) (Tile, string, error) {
	var t Tile
	bad := fmt.Errorf("%w: %q is not Lnn/Rxxxxxxxx/Cxxxxxxxx.ext", ErrInvalidTile, p)
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) != 3 {
		return t, "", bad
	}
	col, ext, ok := strings.Cut(parts[2], ".")
	if !ok || ext == "" || len(parts[0]) != 3 || len(parts[1]) != 9 || len(col) != 9 {
		return t, "", bad
	}
	if _, err := fmt.Sscanf(parts[0]+" "+parts[1]+" "+col, "L%02d R%08x C%08x", &t.Level, &t.Row, &t.Col); err != nil || !t.Valid() {
		return t, "", bad
	}
	return t, strings.ToLower(ext), nil
}

// ParseBundlePath reads the path of a compact bundle (or its V1 index) inside a cache folder,
// "Lnn/RrrrrCcccc.bundle" or ".bundlx", as BundleKey writes it.
func ParseBundlePath(p string) (Bundle, error) {
	bad := fmt.Errorf("%w: %q is not Lnn/RrrrrCcccc.bundle", ErrInvalidTile, p)
	level, name, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if !ok || len(level) != 3 {
		return Bundle{}, bad
	}
	name, ext, ok := strings.Cut(name, ".")
	if !ok || (ext != "bundle" && ext != "bundlx") {
		return Bundle{}, bad
	}
	// Row and column are lower-case hex of at least four digits.
	rowHex, colHex, ok := strings.Cut(strings.TrimPrefix(name, "R"), "C")
	if !ok || !strings.HasPrefix(name, "R") || len(rowHex) < 4 || len(colHex) < 4 {
		return Bundle{}, bad
	}
	var t Tile
	lv, err1 := strconv.Atoi(strings.TrimPrefix(level, "L"))
	row, err2 := strconv.ParseUint(rowHex, 16, 31)
	col, err3 := strconv.ParseUint(colHex, 16, 31)
	if !strings.HasPrefix(level, "L") || err1 != nil || err2 != nil || err3 != nil {
		return Bundle{}, bad
	}
	t = Tile{Level: lv, Row: int(row), Col: int(col)}
	if !t.Valid() {
		return Bundle{}, bad
	}
	b := Bundle{TopLeft: t}
	if BundleOf(t) != b {
		return Bundle{}, bad
	}
	return b, nil
}
