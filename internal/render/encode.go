package render

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"sync"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// Format is an output image format.
type Format int

// Formats. PNG is 24-bit colour, with alpha only when the image has transparent pixels (ArcGIS
// "png24"); PNG32 always has an alpha channel; PNG8 is a palette image of at most 256 colours
// (median cut); JPG is baseline JPEG and BMP a 24-bit bitmap (both without alpha: transparent pixels
// are composited over EncodeOptions.Matte); GIF is a palette image; TIFF is RGBA, deflate-compressed;
// JPGPNG is JPG when the image is opaque and PNG32 otherwise (see Resolve).
const (
	PNG Format = iota
	PNG32
	PNG8
	JPG
	GIF
	BMP
	TIFF
	JPGPNG
	// SVG and PDF are vector documents drawn through SVGSurface and PDFSurface by DrawEncoded;
	// Encode wraps a raster image in one.
	SVG
	PDF
)

var formatNames = [...]string{PNG: "png24", PNG32: "png32", PNG8: "png8", JPG: "jpg", GIF: "gif", BMP: "bmp", TIFF: "tiff", JPGPNG: "jpgpng", SVG: "svg", PDF: "pdf"}

// String returns the format's name, as accepted by ParseFormat.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ContentType returns the format's MIME type (for JPGPNG, resolve it first).
func (f Format) ContentType() string {
	switch f {
	case JPG:
		return "image/jpeg"
	case GIF:
		return "image/gif"
	case BMP:
		return "image/bmp"
	case TIFF:
		return "image/tiff"
	case SVG:
		return "image/svg+xml"
	case PDF:
		return "application/pdf"
	}
	return "image/png"
}

// Resolve returns the format Encode writes img in: JPGPNG becomes JPG for an opaque image and PNG32
// otherwise; every other format is itself.
func (f Format) Resolve(img image.Image) Format {
	if f != JPGPNG {
		return f
	}
	if rgba, ok := img.(*image.RGBA); ok && opaque(rgba) {
		return JPG
	}
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return JPG
	}
	return PNG32
}

// ErrUnsupportedFormat is returned for a format name or value this package cannot encode.
var ErrUnsupportedFormat = errors.New("render: unsupported image format")

// ParseFormat returns the Format for a name such as "png", "png24", "png32", "png8", "jpg", "jpeg",
// "gif", "bmp", "dib", "tiff", "jpgpng", "svg" or "pdf" (case-insensitive, with or without a prefix
// as in ArcGIS's "esriImagePNG24" or "gisImagePNG24", or a MIME type). Other names (such as "emf",
// "ps" or "ai") return ErrUnsupportedFormat.
func ParseFormat(name string) (Format, error) {
	n := strings.ToLower(name)
	n = strings.TrimPrefix(n, "esriimage")
	n = strings.TrimPrefix(n, "gisimage")
	n = strings.TrimPrefix(n, "image/")
	n = strings.TrimPrefix(n, "application/")
	switch n {
	case "png", "png24":
		return PNG, nil
	case "png32":
		return PNG32, nil
	case "png8":
		return PNG8, nil
	case "jpg", "jpeg":
		return JPG, nil
	case "gif":
		return GIF, nil
	case "bmp", "dib":
		return BMP, nil
	case "tif", "tiff":
		return TIFF, nil
	case "jpgpng":
		return JPGPNG, nil
	case "svg", "svg+xml":
		return SVG, nil
	case "pdf", "application/pdf":
		return PDF, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnsupportedFormat, name)
}

// EncodeOptions tune Encode. The zero value is good for map images.
type EncodeOptions struct {
	// Quality is the JPEG quality, 1 to 100; 0 means 75.
	Quality int
	// Matte is the colour transparent pixels are composited over for formats without alpha (JPG);
	// zero means white.
	Matte color.NRGBA
	// Compression is the PNG compression level. The zero value (png.DefaultCompression) means fast
	// compression (zlib level 1), several times faster than image/png's default and only a little
	// larger for maps; png.BestCompression and png.NoCompression are honoured.
	Compression png.CompressionLevel
	// TransparentColor, when not nil, makes every pixel of exactly that colour (alpha ignored)
	// transparent in formats with transparency (PNG, PNG32, PNG8, GIF), as ArcGIS's
	// ImageDisplay.TransparentColor does.
	TransparentColor *color.NRGBA
}

// pngBuffers is the png.EncoderBufferPool shared by all encoders of the process.
type pngBuffers struct{ p sync.Pool }

func (b *pngBuffers) Get() *png.EncoderBuffer {
	e, _ := b.p.Get().(*png.EncoderBuffer)
	return e
}
func (b *pngBuffers) Put(e *png.EncoderBuffer) { b.p.Put(e) }

// encoders holds what Encode calls share: pools of compression buffers, which change no behaviour.
type encoders struct {
	png     pngBuffers
	writers sync.Pool // *bufio.Writer
	fast    sync.Pool // *pngWriter
}

var sharedEncoders = sync.OnceValue(func() *encoders { return &encoders{} })

// Encode writes img to w in format f.
func Encode(w io.Writer, img image.Image, f Format, opts EncodeOptions) error {
	enc := sharedEncoders()
	bw, _ := enc.writers.Get().(*bufio.Writer)
	if bw == nil {
		bw = bufio.NewWriterSize(w, 64<<10)
	} else {
		bw.Reset(w)
	}
	defer func() { bw.Reset(nil); enc.writers.Put(bw) }()
	if err := encode(bw, img, f, opts, enc); err != nil {
		return err
	}
	return bw.Flush()
}

func encode(w io.Writer, img image.Image, f Format, opts EncodeOptions, enc *encoders) error {
	f = f.Resolve(img)
	if opts.TransparentColor != nil && f != JPG && f != BMP {
		img = clearColor(img, *opts.TransparentColor)
	}
	level := opts.Compression
	if level == png.DefaultCompression {
		level = png.BestSpeed
	}
	pe := png.Encoder{CompressionLevel: level, BufferPool: &enc.png}
	rgba, isRGBA := img.(*image.RGBA)
	switch f {
	case PNG:
		if isRGBA {
			return encodeRGBAPNG(w, rgba, !opaque(rgba), fastLevel(level), &enc.fast)
		}
		return pe.Encode(w, img)
	case PNG32:
		if isRGBA {
			return encodeRGBAPNG(w, rgba, true, fastLevel(level), &enc.fast)
		}
		return pe.Encode(w, forceAlpha{img})
	case PNG8:
		return pe.Encode(w, quantize(img))
	case JPG:
		q := opts.Quality
		if q <= 0 {
			q = 75
		}
		return jpeg.Encode(w, flatten(img, opts.Matte), &jpeg.Options{Quality: min(q, 100)})
	case GIF:
		return gif.Encode(w, quantize(img), nil)
	case BMP:
		return bmp.Encode(w, flatten(img, opts.Matte))
	case TIFF:
		return tiff.Encode(w, img, &tiff.Options{Compression: tiff.Deflate})
	case SVG, PDF:
		return encodeVector(w, img, f)
	}
	return fmt.Errorf("%w: %v", ErrUnsupportedFormat, f)
}

// fastLevel maps a png.CompressionLevel to a zlib level for encodeRGBAPNG.
func fastLevel(l png.CompressionLevel) int {
	switch l {
	case png.NoCompression:
		return 0
	case png.BestCompression:
		return 9
	case png.DefaultCompression:
		return 6
	}
	return 1
}

// clearColor returns a copy of img in which the pixels of colour c are transparent.
func clearColor(img image.Image, c color.NRGBA) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	for i := 0; i+3 < len(out.Pix); i += 4 {
		p := out.Pix[i : i+4 : i+4]
		if p[3] == 255 && p[0] == c.R && p[1] == c.G && p[2] == c.B {
			p[0], p[1], p[2], p[3] = 0, 0, 0, 0
		}
	}
	return out
}

// forceAlpha hides img's Opaque method so the PNG encoder always writes an alpha channel.
type forceAlpha struct{ image.Image }

// flatten composites img over matte (white when zero) if it has transparent pixels.
func flatten(img image.Image, matte color.NRGBA) image.Image {
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return img
	}
	if matte == (color.NRGBA{}) {
		matte = color.NRGBA{255, 255, 255, 255}
	}
	matte.A = 255
	out := image.NewRGBA(img.Bounds())
	draw.Draw(out, out.Bounds(), image.NewUniform(matte), image.Point{}, draw.Src)
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Over)
	return out
}
