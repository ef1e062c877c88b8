package render

import (
	"context"
	"fmt"
	"image"
	"io"
)

// IsVector reports whether f is a vector document format (SVG, PDF).
func (f Format) IsVector() bool { return f == SVG || f == PDF }

// VectorSurface is a Surface that produces a document: SVGSurface or PDFSurface.
type VectorSurface interface {
	Surface
	Bytes() []byte
}

// NewVectorSurface returns the surface for a vector format, width×height pixels at dpi (0 means
// 96), or an error wrapping ErrUnsupportedFormat for a raster format.
func (r *Renderer) NewVectorSurface(f Format, width, height int, dpi float64) (VectorSurface, error) {
	switch f {
	case SVG:
		return NewSVGSurface(width, height, r.fonts), nil
	case PDF:
		return NewPDFSurface(width, height, dpi, r.fonts), nil
	}
	return nil, fmt.Errorf("%w: %v is not a vector format", ErrUnsupportedFormat, f)
}

// DrawEncoded draws m for v and writes it to w in format f: raster formats through Draw and Encode,
// SVG and PDF by drawing the same calls on a vector surface (EncodeOptions do not apply to them).
func (r *Renderer) DrawEncoded(ctx context.Context, w io.Writer, m Map, v View, f Format, opts EncodeOptions) error {
	return r.DrawFuncEncoded(ctx, w, v, f, opts, func(ctx context.Context, s Surface) error {
		return r.DrawTo(ctx, s, m, v)
	}, func(ctx context.Context) (*image.RGBA, error) {
		return r.Draw(ctx, m, v)
	})
}

// DrawFuncEncoded is DrawEncoded for any drawing: vector formats call vector with a vector surface
// of v's size, raster ones call raster for the image (released to the pool afterwards) and encode
// it.
func (r *Renderer) DrawFuncEncoded(ctx context.Context, w io.Writer, v View, f Format, opts EncodeOptions,
	vector func(context.Context, Surface) error, raster func(context.Context) (*image.RGBA, error)) error {
	if f.IsVector() {
		if err := v.Validate(); err != nil {
			return err
		}
		s, err := r.NewVectorSurface(f, v.Width, v.Height, v.DPI)
		if err != nil {
			return err
		}
		if err := vector(ctx, s); err != nil {
			return err
		}
		_, err = w.Write(s.Bytes())
		return err
	}
	img, err := raster(ctx)
	if err != nil {
		return err
	}
	defer r.Release(img)
	return Encode(w, img, f, opts)
}

// encodeVector wraps a raster image in a one-image SVG or PDF document of its size.
func encodeVector(w io.Writer, img image.Image, f Format) error {
	b := img.Bounds()
	var s VectorSurface
	switch f {
	case SVG:
		s = NewSVGSurface(b.Dx(), b.Dy(), defaultRenderer().fonts)
	default:
		s = NewPDFSurface(b.Dx(), b.Dy(), 96, defaultRenderer().fonts)
	}
	s.DrawImage(img, 0, 0, float64(b.Dx()), float64(b.Dy()))
	_, err := w.Write(s.Bytes())
	return err
}
