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

// maxIndexDigits is the most digits of a tile's level, row or column in a URL: 2147483647, the
// largest xs:int, has ten.
const maxIndexDigits = 10

// ParseIndex reads a tile's level, row or column as a tile URL writes it: decimal digits alone,
// at most an xs:int. Signs, spaces and anything else Atoi or a number parser would skip or
// accept ("+0", "-0", " 1", "0x1") are refused, so one tile has one URL.
func ParseIndex(s string) (int, bool) {
	if s == "" || len(s) > maxIndexDigits {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= math.MaxInt32
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

// Names in the exploded layout: a level folder "Lnn" (two decimal digits), a row folder
// "Rxxxxxxxx" and a tile file "Cxxxxxxxx.ext" (row and column in 8 hex digits, written lower
// case). These functions are the only place mapfarm writes or reads them.

// levelName is the folder of a level: "L" + 2 decimal digits.
func levelName(level int) string { return fmt.Sprintf("L%02d", level) }

// rowName is the folder of a row of the exploded layout: "R" + 8 lower-case hex digits.
func rowName(row int) string { return fmt.Sprintf("R%08x", row) }

// colName is the file of a tile of the exploded layout: "C" + 8 lower-case hex digits + "." + ext.
func colName(col int, ext string) string { return fmt.Sprintf("C%08x.%s", col, ext) }

// parseLevelName reads "Lnn" (exactly two decimal digits).
func parseLevelName(s string) (int, bool) {
	if len(s) != 3 || s[0] != 'L' || !isDigit(s[1]) || !isDigit(s[2]) {
		return 0, false
	}
	return int(s[1]-'0')*10 + int(s[2]-'0'), true
}

// parseRowName reads a row folder name, "Rxxxxxxxx".
func parseRowName(s string) (int, bool) {
	return parseHex8(s, 'R')
}

// parseColName reads a tile file name, "Cxxxxxxxx.ext", and returns the column and the
// extension in lower case.
func parseColName(s string) (col int, ext string, ok bool) {
	name, ext, found := strings.Cut(s, ".")
	if !found || ext == "" || strings.Contains(ext, "/") {
		return 0, "", false
	}
	col, ok = parseHex8(name, 'C')
	return col, strings.ToLower(ext), ok
}

// parseHex8 reads prefix + exactly 8 hex digits (either case) within MaxIndex.
func parseHex8(s string, prefix byte) (int, bool) {
	if len(s) != 9 || s[0] != prefix {
		return 0, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil || v > MaxIndex {
		return 0, false
	}
	return int(v), true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// ParseTilePath reads the path of an exploded tile inside a cache folder,
// "Lnn/Rxxxxxxxx/Cxxxxxxxx.ext" (decimal level, row and column in 8 hex digits, as TileKey
// writes them; a leading slash is allowed), and returns the tile and its extension (lower
// case).
func ParseTilePath(p string) (Tile, string, error) {
	bad := fmt.Errorf("%w: %q is not Lnn/Rxxxxxxxx/Cxxxxxxxx.ext", ErrInvalidTile, p)
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if len(parts) != 3 {
		return Tile{}, "", bad
	}
	level, ok1 := parseLevelName(parts[0])
	row, ok2 := parseRowName(parts[1])
	col, ext, ok3 := parseColName(parts[2])
	t := Tile{Level: level, Row: row, Col: col}
	if !ok1 || !ok2 || !ok3 || !t.Valid() {
		return Tile{}, "", bad
	}
	return t, ext, nil
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
	lv, ok1 := parseLevelName(level)
	row, err2 := strconv.ParseUint(rowHex, 16, 31)
	col, err3 := strconv.ParseUint(colHex, 16, 31)
	if !ok1 || err2 != nil || err3 != nil {
		return Bundle{}, bad
	}
	t := Tile{Level: lv, Row: int(row), Col: int(col)}
	if !t.Valid() {
		return Bundle{}, bad
	}
	b := Bundle{TopLeft: t}
	if BundleOf(t) != b {
		return Bundle{}, bad
	}
	return b, nil
}
