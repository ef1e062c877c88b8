package mapdraw

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // picture symbols may be GIF
	_ "image/jpeg"
	_ "image/png"

	xdraw "golang.org/x/image/draw"

	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// This file turns picture symbols (PictureMarkerSymbol, PictureFillSymbol) into the renderer's
// pictures and patterns: decoding with limits, the transparent colour, the two colours of 1-bit
// pictures, and the sizes in points (symbology/picture.go says what each field means).

// MaxPictureSide is the largest width or height, in pixels, of a picture symbol's image, so a
// picture holds at most 1024 × 1024 = 1,048,576 pixels (4 MiB decoded): pictures come from
// requests, and a small compressed image can claim a huge size.
const MaxPictureSide = 1024

// CheckPicture reports whether b is a PNG, JPEG or GIF image of at most MaxPictureSide pixels a
// side, reading only its header.
func CheckPicture(b []byte) error {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("picture is not a PNG, JPEG or GIF image: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxPictureSide || cfg.Height > MaxPictureSide {
		return fmt.Errorf("%s picture of %d×%d pixels: at most %d×%d", format, cfg.Width, cfg.Height, MaxPictureSide, MaxPictureSide)
	}
	return nil
}

// decodePicture decodes a picture symbol's image; nil when it cannot or is too large.
func decodePicture(b []byte) image.Image {
	if len(b) == 0 || CheckPicture(b) != nil {
		return nil
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil
	}
	return img
}

// pictureImage decodes a picture symbol's image with its style applied: pixels of the
// transparent colour cleared, and a two-colour picture's colours replaced by FgColor (the darker)
// and BgColor (the lighter), swapped by Swap1Bit. nil when the picture cannot be decoded.
func pictureImage(s *symbology.Symbol) image.Image {
	img := decodePicture(s.Picture)
	if img == nil {
		return nil
	}
	ps := s.PictureStyle
	dark, light, twoColour := twoColours(img)
	fg, bg := ps.FgColor, ps.BgColor
	if ps.Swap1Bit {
		fg, bg = bg, fg
	}
	recolour := twoColour && (fg != nil || bg != nil)
	if !recolour && ps.TransparentColor == nil {
		return img
	}
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			switch {
			case ps.TransparentColor != nil && c.A > 0 && sameRGB(c, ps.TransparentColor.NRGBA()):
				c = color.NRGBA{}
			case recolour && c == dark && fg != nil:
				c = fg.NRGBA()
			case recolour && c == light && bg != nil:
				c = bg.NRGBA()
			}
			out.SetNRGBA(x-b.Min.X, y-b.Min.Y, c)
		}
	}
	return out
}

func sameRGB(a, b color.NRGBA) bool { return a.R == b.R && a.G == b.G && a.B == b.B }

// twoColours reports whether img is a 1-bit picture, a palette of two colours or grey levels of
// only black and white, and returns its darker and lighter colours.
func twoColours(img image.Image) (dark, light color.NRGBA, ok bool) {
	lum := func(c color.NRGBA) int { return 299*int(c.R) + 587*int(c.G) + 114*int(c.B) }
	switch p := img.(type) {
	case *image.Paletted:
		if len(p.Palette) != 2 {
			return dark, light, false
		}
		a := color.NRGBAModel.Convert(p.Palette[0]).(color.NRGBA)
		b := color.NRGBAModel.Convert(p.Palette[1]).(color.NRGBA)
		if lum(a) > lum(b) {
			a, b = b, a
		}
		return a, b, a != b
	case *image.Gray:
		for _, v := range p.Pix {
			if v != 0 && v != 255 {
				return dark, light, false
			}
		}
		return color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}, true
	}
	return dark, light, false
}

// pictureColor is the average colour of a picture fill's image, for a map background (a colour):
// the fill looks like the picture from afar. The symbol's colour when there is no image.
func pictureColor(s *symbology.Symbol) color.NRGBA {
	img := pictureImage(s)
	if img == nil {
		return s.Color.NRGBA()
	}
	var r, g, bl, a, n uint64
	bb := img.Bounds()
	for y := bb.Min.Y; y < bb.Max.Y; y++ {
		for x := bb.Min.X; x < bb.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			r, g, bl, a = r+uint64(c.R)*uint64(c.A), g+uint64(c.G)*uint64(c.A), bl+uint64(c.B)*uint64(c.A), a+uint64(c.A)
			n++
		}
	}
	if a == 0 || n == 0 {
		return color.NRGBA{}
	}
	return color.NRGBA{uint8(r / a), uint8(g / a), uint8(bl / a), uint8(a / n)}
}

// scaleOr1 is a picture scale factor: 0 (unset) or a non-positive value means 1.
func scaleOr1(f float64) float64 {
	if f > 0 {
		return f
	}
	return 1
}

// pictureMarker sets a picture marker's image and size on rs: its width in points as
// MarkerSize, the image stretched when the marker's aspect ratio is not the picture's.
func pictureMarker(rs *render.Symbol, s *symbology.Symbol, img image.Image) {
	b := img.Bounds()
	aspect := float64(b.Dy()) / float64(b.Dx())
	var w, h float64
	switch {
	case s.Width > 0:
		w, h = s.Width, s.Size
		if h <= 0 {
			h = w * aspect
		}
	case s.Size > 0 && b.Dx() >= b.Dy():
		w, h = s.Size, s.Size*aspect
	case s.Size > 0:
		w, h = s.Size/aspect, s.Size
	default:
		w, h = float64(b.Dx())*72/96, float64(b.Dy())*72/96
	}
	w, h = w*scaleOr1(s.XScale), h*scaleOr1(s.YScale)
	rs.Picture, rs.MarkerSize = stretch(img, h/w), w
}

// stretch returns img resampled to the aspect ratio (height / width) when it differs from its
// own by more than 1%, keeping its larger side within MaxPictureSide.
func stretch(img image.Image, aspect float64) image.Image {
	b := img.Bounds()
	own := float64(b.Dy()) / float64(b.Dx())
	if !(aspect > 0) || (aspect/own > 0.99 && aspect/own < 1.01) {
		return img
	}
	w, h := float64(b.Dx()), float64(b.Dx())*aspect
	if h > MaxPictureSide {
		w, h = w*MaxPictureSide/h, MaxPictureSide
	}
	out := image.NewNRGBA(image.Rect(0, 0, max(1, int(w+0.5)), max(1, int(h+0.5))))
	xdraw.BiLinear.Scale(out, out.Bounds(), img, b, xdraw.Src, nil)
	return out
}

// pictureFill sets a picture fill's pattern on rs: the tile size in points (Width × Height, a
// missing one from the aspect ratio, both missing the picture's own size at 96 DPI, times the
// scales), the gaps, offset and angle.
func pictureFill(rs *render.Symbol, s *symbology.Symbol, img image.Image) {
	w, h := render.PictureSize(img, s.Width, s.Height)
	rs.Pattern = img
	rs.PatternWidth, rs.PatternHeight = w*scaleOr1(s.XScale), h*scaleOr1(s.YScale)
	rs.PatternGap = [2]float64{max(0, s.XSeparation), max(0, s.YSeparation)}
	rs.PatternOffset = [2]float64{s.XOffset, s.YOffset}
	rs.PatternAngle = s.Angle
}
