package cartography

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/task"
)

// ScaleBarExporter renders scale bar images on the farm. The farm client implements it next to
// Exporter; a Server whose Exporter does not answers ExportScaleBar with an error.
type ScaleBarExporter interface {
	ExportScaleBar(ctx context.Context, job task.ExportScaleBar) (task.Result, error)
}

// unitNames are the default unit labels of scale bars, as ArcMap writes them.
var unitNames = map[gisxml.Units]string{
	gisxml.Inches: "Inches", gisxml.Points: "Points", gisxml.Feet: "Feet", gisxml.Yards: "Yards",
	gisxml.Miles: "Miles", gisxml.NauticalMiles: "Nautical Miles", gisxml.Millimeters: "Millimeters",
	gisxml.Centimeters: "Centimeters", gisxml.Meters: "Meters", gisxml.Kilometers: "Kilometers",
	gisxml.DecimalDegrees: "Decimal Degrees", gisxml.Decimeters: "Decimeters",
}

// ExportScaleBar draws a scale bar for the scale at which MapDescription shows in MapDisplay, in
// an image of ImageDescription's size, on the farm.
//
// The bar's units default to the map's (metres, or decimal degrees of arc on the equator for a
// geographic map); the conversion uses the map scale, so one unit is drawn unitMeters/scale metres
// of paper long at the scale bar image's DPI. Omitted options take ArcMap's defaults: four
// divisions of a round length fitted to the image (gisScaleBarAutoDivision), labels above at every
// division, the unit label after the labels, black and white fills, 8 pt text.
func (s *Service) ExportScaleBar(ctx context.Context, c *operation.Call, req *gisxml.ExportScaleBar) (*gisxml.ExportScaleBarResponse, error) {
	exp, ok := s.p.Exporter.(ScaleBarExporter)
	if !ok {
		return nil, fmt.Errorf("export scale bar: %w: no render farm", operation.ErrNotImplemented)
	}
	if req.ImageDescription == nil || req.ImageDescription.ImageDisplay == nil {
		return nil, operation.Invalid("ExportScaleBar: ImageDescription/ImageDisplay is required (the scale bar image's ImageWidth, ImageHeight, ImageDPI)")
	}
	if req.MapDisplay == nil {
		return nil, operation.Invalid("ExportScaleBar: MapDisplay is required (the map image the scale bar goes with)")
	}
	view, err := s.viewOf(ctx, c, req.MapDescription, req.MapDisplay)
	if err != nil {
		return nil, err
	}
	scale := view.Scale()
	if !(scale > 0) {
		return nil, operation.Invalid("ExportScaleBar: the map scale is not positive")
	}
	disp := req.ImageDescription.ImageDisplay
	if disp.ImageWidth <= 0 || disp.ImageHeight <= 0 {
		return nil, operation.Invalid("ExportScaleBar: ImageDisplay %d×%d must have a positive size", disp.ImageWidth, disp.ImageHeight)
	}
	if disp.ImageWidth > s.p.Limits.MaxImageWidth || disp.ImageHeight > s.p.Limits.MaxImageHeight {
		return nil, operation.Invalid("ExportScaleBar: ImageDisplay %d×%d is larger than the maximum %d×%d", disp.ImageWidth, disp.ImageHeight, s.p.Limits.MaxImageWidth, s.p.Limits.MaxImageHeight)
	}
	dpi, err := mapview.DPI(disp.ImageDPI, "ExportScaleBar: ImageDescription/ImageDisplay/ImageDPI")
	if err != nil {
		return nil, operation.Invalid("%s", err)
	}
	units := operation.Units(view.SR)
	bar, err := scaleBarOf(req.ScaleBar, &units)
	if err != nil {
		return nil, err
	}
	meters, ok := unitMeters[units]
	if !ok {
		return nil, operation.Invalid("ScaleBar/Units %s is not a length unit", units)
	}
	bar.PixelsPerUnit = meters / scale / 0.0254 * dpi
	if err := checkScaleBarPixels(bar, dpi, s.p.Limits.MaxImageWidth); err != nil {
		return nil, err
	}
	bar.Background = color.NRGBA{255, 255, 255, 255}
	if req.BackGroundColor != nil {
		if bar.Background, err = ColorOf(req.BackGroundColor); err != nil {
			return nil, operation.Invalid("BackGroundColor: %v", err)
		}
	}
	imgType := req.ImageDescription.ImageType
	if imgType == nil {
		imgType = &gisxml.ImageType{ImageFormat: gisxml.ImagePNG, ImageReturnType: gisxml.ImageReturnURL}
	}
	format, err := formatOf(imgType.ImageFormat, bar.Background.A < 255)
	if err != nil {
		return nil, err
	}
	job := task.ExportScaleBar{ID: s.p.NewID(), Width: disp.ImageWidth, Height: disp.ImageHeight, DPI: dpi, Bar: mapdraw.ScaleBarPayload(bar), Format: format,
		Inline: imgType.ImageReturnType == gisxml.ImageReturnMimeData}
	job.Key = "outputs/" + job.ID + "." + extensions[format]
	res, err := exp.ExportScaleBar(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("export scale bar: %w", err)
	}
	c.Render = &operation.RenderInfo{Worker: res.Worker, Render: time.Duration(res.RenderNanos)}
	if res.Error != "" {
		if res.ClientError {
			return nil, operation.Invalid("%s", res.Error)
		}
		return nil, fmt.Errorf("export scale bar: worker: %s", res.Error)
	}
	out := &gisxml.ImageResult{ImageWidth: job.Width, ImageHeight: job.Height, ImageDPI: dpi, ImageType: operation.Ptr(res.ContentType)}
	if err := s.imageResult(out, imgType.ImageReturnType, res); err != nil {
		return nil, err
	}
	return &gisxml.ExportScaleBarResponse{Result: out}, nil
}

// checkScaleBarPixels checks what a scale bar's numbers come to in pixels at dpi: the map scale
// must give a finite, positive length to a unit, one division must be at most maxWidth pixels
// (the widest image: a longer division cannot show in any image), and text at most
// render.MaxTextPixels tall.
func checkScaleBarPixels(bar render.ScaleBar, dpi float64, maxWidth int) error {
	if ppu := bar.PixelsPerUnit; !(ppu > 0) || math.IsInf(ppu, 0) {
		return operation.Invalid("ExportScaleBar: at the map's scale one unit is %g pixels long at %g DPI; no scale bar can be drawn", ppu, dpi)
	}
	if px := bar.Division * bar.PixelsPerUnit; px > float64(maxWidth) {
		return operation.OverLimit(limits.ScaleBar, "ScaleBar/Division %g is %.4g pixels long at the map's scale and %g DPI; the limit is %d pixels (the maximum image width)",
			bar.Division, px, dpi, maxWidth)
	}
	for _, t := range []struct {
		size float64
		what string
	}{{bar.Label.Size, "LabelSymbol/Size"}, {bar.UnitText.Size, "UnitLabelSymbol/Size"}} {
		if px := t.size * dpi / 72; px > render.MaxTextPixels {
			return operation.OverLimit(limits.ScaleBar, "ScaleBar/%s %g pt is %.0f pixels at %g DPI; the limit is %d pixels", t.what, t.size, px, dpi, render.MaxTextPixels)
		}
	}
	return nil
}

// imageResult fills the URL or the bytes of an ImageResult from a farm result.
func (s *Service) imageResult(out *gisxml.ImageResult, rt gisxml.ImageReturnType, res task.Result) error {
	switch {
	case rt == gisxml.ImageReturnMimeData && res.Data != nil:
		out.ImageData = res.Data
	case rt == gisxml.ImageReturnMimeData:
		return fmt.Errorf("the %d-byte image is larger than the %d bytes returned inline; ask for a URL", res.Size, task.MaxInlineBytes)
	default:
		if res.Data != nil && s.p.Recent != nil {
			s.p.Recent.Remember(res.Key, res.ContentType, res.Data)
		}
		out.ImageURL = s.p.OutputURL(res.Key)
	}
	return nil
}

// scaleBarOf turns a schema scale bar into the renderer's; units is the map's units on entry and
// the bar's on return.
func scaleBarOf(sb gisxml.ScaleBar, units *gisxml.Units) (render.ScaleBar, error) {
	black, white := color.NRGBA{0, 0, 0, 255}, color.NRGBA{255, 255, 255, 255}
	out := render.ScaleBar{
		Kind: render.ScaleBarAlternating, Fill1: black, Fill2: white,
		Outline:      render.ScaleLine{Color: black, Width: 0.75},
		DivisionMark: render.ScaleLine{Color: black, Width: 0.75}, SubdivisionMark: render.ScaleLine{Color: black, Width: 0.75},
		Label: render.ScaleText{Color: black}, UnitText: render.ScaleText{Color: black},
		Number: render.NumberFormat{Digits: -1},
	}
	if sb == nil {
		out.UnitLabel = unitNames[*units]
		return out, nil
	}
	f := sb.ScaleBarPart()
	if f.Units != nil && *f.Units != "" && *f.Units != gisxml.UnknownUnits {
		*units = *f.Units
	}
	out.UnitLabel = unitNames[*units]
	if f.UnitLabel != nil {
		out.UnitLabel = *f.UnitLabel
	}
	if f.BarHeight != nil {
		out.BarHeightPt = *f.BarHeight
	}
	if f.Division != nil {
		if !(*f.Division >= 0) || math.IsInf(*f.Division, 0) {
			return out, operation.Invalid("ScaleBar/Division %g must be a finite number, not negative", *f.Division)
		}
		out.Division = *f.Division
		out.Resize = render.ResizeFixed
	}
	if f.Divisions != nil {
		if *f.Divisions < 1 || *f.Divisions > 100 {
			return out, operation.Invalid("ScaleBar/Divisions %d must be between 1 and 100", *f.Divisions)
		}
		out.Divisions = int(*f.Divisions)
	}
	if f.DivisionsBeforeZero != nil {
		if *f.DivisionsBeforeZero < 0 || *f.DivisionsBeforeZero > 100 {
			return out, operation.Invalid("ScaleBar/DivisionsBeforeZero %d must be between 0 and 100", *f.DivisionsBeforeZero)
		}
		out.DivisionsBeforeZero = int(*f.DivisionsBeforeZero)
	}
	if f.Subdivisions != nil {
		if *f.Subdivisions < 0 || *f.Subdivisions > 100 {
			return out, operation.Invalid("ScaleBar/Subdivisions %d must be between 0 and 100", *f.Subdivisions)
		}
		out.Subdivisions = int(*f.Subdivisions)
	}
	if f.ResizeHint != nil {
		switch *f.ResizeHint {
		case gisxml.ScaleBarFixed:
			out.Resize = render.ResizeFixed
		case gisxml.ScaleBarAutoDivision:
			out.Resize = render.ResizeAutoDivision
		case gisxml.ScaleBarAutoDivisions:
			out.Resize = render.ResizeAutoDivisions
		}
	}
	if f.UnitLabelPosition != nil {
		out.UnitLabelPosition = map[gisxml.ScaleBarPos]render.UnitLabelPos{
			gisxml.ScaleBarAbove: render.UnitAbove, gisxml.ScaleBarBeforeLabels: render.UnitBeforeLabels,
			gisxml.ScaleBarAfterLabels: render.UnitAfterLabels, gisxml.ScaleBarBeforeBar: render.UnitBeforeBar,
			gisxml.ScaleBarAfterBar: render.UnitAfterBar, gisxml.ScaleBarBelow: render.UnitBelow,
		}[*f.UnitLabelPosition]
	}
	if f.UnitLabelGap != nil {
		out.UnitLabelGapPt = *f.UnitLabelGap
	}
	if f.UnitLabelSymbol != nil {
		out.UnitText = scaleTextOf(f.UnitLabelSymbol)
	}
	if f.LabelFrequency != nil {
		out.LabelFrequency = frequencyOf(*f.LabelFrequency)
	}
	if f.LabelPosition != nil {
		out.LabelPosition = vertPosOf(*f.LabelPosition)
	}
	if f.LabelGap != nil {
		out.LabelGapPt = *f.LabelGap
	}
	if f.LabelSymbol != nil {
		out.Label = scaleTextOf(f.LabelSymbol)
	}
	if nf := f.NumberFormat; nf != nil {
		if nf.RoundingValue != nil {
			out.Number.Digits = max(0, min(12, *nf.RoundingValue))
		}
		if nf.RoundingOption != nil && *nf.RoundingOption == gisxml.RoundNumberOfSignificantDigits {
			out.Number.Significant = true
			if nf.RoundingValue == nil {
				out.Number.Digits = 6
			}
		}
		if nf.AlignmentWidth != nil {
			out.Number.Width = max(0, min(40, *nf.AlignmentWidth))
		}
		out.Number.AlignLeft = nf.AlignmentOption != nil && *nf.AlignmentOption == gisxml.AlignLeft
		out.Number.Separator = nf.UseSeparator != nil && *nf.UseSeparator
		out.Number.ZeroPad = nf.ZeroPad != nil && *nf.ZeroPad
		out.Number.ShowPlus = nf.ShowPlus != nil && *nf.ShowPlus
	}
	var fill1, fill2 gisxml.FillSymbol
	var divMark, subMark gisxml.LineSymbol
	var divH, subH *float64
	var markPos *gisxml.VertPosEnum
	var markFreq *gisxml.ScaleBarFrequency
	switch b := sb.(type) {
	case *gisxml.AlternatingScaleBar:
		fill1, fill2, divMark, subMark = b.FillSymbol1, b.FillSymbol2, b.DivisionMarkSymbol, b.SubdivisionMarkSymbol
		divH, subH, markPos, markFreq = b.DivisionMarkHeight, b.SubdivisionMarkHeight, b.MarkPosition, b.MarkFrequency
	case *gisxml.SingleDivisionScaleBar:
		out.Kind = render.ScaleBarSingleDivision
		out.Fill1 = white
		fill1, divMark, subMark = b.FillSymbol, b.DivisionMarkSymbol, b.SubdivisionMarkSymbol
		divH, subH, markPos, markFreq = b.DivisionMarkHeight, b.SubdivisionMarkHeight, b.MarkPosition, b.MarkFrequency
	default:
		return out, operation.Invalid("ScaleBar type %s is not supported (AlternatingScaleBar, SingleDivisionScaleBar)", sb.GisType())
	}
	for _, c := range []struct {
		v    float64
		what string
	}{
		{out.BarHeightPt, "BarHeight"}, {out.LabelGapPt, "LabelGap"}, {out.UnitLabelGapPt, "UnitLabelGap"},
		{out.Label.Size, "LabelSymbol/Size"}, {out.UnitText.Size, "UnitLabelSymbol/Size"},
	} {
		if err := checkSize(c.v, "ScaleBar/"+c.what); err != nil {
			return out, err
		}
	}
	var err error
	if fill1 != nil {
		if out.Fill1, out.Outline, err = fillOf(fill1, out.Outline); err != nil {
			return out, operation.Invalid("ScaleBar/FillSymbol: %v", err)
		}
	}
	if fill2 != nil {
		if out.Fill2, _, err = fillOf(fill2, out.Outline); err != nil {
			return out, operation.Invalid("ScaleBar/FillSymbol2: %v", err)
		}
	}
	if divMark != nil {
		out.DivisionMark = lineOf(divMark)
	}
	if subMark != nil {
		out.SubdivisionMark = lineOf(subMark)
	}
	if divH != nil {
		out.DivisionMarkHeightPt = *divH
	}
	if subH != nil {
		out.SubdivisionMarkHeight = *subH
	}
	if markPos != nil {
		out.MarkPosition = vertPosOf(*markPos)
	}
	if markFreq != nil {
		out.MarkFrequency = frequencyOf(*markFreq)
	}
	for _, c := range []struct {
		v    float64
		what string
	}{
		{out.DivisionMarkHeightPt, "DivisionMarkHeight"}, {out.SubdivisionMarkHeight, "SubdivisionMarkHeight"},
		{out.Outline.Width, "outline width"}, {out.DivisionMark.Width, "DivisionMarkSymbol/Width"}, {out.SubdivisionMark.Width, "SubdivisionMarkSymbol/Width"},
	} {
		if err := checkSize(c.v, "ScaleBar/"+c.what); err != nil {
			return out, err
		}
	}
	return out, nil
}

func frequencyOf(f gisxml.ScaleBarFrequency) render.Frequency {
	return map[gisxml.ScaleBarFrequency]render.Frequency{
		gisxml.ScaleBarNone: render.FreqNone, gisxml.ScaleBarOne: render.FreqOne,
		gisxml.ScaleBarMajorDivisions: render.FreqMajorDivisions, gisxml.ScaleBarDivisions: render.FreqDivisions,
		gisxml.ScaleBarDivisionsAndFirstMidpoint:     render.FreqDivisionsAndFirstMidpoint,
		gisxml.ScaleBarDivisionsAndFirstSubdivisions: render.FreqDivisionsAndFirstSubdivs,
		gisxml.ScaleBarDivisionsAndSubdivisions:      render.FreqDivisionsAndSubdivisions,
	}[f]
}

func vertPosOf(p gisxml.VertPosEnum) render.VertPos {
	return map[gisxml.VertPosEnum]render.VertPos{
		gisxml.Above: render.PosAbove, gisxml.Top: render.PosTop, gisxml.On: render.PosOn,
		gisxml.Bottom: render.PosBottom, gisxml.Below: render.PosBelow,
	}[p]
}

// scaleTextOf reads the colour, size and font of a TextSymbol.
func scaleTextOf(t *gisxml.TextSymbol) render.ScaleText {
	out := render.ScaleText{Color: color.NRGBA{0, 0, 0, 255}, Size: t.Size}
	if t.Color != nil {
		if c, err := ColorOf(t.Color); err == nil {
			out.Color = c
		}
	}
	if t.FontName != nil {
		out.Font = strings.TrimSpace(*t.FontName)
	}
	return out
}

// fillOf reads a fill symbol's colour (transparent for a null style) and its outline, keeping
// outline when the symbol has none.
func fillOf(fs gisxml.FillSymbol, outline render.ScaleLine) (color.NRGBA, render.ScaleLine, error) {
	f := fs.FillSymbolPart()
	c := color.NRGBA{0, 0, 0, 255}
	if f.Color != nil {
		var err error
		if c, err = ColorOf(f.Color); err != nil {
			return c, outline, err
		}
	}
	if sf, ok := fs.(*gisxml.SimpleFillSymbol); ok && sf.Style == gisxml.SFSNull {
		c = color.NRGBA{}
	}
	if f.Outline != nil {
		outline = lineOf(f.Outline)
	}
	return c, outline, nil
}

// lineOf reads a line symbol's colour and width (a null style draws nothing).
func lineOf(ls gisxml.LineSymbol) render.ScaleLine {
	f := ls.LineSymbolPart()
	out := render.ScaleLine{Color: color.NRGBA{0, 0, 0, 255}, Width: f.Width}
	if f.Color != nil {
		if c, err := ColorOf(f.Color); err == nil {
			out.Color = c
		}
	}
	if sl, ok := ls.(*gisxml.SimpleLineSymbol); ok && sl.Style == gisxml.SLSNull {
		out.Color = color.NRGBA{}
	}
	return out
}
