package render

// MaxScaledPoints bounds the sizes Scaled returns, in points: 3072 pt is 4096 pixels (the largest
// image) at 96 DPI, so a symbol scaled up by a reference scale far below the map's scale cannot
// make the renderer stroke or fill shapes many times the size of the image.
const MaxScaledPoints = 3072

// Scaled returns s with every size multiplied by f: marker size, stroke width, dashes, marker
// offset, hatch spacing, and a pattern's tile size, gaps and offset (the sizes that mean a default
// when 0 are set to it first), each at most MaxScaledPoints. Colours, styles and angles do not
// change. It is how a map's reference scale scales symbols (ArcMap's IMap.ReferenceScale: symbols
// have their sizes at the reference scale, f = reference scale / map scale). f = 1, or f not
// positive, returns s unchanged.
func (s Symbol) Scaled(f float64) Symbol {
	if f == 1 || !(f > 0) {
		return s
	}
	sc := func(v float64) float64 { return min(v*f, MaxScaledPoints) }
	s.StrokeWidth = sc(s.StrokeWidth)
	if len(s.Dash) > 0 {
		d := make([]float64, len(s.Dash))
		for i, v := range s.Dash {
			d[i] = sc(v)
		}
		s.Dash = d
	}
	if s.MarkerSize == 0 && s.Picture != nil {
		s.MarkerSize = float64(s.Picture.Bounds().Dx()) * 72 / 96
	}
	s.MarkerSize = sc(s.MarkerSize)
	s.MarkerOffset = [2]float64{sc(s.MarkerOffset[0]), sc(s.MarkerOffset[1])}
	if s.Hatch != HatchNone {
		s.HatchSpacing = sc(orDefault(s.HatchSpacing, defaultHatchSpacing))
	}
	if s.Pattern != nil {
		w, h := PictureSize(s.Pattern, s.PatternWidth, s.PatternHeight)
		s.PatternWidth, s.PatternHeight = sc(w), sc(h)
		s.PatternGap = [2]float64{sc(s.PatternGap[0]), sc(s.PatternGap[1])}
		s.PatternOffset = [2]float64{sc(s.PatternOffset[0]), sc(s.PatternOffset[1])}
	}
	return s
}

// defaultLabelSize is the text size of a LabelStyle whose Size is 0, in points.
const defaultLabelSize = 8

// Scaled returns a copy of l with its text size, halo width, offset and line repeat distance
// multiplied by f, each at
// most MaxScaledPoints, for a reference scale as Symbol.Scaled; f = 1 (or not positive) and a nil
// l return l.
func (l *LabelStyle) Scaled(f float64) *LabelStyle {
	if l == nil || f == 1 || !(f > 0) {
		return l
	}
	out := *l
	out.Size = min(orDefault(l.Size, defaultLabelSize)*f, MaxScaledPoints)
	out.HaloWidth = min(l.HaloWidth*f, MaxScaledPoints)
	out.Offset = min(l.Offset*f, MaxScaledPoints)
	out.Placement.LineRepeat = min(l.Placement.LineRepeat*f, MaxScaledPoints)
	return &out
}
