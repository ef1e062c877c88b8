package render

import (
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"reflect"
	"runtime"
	"testing"
)

func TestNumberFormat(t *testing.T) {
	for _, tc := range []struct {
		nf   NumberFormat
		v    float64
		want string
	}{
		{NumberFormat{Digits: -1}, 2.5, "2.5"},
		{NumberFormat{Digits: -1}, 1000, "1000"},
		{NumberFormat{Digits: 2}, 2.5, "2.5"},
		{NumberFormat{Digits: 2, ZeroPad: true}, 2.5, "2.50"},
		{NumberFormat{Digits: 0, Separator: true}, 1234567, "1,234,567"},
		{NumberFormat{Digits: 2, Significant: true}, 1234, "1200"},
		{NumberFormat{Digits: 2, Significant: true}, 0.01234, "0.012"},
		{NumberFormat{Digits: 0, ShowPlus: true}, 5, "+5"},
		{NumberFormat{Digits: 0, Width: 4}, 5, "   5"},
		{NumberFormat{Digits: 0, Width: 4, AlignLeft: true}, 5, "5   "},
	} {
		if got := tc.nf.Format(tc.v); got != tc.want {
			t.Errorf("%+v.Format(%v) = %q, want %q", tc.nf, tc.v, got, tc.want)
		}
	}
}

func TestNiceBelow(t *testing.T) {
	for x, want := range map[float64]float64{7: 5, 3: 2, 1.5: 1, 1234: 1000, 0.03: 0.02, 50: 50} {
		if got := niceBelow(x); got != want {
			t.Errorf("niceBelow(%v) = %v, want %v", x, got, want)
		}
	}
}

func blackWhiteBar(kind ScaleBarKind) ScaleBar {
	black, white := color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}
	return ScaleBar{
		Kind: kind, PixelsPerUnit: 2, Fill1: black, Fill2: white,
		Outline:      ScaleLine{Color: black, Width: 0.75},
		DivisionMark: ScaleLine{Color: black, Width: 0.75}, SubdivisionMark: ScaleLine{Color: black, Width: 0.75},
		Label:      ScaleText{Color: black},
		UnitText:   ScaleText{Color: black},
		UnitLabel:  "Kilometers",
		Number:     NumberFormat{Digits: -1},
		Background: white,
	}
}

func drawBar(t *testing.T, sb ScaleBar, w, h int) (*image.RGBA, ScaleBarLayout) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := defaultRenderer()
	lay, err := r.DrawScaleBar(context.Background(), NewGGSurface(img, r.Fonts()), sb, w, h, 96)
	if err != nil {
		t.Fatal(err)
	}
	return img, lay
}

// TestScaleBarGolden draws each scale bar kind with a range of options; the layouts are checked
// for what a reader of the bar sees (labels, division length) and the images against golden files.
func TestScaleBarGolden(t *testing.T) {
	alt := blackWhiteBar(ScaleBarAlternating)
	single := blackWhiteBar(ScaleBarSingleDivision)
	single.Fill1 = color.NRGBA{255, 255, 255, 255}
	beforeZero := alt
	beforeZero.DivisionsBeforeZero, beforeZero.Subdivisions = 1, 4
	beforeZero.LabelFrequency = FreqDivisionsAndFirstSubdivs
	below := alt
	below.LabelPosition, below.UnitLabelPosition, below.Subdivisions = PosBelow, UnitBelow, 2
	below.LabelFrequency = FreqDivisionsAndFirstMidpoint
	fixed := single
	fixed.Resize, fixed.Division, fixed.Divisions = ResizeFixed, 25, 3
	fixed.MarkPosition, fixed.MarkFrequency, fixed.LabelFrequency = PosBelow, FreqDivisions, FreqMajorDivisions
	fixed.UnitLabelPosition = UnitBeforeBar
	autoDivs := alt
	autoDivs.Resize, autoDivs.Division = ResizeAutoDivisions, 20
	autoDivs.Fill1, autoDivs.Fill2 = color.NRGBA{200, 0, 0, 255}, color.NRGBA{255, 230, 200, 255}
	autoDivs.Label = ScaleText{Color: color.NRGBA{0, 0, 160, 255}, Size: 10}
	autoDivs.LabelFrequency, autoDivs.UnitLabelPosition = FreqOne, UnitAbove
	noLabels := alt
	noLabels.LabelFrequency, noLabels.MarkFrequency, noLabels.MarkPosition = FreqNone, FreqDivisions, PosOn
	noLabels.BarHeightPt, noLabels.DivisionMarkHeightPt = 3, 9
	for _, tc := range []struct {
		name       string
		sb         ScaleBar
		wantDiv    float64
		wantDivs   int
		wantLabels []string
	}{
		{"scalebar_alternating", alt, 50, 4, []string{"0", "50", "100", "150", "200"}},
		{"scalebar_single", single, 50, 4, []string{"0", "50", "100", "150", "200"}},
		{"scalebar_before_zero", beforeZero, 50, 4, []string{"50", "37.5", "25", "12.5", "0", "50", "100", "150", "200"}},
		{"scalebar_labels_below", below, 50, 4, []string{"0", "25", "50", "100", "150", "200"}},
		{"scalebar_fixed", fixed, 25, 3, []string{"0", "75"}},
		{"scalebar_autodivisions", autoDivs, 20, 14, []string{"280"}},
		{"scalebar_no_labels", noLabels, 50, 4, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, lay := drawBar(t, tc.sb, 600, 60)
			if lay.Division != tc.wantDiv || lay.Divisions != tc.wantDivs {
				t.Errorf("division %v × %d, want %v × %d", lay.Division, lay.Divisions, tc.wantDiv, tc.wantDivs)
			}
			if !reflect.DeepEqual(lay.Labels, tc.wantLabels) {
				t.Errorf("labels %q, want %q", lay.Labels, tc.wantLabels)
			}
			// One division is Division units at PixelsPerUnit.
			if got := (lay.X1 - lay.Zero) / float64(lay.Divisions); got != tc.wantDiv*tc.sb.PixelsPerUnit {
				t.Errorf("division is %v px, want %v", got, tc.wantDiv*tc.sb.PixelsPerUnit)
			}
			if lay.X0 < 0 || lay.X1 > 600 {
				t.Errorf("bar %v..%v leaves the image", lay.X0, lay.X1)
			}
			checkGolden(t, tc.name, img)
		})
	}
}

func TestScaleBarAlternates(t *testing.T) {
	sb := blackWhiteBar(ScaleBarAlternating)
	sb.UnitLabel = ""
	img, lay := drawBar(t, sb, 600, 60)
	y := int((lay.Top + lay.Bottom) / 2)
	div := (lay.X1 - lay.Zero) / float64(lay.Divisions)
	for i := 0; i < lay.Divisions; i++ {
		x := int(lay.Zero + (float64(i)+0.5)*div)
		c := nrgbaAt(img, x, y)
		black := c.R < 40
		if black != (i%2 == 0) {
			t.Errorf("division %d at pixel (%d, %d) is %v", i, x, y, c)
		}
	}
}

// TestScaleBarVector draws both scale bar kinds as SVG and PDF: read back with rsvg-convert and
// pdftoppm, the alternating bar's first division is as long as in the raster.
func TestScaleBarVector(t *testing.T) {
	r := defaultRenderer()
	for _, kind := range []ScaleBarKind{ScaleBarAlternating, ScaleBarSingleDivision} {
		sb := blackWhiteBar(kind)
		_, lay := drawBar(t, sb, 600, 60)
		for _, f := range []Format{SVG, PDF} {
			s, err := r.NewVectorSurface(f, 600, 60, 96)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.DrawScaleBar(context.Background(), s, sb, 600, 60, 96); err != nil {
				t.Fatal(err)
			}
			img := rasterizeVector(t, f, s.Bytes(), 96)
			name := "scalebar_" + string(kind) + "_" + f.String()
			if kind == ScaleBarAlternating {
				y := int((lay.Top + lay.Bottom) / 2)
				n := 0
				for x := int(lay.Zero) + 2; x < 600; x++ {
					if c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA); c.R > 128 {
						break
					}
					n++
				}
				if want := int(lay.Division*sb.PixelsPerUnit) - 2; n < want-2 || n > want+2 {
					t.Errorf("%s: first division %d px black, want %d", name, n, want)
				}
			}
			checkGolden(t, name, img)
		}
	}
}

// TestScaleBarHostileNumbers: DrawScaleBar called directly with extreme numbers neither panics nor
// allocates without bound: it refuses the numbers that cannot be drawn (ErrInvalidView) and draws
// the others with their sizes clamped, all at once.
// scaleBarAllocBound bounds what one hostile scale bar may allocate: its image is allocated
// before, so this is the drawing's own work (masks, paths, glyphs).
const scaleBarAllocBound = 64 << 20

func TestScaleBarHostileNumbers(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name    string
		edit    func(*ScaleBar)
		w, h    int
		dpi     float64
		invalid error // the error DrawScaleBar wraps, or nil
	}{
		{"division 1e308", func(sb *ScaleBar) { sb.Division, sb.Resize = 1e308, ResizeFixed }, 4096, 4096, 96, ErrInvalidView},
		{"division NaN", func(sb *ScaleBar) { sb.Division, sb.Resize = nan, ResizeFixed }, 400, 40, 96, ErrInvalidView},
		{"division +Inf", func(sb *ScaleBar) { sb.Division = inf }, 400, 40, 96, ErrInvalidView},
		{"division negative", func(sb *ScaleBar) { sb.Division = -1 }, 400, 40, 96, ErrInvalidView},
		{"division too long", func(sb *ScaleBar) { sb.Division, sb.Resize = MaxScaleBarPixels, ResizeFixed }, 400, 40, 96, ErrInvalidView},
		{"bar too long", func(sb *ScaleBar) {
			sb.Division, sb.Divisions, sb.DivisionsBeforeZero, sb.Resize = MaxScaleBarPixels/150, 100, 100, ResizeFixed
		}, 400, 40, 96, ErrInvalidView},
		{"divisions to fit a huge division", func(sb *ScaleBar) { sb.Division, sb.Resize = MaxScaleBarPixels/4, ResizeAutoDivisions }, 400, 40, 96, nil},
		{"pixels per unit tiny", func(sb *ScaleBar) { sb.PixelsPerUnit = 1e-300 }, 400, 40, 96, nil},
		{"dpi 1e300", func(*ScaleBar) {}, 4096, 4096, 1e300, ErrInvalidView},
		{"dpi 100000", func(*ScaleBar) {}, 4096, 4096, 100000, ErrInvalidView},
		{"dpi NaN", func(*ScaleBar) {}, 400, 40, nan, ErrInvalidView},
		{"dpi negative", func(*ScaleBar) {}, 400, 40, -96, ErrInvalidView},
		{"too wide", func(*ScaleBar) {}, MaxImageSize + 1, 40, 96, ErrImageTooLarge},
		{"sizes huge at the largest DPI", func(sb *ScaleBar) {
			sb.BarHeightPt, sb.LabelGapPt, sb.UnitLabelGapPt = 1e300, inf, 1e9
			sb.DivisionMarkHeightPt, sb.SubdivisionMarkHeight, sb.Subdivisions = 1e300, 1e300, 100
			sb.Outline.Width, sb.DivisionMark.Width, sb.SubdivisionMark.Width = 1e300, inf, 1e9
			sb.Label.Size, sb.UnitText.Size = 1e300, inf
			sb.MarkFrequency = FreqDivisionsAndSubdivisions
		}, 4096, 4096, MaxDPI, nil},
		{"sizes NaN", func(sb *ScaleBar) {
			sb.BarHeightPt, sb.LabelGapPt, sb.Label.Size, sb.Outline.Width, sb.DivisionMarkHeightPt = nan, nan, nan, nan, nan
		}, 400, 40, 96, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := blackWhiteBar(ScaleBarAlternating)
			tc.edit(&sb)
			r := defaultRenderer()
			img := image.NewRGBA(image.Rect(0, 0, min(tc.w, MaxImageSize), tc.h))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			lay, err := r.DrawScaleBar(context.Background(), NewGGSurface(img, r.Fonts()), sb, tc.w, tc.h, tc.dpi)
			runtime.ReadMemStats(&after)
			// A guard against runaway work (the unbounded DPI took minutes and gigabytes), counted
			// in bytes allocated rather than in seconds, which a loaded machine stretches (a 30 s
			// bound once failed under -race at load 19). The 2 s answer the issue asks for is the
			// api-level hostile suite's.
			if n := after.TotalAlloc - before.TotalAlloc; n > scaleBarAllocBound {
				t.Errorf("allocated %d MiB drawing it, want at most %d MiB", n>>20, scaleBarAllocBound>>20)
			}
			if tc.invalid != nil {
				if !errors.Is(err, tc.invalid) {
					t.Fatalf("err = %v, want %v", err, tc.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []float64{lay.X0, lay.Zero, lay.X1, lay.Top, lay.Bottom} {
				if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 2*MaxScaleBarPixels {
					t.Fatalf("layout %+v is out of bounds", lay)
				}
			}
		})
	}
}

func TestFaceSizeBounded(t *testing.T) {
	fs := defaultRenderer().Fonts()
	for _, size := range []float64{1e300, math.Inf(1), 100000} {
		w, a, _ := fs.face(TextStyle{Size: size}).measure("0")
		if w > MaxTextPixels || a > MaxTextPixels {
			t.Errorf("a %g px '0' measures %g wide, %g high; want at most %d", size, w, a, MaxTextPixels)
		}
	}
	if w, _, _ := fs.face(TextStyle{Size: math.NaN()}).measure("0"); w > 1 {
		t.Errorf("a NaN px '0' measures %g wide", w)
	}
}
