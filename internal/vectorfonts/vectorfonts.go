package vectorfonts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/sync/singleflight"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"github.com/mapfarm/mapfarm/internal/render"
)

// The glyph geometry MapLibre expects of server glyphs.
const (
	// FontSize is the size glyphs are drawn at, in pixels.
	FontSize = 24
	// Buffer is the border of the distance field around a glyph's ink box, in pixels.
	Buffer = 3
	// Radius is the distance, in pixels, over which the field falls from 255 to 0.
	Radius = 8
	// Cutoff places the outline at 255 × (1 - Cutoff) (191.25: 192 once rounded).
	Cutoff = 0.25
)

// Limits on a request.
const (
	// MaxStackBytes bounds the length of a font stack.
	MaxStackBytes = 256
	// MaxStackFonts bounds the number of names in a font stack.
	MaxStackFonts = 8
	// MaxCodePoint is the last code point served (the Basic Multilingual Plane; MapLibre asks for no
	// more).
	MaxCodePoint = 0xffff
	// DefaultCacheBytes bounds the range cache when New is given 0: about a hundred ranges of
	// Latin, Greek or Cyrillic letters.
	DefaultCacheBytes = 8 << 20
)

// ErrBadRequest marks a font stack or range that cannot be served (an HTTP 400, not a 500).
var ErrBadRequest = errors.New("vectorfonts: bad request")

// StackName is the font stack name a style uses for DejaVu Sans in a style, the name its glyph
// ranges answer to: "DejaVu Sans Book", "DejaVu Sans Bold", "DejaVu Sans Oblique" or "DejaVu Sans
// Bold Oblique".
func StackName(bold, italic bool) string {
	switch {
	case bold && italic:
		return "DejaVu Sans Bold Oblique"
	case bold:
		return "DejaVu Sans Bold"
	case italic:
		return "DejaVu Sans Oblique"
	}
	return "DejaVu Sans Book"
}

// Glyphs makes and caches glyph ranges. It is safe for concurrent use; make one per process.
type Glyphs struct {
	fonts  *render.Fonts
	cache  *memcache.Cache[rangeKey, []byte]
	flight singleflight.Group
}

type rangeKey struct {
	bold, italic bool
	start        int
}

// New returns Glyphs drawing with fonts, caching at most cacheBytes of encoded glyphs
// (DefaultCacheBytes when 0; none when negative).
func New(fonts *render.Fonts, cacheBytes int64) *Glyphs {
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	return &Glyphs{fonts: fonts, cache: memcache.New[rangeKey, []byte]("glyph ranges", cacheBytes)}
}

// ParseRange reads a range as a URL names it, "0-255", "256-511", …: 256 code points starting
// at a multiple of 256, at most MaxCodePoint. It returns the first code point.
func ParseRange(s string) (int, error) {
	a, b, ok := strings.Cut(s, "-")
	start, err1 := strconv.Atoi(a)
	end, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || start < 0 || start%256 != 0 || end != start+255 || end > MaxCodePoint {
		return 0, fmt.Errorf("%w: range %q: want N-M with N a multiple of 256, M = N+255, M ≤ %d", ErrBadRequest, s, MaxCodePoint)
	}
	return start, nil
}

// ParseStack checks a comma-separated font stack and returns whether it draws bold and italic
// (from its first name).
func ParseStack(stack string) (bold, italic bool, err error) {
	if stack == "" || len(stack) > MaxStackBytes {
		return false, false, fmt.Errorf("%w: font stack must have 1 to %d bytes", ErrBadRequest, MaxStackBytes)
	}
	names := strings.Split(stack, ",")
	if len(names) > MaxStackFonts {
		return false, false, fmt.Errorf("%w: font stack names %d fonts, at most %d", ErrBadRequest, len(names), MaxStackFonts)
	}
	first := strings.ToLower(strings.TrimSpace(names[0]))
	if first == "" {
		return false, false, fmt.Errorf("%w: font stack %q starts with an empty name", ErrBadRequest, stack)
	}
	return strings.Contains(first, "bold"), strings.Contains(first, "italic") || strings.Contains(first, "oblique"), nil
}

// Range returns the glyphs protocol buffer of the 256 code points of rng ("0-255") in the font
// stack: the fontstack message names the stack and the range as asked. Errors wrapping
// ErrBadRequest are the caller's; others come from the font or a cancelled ctx.
func (g *Glyphs) Range(ctx context.Context, stack, rng string) ([]byte, error) {
	start, err := ParseRange(rng)
	if err != nil {
		return nil, err
	}
	bold, italic, err := ParseStack(stack)
	if err != nil {
		return nil, err
	}
	glyphs, err := g.glyphs(ctx, rangeKey{bold, italic, start})
	if err != nil {
		return nil, err
	}
	var fs []byte
	fs = protowire.AppendTag(fs, 1, protowire.BytesType)
	fs = protowire.AppendString(fs, stack)
	fs = protowire.AppendTag(fs, 2, protowire.BytesType)
	fs = protowire.AppendString(fs, rng)
	fs = append(fs, glyphs...)
	out := make([]byte, 0, len(fs)+8)
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	return protowire.AppendBytes(out, fs), nil
}

// glyphs returns the encoded glyph fields (fontstack field 3) of a range, from the cache or drawn
// once however many requests ask at the same time.
func (g *Glyphs) glyphs(ctx context.Context, k rangeKey) ([]byte, error) {
	if b, ok := g.cache.Get(k); ok {
		return b, nil
	}
	// The request that draws is the first to ask; when it goes away its drawing stops, and the
	// others that waited for it draw again (a few times at most) rather than fail.
	var err error
	for range 3 {
		var v any
		v, err, _ = g.flight.Do(fmt.Sprint(k), func() (any, error) {
			b, err := g.draw(ctx, k)
			if err != nil {
				return nil, err
			}
			g.cache.Add(k, b, int64(len(b))+64)
			return b, nil
		})
		if err == nil {
			return v.([]byte), nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	return nil, err
}

// draw draws every glyph of a range the font has.
func (g *Glyphs) draw(ctx context.Context, k rangeKey) ([]byte, error) {
	f := g.fonts.SFNT(k.bold, k.italic)
	var buf sfnt.Buffer
	d := newDrawer(f)
	var out []byte
	for r := k.start; r < k.start+256; r++ {
		if r%32 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("vectorfonts: range %d: %w", k.start, err)
			}
		}
		gl, ok, err := d.glyph(&buf, rune(r))
		if err != nil {
			return nil, fmt.Errorf("vectorfonts: glyph U+%04X: %w", r, err)
		}
		if !ok {
			continue
		}
		out = protowire.AppendTag(out, 3, protowire.BytesType)
		out = protowire.AppendBytes(out, gl.encode())
	}
	return out, nil
}
