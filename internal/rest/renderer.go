package rest

import "github.com/mapfarm/mapfarm/internal/gisxml"

// drawingInfoJSON is a layer's drawingInfo: its renderer in ArcGIS JSON, its transparency.
type drawingInfoJSON struct {
	Renderer     any  `json:"renderer"` // one of the *RendererJSON, nil (null) for another
	Transparency int  `json:"transparency"`
	LabelingInfo null `json:"labelingInfo"`
}

// drawingInfo describes a feature layer's drawing; nil (null) for another.
func drawingInfo(dd gisxml.LayerDrawingDescription) *drawingInfoJSON {
	fd, ok := dd.(*gisxml.FeatureLayerDrawingDescription)
	if !ok || fd == nil {
		return nil
	}
	d := &drawingInfoJSON{Renderer: renderer(fd.FeatureRenderer)}
	if fd.Transparency != nil {
		d.Transparency = int(*fd.Transparency)
	}
	return d
}

// classJSON is the label and description every renderer class has.
type classJSON struct {
	Label       text `json:"label"`
	Description text `json:"description"`
}

func classOf(label, description *string) classJSON {
	return classJSON{Label: text(strp(label)), Description: text(strp(description))}
}

type simpleRendererJSON struct {
	Type   text `json:"type"`
	Symbol any  `json:"symbol"`
	classJSON
}

type uniqueValueRendererJSON struct {
	Type             text              `json:"type"`
	Field1           text              `json:"field1"`
	Field2           *text             `json:"field2"`
	Field3           *text             `json:"field3"`
	FieldDelimiter   text              `json:"fieldDelimiter"`
	DefaultSymbol    any               `json:"defaultSymbol"`
	DefaultLabel     text              `json:"defaultLabel"`
	UniqueValueInfos []uniqueValueJSON `json:"uniqueValueInfos"`
}

type uniqueValueJSON struct {
	Symbol any  `json:"symbol"`
	Value  text `json:"value"`
	classJSON
}

type classBreaksRendererJSON struct {
	Type            text             `json:"type"`
	Field           text             `json:"field"`
	MinValue        num              `json:"minValue"`
	ClassBreakInfos []classBreakJSON `json:"classBreakInfos"`
}

type classBreakJSON struct {
	Symbol any `json:"symbol"`
	classJSON
	ClassMinValue num `json:"classMinValue"`
	ClassMaxValue num `json:"classMaxValue"`
}

// renderer describes the simple, unique value and class breaks renderers; nil (null) for
// another.
func renderer(r gisxml.FeatureRenderer) any {
	switch x := r.(type) {
	case *gisxml.SimpleRenderer:
		return simpleRendererJSON{Type: "simple", Symbol: symbol(x.Symbol), classJSON: classOf(x.Label, x.Description)}
	case *gisxml.UniqueValueRenderer:
		delimiter := ","
		if x.FieldDelimiter != nil {
			delimiter = *x.FieldDelimiter
		}
		j := uniqueValueRendererJSON{Type: "uniqueValue", Field1: text(x.Field1), Field2: optText(x.Field2), Field3: optText(x.Field3),
			FieldDelimiter: text(delimiter), DefaultSymbol: symbol(x.DefaultSymbol), DefaultLabel: text(strp(x.DefaultLabel)),
			UniqueValueInfos: make([]uniqueValueJSON, 0, len(x.UniqueValueInfos))}
		for _, u := range x.UniqueValueInfos {
			j.UniqueValueInfos = append(j.UniqueValueInfos, uniqueValueJSON{Symbol: symbol(u.Symbol), Value: text(u.Value), classJSON: classOf(u.Label, u.Description)})
		}
		return j
	case *gisxml.ClassBreaksRenderer:
		j := classBreaksRendererJSON{Type: "classBreaks", Field: text(x.Field), MinValue: num(x.MinimumValue),
			ClassBreakInfos: make([]classBreakJSON, 0, len(x.ClassBreakInfos))}
		for _, c := range x.ClassBreakInfos {
			j.ClassBreakInfos = append(j.ClassBreakInfos, classBreakJSON{Symbol: symbol(c.Symbol), classJSON: classOf(c.Label, c.Description),
				ClassMinValue: num(c.ClassMinimumValue), ClassMaxValue: num(c.ClassMaximumValue)})
		}
		return j
	}
	return nil
}

// color is [r,g,b,a]; a color without alpha is opaque; nil (null) for a color not RGB.
func color(c gisxml.Color) *[4]int {
	rgb, ok := c.(*gisxml.RgbColor)
	if !ok || rgb == nil {
		return nil
	}
	a := 255
	if rgb.AlphaValue != nil {
		a = int(*rgb.AlphaValue)
	}
	return &[4]int{int(rgb.Red), int(rgb.Green), int(rgb.Blue), a}
}

// symbolJSON is the type, style and color every simple symbol has.
type symbolJSON struct {
	Type  text    `json:"type"`
	Style text    `json:"style"`
	Color *[4]int `json:"color"`
}

type fillSymbolJSON struct {
	symbolJSON
	Outline any `json:"outline"`
}

type lineSymbolJSON struct {
	symbolJSON
	Width num `json:"width"`
}

type markerSymbolJSON struct {
	symbolJSON
	Size    num                `json:"size"`
	Angle   num                `json:"angle"`
	XOffset num                `json:"xoffset"`
	YOffset num                `json:"yoffset"`
	Outline *markerOutlineJSON `json:"outline,omitempty"`
}

type markerOutlineJSON struct {
	Color *[4]int `json:"color"`
	Width num     `json:"width"`
}

// symbol describes the simple symbols in ArcGIS JSON (esriSFS, esriSLS, esriSMS); nil (null)
// for another.
func symbol(s any) any {
	switch x := s.(type) {
	case *gisxml.SimpleFillSymbol:
		return fillSymbolJSON{symbolJSON: symbolJSON{"esriSFS", text(esriType(string(x.Style))), color(x.Color)}, Outline: symbol(x.Outline)}
	case *gisxml.SimpleLineSymbol:
		return lineSymbolJSON{symbolJSON: symbolJSON{"esriSLS", text(esriType(string(x.Style))), color(x.Color)}, Width: num(x.Width)}
	case *gisxml.SimpleMarkerSymbol:
		j := markerSymbolJSON{symbolJSON: symbolJSON{"esriSMS", text(esriType(string(x.Style))), color(x.Color)},
			Size: num(x.Size), Angle: num(x.Angle), XOffset: num(x.XOffset), YOffset: num(x.YOffset)}
		if x.Outline {
			j.Outline = &markerOutlineJSON{Color: color(x.OutlineColor), Width: num(x.OutlineSize)}
		}
		return j
	}
	return nil
}
