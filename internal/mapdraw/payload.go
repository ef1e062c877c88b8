package mapdraw

import (
	"image/color"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/task"
)

// The conversions between the drawing types and the task payload's own plain types
// (internal/task/drawing.go), both ways in one file so that they stay each other's inverse
// (TestPayloadRoundTrip fills every field). The api converts a request's drawing to its payload;
// the worker converts it back.

// RequestFromPayload is the drawing of map m that an ExportMap payload asks for, in format; the
// worker resolved the payload's service and map from its own catalog.
func RequestFromPayload(m *catalog.Map, job task.ExportMap, format render.Format) Request {
	req := Request{
		Map: m,
		View: render.View{
			Extent: orb.Bound{Min: orb.Point{job.Extent[0], job.Extent[1]}, Max: orb.Point{job.Extent[2], job.Extent[3]}},
			Width:  job.Width, Height: job.Height, DPI: job.DPI, Rotation: job.Rotation,
		},
		Format:         format,
		Layers:         make([]LayerState, len(job.Layers)),
		Background:     nrgbaFromPayload((*task.Color)(job.Background)),
		SelectionColor: nrgbaFromPayload((*task.Color)(job.SelectionColor)),
		Graphics:       GraphicsFromPayload(job.Graphics),
	}
	for i, l := range job.Layers {
		req.Layers[i] = LayerState{ID: l.ID, Visible: l.Visible, ShowLabels: l.ShowLabels, DefinitionExpression: l.DefinitionExpression}
		if d := DrawingFromPayload(l.Drawing); d != nil {
			req.Layers[i].Drawing = *d
		}
	}
	if t := job.Transparent; t != nil {
		req.Transparent = &color.NRGBA{t[0], t[1], t[2], 255}
	}
	if sr := job.SpatialReference; sr != nil {
		req.SR = proj.SR{WKID: sr.WKID, Text: sr.WKT}
	}
	return req
}

// DrawingPayload is d in the task payload's form (nil for nil).
func DrawingPayload(d *symbology.Drawing) *task.Drawing {
	if d == nil {
		return nil
	}
	p := &task.Drawing{
		Renderer:        rendererPayload(d.Renderer),
		Transparency:    d.Transparency,
		ScaleSymbols:    d.ScaleSymbols,
		Selection:       d.Selection,
		SelectionColor:  nrgbaPayload(d.SelectionColor),
		SelectionSymbol: symbolPayload(d.SelectionSymbol),
		BufferDistance:  d.BufferDistance,
		ShowBuffer:      d.ShowBuffer,
		BufferSymbol:    symbolPayload(d.BufferSymbol),
	}
	if d.Labels != nil {
		p.Labels = make([]task.Label, len(d.Labels))
		for i, l := range d.Labels {
			p.Labels[i] = labelPayload(l)
		}
	}
	return p
}

// DrawingFromPayload is the Drawing a payload describes (nil for nil).
func DrawingFromPayload(p *task.Drawing) *symbology.Drawing {
	if p == nil {
		return nil
	}
	d := &symbology.Drawing{
		Renderer:        rendererFromPayload(p.Renderer),
		Transparency:    p.Transparency,
		ScaleSymbols:    p.ScaleSymbols,
		Selection:       p.Selection,
		SelectionColor:  nrgbaFromPayload(p.SelectionColor),
		SelectionSymbol: symbolFromPayload(p.SelectionSymbol),
		BufferDistance:  p.BufferDistance,
		ShowBuffer:      p.ShowBuffer,
		BufferSymbol:    symbolFromPayload(p.BufferSymbol),
	}
	if p.Labels != nil {
		d.Labels = make([]symbology.Label, len(p.Labels))
		for i, l := range p.Labels {
			d.Labels[i] = labelFromPayload(l)
		}
	}
	return d
}

// GraphicsPayload is gs in the task payload's form.
func GraphicsPayload(gs []symbology.Graphic) []task.Graphic {
	if gs == nil {
		return nil
	}
	out := make([]task.Graphic, len(gs))
	for i, g := range gs {
		out[i] = task.Graphic{Kind: string(g.Kind), Parts: g.Parts, Symbol: symbolPayload(g.Symbol), Text: g.Text, Align: g.Align, Angle: g.Angle}
		if f := g.Font; f != nil {
			out[i].Font = &task.GraphicFont{
				Font:  fontPayload(f.Font),
				Color: colorPayload(f.Color), Halo: haloPayload(f.Halo), Back: colorPtrPayload(f.Back),
			}
		}
	}
	return out
}

// GraphicsFromPayload is the graphics a payload describes.
func GraphicsFromPayload(ps []task.Graphic) []symbology.Graphic {
	if ps == nil {
		return nil
	}
	out := make([]symbology.Graphic, len(ps))
	for i, p := range ps {
		out[i] = symbology.Graphic{Kind: symbology.GraphicKind(p.Kind), Parts: p.Parts, Symbol: symbolFromPayload(p.Symbol), Text: p.Text, Align: p.Align, Angle: p.Angle}
		if f := p.Font; f != nil {
			out[i].Font = &symbology.GraphicFont{
				Font:  fontFromPayload(f.Font),
				Color: colorFromPayload(f.Color), Halo: haloFromPayload(f.Halo), Back: colorPtrFromPayload(f.Back),
			}
		}
	}
	return out
}

// ScaleBarPayload is b in the task payload's form.
func ScaleBarPayload(b render.ScaleBar) task.ScaleBar {
	return task.ScaleBar{
		Kind: string(b.Kind), PixelsPerUnit: b.PixelsPerUnit, Division: b.Division, Divisions: b.Divisions,
		DivisionsBeforeZero: b.DivisionsBeforeZero, Subdivisions: b.Subdivisions, Resize: string(b.Resize), BarHeightPt: b.BarHeightPt,
		Fill1: task.Color(rgba(b.Fill1)), Fill2: task.Color(rgba(b.Fill2)), Outline: scaleLinePayload(b.Outline),
		DivisionMark: scaleLinePayload(b.DivisionMark), SubdivisionMark: scaleLinePayload(b.SubdivisionMark),
		DivisionMarkHeightPt: b.DivisionMarkHeightPt, SubdivisionMarkHeightPt: b.SubdivisionMarkHeight,
		MarkPosition: string(b.MarkPosition), MarkFrequency: string(b.MarkFrequency),
		LabelFrequency: string(b.LabelFrequency), LabelPosition: string(b.LabelPosition), LabelGapPt: b.LabelGapPt,
		Label: scaleTextPayload(b.Label), Number: task.NumberFormat(b.Number),
		UnitLabel: b.UnitLabel, UnitLabelPosition: string(b.UnitLabelPosition), UnitLabelGapPt: b.UnitLabelGapPt,
		UnitText: scaleTextPayload(b.UnitText), Background: task.Color(rgba(b.Background)),
	}
}

// ScaleBarFromPayload is the scale bar a payload describes.
func ScaleBarFromPayload(p task.ScaleBar) render.ScaleBar {
	return render.ScaleBar{
		Kind: render.ScaleBarKind(p.Kind), PixelsPerUnit: p.PixelsPerUnit, Division: p.Division, Divisions: p.Divisions,
		DivisionsBeforeZero: p.DivisionsBeforeZero, Subdivisions: p.Subdivisions, Resize: render.Resize(p.Resize), BarHeightPt: p.BarHeightPt,
		Fill1: nrgba(p.Fill1), Fill2: nrgba(p.Fill2), Outline: scaleLineFromPayload(p.Outline),
		DivisionMark: scaleLineFromPayload(p.DivisionMark), SubdivisionMark: scaleLineFromPayload(p.SubdivisionMark),
		DivisionMarkHeightPt: p.DivisionMarkHeightPt, SubdivisionMarkHeight: p.SubdivisionMarkHeightPt,
		MarkPosition: render.VertPos(p.MarkPosition), MarkFrequency: render.Frequency(p.MarkFrequency),
		LabelFrequency: render.Frequency(p.LabelFrequency), LabelPosition: render.VertPos(p.LabelPosition), LabelGapPt: p.LabelGapPt,
		Label: scaleTextFromPayload(p.Label), Number: render.NumberFormat(p.Number),
		UnitLabel: p.UnitLabel, UnitLabelPosition: render.UnitLabelPos(p.UnitLabelPosition), UnitLabelGapPt: p.UnitLabelGapPt,
		UnitText: scaleTextFromPayload(p.UnitText), Background: nrgba(p.Background),
	}
}

func scaleLinePayload(l render.ScaleLine) task.ScaleLine {
	return task.ScaleLine{Color: task.Color(rgba(l.Color)), Width: l.Width}
}

func scaleLineFromPayload(l task.ScaleLine) render.ScaleLine {
	return render.ScaleLine{Color: nrgba(l.Color), Width: l.Width}
}

func scaleTextPayload(t render.ScaleText) task.ScaleText {
	return task.ScaleText{Font: t.Font, Size: t.Size, Color: task.Color(rgba(t.Color))}
}

func scaleTextFromPayload(t task.ScaleText) render.ScaleText {
	return render.ScaleText{Font: t.Font, Size: t.Size, Color: nrgba(t.Color)}
}

func rendererPayload(r *symbology.Renderer) *task.Renderer {
	if r == nil {
		return nil
	}
	p := &task.Renderer{
		Type: string(r.Type), Symbol: symbolPayload(r.Symbol), Label: r.Label, Description: r.Description,
		Fields: r.Fields, FieldDelimiter: r.FieldDelimiter, Field: r.Field, MinValue: r.MinValue,
		DefaultSymbol: symbolPayload(r.DefaultSymbol), DefaultLabel: r.DefaultLabel,
	}
	if r.Values != nil {
		p.Values = make([]task.UniqueValue, len(r.Values))
		for i, v := range r.Values {
			p.Values[i] = task.UniqueValue{Values: v.Values, Label: v.Label, Description: v.Description, Symbol: *symbolPayload(&v.Symbol)}
		}
	}
	if r.Breaks != nil {
		p.Breaks = make([]task.ClassBreak, len(r.Breaks))
		for i, b := range r.Breaks {
			p.Breaks[i] = task.ClassBreak{MaxValue: b.MaxValue, Label: b.Label, Description: b.Description, Symbol: *symbolPayload(&b.Symbol)}
		}
	}
	return p
}

func rendererFromPayload(p *task.Renderer) *symbology.Renderer {
	if p == nil {
		return nil
	}
	r := &symbology.Renderer{
		Type: symbology.RendererType(p.Type), Symbol: symbolFromPayload(p.Symbol), Label: p.Label, Description: p.Description,
		Fields: p.Fields, FieldDelimiter: p.FieldDelimiter, Field: p.Field, MinValue: p.MinValue,
		DefaultSymbol: symbolFromPayload(p.DefaultSymbol), DefaultLabel: p.DefaultLabel,
	}
	if p.Values != nil {
		r.Values = make([]symbology.UniqueValue, len(p.Values))
		for i, v := range p.Values {
			r.Values[i] = symbology.UniqueValue{Values: v.Values, Label: v.Label, Description: v.Description, Symbol: *symbolFromPayload(&v.Symbol)}
		}
	}
	if p.Breaks != nil {
		r.Breaks = make([]symbology.ClassBreak, len(p.Breaks))
		for i, b := range p.Breaks {
			r.Breaks[i] = symbology.ClassBreak{MaxValue: b.MaxValue, Label: b.Label, Description: b.Description, Symbol: *symbolFromPayload(&b.Symbol)}
		}
	}
	return r
}

func symbolPayload(s *symbology.Symbol) *task.Symbol {
	if s == nil {
		return nil
	}
	p := &task.Symbol{
		Type: string(s.Type), Color: colorPayload(s.Color), FillStyle: string(s.FillStyle), LineStyle: string(s.LineStyle),
		MarkerStyle: string(s.MarkerStyle), Width: s.Width, Size: s.Size, Angle: s.Angle, XOffset: s.XOffset, YOffset: s.YOffset,
		Picture: s.Picture, Height: s.Height, XScale: s.XScale, YScale: s.YScale, XSeparation: s.XSeparation, YSeparation: s.YSeparation,
		FgColor: colorPtrPayload(s.FgColor), BgColor: colorPtrPayload(s.BgColor), Swap1Bit: s.Swap1Bit,
		TransparentColor: colorPtrPayload(s.TransparentColor),
		Character:        s.Character, CharacterFont: fontPayload(s.CharacterFont),
	}
	if o := s.Outline; o != nil {
		p.Outline = &task.Outline{Color: colorPayload(o.Color), Width: o.Width, Style: string(o.Style)}
	}
	return p
}

func symbolFromPayload(p *task.Symbol) *symbology.Symbol {
	if p == nil {
		return nil
	}
	s := &symbology.Symbol{
		Type: symbology.SymbolType(p.Type), Color: colorFromPayload(p.Color), FillStyle: symbology.FillStyle(p.FillStyle),
		LineStyle: symbology.LineStyle(p.LineStyle), MarkerStyle: symbology.MarkerStyle(p.MarkerStyle),
		Width: p.Width, Size: p.Size, Angle: p.Angle, XOffset: p.XOffset, YOffset: p.YOffset, Picture: p.Picture,
		PictureStyle: symbology.PictureStyle{
			Height: p.Height, XScale: p.XScale, YScale: p.YScale, XSeparation: p.XSeparation, YSeparation: p.YSeparation,
			FgColor: colorPtrFromPayload(p.FgColor), BgColor: colorPtrFromPayload(p.BgColor), Swap1Bit: p.Swap1Bit,
			TransparentColor: colorPtrFromPayload(p.TransparentColor),
		},
		CharacterStyle: symbology.CharacterStyle{Character: p.Character, CharacterFont: fontFromPayload(p.CharacterFont)},
	}
	if o := p.Outline; o != nil {
		s.Outline = &symbology.Outline{Color: colorFromPayload(o.Color), Width: o.Width, Style: symbology.LineStyle(o.Style)}
	}
	return s
}

func labelPayload(l symbology.Label) task.Label {
	p := task.Label{
		Field: l.Field, Expression: l.Expression, Font: fontPayload(l.Font), Color: colorPayload(l.Color), Halo: haloPayload(l.Halo),
		MinScale: l.MinScale, MaxScale: l.MaxScale, Priority: l.Priority, Where: l.Where,
		Placement: task.Placement{
			Offset: l.Placement.Offset, Line: string(l.Placement.Line), Along: string(l.Placement.Along),
			Orientation: string(l.Placement.Orientation), Repeat: l.Placement.Repeat, AllParts: l.Placement.AllParts,
			PolygonStraight: l.Placement.PolygonStraight, Outside: l.Placement.Outside, RemoveDuplicates: l.Placement.RemoveDuplicates,
		},
	}
	if l.Text != nil {
		p.Text = make([]task.TextPart, len(l.Text))
		for i, t := range l.Text {
			p.Text[i] = task.TextPart(t)
		}
	}
	if l.Placement.Points != nil {
		p.Placement.Points = make([]string, len(l.Placement.Points))
		for i, pt := range l.Placement.Points {
			p.Placement.Points[i] = string(pt)
		}
	}
	return p
}

func labelFromPayload(p task.Label) symbology.Label {
	l := symbology.Label{
		Field: p.Field, Expression: p.Expression, Font: fontFromPayload(p.Font), Color: colorFromPayload(p.Color), Halo: haloFromPayload(p.Halo),
		ScaleRange: symbology.ScaleRange{MinScale: p.MinScale, MaxScale: p.MaxScale}, Priority: p.Priority, Where: p.Where,
		Placement: symbology.LabelPlacement{
			Offset: p.Placement.Offset, Line: symbology.LineSide(p.Placement.Line), Along: symbology.LineAnchor(p.Placement.Along),
			Orientation: symbology.LineOrientation(p.Placement.Orientation), Repeat: p.Placement.Repeat, AllParts: p.Placement.AllParts,
			PolygonStraight: p.Placement.PolygonStraight, Outside: p.Placement.Outside, RemoveDuplicates: p.Placement.RemoveDuplicates,
		},
	}
	if p.Text != nil {
		l.Text = make([]symbology.TextPart, len(p.Text))
		for i, t := range p.Text {
			l.Text[i] = symbology.TextPart(t)
		}
	}
	if p.Placement.Points != nil {
		l.Placement.Points = make([]symbology.PointPosition, len(p.Placement.Points))
		for i, pt := range p.Placement.Points {
			l.Placement.Points[i] = symbology.PointPosition(pt)
		}
	}
	return l
}

func fontPayload(f symbology.Font) task.Font { return task.Font(f) }

func fontFromPayload(f task.Font) symbology.Font { return symbology.Font(f) }

func haloPayload(h *symbology.Halo) *task.Halo {
	if h == nil {
		return nil
	}
	return &task.Halo{Color: colorPayload(h.Color), Width: h.Width}
}

func haloFromPayload(h *task.Halo) *symbology.Halo {
	if h == nil {
		return nil
	}
	return &symbology.Halo{Color: colorFromPayload(h.Color), Width: h.Width}
}

func colorPayload(c symbology.Color) task.Color { return task.Color{c.R, c.G, c.B, c.A} }

func colorFromPayload(c task.Color) symbology.Color {
	return symbology.Color{R: c[0], G: c[1], B: c[2], A: c[3]}
}

func colorPtrPayload(c *symbology.Color) *task.Color {
	if c == nil {
		return nil
	}
	p := colorPayload(*c)
	return &p
}

func colorPtrFromPayload(c *task.Color) *symbology.Color {
	if c == nil {
		return nil
	}
	s := colorFromPayload(*c)
	return &s
}

func nrgbaPayload(c *color.NRGBA) *task.Color {
	if c == nil {
		return nil
	}
	p := task.Color(rgba(*c))
	return &p
}

func nrgbaFromPayload(c *task.Color) *color.NRGBA {
	if c == nil {
		return nil
	}
	n := nrgba(*c)
	return &n
}

func rgba(c color.NRGBA) [4]uint8 { return [4]uint8{c.R, c.G, c.B, c.A} }

func nrgba(c [4]uint8) color.NRGBA { return color.NRGBA{R: c[0], G: c[1], B: c[2], A: c[3]} }
