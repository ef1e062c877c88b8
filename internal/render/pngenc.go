package render

import (
	"encoding/binary"
	"hash"
	"hash/adler32"
	"hash/crc32"
	"image"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
)

// pngWriter is a PNG encoder specialised for the renderer's *image.RGBA output: rows are converted
// straight from the premultiplied pixels (no per-pixel interface calls), filtered with the Up filter
// (cheap, and map images repeat a lot from row to row) and compressed with klauspost/compress's fast
// deflate at level 1. It produces files a little larger than image/png at BestSpeed in a fraction of
// the time. Images of at least parallelPixels pixels are cut into pngBands horizontal bands that are
// filtered and compressed in parallel (see encodeBands). pngWriters are pooled; one is not safe for
// concurrent use.
type pngWriter struct {
	zw    *zlib.Writer
	level int
	chunk chunkWriter
	cur   []byte
	prev  []byte
	flt   []byte
	bands [pngBands]pngBand
}

// Parallel encoding: images of at least parallelPixels pixels (and pngBands*minBandRows rows) are
// encoded as pngBands bands, whatever the number of CPUs, so that the file's bytes do not depend on
// the machine; at most GOMAXPROCS bands are compressed at once.
const (
	parallelPixels = 256 << 10
	pngBands       = 4
	minBandRows    = 16
)

// pngBand is one band's state in a parallel encoding: its compressor, its compressed bytes and the
// Adler-32 of its filtered bytes.
type pngBand struct {
	fw    *flate.Writer
	level int
	out   sliceWriter
	row   rowFilter
	adler hash.Hash32
	n     int // filtered bytes
	err   error
}

// sliceWriter appends what is written to it to a byte slice.
type sliceWriter struct{ b []byte }

func (s *sliceWriter) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

// rowFilter holds the scratch rows of the Up filter.
type rowFilter struct {
	cur, prev, flt []byte
}

// reset sizes the scratch rows and primes the filter with the row above row y (all zeros for the
// first row of the image): for an image with alpha, the unpremultiplied row above is kept in prev.
func (r *rowFilter) reset(img *image.RGBA, y int, alpha bool) {
	b := img.Bounds()
	width := b.Dx()
	bpp := 3
	if alpha {
		bpp = 4
	}
	rowLen := width * bpp
	r.cur = resize(r.cur, width*4)
	r.prev = resize(r.prev, width*4)
	r.flt = resize(r.flt, rowLen+2) // +1 filter byte, +1 spare for upFilterRGB
	if alpha && y > b.Min.Y {
		unpremultiplyRow(r.prev, img.Pix[img.PixOffset(b.Min.X, y-1):][:width*4:width*4], width)
	} else {
		clear(r.prev)
	}
}

// filter returns the Up-filtered row y (filter byte first); rows must come in order after reset.
func (r *rowFilter) filter(img *image.RGBA, y int, alpha bool) []byte {
	b := img.Bounds()
	width := b.Dx()
	row := img.Pix[img.PixOffset(b.Min.X, y):][: width*4 : width*4]
	if !alpha {
		// Opaque: premultiplied and straight colours are equal; filter straight from the image.
		f := r.flt[: width*3+1 : width*3+1]
		f[0] = 2 // Up filter
		// r.prev is all zeros: the row above the first.
		up := r.prev[: width*4 : width*4]
		if y > b.Min.Y {
			up = img.Pix[img.PixOffset(b.Min.X, y-1):][: width*4 : width*4]
		}
		upFilterRGB(r.flt[1:], row, up, width)
		return f
	}
	f := r.flt[: width*4+1 : width*4+1]
	f[0] = 2
	cur := r.cur
	unpremultiplyRow(cur, row, width)
	prev := r.prev[:width*4]
	for i, v := range cur {
		f[i+1] = v - prev[i]
	}
	r.prev, r.cur = cur, prev
	return f
}

// encodeRGBAPNG writes img as a PNG: 8-bit RGB when alpha is false, else 8-bit RGBA (straight alpha).
// pool holds reusable pngWriters.
func encodeRGBAPNG(w io.Writer, img *image.RGBA, alpha bool, level int, pool *sync.Pool) error {
	b := img.Bounds()
	bands := 1
	if b.Dx()*b.Dy() >= parallelPixels && b.Dy() >= pngBands*minBandRows {
		bands = pngBands
	}
	return encodeRGBAPNGBands(w, img, alpha, level, pool, bands, runtime.GOMAXPROCS(0))
}

// encodeRGBAPNGBands is encodeRGBAPNG with the image cut into bands (1 to pngBands) compressed by
// at most workers goroutines at once.
func encodeRGBAPNGBands(w io.Writer, img *image.RGBA, alpha bool, level int, pool *sync.Pool, bands, workers int) error {
	pw, _ := pool.Get().(*pngWriter)
	if pw == nil {
		pw = new(pngWriter)
	}
	defer pool.Put(pw)
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()
	if _, err := io.WriteString(w, "\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8] = 8 // bit depth
	ihdr[9] = 2 // truecolour
	if alpha {
		ihdr[9] = 6 // truecolour with alpha
	}
	if err := writeChunk(w, "IHDR", ihdr[:]); err != nil {
		return err
	}
	pw.chunk.reset(w)
	if bands > 1 && height >= bands {
		if err := pw.encodeBands(img, alpha, level, bands, workers); err != nil {
			return err
		}
	} else if err := pw.encodeSerial(img, alpha, level); err != nil {
		return err
	}
	if err := pw.chunk.flush(); err != nil {
		return err
	}
	return writeChunk(w, "IEND", nil)
}

// encodeSerial writes img's zlib stream to pw.chunk with one compressor.
func (pw *pngWriter) encodeSerial(img *image.RGBA, alpha bool, level int) error {
	if pw.zw == nil || pw.level != level {
		zw, err := zlib.NewWriterLevel(&pw.chunk, level)
		if err != nil {
			return err
		}
		pw.zw, pw.level = zw, level
	} else {
		pw.zw.Reset(&pw.chunk)
	}
	b := img.Bounds()
	r := rowFilter{cur: pw.cur, prev: pw.prev, flt: pw.flt}
	r.reset(img, b.Min.Y, alpha)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if _, err := pw.zw.Write(r.filter(img, y, alpha)); err != nil {
			return err
		}
	}
	pw.cur, pw.prev, pw.flt = r.cur, r.prev, r.flt
	return pw.zw.Close()
}

// encodeBands writes img's zlib stream to pw.chunk pigz-style: the rows are cut into bands, each
// filtered (its first row against the row above, read only) and deflated by its own compressor
// ending in a byte-aligned sync flush (the last band's closes the stream); the deflate streams are
// concatenated after the zlib header and followed by the Adler-32 of all the filtered bytes,
// combined from the bands'. Bands are compressed by at most workers goroutines, the caller's
// included.
func (pw *pngWriter) encodeBands(img *image.RGBA, alpha bool, level, bands, workers int) error {
	b := img.Bounds()
	height := b.Dy()
	workers = max(1, min(workers, bands))
	var next atomic.Int32
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= bands {
				return
			}
			y0 := b.Min.Y + height*i/bands
			y1 := b.Min.Y + height*(i+1)/bands
			pw.bands[i].encode(img, y0, y1, alpha, level, i == bands-1)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if _, err := pw.chunk.Write(zlibHeader(level)); err != nil {
		return err
	}
	var sum uint32 = 1 // Adler-32 of no bytes
	for i := range bands {
		band := &pw.bands[i]
		if band.err != nil {
			return band.err
		}
		if _, err := pw.chunk.Write(band.out.b); err != nil {
			return err
		}
		sum = adler32Combine(sum, band.adler.Sum32(), band.n)
	}
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], sum)
	_, err := pw.chunk.Write(tail[:])
	return err
}

// encode filters and deflates rows y0 to y1 (exclusive) into band.out, ending with a sync flush,
// or with the final block when last.
func (band *pngBand) encode(img *image.RGBA, y0, y1 int, alpha bool, level int, last bool) {
	band.out.b, band.n, band.err = band.out.b[:0], 0, nil
	if band.fw == nil || band.level != level {
		fw, err := flate.NewWriter(&band.out, level)
		if err != nil {
			band.err = err
			return
		}
		band.fw, band.level = fw, level
	} else {
		band.fw.Reset(&band.out)
	}
	if band.adler == nil {
		band.adler = adler32.New()
	}
	band.adler.Reset()
	band.row.reset(img, y0, alpha)
	for y := y0; y < y1; y++ {
		f := band.row.filter(img, y, alpha)
		band.adler.Write(f)
		band.n += len(f)
		if _, err := band.fw.Write(f); err != nil {
			band.err = err
			return
		}
	}
	if last {
		band.err = band.fw.Close()
	} else {
		band.err = band.fw.Flush()
	}
}

// zlibHeader returns the two-byte zlib header klauspost/compress's zlib writer writes for level.
func zlibHeader(level int) []byte {
	h := []byte{0x78, 0}
	switch {
	case level >= 7:
		h[1] = 3 << 6
	case level == 6 || level < 0:
		h[1] = 2 << 6
	case level >= 2:
		h[1] = 1 << 6
	}
	h[1] += uint8(31 - binary.BigEndian.Uint16(h)%31)
	return h
}

// adler32Combine returns the Adler-32 of the concatenation of two byte strings from their checksums
// a1 and a2 and the length n2 of the second, as zlib's adler32_combine.
func adler32Combine(a1, a2 uint32, n2 int) uint32 {
	const base = 65521
	rem := uint64(n2 % base)
	s1 := uint64(a1 & 0xffff)
	s2 := rem * s1 % base
	s1 += uint64(a2&0xffff) + base - 1
	s2 += uint64(a1>>16) + uint64(a2>>16) + base - rem
	s1 %= base
	s2 %= base
	return uint32(s1 | s2<<16)
}

// upFilterRGB writes the Up-filtered RGB bytes of an RGBA row (row minus up, dropping alpha) into dst,
// which must have one spare byte after the 3*width it fills. Two pixels at a time: a bytewise
// subtraction within uint64s, then two overlapping 4-byte stores per pair.
func upFilterRGB(dst, row, up []byte, width int) {
	const hi = 0x8080808080808080
	x := 0
	for ; x+2 <= width; x += 2 {
		a := binary.LittleEndian.Uint64(row[x*4:])
		b := binary.LittleEndian.Uint64(up[x*4:])
		d := ((a | hi) - (b &^ hi)) ^ ((a ^ ^b) & hi)
		binary.LittleEndian.PutUint32(dst[x*3:], uint32(d))
		binary.LittleEndian.PutUint32(dst[x*3+3:], uint32(d>>32))
	}
	for ; x < width; x++ {
		dst[x*3] = row[x*4] - up[x*4]
		dst[x*3+1] = row[x*4+1] - up[x*4+1]
		dst[x*3+2] = row[x*4+2] - up[x*4+2]
	}
}

// unpremultiplyRow converts a premultiplied RGBA row to straight alpha.
func unpremultiplyRow(dst, row []byte, width int) {
	for x := 0; x < width; x++ {
		p := row[x*4 : x*4+4 : x*4+4]
		q := dst[x*4 : x*4+4 : x*4+4]
		switch a := p[3]; a {
		case 255:
			q[0], q[1], q[2], q[3] = p[0], p[1], p[2], 255
		case 0:
			q[0], q[1], q[2], q[3] = 0, 0, 0, 0
		default:
			q[0] = byte(min(255, (uint32(p[0])*255+uint32(a)/2)/uint32(a)))
			q[1] = byte(min(255, (uint32(p[1])*255+uint32(a)/2)/uint32(a)))
			q[2] = byte(min(255, (uint32(p[2])*255+uint32(a)/2)/uint32(a)))
			q[3] = a
		}
	}
}

// opaque reports whether every pixel of img has alpha 255, reading two pixels at a time.
func opaque(img *image.RGBA) bool {
	b := img.Bounds()
	const alphas = 0xff000000ff000000
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):][: b.Dx()*4 : b.Dx()*4]
		i := 0
		for ; i+8 <= len(row); i += 8 {
			if binary.LittleEndian.Uint64(row[i:])&alphas != alphas {
				return false
			}
		}
		for ; i < len(row); i += 4 {
			if row[i+3] != 255 {
				return false
			}
		}
	}
	return true
}

func resize(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

func writeChunk(w io.Writer, typ string, data []byte) error {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], typ)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc.Sum32())
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err := w.Write(tail[:])
	return err
}

// chunkWriter collects compressed data into IDAT chunks of up to 64 KiB.
type chunkWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (c *chunkWriter) reset(w io.Writer) {
	c.w, c.err = w, nil
	if c.buf == nil {
		c.buf = make([]byte, 0, 64<<10)
	}
	c.buf = c.buf[:0]
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.err == nil {
		k := min(len(p), cap(c.buf)-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == cap(c.buf) {
			c.err = c.flush()
		}
	}
	return n, c.err
}

func (c *chunkWriter) flush() error {
	if c.err != nil {
		return c.err
	}
	if len(c.buf) == 0 {
		return nil
	}
	err := writeChunk(c.w, "IDAT", c.buf)
	c.buf = c.buf[:0]
	return err
}
