package render

import (
	_ "embed"
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// dejaVuSans is DejaVu Sans (see fonts/LICENSE-DejaVu.txt), the default and only embedded font.
//
//go:embed fonts/DejaVuSans.ttf
var dejaVuSans []byte

// DefaultFont is the family used for an empty or unknown font name.
const DefaultFont = "DejaVu Sans"

// subpixels is the number of horizontal glyph positions cached per pixel.
const subpixels = 4

// Fonts holds parsed fonts and caches of their faces and glyph masks. It is safe for concurrent use;
// one Fonts should be shared by all surfaces of a process so the caches stay warm. The caches grow
// with the distinct (font, size, character) triples drawn, which stays small for map labels.
type Fonts struct {
	def *opentype.Font

	mu    sync.Mutex
	faces map[faceKey]*fontFace
}

type faceKey struct {
	size int32 // 1/64 pixel
}

// NewFonts parses the embedded fonts.
func NewFonts() (*Fonts, error) {
	f, err := opentype.Parse(dejaVuSans)
	if err != nil {
		return nil, fmt.Errorf("render: parsing embedded font: %w", err)
	}
	return &Fonts{def: f, faces: make(map[faceKey]*fontFace)}, nil
}

// face returns the cached face for name at size pixels. Every name is DejaVu Sans for now.
func (fs *Fonts) face(name string, size float64) *fontFace {
	_ = name
	k := faceKey{size: int32(math.Round(size * 64))}
	if k.size < 64 {
		k.size = 64
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.faces[k]; f != nil {
		return f
	}
	ff, err := opentype.NewFace(fs.def, &opentype.FaceOptions{Size: float64(k.size) / 64, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		// NewFace fails only for invalid options, which k rules out.
		panic(fmt.Sprintf("render: opentype.NewFace: %v", err))
	}
	f := &fontFace{face: ff, glyphs: make(map[glyphKey]*glyph)}
	fs.faces[k] = f
	return f
}

func fixedToFloat(v fixed.Int26_6) float64 { return float64(v) / 64 }

// fontFace is one font at one size with its glyph cache, guarded by mu.
// Text is laid out with glyph advances only: the legacy kern table of DejaVu Sans, the only pairs
// x/image/font reads, pulls pairs such as "r." into each other, and MapServer does not kern them.
type fontFace struct {
	mu     sync.Mutex
	face   font.Face
	glyphs map[glyphKey]*glyph
}

type glyphKey struct {
	r rune
	q int8 // subpixel position, 0..subpixels-1
}

// glyph is a cached coverage mask: w×h bytes whose top left is at (dx, dy) from the pen position.
type glyph struct {
	mask   []byte
	w, h   int
	dx, dy int
	adv    fixed.Int26_6
}

// glyphLocked returns the glyph for r at subpixel offset q; f.mu must be held.
func (f *fontFace) glyphLocked(r rune, q int) *glyph {
	k := glyphKey{r, int8(q)}
	if g := f.glyphs[k]; g != nil {
		return g
	}
	g := &glyph{}
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
	f.glyphs[k] = g
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

// placedGlyph is a glyph at an integer pixel position (of its mask's top left).
type placedGlyph struct {
	g    *glyph
	x, y int
}

// textScratch holds buffers reused between labels.
type textScratch struct {
	placed []placedGlyph
	mask   []byte
	halo   []byte
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
	var halo []byte
	if drawHalo {
		sc.halo = growBytes(sc.halo, n)
		halo = sc.halo
		dilate(halo, mask, w, h, hw)
	}
	// Composite onto dst, clipped to its bounds.
	r := image.Rect(minX, minY, maxX, maxY).Intersect(dst.Bounds())
	if r.Empty() {
		return
	}
	hc, tc := premul(t.Halo), premul(t.Color)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		mrow := (py - minY) * w
		off := dst.PixOffset(r.Min.X, py)
		for px := r.Min.X; px < r.Max.X; px, off = px+1, off+4 {
			i := mrow + px - minX
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
	a := div255(c[3] * cov)
	ia := 255 - a
	p[0] = byte(div255(c[0]*cov + uint32(p[0])*ia))
	p[1] = byte(div255(c[1]*cov + uint32(p[1])*ia))
	p[2] = byte(div255(c[2]*cov + uint32(p[2])*ia))
	p[3] = byte(div255(c[3]*cov + uint32(p[3])*ia))
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

// dilate writes into dst the mask src (w×h) grown by radius r pixels: each output is the maximum over
// nearby inputs weighted by max(0, min(1, r+1-distance)), which gives a smooth halo of about r pixels.
func dilate(dst, src []byte, w, h int, r float64) {
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
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
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
}
