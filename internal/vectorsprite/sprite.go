// Package vectorsprite draws the sprite sheets of a vector tile style: the
// `resources/sprites/sprite{,@2x}.{json,png}` of an ArcGIS VectorTileServer, holding an image of
// every marker symbol the style's icon layers name (vectorstyle.Icons) and an index of where each
// is.
//
// Each icon is drawn by the raster renderer itself (mapdraw.Swatch: the marker in the middle of a
// transparent square, at 96 DPI times the pixel ratio), so a vector map's markers are the raster
// map's pixel for pixel. The square is the marker's size plus its outline plus a pixel of margin
// each side. Icons are packed in shelves, tallest first, into a sheet about as wide as it is tall;
// the @2x sheet has the same layout at twice the size. The index is MapLibre's: for each name its
// x, y, width, height (pixels of the sheet) and pixelRatio.
package vectorsprite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"sort"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/vectorstyle"
)

// Limits on a sheet.
const (
	// MaxIcons bounds the icons of one sheet.
	MaxIcons = 1024
	// MaxIconPixels bounds an icon's side at a pixel ratio of 1 (a marker of about 190 points).
	MaxIconPixels = 256
	// MaxPixelRatio is the largest pixel ratio drawn (sprite@2x).
	MaxPixelRatio = 2
)

// ErrTooLarge is returned for a sheet beyond the limits.
var ErrTooLarge = errors.New("vectorsprite: too many or too large icons")

// Entry is where an icon is in a sheet.
type Entry struct {
	X          int `json:"x"`
	Y          int `json:"y"`
	Width      int `json:"width"`
	Height     int `json:"height"`
	PixelRatio int `json:"pixelRatio"`
}

// Sheet is a sprite sheet: the PNG and its index (sprite.png and sprite.json).
type Sheet struct {
	PNG   []byte
	Index map[string]Entry
}

// JSON encodes the index as sprite.json.
func (s *Sheet) JSON() ([]byte, error) {
	b, err := json.Marshal(s.Index)
	if err != nil {
		return nil, fmt.Errorf("vectorsprite: %w", err)
	}
	return b, nil
}

// side is the side of an icon's square at a pixel ratio of 1.
func side(ic vectorstyle.Icon) int {
	s := ic.Symbol
	w := s.Size
	if s.Outline != nil {
		w += s.Outline.Width
	}
	w = w*4/3 + math.Hypot(s.XOffset, s.YOffset)*8/3
	return max(1, int(math.Ceil(w))) + 2
}

// Draw draws the sheet of icons at pixelRatio (1 or 2) with r.
func Draw(ctx context.Context, r *render.Renderer, icons []vectorstyle.Icon, pixelRatio int) (*Sheet, error) {
	if pixelRatio < 1 || pixelRatio > MaxPixelRatio {
		return nil, fmt.Errorf("vectorsprite: pixel ratio %d: want 1 to %d", pixelRatio, MaxPixelRatio)
	}
	if len(icons) > MaxIcons {
		return nil, fmt.Errorf("%w: %d icons, at most %d", ErrTooLarge, len(icons), MaxIcons)
	}
	sides := make([]int, len(icons))
	for i, ic := range icons {
		if sides[i] = side(ic); sides[i] > MaxIconPixels {
			return nil, fmt.Errorf("%w: icon %s is %d px, at most %d", ErrTooLarge, ic.Name, sides[i], MaxIconPixels)
		}
	}
	pos, w, h := pack(sides)
	k := pixelRatio
	sheet := image.NewNRGBA(image.Rect(0, 0, max(1, w*k), max(1, h*k)))
	index := make(map[string]Entry, len(icons))
	for i, ic := range icons {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("vectorsprite: %w", err)
		}
		n := sides[i] * k
		b, err := mapdraw.Swatch(ctx, r, ic.Symbol, feature.Point, n, n, 96*float64(k), render.PNG32, nil)
		if err != nil {
			return nil, fmt.Errorf("vectorsprite: drawing %s: %w", ic.Name, err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("vectorsprite: decoding %s: %w", ic.Name, err)
		}
		at := image.Pt(pos[i].X*k, pos[i].Y*k)
		draw.Draw(sheet, image.Rectangle{Min: at, Max: at.Add(image.Pt(n, n))}, img, img.Bounds().Min, draw.Src)
		index[ic.Name] = Entry{X: at.X, Y: at.Y, Width: n, Height: n, PixelRatio: k}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, sheet); err != nil {
		return nil, fmt.Errorf("vectorsprite: encoding: %w", err)
	}
	return &Sheet{PNG: buf.Bytes(), Index: index}, nil
}

// pack places squares of the given sides in shelves, tallest first, in a sheet about as wide as
// tall; it returns their corners and the sheet's size.
func pack(sides []int) (pos []image.Point, w, h int) {
	order := make([]int, len(sides))
	area, widest := 0, 0
	for i, s := range sides {
		order[i] = i
		area += s * s
		widest = max(widest, s)
	}
	sort.SliceStable(order, func(a, b int) bool { return sides[order[a]] > sides[order[b]] })
	width := max(widest, int(math.Ceil(math.Sqrt(float64(area)))))
	pos = make([]image.Point, len(sides))
	x, y, shelf := 0, 0, 0
	for _, i := range order {
		s := sides[i]
		if x+s > width {
			x, y, shelf = 0, y+shelf, 0
		}
		pos[i] = image.Pt(x, y)
		x += s
		shelf = max(shelf, s)
		w = max(w, x)
	}
	return pos, w, y + shelf
}
