package symbology

import (
	"errors"
	"strconv"
	"strings"
)

// Label is one label class of a layer.
type Label struct {
	// Field (`field`) labels each feature with one attribute. Exactly one
	// of field and expression is required.
	Field string
	// Expression (`expression`) is a text template in which [FIELD] is
	// replaced by the feature's value, e.g. "[NAME] ([ISO_N3])".
	Expression string
	// Text is Field or Expression parsed into literal and field parts.
	Text []TextPart
	// Font (`font`, default DejaVuSans 8 pt).
	Font Font
	// Color (`color`, default opaque black) is the text colour.
	Color Color
	// Halo (`halo`, default none) is the outline drawn around the glyphs.
	Halo *Halo
	// ScaleRange (`minScale`, `maxScale`, default 0/0) limits when the
	// class is labelled, with the same semantics as a layer's.
	ScaleRange
	// Priority (`priority`, default 0): classes with lower numbers are
	// placed first and win conflicts; ties go to the layer drawn on top.
	Priority int
	// Where limits the class to the features matching this where clause.
	// Set from requests (LabelClassDescription/WhereClause), not from YAML.
	Where string
	// Placement (`placement`, default: the default placement of each
	// geometry type) says where the class's labels go.
	Placement LabelPlacement
}

// LabelPlacement is where a label class puts its labels (`placement`). The
// zero value is the default placement: point labels at the best of eight
// positions, line labels once, curved along the middle of the longest part,
// polygon labels horizontally inside.
type LabelPlacement struct {
	// Points (`point`, default `best`) lists the positions tried around a
	// point, in order: `right`, `above-right`, `below-right`, `left`,
	// `above-left`, `below-left`, `above`, `below`, `center`, or the single
	// word `best`: right, above-right, below-right, left, above-left,
	// below-left, above, below. Empty means best.
	Points []PointPosition
	// Offset (`offset`, points, default 0) is the distance from a point to
	// its label (0: half the marker plus 2 points), from a line's stroke to a
	// label above or below it (0: 2 points), and from a polygon's box to a
	// label placed outside it (0: 2 points).
	Offset float64
	// Line (`line`: `on`, `above` or `below`, default on) is the side of the
	// line (on screen) line labels are drawn on.
	Line LineSide
	// Along (`along`: `middle`, `start` or `end`, default middle) is where
	// along the visible part of a line its label is tried first.
	Along LineAnchor
	// Orientation (`orientation`: `curved`, `straight` or `horizontal`,
	// default curved) is how a line label follows its line.
	Orientation LineOrientation
	// Repeat (`repeat`, points, default 0) repeats a line's label once per
	// stretch of this length; 0 labels each line once.
	Repeat float64
	// AllParts (`parts`: `longest` or `all`, default longest) labels every
	// part of a multipart line instead of only its longest.
	AllParts bool
	// PolygonStraight (`polygon`: `horizontal` or `straight`, default
	// horizontal) turns polygon labels to the polygon's main direction.
	PolygonStraight bool
	// Outside (`outside`, default false) lets a polygon label that fits
	// nowhere inside the polygon go around it like a point label.
	Outside bool
	// RemoveDuplicates (`duplicates`: `keep` or `remove`, default keep)
	// labels each distinct text of the class once per drawing.
	RemoveDuplicates bool
}

// PointPosition is a position of a label around its point.
type PointPosition string

// Point label positions.
const (
	PointRight      PointPosition = "right"
	PointAboveRight PointPosition = "above-right"
	PointBelowRight PointPosition = "below-right"
	PointLeft       PointPosition = "left"
	PointAboveLeft  PointPosition = "above-left"
	PointBelowLeft  PointPosition = "below-left"
	PointAbove      PointPosition = "above"
	PointBelow      PointPosition = "below"
	PointCenter     PointPosition = "center"
)

// LineSide is the side of its line a line label is drawn on.
type LineSide string

// Line sides; "" is LineOn.
const (
	LineOn    LineSide = "on"
	LineAbove LineSide = "above"
	LineBelow LineSide = "below"
)

// LineAnchor is where along a line its label is tried first.
type LineAnchor string

// Line anchors; "" is LineMiddle.
const (
	LineMiddle LineAnchor = "middle"
	LineStart  LineAnchor = "start"
	LineEnd    LineAnchor = "end"
)

// LineOrientation is how a line label follows its line.
type LineOrientation string

// Line orientations; "" is LineCurved.
const (
	LineCurved     LineOrientation = "curved"
	LineStraight   LineOrientation = "straight"
	LineHorizontal LineOrientation = "horizontal"
)

// TextPart is a literal piece of label text or a field reference.
type TextPart struct {
	Literal string // used when Field is ""
	Field   string
}

// Format builds the label text for a feature; value returns a field's
// value (nil for NULL, which renders as "").
func (l *Label) Format(value func(field string) any) string {
	var b strings.Builder
	for _, p := range l.Text {
		if p.Field == "" {
			b.WriteString(p.Literal)
			continue
		}
		if v := value(p.Field); v != nil {
			b.WriteString(FormatValue(v))
		}
	}
	return b.String()
}

// Font is a label font.
type Font struct {
	// Family (`family`, default "DejaVuSans"). Every family is drawn
	// with DejaVu Sans, in the weight and style asked for.
	Family string
	// Size (`size`, default 8) in points.
	Size float64
	// Bold (`weight`: `normal` or `bold`, default normal), Italic
	// (`style`: `normal`, `italic` or `oblique`, default normal),
	// Underline and Strikethrough (`decoration`: `none`, `underline` or
	// `line-through`, default none), as in ArcGIS's text symbol fonts.
	Bold, Italic, Underline, Strikethrough bool
}

// Halo is a label halo.
type Halo struct {
	// Color (`color`, default opaque white).
	Color Color
	// Width (`width`, default 1) in points.
	Width float64
}

// ParseLabelExpression parses a label template: text in which [FIELD]
// stands for a field's value. "[[" and "]]" are literal brackets.
func ParseLabelExpression(s string) ([]TextPart, error) {
	var parts []TextPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, TextPart{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "[["):
			lit.WriteByte('[')
			i++
		case strings.HasPrefix(s[i:], "]]"):
			lit.WriteByte(']')
			i++
		case s[i] == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [ at offset " + strconv.Itoa(i))
			}
			name := strings.TrimSpace(s[i+1 : i+end])
			if name == "" {
				return nil, errors.New("empty field reference [] at offset " + strconv.Itoa(i))
			}
			flush()
			parts = append(parts, TextPart{Field: name})
			i += end
		case s[i] == ']':
			return nil, errors.New("unmatched ] at offset " + strconv.Itoa(i))
		default:
			lit.WriteByte(s[i])
		}
	}
	flush()
	if len(parts) == 0 {
		return nil, errors.New("expression is empty")
	}
	return parts, nil
}

// ScaleRange limits the map scales at which something is drawn, with
// ArcGIS semantics: scales are denominators (1:MinScale), MinScale is the
// most zoomed-out scale and MaxScale the most zoomed-in one; 0 means no
// limit on that side.
type ScaleRange struct {
	// MinScale (`minScale`, default 0): not drawn when the scale
	// denominator is larger.
	MinScale float64
	// MaxScale (`maxScale`, default 0): not drawn when the scale
	// denominator is smaller.
	MaxScale float64
}

// Contains reports whether a map at scale 1:scale is within the range.
func (r ScaleRange) Contains(scale float64) bool {
	return (r.MinScale == 0 || scale <= r.MinScale) && (r.MaxScale == 0 || scale >= r.MaxScale)
}
