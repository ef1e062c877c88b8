package task

// The payload's own description of how a request draws: a layer's drawing description and
// selection, custom graphics and scale bars. These are plain data with their own JSON names,
// kept apart from the service-definition and drawing types so that a change there cannot
// silently change what a queued task means; mapdraw converts both ways (mapdraw.DrawingPayload
// and mapdraw.DrawingFromPayload, and the same for graphics and scale bars), and its round-trip
// test fills every field. Changing the meaning of a field here bumps PayloadVersion.
//
// Enumerations (symbol types, styles, placements, …) travel as the service definition's
// strings (docs/service-definitions.md); the worker checks them as it draws.

// Color is red, green, blue and alpha, 0–255 each.
type Color [4]uint8

// Drawing is what a request changes of how one layer is drawn: its LayerDrawingDescription and its
// selection. The zero value changes nothing.
type Drawing struct {
	// Renderer replaces the layer's renderer when not nil.
	Renderer *Renderer `json:"renderer,omitempty"`
	// Labels replace the layer's label classes when not nil; empty (not nil) means no labels.
	Labels       []Label `json:"labels"`
	Transparency float64 `json:"transparency,omitempty"` // percent, 0 opaque to 100 invisible
	// ScaleSymbols, when not nil, says whether symbol sizes scale with the reference scale.
	ScaleSymbols *bool `json:"scaleSymbols,omitempty"`

	Selection       []int64 `json:"selection,omitempty"` // object ids
	SelectionColor  *Color  `json:"selectionColor,omitempty"`
	SelectionSymbol *Symbol `json:"selectionSymbol,omitempty"`
	BufferDistance  float64 `json:"bufferDistance,omitempty"` // map units
	ShowBuffer      bool    `json:"showBuffer,omitempty"`
	BufferSymbol    *Symbol `json:"bufferSymbol,omitempty"`
}

// Renderer is a simple, unique-value or class-breaks renderer.
type Renderer struct {
	Type           string        `json:"type"` // simple, uniqueValue or classBreaks
	Symbol         *Symbol       `json:"symbol,omitempty"`
	Label          string        `json:"label,omitempty"`
	Description    string        `json:"description,omitempty"`
	Fields         []string      `json:"fields,omitempty"`
	FieldDelimiter string        `json:"fieldDelimiter,omitempty"`
	Values         []UniqueValue `json:"values,omitempty"`
	Field          string        `json:"field,omitempty"`
	MinValue       *float64      `json:"minValue,omitempty"`
	Breaks         []ClassBreak  `json:"breaks,omitempty"`
	DefaultSymbol  *Symbol       `json:"defaultSymbol,omitempty"`
	DefaultLabel   string        `json:"defaultLabel,omitempty"`
}

// UniqueValue is one class of a unique-value renderer.
type UniqueValue struct {
	Values      []string `json:"values"`
	Label       string   `json:"label,omitempty"`
	Description string   `json:"description,omitempty"`
	Symbol      Symbol   `json:"symbol"`
}

// ClassBreak is one class of a class-breaks renderer.
type ClassBreak struct {
	MaxValue    float64 `json:"maxValue"`
	Label       string  `json:"label,omitempty"`
	Description string  `json:"description,omitempty"`
	Symbol      Symbol  `json:"symbol"`
}

// Symbol is a fill, line, marker, picture or character-marker symbol. Sizes and offsets are in
// points.
type Symbol struct {
	Type        string   `json:"type"`
	Color       Color    `json:"color"`
	FillStyle   string   `json:"fillStyle,omitempty"`
	LineStyle   string   `json:"lineStyle,omitempty"`
	MarkerStyle string   `json:"markerStyle,omitempty"`
	Width       float64  `json:"width,omitempty"`
	Size        float64  `json:"size,omitempty"`
	Outline     *Outline `json:"outline,omitempty"`
	Angle       float64  `json:"angle,omitempty"`
	XOffset     float64  `json:"xOffset,omitempty"`
	YOffset     float64  `json:"yOffset,omitempty"`

	// Picture is a picture symbol's image (PNG, JPEG, GIF or BMP bytes).
	Picture          []byte  `json:"picture,omitempty"`
	Height           float64 `json:"height,omitempty"`
	XScale           float64 `json:"xScale,omitempty"`
	YScale           float64 `json:"yScale,omitempty"`
	XSeparation      float64 `json:"xSeparation,omitempty"`
	YSeparation      float64 `json:"ySeparation,omitempty"`
	FgColor          *Color  `json:"fgColor,omitempty"`
	BgColor          *Color  `json:"bgColor,omitempty"`
	Swap1Bit         bool    `json:"swap1Bit,omitempty"`
	TransparentColor *Color  `json:"transparentColor,omitempty"`

	// Character and CharacterFont name a character marker's glyph.
	Character     rune `json:"character,omitempty"`
	CharacterFont Font `json:"characterFont,omitzero"`
}

// Outline is a fill or marker symbol's outline.
type Outline struct {
	Color Color   `json:"color"`
	Width float64 `json:"width"`
	Style string  `json:"style,omitempty"`
}

// Label is one label class.
type Label struct {
	Field      string     `json:"field,omitempty"`
	Expression string     `json:"expression,omitempty"`
	Text       []TextPart `json:"text,omitempty"`
	Font       Font       `json:"font"`
	Color      Color      `json:"color"`
	Halo       *Halo      `json:"halo,omitempty"`
	MinScale   float64    `json:"minScale,omitempty"`
	MaxScale   float64    `json:"maxScale,omitempty"`
	Priority   int        `json:"priority,omitempty"`
	Where      string     `json:"where,omitempty"`
	Placement  Placement  `json:"placement"`
}

// TextPart is a literal or a field's value in a label's text.
type TextPart struct {
	Literal string `json:"literal,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Placement says where a label class places its labels.
type Placement struct {
	Points           []string `json:"points,omitempty"`
	Offset           float64  `json:"offset,omitempty"`
	Line             string   `json:"line,omitempty"`
	Along            string   `json:"along,omitempty"`
	Orientation      string   `json:"orientation,omitempty"`
	Repeat           float64  `json:"repeat,omitempty"`
	AllParts         bool     `json:"allParts,omitempty"`
	PolygonStraight  bool     `json:"polygonStraight,omitempty"`
	Outside          bool     `json:"outside,omitempty"`
	RemoveDuplicates bool     `json:"removeDuplicates,omitempty"`
}

// Font is a font family, size in points and style.
type Font struct {
	Family        string  `json:"family,omitempty"`
	Size          float64 `json:"size,omitempty"`
	Bold          bool    `json:"bold,omitempty"`
	Italic        bool    `json:"italic,omitempty"`
	Underline     bool    `json:"underline,omitempty"`
	Strikethrough bool    `json:"strikethrough,omitempty"`
}

// Halo is a text halo; Width is in points.
type Halo struct {
	Color Color   `json:"color"`
	Width float64 `json:"width"`
}

// Graphic is one custom graphic in map coordinates: a marker at Parts[0][0], a line of Parts, a
// polygon of rings Parts, or Text anchored at Parts[0][0].
type Graphic struct {
	Kind   string         `json:"kind"` // marker, line, polygon or text
	Parts  [][][2]float64 `json:"parts"`
	Symbol *Symbol        `json:"symbol,omitempty"`
	Text   string         `json:"text,omitempty"`
	Font   *GraphicFont   `json:"font,omitempty"`
	// Align anchors text: horizontally 0 left to 1 right; vertically 0 the first baseline, 1 the
	// top, 0.5 the middle, -1 the bottom.
	Align [2]float64 `json:"align,omitempty"`
	Angle float64    `json:"angle,omitempty"` // degrees anticlockwise
}

// GraphicFont is a text graphic's font, colour, halo and background box.
type GraphicFont struct {
	Font  Font   `json:"font"`
	Color Color  `json:"color"`
	Halo  *Halo  `json:"halo,omitempty"`
	Back  *Color `json:"back,omitempty"`
}

// ScaleBar is a scale bar drawn by itself. Lengths named …Pt are points; Division is in ground
// units, of which the image shows PixelsPerUnit pixels per unit.
type ScaleBar struct {
	Kind                string  `json:"kind"` // alternating or single
	PixelsPerUnit       float64 `json:"pixelsPerUnit"`
	Division            float64 `json:"division,omitempty"`
	Divisions           int     `json:"divisions,omitempty"`
	DivisionsBeforeZero int     `json:"divisionsBeforeZero,omitempty"`
	Subdivisions        int     `json:"subdivisions,omitempty"`
	Resize              string  `json:"resize,omitempty"`
	BarHeightPt         float64 `json:"barHeight,omitempty"`

	Fill1   Color     `json:"fill1"`
	Fill2   Color     `json:"fill2"`
	Outline ScaleLine `json:"outline"`

	DivisionMark            ScaleLine `json:"divisionMark"`
	SubdivisionMark         ScaleLine `json:"subdivisionMark"`
	DivisionMarkHeightPt    float64   `json:"divisionMarkHeight,omitempty"`
	SubdivisionMarkHeightPt float64   `json:"subdivisionMarkHeight,omitempty"`
	MarkPosition            string    `json:"markPosition,omitempty"`
	MarkFrequency           string    `json:"markFrequency,omitempty"`

	LabelFrequency string       `json:"labelFrequency,omitempty"`
	LabelPosition  string       `json:"labelPosition,omitempty"`
	LabelGapPt     float64      `json:"labelGap,omitempty"`
	Label          ScaleText    `json:"label"`
	Number         NumberFormat `json:"number"`

	UnitLabel         string    `json:"unitLabel,omitempty"`
	UnitLabelPosition string    `json:"unitLabelPosition,omitempty"`
	UnitLabelGapPt    float64   `json:"unitLabelGap,omitempty"`
	UnitText          ScaleText `json:"unitText"`

	Background Color `json:"background"`
}

// ScaleLine is a scale bar's outline or marks.
type ScaleLine struct {
	Color Color   `json:"color"`
	Width float64 `json:"width"`
}

// ScaleText is a scale bar's label or unit text.
type ScaleText struct {
	Font  string  `json:"font,omitempty"`
	Size  float64 `json:"size,omitempty"`
	Color Color   `json:"color"`
}

// NumberFormat formats a scale bar's numbers.
type NumberFormat struct {
	Digits      int  `json:"digits"`
	Significant bool `json:"significant,omitempty"`
	Width       int  `json:"width,omitempty"`
	AlignLeft   bool `json:"alignLeft,omitempty"`
	Separator   bool `json:"separator,omitempty"`
	ZeroPad     bool `json:"zeroPad,omitempty"`
	ShowPlus    bool `json:"showPlus,omitempty"`
}
