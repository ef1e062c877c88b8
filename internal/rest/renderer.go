package rest

import "github.com/mapfarm/mapfarm/internal/gisxml"

// drawingInfo writes a layer's drawingInfo: its renderer in ArcGIS JSON, its transparency.
func drawingInfo(w *jsonWriter, dd gisxml.LayerDrawingDescription) {
	fd, ok := dd.(*gisxml.FeatureLayerDrawingDescription)
	if !ok || fd == nil {
		w.null()
		return
	}
	w.objOpen()
	w.key("renderer")
	renderer(w, fd.FeatureRenderer)
	w.key("transparency")
	if fd.Transparency != nil {
		w.int(int64(*fd.Transparency))
	} else {
		w.int(0)
	}
	w.key("labelingInfo")
	w.null()
	w.objClose()
}

func renderer(w *jsonWriter, r gisxml.FeatureRenderer) {
	switch x := r.(type) {
	case *gisxml.SimpleRenderer:
		w.objOpen()
		w.key("type")
		w.str("simple")
		w.key("symbol")
		symbol(w, x.Symbol)
		w.key("label")
		w.str(strp(x.Label))
		w.key("description")
		w.str(strp(x.Description))
		w.objClose()
	case *gisxml.UniqueValueRenderer:
		w.objOpen()
		w.key("type")
		w.str("uniqueValue")
		w.key("field1")
		w.str(x.Field1)
		w.key("field2")
		optStr(w, x.Field2)
		w.key("field3")
		optStr(w, x.Field3)
		w.key("fieldDelimiter")
		if x.FieldDelimiter != nil {
			w.str(*x.FieldDelimiter)
		} else {
			w.str(",")
		}
		w.key("defaultSymbol")
		symbol(w, x.DefaultSymbol)
		w.key("defaultLabel")
		w.str(strp(x.DefaultLabel))
		w.key("uniqueValueInfos")
		w.arrOpen()
		for _, u := range x.UniqueValueInfos {
			w.objOpen()
			w.key("symbol")
			symbol(w, u.Symbol)
			w.key("value")
			w.str(u.Value)
			w.key("label")
			w.str(strp(u.Label))
			w.key("description")
			w.str(strp(u.Description))
			w.objClose()
		}
		w.arrClose()
		w.objClose()
	case *gisxml.ClassBreaksRenderer:
		w.objOpen()
		w.key("type")
		w.str("classBreaks")
		w.key("field")
		w.str(x.Field)
		w.key("minValue")
		w.float(x.MinimumValue)
		w.key("classBreakInfos")
		w.arrOpen()
		for _, c := range x.ClassBreakInfos {
			w.objOpen()
			w.key("symbol")
			symbol(w, c.Symbol)
			w.key("label")
			w.str(strp(c.Label))
			w.key("description")
			w.str(strp(c.Description))
			w.key("classMinValue")
			w.float(c.ClassMinimumValue)
			w.key("classMaxValue")
			w.float(c.ClassMaximumValue)
			w.objClose()
		}
		w.arrClose()
		w.objClose()
	default:
		w.null()
	}
}

func optStr(w *jsonWriter, p *string) {
	if p == nil {
		w.null()
		return
	}
	w.str(*p)
}

// color writes [r,g,b,a]; a color without alpha is opaque.
func color(w *jsonWriter, c gisxml.Color) {
	rgb, ok := c.(*gisxml.RgbColor)
	if !ok || rgb == nil {
		w.null()
		return
	}
	a := 255
	if rgb.AlphaValue != nil {
		a = int(*rgb.AlphaValue)
	}
	w.arrOpen()
	w.int(int64(rgb.Red))
	w.int(int64(rgb.Green))
	w.int(int64(rgb.Blue))
	w.int(int64(a))
	w.arrClose()
}

// symbol writes the simple symbols in ArcGIS JSON (esriSFS, esriSLS, esriSMS); other symbols
// are null.
func symbol(w *jsonWriter, s any) {
	switch x := s.(type) {
	case *gisxml.SimpleFillSymbol:
		w.objOpen()
		w.key("type")
		w.str("esriSFS")
		w.key("style")
		w.str(esriType(string(x.Style)))
		w.key("color")
		color(w, x.Color)
		w.key("outline")
		symbol(w, x.Outline)
		w.objClose()
	case *gisxml.SimpleLineSymbol:
		w.objOpen()
		w.key("type")
		w.str("esriSLS")
		w.key("style")
		w.str(esriType(string(x.Style)))
		w.key("color")
		color(w, x.Color)
		w.key("width")
		w.float(x.Width)
		w.objClose()
	case *gisxml.SimpleMarkerSymbol:
		w.objOpen()
		w.key("type")
		w.str("esriSMS")
		w.key("style")
		w.str(esriType(string(x.Style)))
		w.key("color")
		color(w, x.Color)
		w.key("size")
		w.float(x.Size)
		w.key("angle")
		w.float(x.Angle)
		w.key("xoffset")
		w.float(x.XOffset)
		w.key("yoffset")
		w.float(x.YOffset)
		if x.Outline {
			w.key("outline")
			w.objOpen()
			w.key("color")
			color(w, x.OutlineColor)
			w.key("width")
			w.float(x.OutlineSize)
			w.objClose()
		}
		w.objClose()
	default:
		w.null()
	}
}
