package render

import (
	"cmp"
	"image"
	"image/color"
	"image/draw"
	"slices"
)

// quantBits is the precision per channel of the colour histogram used to build palettes.
const quantBits = 5

// quantize converts img to a palette image of at most 256 colours, without dithering, which keeps
// the flat areas of a map flat. Colours are counted in a histogram of 15-bit buckets (each holding
// the mean of its exact colours, so a map's flat colours come out exact); the palette is cut from it
// by median cut, weighted by pixel counts; every bucket then maps to its nearest palette entry, and
// pixels map through that table. Pixels with alpha under 128 become one fully transparent entry.
func quantize(img image.Image) *image.Paletted {
	b := img.Bounds()
	rgba, ok := img.(*image.RGBA)
	if !ok {
		rgba = image.NewRGBA(b)
		draw.Draw(rgba, b, img, b.Min, draw.Src)
	}
	const n = 1 << (3 * quantBits)
	const transparent = n // key of transparent pixels
	type bucket struct{ r, g, bl, count uint64 }
	hist := make([]bucket, n+1)
	keys := make([]uint16, b.Dx()*b.Dy())
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := rgba.Pix[rgba.PixOffset(b.Min.X, y):][: 4*b.Dx() : 4*b.Dx()]
		for x := 0; x+3 < len(row); x += 4 {
			r, g, bl, a := row[x], row[x+1], row[x+2], row[x+3]
			k := uint32(transparent)
			if a >= 128 {
				if a != 255 {
					r = uint8(min(255, uint32(r)*255/uint32(a)))
					g = uint8(min(255, uint32(g)*255/uint32(a)))
					bl = uint8(min(255, uint32(bl)*255/uint32(a)))
				}
				k = uint32(r>>(8-quantBits))<<(2*quantBits) | uint32(g>>(8-quantBits))<<quantBits | uint32(bl>>(8-quantBits))
			}
			h := &hist[k]
			h.r += uint64(r)
			h.g += uint64(g)
			h.bl += uint64(bl)
			h.count++
			keys[i] = uint16(k)
			i++
		}
	}

	type entry struct {
		c     [3]uint8
		count uint64
		key   uint16
	}
	var colors []entry
	for k := 0; k < n; k++ {
		if h := hist[k]; h.count > 0 {
			colors = append(colors, entry{[3]uint8{uint8(h.r / h.count), uint8(h.g / h.count), uint8(h.bl / h.count)}, h.count, uint16(k)})
		}
	}
	var pal color.Palette
	if hist[transparent].count > 0 {
		pal = append(pal, color.NRGBA{})
	}
	maxColors := 256 - len(pal)
	var boxes [][]entry
	if len(colors) > 0 {
		boxes = append(boxes, colors)
	}
	for len(boxes) < maxColors {
		// Split the box with the widest channel range at its weighted median.
		bi, bc, br := -1, 0, 0
		for i, bx := range boxes {
			if len(bx) < 2 {
				continue
			}
			for ch := 0; ch < 3; ch++ {
				lo, hi := uint8(255), uint8(0)
				for _, e := range bx {
					lo, hi = min(lo, e.c[ch]), max(hi, e.c[ch])
				}
				if r := int(hi) - int(lo); r > br {
					bi, bc, br = i, ch, r
				}
			}
		}
		if bi < 0 {
			break
		}
		bx := boxes[bi]
		slices.SortFunc(bx, func(a, b entry) int { return cmp.Compare(a.c[bc], b.c[bc]) })
		var total, acc uint64
		for _, e := range bx {
			total += e.count
		}
		cut := len(bx) / 2
		for i, e := range bx {
			acc += e.count
			if 2*acc >= total {
				cut = max(1, min(i+1, len(bx)-1))
				break
			}
		}
		boxes[bi] = bx[:cut]
		boxes = append(boxes, bx[cut:])
	}
	for _, bx := range boxes {
		var r, g, bl, count uint64
		for _, e := range bx {
			r += uint64(e.c[0]) * e.count
			g += uint64(e.c[1]) * e.count
			bl += uint64(e.c[2]) * e.count
			count += e.count
		}
		pal = append(pal, color.NRGBA{uint8(r / count), uint8(g / count), uint8(bl / count), 255})
	}
	if len(pal) == 0 {
		pal = color.Palette{color.NRGBA{}}
	}

	// Map each used bucket to its nearest opaque palette entry.
	lut := make([]uint8, n+1)
	first := 0
	if hist[transparent].count > 0 {
		first = 1 // entry 0 is transparent
	}
	for _, e := range colors {
		best, bestD := first, int(^uint(0)>>1)
		for j := first; j < len(pal); j++ {
			p := pal[j].(color.NRGBA)
			dr, dg, db := int(p.R)-int(e.c[0]), int(p.G)-int(e.c[1]), int(p.B)-int(e.c[2])
			if d := dr*dr + dg*dg + db*db; d < bestD {
				best, bestD = j, d
			}
		}
		lut[e.key] = uint8(best)
	}
	out := image.NewPaletted(b, pal)
	i = 0
	for y := 0; y < b.Dy(); y++ {
		row := out.Pix[y*out.Stride : y*out.Stride+b.Dx()]
		for x := range row {
			row[x] = lut[keys[i]]
			i++
		}
	}
	return out
}
