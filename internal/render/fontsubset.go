package render

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"unicode/utf16"
)

// This file cuts the embedded TrueType fonts down to the glyphs a document uses, for the fonts
// embedded in PDF (FontFile2 of a CIDFontType2) and SVG (an @font-face data URI).
//
// Why our own: the pure-Go subsetters we looked at are GPL (seehuhn.de/go/sfnt), not on the Go
// module proxy (speedata/gootf), or unexported inside a whole PDF library with its own document
// model (go-pdf/fpdf, signintech/gopdf); golang.org/x/image/font/sfnt reads fonts but does not
// write them. A TrueType subset is a well-specified, small job: copy the used glyphs' glyf data
// (and the components of composite glyphs), renumber them, and rebuild loca, hmtx, cmap and the
// counts in head, hhea and maxp. Hinting tables (cvt, fpgm, prep) are copied whole, so the glyph
// programs still find their functions.

// ttfFont is a parsed TrueType font file: its tables by tag and the numbers subsetting needs.
type ttfFont struct {
	tables      map[string][]byte
	unitsPerEm  int
	numGlyphs   int
	numHMetrics int
	longLoca    bool
}

var errBadFont = errors.New("render: malformed TrueType font")

// parseTTF reads the table directory of a TrueType font file.
func parseTTF(b []byte) (*ttfFont, error) {
	if len(b) < 12 || binary.BigEndian.Uint32(b) != 0x00010000 {
		return nil, fmt.Errorf("%w: not a TrueType (glyf) font", errBadFont)
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	if len(b) < 12+16*n {
		return nil, fmt.Errorf("%w: truncated table directory", errBadFont)
	}
	f := &ttfFont{tables: make(map[string][]byte, n)}
	for i := 0; i < n; i++ {
		rec := b[12+16*i:]
		off, l := int(binary.BigEndian.Uint32(rec[8:])), int(binary.BigEndian.Uint32(rec[12:]))
		if off < 0 || l < 0 || off+l > len(b) {
			return nil, fmt.Errorf("%w: table %q outside the file", errBadFont, rec[:4])
		}
		f.tables[string(rec[:4])] = b[off : off+l]
	}
	for _, tag := range []string{"head", "hhea", "maxp", "hmtx", "loca", "glyf"} {
		if f.tables[tag] == nil {
			return nil, fmt.Errorf("%w: no %s table", errBadFont, tag)
		}
	}
	head, hhea, maxp := f.tables["head"], f.tables["hhea"], f.tables["maxp"]
	if len(head) < 54 || len(hhea) < 36 || len(maxp) < 6 {
		return nil, fmt.Errorf("%w: short head, hhea or maxp", errBadFont)
	}
	f.unitsPerEm = int(binary.BigEndian.Uint16(head[18:]))
	f.longLoca = binary.BigEndian.Uint16(head[50:]) == 1
	f.numGlyphs = int(binary.BigEndian.Uint16(maxp[4:]))
	f.numHMetrics = int(binary.BigEndian.Uint16(hhea[34:]))
	locaSize := 2
	if f.longLoca {
		locaSize = 4
	}
	if f.unitsPerEm == 0 || f.numHMetrics == 0 || f.numHMetrics > f.numGlyphs ||
		len(f.tables["hmtx"]) < 4*f.numHMetrics+2*(f.numGlyphs-f.numHMetrics) ||
		len(f.tables["loca"]) < locaSize*(f.numGlyphs+1) {
		return nil, fmt.Errorf("%w: inconsistent glyph counts", errBadFont)
	}
	return f, nil
}

// advance returns the advance width of glyph g in font units.
func (f *ttfFont) advance(g uint16) int {
	i := min(int(g), f.numHMetrics-1)
	return int(binary.BigEndian.Uint16(f.tables["hmtx"][4*i:]))
}

// lsb returns the left side bearing of glyph g in font units.
func (f *ttfFont) lsb(g uint16) int16 {
	hmtx := f.tables["hmtx"]
	if int(g) < f.numHMetrics {
		return int16(binary.BigEndian.Uint16(hmtx[4*int(g)+2:]))
	}
	return int16(binary.BigEndian.Uint16(hmtx[4*f.numHMetrics+2*(int(g)-f.numHMetrics):]))
}

// glyph returns the glyf data of glyph g (empty for a glyph without outline).
func (f *ttfFont) glyph(g uint16) []byte {
	if int(g) >= f.numGlyphs {
		return nil
	}
	loca, glyf := f.tables["loca"], f.tables["glyf"]
	var a, b int
	if f.longLoca {
		a, b = int(binary.BigEndian.Uint32(loca[4*int(g):])), int(binary.BigEndian.Uint32(loca[4*int(g)+4:]))
	} else {
		a, b = 2*int(binary.BigEndian.Uint16(loca[2*int(g):])), 2*int(binary.BigEndian.Uint16(loca[2*int(g)+2:]))
	}
	if a >= b || b > len(glyf) {
		return nil
	}
	return glyf[a:b]
}

// Composite glyph flags (the glyf table's component records).
const (
	compArgsAreWords = 0x0001
	compHaveScale    = 0x0008
	compMore         = 0x0020
	compHaveXYScale  = 0x0040
	compHave2x2      = 0x0080
)

// components calls fn with the offset of each component's glyph index in the composite glyph d.
func components(d []byte, fn func(off int)) {
	if len(d) < 10 || int16(binary.BigEndian.Uint16(d)) >= 0 {
		return
	}
	for p := 10; p+4 <= len(d); {
		flags := binary.BigEndian.Uint16(d[p:])
		fn(p + 2)
		p += 4
		if flags&compArgsAreWords != 0 {
			p += 4
		} else {
			p += 2
		}
		switch {
		case flags&compHaveScale != 0:
			p += 2
		case flags&compHaveXYScale != 0:
			p += 4
		case flags&compHave2x2 != 0:
			p += 8
		}
		if flags&compMore == 0 {
			return
		}
	}
}

// fontNames are the name-table strings of a subset.
type fontNames struct {
	copyright, family, subfamily, full, postScript string
}

// subset returns a TrueType font file holding glyphs (original glyph ids, glyphs[0] being .notdef),
// numbered in that order (an id may appear twice), followed by the components of composite glyphs.
// cmap maps characters to the new ids, for viewers that look characters up (SVG); PDF addresses
// glyphs by id and does not need it.
func (f *ttfFont) subset(glyphs []uint16, cmap map[rune]uint16, names fontNames) []byte {
	newID := make(map[uint16]uint16, len(glyphs))
	order := slices.Clone(glyphs)
	for i, g := range order {
		if _, ok := newID[g]; !ok {
			newID[g] = uint16(i)
		}
	}
	var glyf []byte
	loca := make([]byte, 0, 4*(len(order)+1))
	hmtx := make([]byte, 0, 4*len(order))
	for i := 0; i < len(order); i++ { // order grows with components
		g := order[i]
		d := f.glyph(g)
		if len(d) >= 10 && int16(binary.BigEndian.Uint16(d)) < 0 {
			d = slices.Clone(d)
			components(d, func(off int) {
				c := binary.BigEndian.Uint16(d[off:])
				n, ok := newID[c]
				if !ok && len(order) < 0xffff {
					n = uint16(len(order))
					newID[c] = n
					order = append(order, c)
				}
				binary.BigEndian.PutUint16(d[off:], n)
			})
		}
		loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))
		glyf = append(glyf, d...)
		for len(glyf)%4 != 0 {
			glyf = append(glyf, 0)
		}
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(f.advance(g)))
		hmtx = binary.BigEndian.AppendUint16(hmtx, uint16(f.lsb(g)))
	}
	loca = binary.BigEndian.AppendUint32(loca, uint32(len(glyf)))
	n := len(order)

	head := slices.Clone(f.tables["head"])
	binary.BigEndian.PutUint32(head[8:], 0) // checkSumAdjustment, set below
	binary.BigEndian.PutUint16(head[50:], 1)
	hhea := slices.Clone(f.tables["hhea"])
	binary.BigEndian.PutUint16(hhea[34:], uint16(n))
	maxp := slices.Clone(f.tables["maxp"])
	binary.BigEndian.PutUint16(maxp[4:], uint16(n))

	tables := map[string][]byte{
		"head": head, "hhea": hhea, "maxp": maxp, "hmtx": hmtx, "loca": loca, "glyf": glyf,
		"cmap": cmapTable(cmap), "name": nameTable(names),
	}
	if p := f.tables["post"]; len(p) >= 32 {
		post := slices.Clone(p[:32])
		binary.BigEndian.PutUint32(post, 0x00030000) // no glyph names
		tables["post"] = post
	}
	for _, tag := range []string{"OS/2", "cvt ", "fpgm", "prep", "gasp"} {
		if t := f.tables[tag]; t != nil {
			tables[tag] = t
		}
	}
	out := writeSFNT(tables)
	adj := 0xB1B0AFBA - checksum(out)
	headOff := tableOffset(out, "head")
	binary.BigEndian.PutUint32(out[headOff+8:], adj)
	return out
}

// writeSFNT writes a font file of tables, in tag order, each 4-byte aligned with its checksum.
func writeSFNT(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for t := range tables {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	n := len(tags)
	sel := 0
	for 1<<(sel+1) <= n {
		sel++
	}
	out := make([]byte, 12+16*n)
	binary.BigEndian.PutUint32(out, 0x00010000)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], uint16(16<<sel))
	binary.BigEndian.PutUint16(out[8:], uint16(sel))
	binary.BigEndian.PutUint16(out[10:], uint16(16*n-16<<sel))
	for i, tag := range tags {
		t := tables[tag]
		rec := out[12+16*i:]
		copy(rec, tag)
		binary.BigEndian.PutUint32(rec[4:], checksum(t))
		binary.BigEndian.PutUint32(rec[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(rec[12:], uint32(len(t)))
		out = append(out, t...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// tableOffset returns the offset of table tag in the font file b written by writeSFNT.
func tableOffset(b []byte, tag string) int {
	n := int(binary.BigEndian.Uint16(b[4:]))
	for i := 0; i < n; i++ {
		if rec := b[12+16*i:]; string(rec[:4]) == tag {
			return int(binary.BigEndian.Uint32(rec[8:]))
		}
	}
	return -1
}

// checksum is the TrueType checksum: the sum of big-endian 32-bit words, zero-padded.
func checksum(b []byte) uint32 {
	var s uint32
	for len(b) >= 4 {
		s += binary.BigEndian.Uint32(b)
		b = b[4:]
	}
	if len(b) > 0 {
		var last [4]byte
		copy(last[:], b)
		s += binary.BigEndian.Uint32(last[:])
	}
	return s
}

// cmapTable returns a cmap table with a format 4 subtable (Windows, Unicode BMP) and, when m has
// characters beyond the BMP, a format 12 subtable (Windows, full Unicode).
func cmapTable(m map[rune]uint16) []byte {
	runes := make([]rune, 0, len(m))
	wide := false
	for r := range m {
		runes = append(runes, r)
		wide = wide || r > 0xffff
	}
	slices.Sort(runes)

	// Format 4: one segment per character, then the final 0xFFFF segment.
	var bmp []rune
	for _, r := range runes {
		if r < 0xffff {
			bmp = append(bmp, r)
		}
	}
	segs := len(bmp) + 1
	sel := 0
	for 1<<(sel+1) <= segs {
		sel++
	}
	f4 := make([]byte, 14, 16+8*segs)
	binary.BigEndian.PutUint16(f4, 4)
	binary.BigEndian.PutUint16(f4[6:], uint16(2*segs))
	binary.BigEndian.PutUint16(f4[8:], uint16(2<<sel))
	binary.BigEndian.PutUint16(f4[10:], uint16(sel))
	binary.BigEndian.PutUint16(f4[12:], uint16(2*segs-2<<sel))
	for _, r := range bmp {
		f4 = binary.BigEndian.AppendUint16(f4, uint16(r)) // endCode
	}
	f4 = binary.BigEndian.AppendUint16(f4, 0xffff)
	f4 = binary.BigEndian.AppendUint16(f4, 0) // reservedPad
	for _, r := range bmp {
		f4 = binary.BigEndian.AppendUint16(f4, uint16(r)) // startCode
	}
	f4 = binary.BigEndian.AppendUint16(f4, 0xffff)
	for _, r := range bmp {
		f4 = binary.BigEndian.AppendUint16(f4, m[r]-uint16(r)) // idDelta, modulo 65536
	}
	f4 = binary.BigEndian.AppendUint16(f4, 1)
	for range segs {
		f4 = binary.BigEndian.AppendUint16(f4, 0) // idRangeOffset
	}
	binary.BigEndian.PutUint16(f4[2:], uint16(len(f4)))

	subtables := [][]byte{f4}
	ids := [][2]uint16{{3, 1}}
	if wide {
		f12 := make([]byte, 16, 16+12*len(runes))
		binary.BigEndian.PutUint16(f12, 12)
		binary.BigEndian.PutUint32(f12[4:], uint32(16+12*len(runes)))
		binary.BigEndian.PutUint32(f12[12:], uint32(len(runes)))
		for _, r := range runes {
			f12 = binary.BigEndian.AppendUint32(f12, uint32(r))
			f12 = binary.BigEndian.AppendUint32(f12, uint32(r))
			f12 = binary.BigEndian.AppendUint32(f12, uint32(m[r]))
		}
		subtables = append(subtables, f12)
		ids = append(ids, [2]uint16{3, 10})
	}
	out := binary.BigEndian.AppendUint16(nil, 0)
	out = binary.BigEndian.AppendUint16(out, uint16(len(subtables)))
	off := 4 + 8*len(subtables)
	for i, st := range subtables {
		out = binary.BigEndian.AppendUint16(out, ids[i][0])
		out = binary.BigEndian.AppendUint16(out, ids[i][1])
		out = binary.BigEndian.AppendUint32(out, uint32(off))
		off += len(st)
	}
	for _, st := range subtables {
		out = append(out, st...)
	}
	return out
}

// nameTable returns a name table of Windows Unicode (UTF-16BE) records.
func nameTable(nm fontNames) []byte {
	recs := []struct {
		id uint16
		s  string
	}{{0, nm.copyright}, {1, nm.family}, {2, nm.subfamily}, {4, nm.full}, {6, nm.postScript}}
	var strs []byte
	out := binary.BigEndian.AppendUint16(nil, 0)
	out = binary.BigEndian.AppendUint16(out, uint16(len(recs)))
	out = binary.BigEndian.AppendUint16(out, uint16(6+12*len(recs)))
	for _, r := range recs {
		u := utf16.Encode([]rune(r.s))
		out = binary.BigEndian.AppendUint16(out, 3)     // Windows
		out = binary.BigEndian.AppendUint16(out, 1)     // Unicode BMP
		out = binary.BigEndian.AppendUint16(out, 0x409) // en-US
		out = binary.BigEndian.AppendUint16(out, r.id)  // name id
		out = binary.BigEndian.AppendUint16(out, uint16(2*len(u)))
		out = binary.BigEndian.AppendUint16(out, uint16(len(strs)))
		for _, c := range u {
			strs = binary.BigEndian.AppendUint16(strs, c)
		}
	}
	return append(out, strs...)
}
