package render

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"sync"

	"github.com/mapfarm/mapfarm/internal/memcache"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// The embedded fonts: DejaVu Sans in its four styles (see fonts/LICENSE-DejaVu.txt).
var (
	//go:embed fonts/DejaVuSans.ttf
	dejaVuSans []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	dejaVuSansBold []byte
	//go:embed fonts/DejaVuSans-Oblique.ttf
	dejaVuSansOblique []byte
	//go:embed fonts/DejaVuSans-BoldOblique.ttf
	dejaVuSansBoldOblique []byte
)

// DefaultFont is the family every font name is drawn with.
const DefaultFont = "DejaVu Sans"

// subpixels is the number of horizontal glyph positions cached per pixel.
const subpixels = 4

// Font variants, indexes of Fonts.fonts: bit 0 is bold, bit 1 italic (oblique).
const (
	variantBold   = 1
	variantItalic = 2
)

// Fonts holds parsed fonts and caches of their faces, glyph masks and glyph outlines. It is safe for
// concurrent use; one Fonts should be shared by all surfaces of a process so the caches stay warm.
// The caches are bounded by bytes (FontCacheBytes in all, see Caches), least recently used first
// out, so label texts in scripts without end or sizes without end cannot grow a process.
//
// The only family is DejaVu Sans, embedded in its regular, bold, oblique and bold oblique styles. Any
// font name draws DejaVu Sans: a name that is not DejaVu Sans falls back to it, keeping the
// requested weight and slant; a name containing "Bold", "Italic" or "Oblique" (any case) asks for
// that style too, as "Arial Bold" does.
type Fonts struct {
	fonts [4]*opentype.Font // by variant

	faces    *memcache.Cache[faceKey, *fontFace]
	glyphs   *memcache.Cache[glyphKey, *glyphMask]
	outlines *memcache.Cache[outlineKey, *glyphOutline]

	mu  sync.Mutex // guards buf
	buf sfnt.Buffer
}

// FontCacheBytes bounds the memory of a Fonts' caches: an eighth for faces, half for glyph masks,
// the rest for glyph outlines.
const FontCacheBytes = 32 << 20

// Caches returns the font caches, for metrics.
func (fs *Fonts) Caches() []memcache.Statser {
	return []memcache.Statser{fs.faces, fs.glyphs, fs.outlines}
}

// faceBytes is what one face costs in the face cache: the x/image face and its rasterizer.
const faceBytes = 16 << 10

type faceKey struct {
	size    int32 // 1/64 pixel
	variant uint8
}

// NewFonts parses the embedded fonts.
func NewFonts() (*Fonts, error) {
	fs := &Fonts{
		faces:    memcache.New[faceKey, *fontFace]("font faces", FontCacheBytes/8),
		glyphs:   memcache.New[glyphKey, *glyphMask]("glyph masks", FontCacheBytes/2),
		outlines: memcache.New[outlineKey, *glyphOutline]("glyph outlines", FontCacheBytes*3/8),
	}
	for i, b := range [4][]byte{dejaVuSans, dejaVuSansBold, dejaVuSansOblique, dejaVuSansBoldOblique} {
		f, err := opentype.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("render: parsing embedded font %d: %w", i, err)
		}
		fs.fonts[i] = f
	}
	return fs, nil
}

// resolveStyle returns whether text in font name and style st is drawn bold and italic.
func resolveStyle(name string, st FontStyle) (bold, italic bool) {
	bold, italic = st.Bold, st.Italic
	if name != "" && !(bold && italic) {
		l := strings.ToLower(name)
		bold = bold || strings.Contains(l, "bold")
		italic = italic || strings.Contains(l, "italic") || strings.Contains(l, "oblique")
	}
	return bold, italic
}

// variantOf returns the index of the embedded font drawing name in st.
func variantOf(name string, st FontStyle) int {
	bold, italic := resolveStyle(name, st)
	v := 0
	if bold {
		v |= variantBold
	}
	if italic {
		v |= variantItalic
	}
	return v
}

// face returns the cached face for t's font, style and size (pixels, from 1 to MaxTextPixels).
func (fs *Fonts) face(t TextStyle) *fontFace {
	size := t.Size
	if !(size >= 1) {
		size = 1
	}
	size = min(size, MaxTextPixels)
	k := faceKey{size: int32(math.Round(size * 64)), variant: uint8(variantOf(t.Font, t.FontStyle))}
	if f, ok := fs.faces.Get(k); ok {
		return f
	}
	ff, err := opentype.NewFace(fs.fonts[k.variant], &opentype.FaceOptions{Size: float64(k.size) / 64, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		// NewFace fails only for invalid options, which k rules out.
		panic(fmt.Sprintf("render: opentype.NewFace: %v", err))
	}
	f := &fontFace{key: k, face: ff, glyphs: fs.glyphs}
	fs.faces.Add(k, f, faceBytes)
	return f
}

func fixedToFloat(v fixed.Int26_6) float64 { return float64(v) / 64 }

// fontFace is one font at one size with its glyph cache, guarded by mu.
// Text is laid out with glyph advances only: the legacy kern table of DejaVu Sans, the only pairs
// x/image/font reads, pulls pairs such as "r." into each other, and MapServer does not kern them.
type fontFace struct {
	key    faceKey
	mu     sync.Mutex // guards face, which draws one glyph at a time
	face   font.Face
	glyphs *memcache.Cache[glyphKey, *glyphMask] // the Fonts' glyph cache, shared by its faces
}

type glyphKey struct {
	face faceKey
	r    rune
	q    int8 // subpixel position, 0..subpixels-1
}

// glyphMask is a cached coverage mask: w×h bytes whose top left is at (dx, dy) from the pen position.
type glyphMask struct {
	mask   []byte
	w, h   int
	dx, dy int
	adv    fixed.Int26_6
}

// glyphLocked returns the glyph for r at subpixel offset q; f.mu must be held.
func (f *fontFace) glyphLocked(r rune, q int) *glyphMask {
	k := glyphKey{f.key, r, int8(q)}
	if g, ok := f.glyphs.Get(k); ok {
		return g
	}
	g := &glyphMask{}
	dot := fixed.Point26_6{X: fixed.Int26_6(q * 64 / subpixels)}
	dr, mask, mp, adv, ok := f.face.Glyph(dot, r)
	if !ok {
		dr, mask, mp, adv, ok = f.face.Glyph(dot, '?')
	}
	g.adv = adv
	if ok && !dr.Empty() {
		g.w, g.h, g.dx, g.dy = dr.Dx(), dr.Dy(), dr.Min.X, dr.Min.Y
		g.mask = make([]byte, g.w*g.h)
		if a, isAlpha := mask.(*image.Alpha); isAlpha {
			for y := 0; y < g.h; y++ {
				off := a.PixOffset(mp.X, mp.Y+y)
				copy(g.mask[y*g.w:(y+1)*g.w], a.Pix[off:off+g.w])
			}
		} else {
			for y := 0; y < g.h; y++ {
				for x := 0; x < g.w; x++ {
					_, _, _, al := mask.At(mp.X+x, mp.Y+y).RGBA()
					g.mask[y*g.w+x] = byte(al >> 8)
				}
			}
		}
	}
	f.glyphs.Add(k, g, int64(len(g.mask))+64)
	return g
}

// measure returns the advance width of s and the extent of its glyphs' ink above and below the
// baseline, in pixels.
func (f *fontFace) measure(s string) (width, ascent, descent float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var w fixed.Int26_6
	top, bottom := 0, 0
	for _, r := range s {
		g := f.glyphLocked(r, 0)
		w += g.adv
		if g.h > 0 {
			top, bottom = min(top, g.dy), max(bottom, g.dy+g.h)
		}
	}
	return fixedToFloat(w), float64(-top), float64(bottom)
}

// advances appends the advance width of each character of s, in pixels, as measure adds them up.
func (f *fontFace) advances(dst []float64, s string) []float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range s {
		dst = append(dst, fixedToFloat(f.glyphLocked(r, 0).adv))
	}
	return dst
}

// layout appends the glyphs of s with its baseline starting at (x, y) and running angle degrees
// anticlockwise, spaced by their advances as drawText spaces them.
func (f *fontFace) layout(dst []Glyph, s string, x, y, angle float64) []Glyph {
	sin, cos := sincosDeg(angle)
	f.mu.Lock()
	defer f.mu.Unlock()
	var pen fixed.Int26_6
	for _, r := range s {
		d := fixedToFloat(pen)
		dst = append(dst, Glyph{Rune: r, X: x + d*cos, Y: y - d*sin, Angle: angle})
		pen += f.glyphLocked(r, 0).adv
	}
	return dst
}

// placedGlyph is a glyph at an integer pixel position (of its mask's top left).
type placedGlyph struct {
	g    *glyphMask
	x, y int
}

// textScratch holds buffers reused between labels.
type textScratch struct {
	placed []placedGlyph
	mask   []byte
	halo   []byte
	spans  []int
	// glyph runs (glyphs.go)
	run   []Glyph
	outs  []*glyphOutline
	ras   vector.Rasterizer
	alpha image.Alpha
}

// drawText draws s with its baseline starting at (x, y) into dst: the halo first (the text's coverage
// mask dilated by t.HaloWidth, drawn once), then the text.
func (f *fontFace) drawText(dst *image.RGBA, s string, x, y float64, t TextStyle, sc *textScratch) {
	if strings.TrimSpace(s) == "" {
		return
	}
	// Lay the glyphs out at subpixel positions.
	sc.placed = sc.placed[:0]
	pen := fixed.Int26_6(math.Round(x * 64))
	by := int(math.Round(y))
	minX, minY, maxX, maxY := math.MaxInt32, math.MaxInt32, math.MinInt32, math.MinInt32
	f.mu.Lock()
	for _, r := range s {
		ix := pen.Floor()
		q := int(pen-fixed.I(ix)) * subpixels / 64
		g := f.glyphLocked(r, q)
		if g.w > 0 {
			px, py := ix+g.dx, by+g.dy
			sc.placed = append(sc.placed, placedGlyph{g, px, py})
			minX, minY = min(minX, px), min(minY, py)
			maxX, maxY = max(maxX, px+g.w), max(maxY, py+g.h)
		}
		pen += g.adv
	}
	f.mu.Unlock()
	if len(sc.placed) == 0 {
		return
	}
	hw := 0.0
	drawHalo := t.Halo.A > 0 && t.HaloWidth > 0
	if drawHalo {
		hw = t.HaloWidth
	}
	pad := int(math.Ceil(hw))
	minX, minY, maxX, maxY = minX-pad, minY-pad, maxX+pad, maxY+pad
	w, h := maxX-minX, maxY-minY
	n := w * h
	sc.mask = growBytes(sc.mask, n)
	mask := sc.mask
	for _, p := range sc.placed {
		g := p.g
		for gy := 0; gy < g.h; gy++ {
			row := mask[(p.y-minY+gy)*w+(p.x-minX):]
			src := g.mask[gy*g.w : (gy+1)*g.w]
			for gx, a := range src {
				if s := int(row[gx]) + int(a); s > 255 {
					row[gx] = 255
				} else {
					row[gx] = byte(s)
				}
			}
		}
	}
	sc.compositeText(dst, mask, image.Rect(minX, minY, maxX, maxY), t)
}

// compositeText blends the text coverage mask (covering mr of dst, mr.Dx() bytes a row) onto dst in
// t.Color, over its halo (the mask dilated by t.HaloWidth, when t has a halo), clipped to dst.
func (sc *textScratch) compositeText(dst *image.RGBA, mask []byte, mr image.Rectangle, t TextStyle) {
	w, h := mr.Dx(), mr.Dy()
	var halo []byte
	if t.Halo.A > 0 && t.HaloWidth > 0 {
		sc.halo = growBytes(sc.halo, w*h)
		halo = sc.halo
		sc.spans = dilate(halo, mask, w, h, t.HaloWidth, sc.spans)
	}
	r := mr.Intersect(dst.Bounds())
	if r.Empty() {
		return
	}
	hc, tc := premul(t.Halo), premul(t.Color)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		mrow := (py - mr.Min.Y) * w
		off := dst.PixOffset(r.Min.X, py)
		for px := r.Min.X; px < r.Max.X; px, off = px+1, off+4 {
			i := mrow + px - mr.Min.X
			// Skip empty runs eight pixels at a time (rotated and curved labels are mostly empty).
			for px+8 <= r.Max.X && binary.LittleEndian.Uint64(mask[i:]) == 0 && (halo == nil || binary.LittleEndian.Uint64(halo[i:]) == 0) {
				px, off, i = px+8, off+32, i+8
			}
			if px >= r.Max.X {
				break
			}
			if halo != nil {
				if a := halo[i]; a != 0 {
					blendPix(dst.Pix[off:off+4:off+4], hc, uint32(a))
				}
			}
			if a := mask[i]; a != 0 {
				blendPix(dst.Pix[off:off+4:off+4], tc, uint32(a))
			}
		}
	}
}

// growBytes returns b resized to n zeroed bytes.
func growBytes(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// blendPix composites colour c (premultiplied, 8 bits, from premul) at coverage cov (0..255) over
// one premultiplied RGBA pixel.
func blendPix(p []byte, c [4]uint32, cov uint32) {
	blendSpread(p, spreadPremul(c), c[3], cov)
}

// spreadPremul returns a premultiplied colour from premul with its channels in the 16-bit lanes of
// a uint64 (red lowest), for blendSpread.
func spreadPremul(c [4]uint32) uint64 {
	return uint64(c[0]) | uint64(c[1])<<16 | uint64(c[2])<<32 | uint64(c[3])<<48
}

// Lanes of blendSpread: the low byte of each 16-bit lane, and 128 in each lane (rounding).
const (
	laneLow  = 0x00FF00FF00FF00FF
	laneHalf = 0x0080008000800080
)

// blendSpread is blendPix with the colour spread by spreadPremul and its alpha a: the four channels
// are blended at once in the 16-bit lanes of a uint64, each exactly as div255(c·cov + p·(255−a'))
// with a' = div255(a·cov). No lane overflows: a premultiplied channel is at most its alpha, so each
// sum is at most 255·255 + 127, and 65,280 with the rounding (65,535 after adding its high byte).
func blendSpread(p []byte, c uint64, a, cov uint32) {
	ia := uint64(255 - div255(a*cov))
	d := uint64(binary.LittleEndian.Uint32(p))
	d = (d | d<<16) & 0x0000FFFF0000FFFF
	d = (d | d<<8) & laneLow
	v := c*uint64(cov) + d*ia + laneHalf
	v = (v + (v>>8)&laneLow) >> 8 & laneLow
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	binary.LittleEndian.PutUint32(p, uint32(v|v>>16))
}

// div255 is x/255 rounded, for x up to 255*255.
func div255(x uint32) uint32 {
	x += 128
	return (x + x>>8) >> 8
}

// premul returns c premultiplied, 8 bits per channel.
func premul(c color.NRGBA) [4]uint32 {
	a := uint32(c.A)
	return [4]uint32{div255(uint32(c.R) * a), div255(uint32(c.G) * a), div255(uint32(c.B) * a), a}
}

// dilate writes into dst (zeroed) the mask src (w×h) grown by radius r pixels: each output is the
// maximum over nearby inputs weighted by max(0, min(1, r+1-distance)), which gives a smooth halo of
// about r pixels. Only the columns that can be reached from each row's ink are computed (rotated
// and curved labels leave most of their box empty); spans is scratch space, returned for reuse.
func dilate(dst, src []byte, w, h int, r float64, spans []int) []int {
	ri := int(math.Ceil(r))
	type tap struct {
		dx, dy int
		wt     uint32 // 0..256
	}
	var taps [64]tap
	nt := 0
	for dy := -ri; dy <= ri; dy++ {
		for dx := -ri; dx <= ri; dx++ {
			d := math.Hypot(float64(dx), float64(dy))
			wt := min(1, r+1-d)
			if wt <= 0 || nt == len(taps) {
				continue
			}
			taps[nt] = tap{dx, dy, uint32(wt*256 + 0.5)}
			nt++
		}
	}
	// The ink of each row: columns [spans[2y], spans[2y+1]), empty when equal.
	spans = spans[:0]
	for y := 0; y < h; y++ {
		row := src[y*w : (y+1)*w]
		x0, x1 := 0, w
		for x0 < w && row[x0] == 0 {
			x0++
		}
		for x1 > x0 && row[x1-1] == 0 {
			x1--
		}
		spans = append(spans, x0, x1)
	}
	for y := 0; y < h; y++ {
		x0, x1 := w, 0
		for sy := max(0, y-ri); sy <= min(h-1, y+ri); sy++ {
			if a, b := spans[2*sy], spans[2*sy+1]; a < b {
				x0, x1 = min(x0, a-ri), max(x1, b+ri)
			}
		}
		for x := max(0, x0); x < min(w, x1); x++ {
			var m uint32
			for _, t := range taps[:nt] {
				sx, sy := x+t.dx, y+t.dy
				if sx < 0 || sy < 0 || sx >= w || sy >= h {
					continue
				}
				if v := uint32(src[sy*w+sx]) * t.wt >> 8; v > m {
					m = v
				}
			}
			dst[y*w+x] = byte(min(m, 255))
		}
	}
	return spans
}
