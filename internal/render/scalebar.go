package render

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
)

// ScaleBarKind is the look of a scale bar.
type ScaleBarKind string

// Scale bar kinds: alternating filled divisions (ArcGIS's AlternatingScaleBar) or one bar with
// division marks (SingleDivisionScaleBar).
const (
	ScaleBarAlternating    ScaleBarKind = "alternating"
	ScaleBarSingleDivision ScaleBarKind = "single"
)

// VertPos places marks and labels relative to the bar: above it, on its top edge, centred on it, on
// its bottom edge, or below it.
type VertPos string

// Vertical positions (ArcGIS's esriVertPosEnum).
const (
	PosAbove  VertPos = "above"
	PosTop    VertPos = "top"
	PosOn     VertPos = "on"
	PosBottom VertPos = "bottom"
	PosBelow  VertPos = "below"
)

// Frequency says which bar positions get a label or a mark (ArcGIS's esriScaleBarFrequency).
type Frequency string

// Label and mark frequencies: none; one at the end; the start, zero and the end; every division;
// every division and the middle of the subdivided division; every division and every subdivision
// (only one division is subdivided, so the last two are the same).
const (
	FreqNone                      Frequency = "none"
	FreqOne                       Frequency = "one"
	FreqMajorDivisions            Frequency = "major"
	FreqDivisions                 Frequency = "divisions"
	FreqDivisionsAndFirstMidpoint Frequency = "divisions+midpoint"
	FreqDivisionsAndFirstSubdivs  Frequency = "divisions+firstsubdivisions"
	FreqDivisionsAndSubdivisions  Frequency = "divisions+subdivisions"
)

// maxDivisions bounds the divisions (and subdivisions) of a scale bar.
const maxDivisions = 100

// MaxScaleBarPixels bounds the length of a scale bar, in pixels: 2²², more than 200 divisions
// (the most a bar has) each as long as the widest image a configuration allows (16384 pixels),
// and well within the rasterizers' fixed-point range (2²⁵ pixels). A longer bar, or a longer
// division, is an error.
const MaxScaleBarPixels = 1 << 22

// Scale bar defaults, in points.
const (
	defaultUnitLabelGapPt          = 3
	defaultLabelGapPt              = 3
	scaleBarTextSizePt             = 8
	scaleBarDefaultBarHeightPt     = 5
	scaleBarDefaultMarkHeightPt    = 7
	scaleBarDefaultSubMarkHeightPt = 4
)

// UnitLabelPos places the unit label (ArcGIS's esriScaleBarPos).
type UnitLabelPos string

// Unit label positions.
const (
	UnitAbove        UnitLabelPos = "above"
	UnitBeforeLabels UnitLabelPos = "beforelabels"
	UnitAfterLabels  UnitLabelPos = "afterlabels"
	UnitBeforeBar    UnitLabelPos = "beforebar"
	UnitAfterBar     UnitLabelPos = "afterbar"
	UnitBelow        UnitLabelPos = "below"
)

// Resize says what adapts when the bar is fitted to the image (ArcGIS's esriScaleBarResizeHint).
type Resize string

// Resize hints: nothing (Division and Divisions as given), the division's length (a round number
// such that Divisions fill the width), or the number of divisions (as many of Division as fit).
const (
	ResizeFixed         Resize = "fixed"
	ResizeAutoDivision  Resize = "autodivision"
	ResizeAutoDivisions Resize = "autodivisions"
)

// ScaleText is the style of scale bar text; Size is in points, 0 meaning 8.
type ScaleText struct {
	Font  string      `json:"font,omitempty"`
	Size  float64     `json:"size,omitempty"`
	Color color.NRGBA `json:"color"`
}

// ScaleLine is a line of a scale bar; Width is in points.
type ScaleLine struct {
	Color color.NRGBA `json:"color"`
	Width float64     `json:"width"`
}

// NumberFormat formats scale bar numbers (ArcGIS's NumericFormat).
type NumberFormat struct {
	// Digits is the number of decimals, or of significant digits when Significant; -1 means as
	// many as the value needs (up to 6 decimals).
	Digits      int  `json:"digits"`
	Significant bool `json:"significant,omitempty"`
	// Width pads numbers to at least Width characters, on the left (right-aligned) unless AlignLeft.
	Width     int  `json:"width,omitempty"`
	AlignLeft bool `json:"alignLeft,omitempty"`
	Separator bool `json:"separator,omitempty"` // thousands separator ","
	ZeroPad   bool `json:"zeroPad,omitempty"`   // keep trailing zeros of the decimals
	ShowPlus  bool `json:"showPlus,omitempty"`
}

// Format formats v.
func (nf NumberFormat) Format(v float64) string {
	var s string
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		s = strconv.FormatFloat(v, 'g', -1, 64)
	case nf.Digits < 0:
		s = strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
	case nf.Significant:
		d := max(1, nf.Digits)
		if v == 0 {
			s = "0"
		} else {
			mag := int(math.Floor(math.Log10(math.Abs(v)))) + 1
			dec := max(0, d-mag)
			p := math.Pow(10, float64(d-mag))
			s = strconv.FormatFloat(math.Round(v*p)/p, 'f', dec, 64)
		}
	default:
		s = strconv.FormatFloat(v, 'f', nf.Digits, 64)
	}
	if !nf.ZeroPad && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if nf.Separator {
		s = groupThousands(s)
	}
	if nf.ShowPlus && v > 0 {
		s = "+" + s
	}
	if n := nf.Width - len(s); n > 0 {
		if nf.AlignLeft {
			s += strings.Repeat(" ", n)
		} else {
			s = strings.Repeat(" ", n) + s
		}
	}
	return s
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// ScaleBar describes a scale bar image. Lengths named …Pt are in points (converted with the image's
// DPI); Division is in ground units, of which the image shows PixelsPerUnit pixels per unit.
//
// Subdivisions divide one division: the first one right of zero, or, with DivisionsBeforeZero, the
// part left of zero (each of its divisions), as ArcMap draws them. Divisions, divisions before zero
// and subdivisions are at most 100 each.
type ScaleBar struct {
	Kind          ScaleBarKind `json:"kind"`
	PixelsPerUnit float64      `json:"pixelsPerUnit"`
	// Division is the length of one division in units; 0 picks a round one.
	Division            float64 `json:"division,omitempty"`
	Divisions           int     `json:"divisions,omitempty"` // 0 means 4
	DivisionsBeforeZero int     `json:"divisionsBeforeZero,omitempty"`
	Subdivisions        int     `json:"subdivisions,omitempty"`
	Resize              Resize  `json:"resize,omitempty"`
	BarHeightPt         float64 `json:"barHeight,omitempty"`

	// Fill1 and Fill2 alternate in an alternating bar; a single-division bar uses Fill1. Outline
	// borders the bar.
	Fill1   color.NRGBA `json:"fill1"`
	Fill2   color.NRGBA `json:"fill2"`
	Outline ScaleLine   `json:"outline"`

	DivisionMark          ScaleLine `json:"divisionMark"`
	SubdivisionMark       ScaleLine `json:"subdivisionMark"`
	DivisionMarkHeightPt  float64   `json:"divisionMarkHeight,omitempty"`
	SubdivisionMarkHeight float64   `json:"subdivisionMarkHeight,omitempty"` // points
	MarkPosition          VertPos   `json:"markPosition,omitempty"`
	MarkFrequency         Frequency `json:"markFrequency,omitempty"`

	LabelFrequency Frequency    `json:"labelFrequency,omitempty"`
	LabelPosition  VertPos      `json:"labelPosition,omitempty"`
	LabelGapPt     float64      `json:"labelGap,omitempty"`
	Label          ScaleText    `json:"label"`
	Number         NumberFormat `json:"number"`

	UnitLabel         string       `json:"unitLabel,omitempty"`
	UnitLabelPosition UnitLabelPos `json:"unitLabelPosition,omitempty"`
	UnitLabelGapPt    float64      `json:"unitLabelGap,omitempty"`
	UnitText          ScaleText    `json:"unitText"`

	Background color.NRGBA `json:"background"`
}

// niceBelow returns the largest 1, 2 or 5 times a power of ten not above x.
func niceBelow(x float64) float64 {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= x*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// ScaleBarLayout is where DrawScaleBar put things, in pixels, for tests and callers that want to
// know: the x of zero and of the bar's ends, the division length in units and the division count.
type ScaleBarLayout struct {
	X0, Zero, X1    float64
	Top, Bottom     float64
	Division        float64
	Divisions       int
	Labels          []string
	UnitLabelString string
}

// tick is one position along the bar, in units from zero.
type tick struct {
	at    float64
	major bool // a division boundary (or the bar's ends)
	sub   bool // a subdivision boundary
	mid   bool // the middle of the subdivided division (a subdivision boundary or not)
}

// DrawScaleBar draws sb centred on a surface of width×height pixels at dpi and reports its layout.
//
// Whatever sb holds, the drawing is bounded: sizes in points are taken between 0 and
// MaxScaledPoints (a non-finite or negative size as its default), text is at most MaxTextPixels,
// and a size or dpi out of range (View.Validate's rules), a non-finite or negative division, or a
// bar longer than MaxScaleBarPixels is an error wrapping ErrInvalidView, before anything is drawn.
func (r *Renderer) DrawScaleBar(ctx context.Context, s Surface, sb ScaleBar, width, height int, dpi float64) (ScaleBarLayout, error) {
	if err := ctx.Err(); err != nil {
		return ScaleBarLayout{}, err
	}
	v := View{Extent: orb.Bound{Max: orb.Point{1, 1}}, Width: width, Height: height, DPI: dpi}
	if err := v.Validate(); err != nil {
		return ScaleBarLayout{}, fmt.Errorf("scale bar: %w", err)
	}
	pt := v.PointsToPixels
	W, H := float64(width), float64(height)

	if sb.Divisions <= 0 {
		sb.Divisions = 4
	}
	sb.Divisions = min(sb.Divisions, maxDivisions)
	sb.DivisionsBeforeZero = max(0, min(maxDivisions, sb.DivisionsBeforeZero))
	sb.Subdivisions = max(0, min(maxDivisions, sb.Subdivisions))
	if !(sb.PixelsPerUnit > 0) || math.IsInf(sb.PixelsPerUnit, 0) {
		return ScaleBarLayout{}, fmt.Errorf("%w: scale bar pixels per unit %g must be positive", ErrInvalidView, sb.PixelsPerUnit)
	}
	if !(sb.Division >= 0) || math.IsInf(sb.Division, 0) {
		return ScaleBarLayout{}, fmt.Errorf("%w: scale bar division %g must be a finite number, not negative", ErrInvalidView, sb.Division)
	}
	if px := sb.Division * sb.PixelsPerUnit; !(px <= MaxScaleBarPixels) {
		return ScaleBarLayout{}, fmt.Errorf("%w: scale bar division %g is %g pixels long, more than %d", ErrInvalidView, sb.Division, px, MaxScaleBarPixels)
	}
	for _, p := range []*float64{&sb.BarHeightPt, &sb.LabelGapPt, &sb.UnitLabelGapPt, &sb.DivisionMarkHeightPt, &sb.SubdivisionMarkHeight,
		&sb.Outline.Width, &sb.DivisionMark.Width, &sb.SubdivisionMark.Width, &sb.Label.Size, &sb.UnitText.Size} {
		*p = boundedPoints(*p)
	}
	s.Clear(sb.Background)
	if sb.Kind == "" {
		sb.Kind = ScaleBarAlternating
	}
	if sb.LabelFrequency == "" {
		sb.LabelFrequency = FreqDivisions
	}
	if sb.LabelPosition == "" {
		sb.LabelPosition = PosAbove
	}
	if sb.UnitLabelPosition == "" {
		sb.UnitLabelPosition = UnitAfterLabels
	}
	if sb.MarkPosition == "" {
		sb.MarkPosition = PosAbove
	}
	if sb.MarkFrequency == "" {
		if sb.Kind == ScaleBarSingleDivision {
			sb.MarkFrequency = FreqDivisionsAndSubdivisions
		} else {
			sb.MarkFrequency = FreqNone
		}
	}
	barH := pt(sb.BarHeightPt)
	if sb.BarHeightPt <= 0 {
		barH = pt(scaleBarDefaultBarHeightPt)
	}
	labelStyle := textStyle(sb.Label, pt)
	unitStyle := textStyle(sb.UnitText, pt)
	labelGap := pt(orDefault(sb.LabelGapPt, defaultLabelGapPt))
	unitGap := pt(orDefault(sb.UnitLabelGapPt, defaultUnitLabelGapPt))
	markH := pt(orDefault(sb.DivisionMarkHeightPt, scaleBarDefaultMarkHeightPt))
	subMarkH := pt(orDefault(sb.SubdivisionMarkHeight, scaleBarDefaultSubMarkHeightPt))
	unitText := sb.UnitLabel
	unitM := s.MeasureText(unitText, unitStyle)
	unitBeside := unitText != "" && (sb.UnitLabelPosition == UnitBeforeBar || sb.UnitLabelPosition == UnitAfterBar ||
		sb.UnitLabelPosition == UnitBeforeLabels || sb.UnitLabelPosition == UnitAfterLabels)
	margin := pt(2)

	// Fit: room for the bar is the width less the unit label beside it and half a label at each end.
	fit := func(div float64, n int) (float64, int) {
		total := float64(n + sb.DivisionsBeforeZero)
		maxLabel := s.MeasureText(sb.Number.Format(div*float64(max(n, sb.DivisionsBeforeZero))), labelStyle).Width
		room := W - 2*margin - maxLabel
		if unitBeside {
			room -= unitM.Width + unitGap
		}
		room = max(room, 1)
		ppu := sb.PixelsPerUnit
		switch {
		case sb.Resize == ResizeAutoDivisions && div > 0:
			n = max(1, min(maxDivisions, int(math.Floor(room/(div*ppu)))-sb.DivisionsBeforeZero))
		case sb.Resize == ResizeFixed && div > 0:
		default: // auto division, or no division given
			div = niceBelow(room / total / ppu)
		}
		return div, n
	}
	div, n := sb.Division, sb.Divisions
	if sb.Resize == ResizeAutoDivisions && div <= 0 {
		div, n = fit(0, n)
	}
	div, n = fit(div, n)
	div, n = fit(div, n) // again, with the labels of the chosen division
	divPx := div * sb.PixelsPerUnit
	barW := divPx * float64(n+sb.DivisionsBeforeZero)
	if !(barW <= MaxScaleBarPixels) {
		return ScaleBarLayout{}, fmt.Errorf("%w: scale bar of %d divisions of %g is %g pixels long, more than %d", ErrInvalidView, n+sb.DivisionsBeforeZero, div, barW, MaxScaleBarPixels)
	}

	// Labels: positions in units from zero.
	ticks := scaleTicks(div, n, sb.DivisionsBeforeZero, sb.Subdivisions)
	labels := selectTicks(ticks, sb.LabelFrequency)
	marks := selectTicks(ticks, sb.MarkFrequency)
	if len(labels) == 0 {
		// No labels to stand beside: the unit label goes beside the bar.
		switch sb.UnitLabelPosition {
		case UnitBeforeLabels:
			sb.UnitLabelPosition = UnitBeforeBar
		case UnitAfterLabels:
			sb.UnitLabelPosition = UnitAfterBar
		}
	}
	texts := make([]string, len(labels))
	lm := s.MeasureText("0123456789", labelStyle)
	firstW, lastW := 0.0, 0.0
	for i, t := range labels {
		texts[i] = sb.Number.Format(math.Abs(t.at))
		w := s.MeasureText(texts[i], labelStyle).Width
		if i == 0 {
			firstW = w
		}
		lastW = w
	}

	// Horizontal layout: [unit before] bar [unit after], centred.
	left := firstW / 2
	right := lastW / 2
	if unitBeside {
		switch sb.UnitLabelPosition {
		case UnitBeforeBar, UnitBeforeLabels:
			left = max(left, 0) + unitM.Width + unitGap
		default:
			right = max(right, 0) + unitM.Width + unitGap
		}
	}
	x0 := math.Round((W-(left+barW+right))/2 + left)
	zero := x0 + float64(sb.DivisionsBeforeZero)*divPx
	x1 := x0 + barW

	// Vertical layout: labels and marks above and below the bar, centred as a whole.
	labelH := lm.Ascent + lm.Descent
	above, below := 0.0, 0.0
	if len(labels) > 0 {
		switch sb.LabelPosition {
		case PosAbove:
			above = labelH + labelGap
		case PosTop:
			above = labelH / 2
		case PosBelow:
			below = labelH + labelGap
		case PosBottom:
			below = labelH / 2
		}
	}
	if len(marks) > 0 {
		switch sb.MarkPosition {
		case PosAbove:
			above = max(above, markH)
		case PosBelow:
			below = max(below, markH)
		case PosOn:
			above, below = max(above, (markH-barH)/2), max(below, (markH-barH)/2)
		case PosTop:
			below = max(below, markH-barH)
		case PosBottom:
			above = max(above, markH-barH)
		}
	}
	unitH := unitM.Ascent + unitM.Descent
	if unitText != "" && sb.UnitLabelPosition == UnitAbove {
		above += unitH + unitGap
	}
	if unitText != "" && sb.UnitLabelPosition == UnitBelow {
		below += unitH + unitGap
	}
	top := math.Round((H-(above+barH+below))/2 + above)
	bottom := top + barH

	// The bar.
	rect := func(a, b float64, c color.NRGBA) {
		if c.A == 0 || b <= a {
			return
		}
		rectPath(s, a, top, b, bottom)
		s.Fill(c)
	}
	switch sb.Kind {
	case ScaleBarSingleDivision:
		rect(x0, x1, sb.Fill1)
	default:
		// Alternate over every segment: the subdivisions, then the divisions.
		segs := segments(ticks)
		for i, sg := range segs {
			c := sb.Fill1
			if i%2 == 1 {
				c = sb.Fill2
			}
			rect(zero+sg[0]*sb.PixelsPerUnit, zero+sg[1]*sb.PixelsPerUnit, c)
		}
	}
	if sb.Outline.Color.A > 0 && sb.Outline.Width > 0 {
		rectPath(s, x0, top, x1, bottom)
		s.Stroke(StrokeStyle{Color: sb.Outline.Color, Width: pt(sb.Outline.Width), Join: JoinMiter, Cap: CapSquare})
	}

	// Marks.
	for _, t := range marks {
		x := zero + t.at*sb.PixelsPerUnit
		line, h := sb.DivisionMark, markH
		if !t.major {
			line, h = sb.SubdivisionMark, subMarkH
		}
		if line.Color.A == 0 || line.Width <= 0 {
			continue
		}
		var y0, y1 float64
		switch sb.MarkPosition {
		case PosAbove:
			y0, y1 = top-h, top
		case PosTop:
			y0, y1 = top, top+h
		case PosBottom:
			y0, y1 = bottom-h, bottom
		case PosBelow:
			y0, y1 = bottom, bottom+h
		default:
			mid := (top + bottom) / 2
			y0, y1 = mid-h/2, mid+h/2
		}
		s.NewPath()
		s.MoveTo(x, y0)
		s.LineTo(x, y1)
		s.Stroke(StrokeStyle{Color: line.Color, Width: pt(line.Width)})
	}

	// Labels.
	var baseline float64
	switch sb.LabelPosition {
	case PosAbove:
		baseline = top - labelGap - lm.Descent
	case PosTop:
		baseline = top + (lm.Ascent-lm.Descent)/2
	case PosOn:
		baseline = (top+bottom)/2 + (lm.Ascent-lm.Descent)/2
	case PosBottom:
		baseline = bottom + (lm.Ascent-lm.Descent)/2
	default:
		baseline = bottom + labelGap + lm.Ascent
	}
	for i, t := range labels {
		w := s.MeasureText(texts[i], labelStyle).Width
		s.Text(texts[i], zero+t.at*sb.PixelsPerUnit-w/2, baseline, labelStyle)
	}

	// Unit label.
	if unitText != "" {
		var ux, uy float64
		mid := (top+bottom)/2 + (unitM.Ascent-unitM.Descent)/2
		switch sb.UnitLabelPosition {
		case UnitAbove:
			ux = (x0+x1)/2 - unitM.Width/2
			uy = top - above + unitM.Ascent
		case UnitBelow:
			ux = (x0+x1)/2 - unitM.Width/2
			uy = bottom + below - unitM.Descent
		case UnitBeforeBar:
			ux, uy = x0-firstW/2-unitGap-unitM.Width, mid
		case UnitAfterBar:
			ux, uy = x1+lastW/2+unitGap, mid
		case UnitBeforeLabels:
			ux, uy = x0-firstW/2-unitGap-unitM.Width, baseline
		default:
			ux, uy = x1+lastW/2+unitGap, baseline
		}
		s.Text(unitText, ux, uy, unitStyle)
	}
	return ScaleBarLayout{X0: x0, Zero: zero, X1: x1, Top: top, Bottom: bottom, Division: div, Divisions: n, Labels: texts, UnitLabelString: unitText}, nil
}

func orDefault(v, d float64) float64 {
	if v > 0 {
		return v
	}
	return d
}

// boundedPoints is a size in points between 0 and MaxScaledPoints; a negative or non-finite
// size is 0 (the default, or nothing).
func boundedPoints(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	return min(v, MaxScaledPoints)
}

func textStyle(t ScaleText, pt func(float64) float64) TextStyle {
	size := t.Size
	if size <= 0 {
		size = scaleBarTextSizePt
	}
	return TextStyle{Font: t.Font, Size: min(pt(size), MaxTextPixels), Color: t.Color}
}

// scaleTicks returns every division boundary and subdivision position, in units from zero,
// ordered left to right.
func scaleTicks(div float64, n, before, subs int) []tick {
	var ts []tick
	sub := func(from float64) {
		for k := 1; k < subs; k++ {
			ts = append(ts, tick{at: from + div*float64(k)/float64(subs), sub: true, mid: subs%2 == 0 && k == subs/2})
		}
	}
	for i := -before; i <= n; i++ {
		ts = append(ts, tick{at: float64(i) * div, major: true})
		if i < n && subs > 1 && ((before > 0 && i < 0) || (before == 0 && i == 0)) {
			sub(float64(i) * div)
		}
	}
	if subs <= 1 && n > 0 {
		// No subdivisions: the midpoint of the first division still exists for FreqDivisionsAndFirstMidpoint.
		first := 0.0
		if before > 0 {
			first = -div
		}
		ts = append(ts, tick{at: first + div/2, mid: true})
	}
	// Keep them ordered.
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].at < ts[j-1].at; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
	return ts
}

// segments returns the spans between consecutive division and subdivision boundaries, for
// alternating fills.
func segments(ts []tick) [][2]float64 {
	var out [][2]float64
	prev := math.NaN()
	for _, t := range ts {
		if !t.major && !t.sub {
			continue
		}
		if !math.IsNaN(prev) {
			out = append(out, [2]float64{prev, t.at})
		}
		prev = t.at
	}
	return out
}

// selectTicks picks the ticks a frequency labels or marks.
func selectTicks(ts []tick, f Frequency) []tick {
	var out []tick
	first, last := ts[0].at, ts[len(ts)-1].at
	for _, t := range ts {
		var ok bool
		switch f {
		case FreqNone:
		case FreqOne:
			ok = t.major && t.at == last
		case FreqMajorDivisions:
			ok = t.major && (t.at == first || t.at == 0 || t.at == last)
		case FreqDivisions:
			ok = t.major
		case FreqDivisionsAndFirstMidpoint:
			ok = t.major || t.mid
		case FreqDivisionsAndFirstSubdivs, FreqDivisionsAndSubdivisions:
			ok = t.major || t.sub
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}
