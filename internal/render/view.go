package render

import (
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
)

// MaxImageSize is the largest width or height, in pixels, that Draw accepts (as ArcGIS Server's
// default maxImageWidth and maxImageHeight); a 4096×4096 image takes 64 MiB.
const MaxImageSize = 4096

// MinDPI and MaxDPI bound an image's resolution in dots per inch (a View's DPI, 0 meaning 96).
// 2400 is the finest a printer is commonly driven at, and what ExportMapImage has always
// accepted; below 1 DPI a point is less than a 72nd of a pixel. What DPI multiplies — text, line
// and symbol sizes in pixels — is bounded on its own (MaxTextPixels, MaxScaledPoints).
const (
	MinDPI = 1
	MaxDPI = 2400
)

// MaxTextPixels is the largest text size, in pixels, the renderer rasterizes glyph by glyph:
// glyph masks are cached per size and character, and a mask is the glyph's full size, so larger
// text is measured and drawn at this size. At 2400 DPI it is a 30 pt label.
const MaxTextPixels = 1024

// CheckDPI reports whether dpi is 0 (the default, 96) or within MinDPI and MaxDPI: nil, or an
// error wrapping ErrInvalidView.
func CheckDPI(dpi float64) error {
	if dpi != 0 && !(dpi >= MinDPI && dpi <= MaxDPI) {
		return fmt.Errorf("%w: DPI %g must be between %d and %d", ErrInvalidView, dpi, MinDPI, MaxDPI)
	}
	return nil
}

// metersPerInch converts DPI to pixels per metre for Scale.
const metersPerInch = 0.0254

// View maps world coordinates to pixels.
//
// Extent is in map units and is expected to be aspect-corrected by the caller already (its width and
// height in map units have the same ratio as Width and Height); if it is not, x and y are scaled
// independently. Rotation is in degrees, anticlockwise, about the centre of the extent: with a
// rotation of 90, north points left. DPI sets the size of symbols and labels given in points; zero
// means 96.
type View struct {
	Extent        orb.Bound
	Width, Height int
	DPI           float64
	Rotation      float64
}

// Scale returns the map scale denominator N of 1:N, assuming map units are metres: the ground width of
// one pixel times the pixels per metre of the display at v's DPI. Callers with geographic coordinates
// convert degrees to metres themselves.
func (v View) Scale() float64 {
	if v.Width <= 0 {
		return 0
	}
	res := (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width)
	return res * v.dpi() / metersPerInch
}

// PointsToPixels converts a length in points (1/72 inch) to pixels at v's DPI.
func (v View) PointsToPixels(pt float64) float64 { return pt * v.dpi() / 72 }

func (v View) dpi() float64 {
	if v.DPI <= 0 {
		return 96
	}
	return v.DPI
}

// Validate reports whether v can be drawn: nil, or an error wrapping ErrInvalidView or
// ErrImageTooLarge.
func (v View) Validate() error {
	switch {
	case v.Width <= 0 || v.Height <= 0:
		return fmt.Errorf("%w: image size %d×%d must be positive", ErrInvalidView, v.Width, v.Height)
	case v.Width > MaxImageSize || v.Height > MaxImageSize:
		return fmt.Errorf("%w: %d×%d, at most %d×%d", ErrImageTooLarge, v.Width, v.Height, MaxImageSize, MaxImageSize)
	case !(v.Extent.Max[0] > v.Extent.Min[0]) || !(v.Extent.Max[1] > v.Extent.Min[1]):
		return fmt.Errorf("%w: extent %v must have a positive width and height", ErrInvalidView, v.Extent)
	case math.IsNaN(v.Rotation) || math.IsInf(v.Rotation, 0):
		return fmt.Errorf("%w: rotation must be finite", ErrInvalidView)
	}
	if err := CheckDPI(v.DPI); err != nil {
		return err
	}
	return nil
}

// Errors of View.Validate (and so of Draw), wrapped with details; both are the caller's mistakes.
var (
	// ErrImageTooLarge is returned for a View wider or higher than MaxImageSize.
	ErrImageTooLarge = errors.New("render: image larger than the maximum size")
	// ErrInvalidView is returned for a View with a non-positive size, an empty extent, a
	// non-finite rotation or a DPI out of range.
	ErrInvalidView = errors.New("render: invalid view")
)

// Matrix returns the affine transform from world coordinates to pixels (origin at the top left, y
// down), rotation included.
func (v View) Matrix() Matrix {
	sx := float64(v.Width) / (v.Extent.Max[0] - v.Extent.Min[0])
	sy := float64(v.Height) / (v.Extent.Max[1] - v.Extent.Min[1])
	cx := (v.Extent.Min[0] + v.Extent.Max[0]) / 2
	cy := (v.Extent.Min[1] + v.Extent.Max[1]) / 2
	// Centre, scale (y up), rotate anticlockwise, flip y, move to the image centre.
	s, c := math.Sincos(v.Rotation * math.Pi / 180)
	if v.Rotation == 0 {
		s, c = 0, 1
	}
	// u = (x-cx)*sx, w = (y-cy)*sy; px = W/2 + u*c - w*s; py = H/2 - (u*s + w*c).
	m := Matrix{
		XX: c * sx, XY: -s * sy,
		YX: -s * sx, YY: -c * sy,
	}
	m.X0 = float64(v.Width)/2 - m.XX*cx - m.XY*cy
	m.Y0 = float64(v.Height)/2 - m.YX*cx - m.YY*cy
	return m
}

// Bounds returns the world-coordinate bounding box of everything visible in the image: the extent
// itself without rotation, the bounding box of the rotated image rectangle with it.
func (v View) Bounds() orb.Bound {
	if math.Mod(v.Rotation, 360) == 0 {
		return v.Extent
	}
	inv, ok := v.Matrix().Invert()
	if !ok {
		return v.Extent
	}
	b := orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
	for _, p := range [4][2]float64{{0, 0}, {float64(v.Width), 0}, {0, float64(v.Height)}, {float64(v.Width), float64(v.Height)}} {
		x, y := inv.Apply(p[0], p[1])
		b = b.Extend(orb.Point{x, y})
	}
	return b
}

// Matrix is a 2D affine transform: x' = XX*x + XY*y + X0, y' = YX*x + YY*y + Y0.
type Matrix struct {
	XX, YX, XY, YY, X0, Y0 float64
}

// Identity returns the identity transform.
func Identity() Matrix { return Matrix{XX: 1, YY: 1} }

// Translate returns a translation by (x, y).
func Translate(x, y float64) Matrix { return Matrix{XX: 1, YY: 1, X0: x, Y0: y} }

// Rotate returns a rotation by angle degrees, clockwise on screen (y down), about the origin.
func Rotate(angle float64) Matrix {
	s, c := math.Sincos(angle * math.Pi / 180)
	return Matrix{XX: c, YX: s, XY: -s, YY: c}
}

// Apply transforms the point (x, y).
func (m Matrix) Apply(x, y float64) (float64, float64) {
	return m.XX*x + m.XY*y + m.X0, m.YX*x + m.YY*y + m.Y0
}

// Then returns the transform that applies m first and n second.
func (m Matrix) Then(n Matrix) Matrix {
	return Matrix{
		XX: n.XX*m.XX + n.XY*m.YX,
		YX: n.YX*m.XX + n.YY*m.YX,
		XY: n.XX*m.XY + n.XY*m.YY,
		YY: n.YX*m.XY + n.YY*m.YY,
		X0: n.XX*m.X0 + n.XY*m.Y0 + n.X0,
		Y0: n.YX*m.X0 + n.YY*m.Y0 + n.Y0,
	}
}

// Invert returns the inverse of m; ok is false when m is singular.
func (m Matrix) Invert() (inv Matrix, ok bool) {
	det := m.XX*m.YY - m.XY*m.YX
	if det == 0 || math.IsNaN(det) {
		return Matrix{}, false
	}
	inv.XX = m.YY / det
	inv.XY = -m.XY / det
	inv.YX = -m.YX / det
	inv.YY = m.XX / det
	inv.X0 = -(inv.XX*m.X0 + inv.XY*m.Y0)
	inv.Y0 = -(inv.YX*m.X0 + inv.YY*m.Y0)
	return inv, true
}

// IsIdentity reports whether m is the identity transform.
func (m Matrix) IsIdentity() bool { return m == Identity() }

// lineScale is the factor by which m scales lengths (the square root of the determinant).
func (m Matrix) lineScale() float64 { return math.Sqrt(math.Abs(m.XX*m.YY - m.XY*m.YX)) }
