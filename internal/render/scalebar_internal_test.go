package render

import (
	"context"
	"image"
	"image/color"
	"reflect"
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
