// Package mapdraw draws one map of the catalog for one request. It is the meeting point of the
// service definition and the renderer: it turns each layer's renderer, symbols and label
// classes into render layers, applies the request's layer states (visibility, labels,
// definition expressions), draws and encodes. Workers call it for ExportMapImage; legends and
// tiles will too.
//
// A drawing has one model, package symbology: the symbols, renderers and label classes a
// layer's definition holds, and the overrides (symbology.Drawing) and custom graphics
// (symbology.Graphic) of a request once a front end has decoded them. convertSymbol,
// labelStyle and labelPlacement turn it into the renderer's resolved render.Symbol and label
// styles as the map is drawn. The one other form is the queue's: the task payload keeps plain
// types of its own so that its format stays stable, converted both ways in payload.go.
package mapdraw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
	"github.com/mapfarm/mapfarm/internal/where"
)

// LayerState is a layer's state for one drawing.
type LayerState struct {
	ID                   int
	Visible              bool
	ShowLabels           bool
	DefinitionExpression string
	// Drawing holds the request's drawing description and selection (see cartography.go).
	symbology.Drawing
}

// Request is one drawing of a map.
type Request struct {
	Map    *catalog.Map
	View   render.View
	Layers []LayerState // every layer to draw; layers not listed are not drawn
	// Background replaces the map's background colour when not nil.
	Background *color.NRGBA
	// Transparent, when not nil, is the colour made fully transparent in the output.
	Transparent *color.NRGBA
	Format      render.Format
	Quality     int // JPEG quality; 0 = 75
	// SelectionColor is the map's selection colour, for layers without their own; nil is cyan.
	SelectionColor *color.NRGBA
	// Graphics are drawn over the map (the MapDescription's CustomGraphics).
	Graphics []symbology.Graphic
	// SR is the system the map is drawn in (View's extent is in it) when it is not the map's
	// own; the zero SR means the map's. Data are clipped to what the system can show and
	// projected on the fly (projection.go).
	SR proj.SR
	// Overviews lets layers be drawn from their overviews (catalog.Layer.Overview) where every
	// feature is at most a pixel: for an image drawn for one answer (an export), not for tiles
	// kept in a cache, which an overview a few seconds behind its table (PostgreSQL reports
	// row counts late) would keep wrong until they are drawn again.
	Overviews bool
}

// ErrBadRequest marks errors caused by the request (a bad definition expression, an unknown
// layer).
type ErrBadRequest struct{ Err error }

func (e *ErrBadRequest) Error() string { return e.Err.Error() }
func (e *ErrBadRequest) Unwrap() error { return e.Err }

// Compile parses and compiles a where clause against a layer's stored columns (its source's
// Info().Fields). An empty clause compiles to nil (everything matches).
func Compile(clause string, fields []feature.Field) (*where.Predicate, error) {
	e, err := ParseWhere(clause, fields)
	if e == nil || err != nil {
		return nil, err
	}
	return e.Compile(feature.WhereSchema(fields))
}

// ParseWhere parses a where clause and checks it against a layer's stored columns, for a
// feature.Query. An empty clause gives nil.
func ParseWhere(clause string, fields []feature.Field) (*where.Expr, error) {
	if strings.TrimSpace(clause) == "" {
		return nil, nil
	}
	e, err := where.Parse(clause)
	if err != nil {
		return nil, err
	}
	if _, err := e.Compile(feature.WhereSchema(fields)); err != nil {
		return nil, err
	}
	return e, nil
}

// Draw draws and encodes the image: raster formats through the renderer's image, SVG and PDF
// through the same drawing calls on a vector surface.
func Draw(ctx context.Context, r *render.Renderer, req Request) ([]byte, error) {
	m, err := Build(ctx, req)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(req.View.Width * req.View.Height / 4)
	err = r.DrawFuncEncoded(ctx, &buf, req.View, req.Format, render.EncodeOptions{Quality: req.Quality},
		func(ctx context.Context, s render.Surface) error {
			if err := r.DrawTo(ctx, s, m, req.View); err != nil {
				return err
			}
			DrawGraphics(s, r.Fonts(), req.Graphics, req.View)
			return nil
		},
		func(ctx context.Context) (*image.RGBA, error) {
			img, err := r.Draw(ctx, m, req.View)
			if err != nil {
				return nil, err
			}
			if len(req.Graphics) > 0 {
				DrawGraphics(render.NewGGSurface(img, r.Fonts()), r.Fonts(), req.Graphics, req.View)
			}
			if t := req.Transparent; t != nil {
				makeTransparent(img.Pix, *t)
			}
			return img, nil
		})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// makeTransparent clears every pixel of exactly the colour c (premultiplied RGBA pixels).
func makeTransparent(pix []byte, c color.NRGBA) {
	for i := 0; i+3 < len(pix); i += 4 {
		if pix[i+3] == 255 && pix[i] == c.R && pix[i+1] == c.G && pix[i+2] == c.B {
			pix[i], pix[i+1], pix[i+2], pix[i+3] = 0, 0, 0, 0
		}
	}
}

// Build turns a request into the renderer's map. Layers are drawn bottom-up: the catalog lists
// layer 0 on top, as ArcGIS does.
func Build(ctx context.Context, req Request) (render.Map, error) {
	bg := req.Map.Def.BackgroundColor.NRGBA()
	if req.Background != nil {
		bg = *req.Background
	}
	pr, err := newProjector(req)
	if err != nil {
		return render.Map{}, err
	}
	// One scale for everything scale-dependent: the renderer's layer scale ranges (through
	// UnitMeters), label classes' ranges and symbol scaling.
	out := render.Map{Background: bg, UnitMeters: pr.unitMeters}
	states := make(map[int]LayerState, len(req.Layers))
	for _, s := range req.Layers {
		states[s.ID] = s
	}
	scale := out.Scale(req.View)
	for i := len(req.Map.Layers) - 1; i >= 0; i-- {
		l := req.Map.Layers[i]
		st, ok := states[l.ID]
		if !ok || !st.Visible || st.Transparency >= 100 {
			continue
		}
		if l, err = pr.layer(l); err != nil {
			return render.Map{}, err
		}
		f := SymbolScale(req.Map, l, st, scale)
		rl, labelLayers, err := buildLayer(l, st, scale, f, resolution(req.View), overview(l, req))
		if err != nil {
			return render.Map{}, &ErrBadRequest{Err: fmt.Errorf("layer %d (%s): %w", l.ID, l.Name, err)}
		}
		out.Layers = append(out.Layers, rl)
		out.Layers = append(out.Layers, labelLayers...)
		sel, err := selectionLayers(ctx, l, st, req.SelectionColor, req.View, f)
		if err != nil {
			return render.Map{}, fmt.Errorf("layer %d (%s) selection: %w", l.ID, l.Name, err)
		}
		out.Layers = append(out.Layers, sel...)
	}
	if pr.clipped {
		for i := range out.Layers {
			out.Layers[i].Features = seamless(out.Layers[i].Features)
		}
	}
	return out, nil
}

// MapScale is the scale denominator of a map drawn in v, as ComputeScale and MapImage.MapScale
// report it: the ground width of a pixel over its width at v's DPI, a degree of a geographic map
// counting as mapview.MetersPerDegree.
func MapScale(m *catalog.Map, v render.View) float64 {
	return render.Map{UnitMeters: UnitMeters(m)}.Scale(v)
}

// UnitMeters is the length of one unit of m's coordinates in metres for scales (render.Map's
// UnitMeters): mapview.MetersPerDegree for a geographic map, else 1.
func UnitMeters(m *catalog.Map) float64 {
	if m != nil && m.SR.IsGeographic() {
		return mapview.MetersPerDegree
	}
	return 1
}

// SymbolScale is the factor the sizes of a layer's symbols and labels are multiplied by at a map
// scale: the map's reference scale over the map's scale when the map has a reference scale and the
// layer scales its symbols (its scaleSymbols, or the request's ScaleSymbols), else 1. Symbols are
// then their given size at the reference scale, twice it at half the scale denominator, as in
// ArcMap.
func SymbolScale(m *catalog.Map, l *catalog.Layer, st LayerState, scale float64) float64 {
	if m == nil || m.Def == nil || l == nil || l.Def == nil {
		return 1
	}
	on := l.Def.ScaleSymbols
	if st.ScaleSymbols != nil {
		on = *st.ScaleSymbols
	}
	ref := m.Def.ReferenceScale
	if !on || !(ref > 0) || !(scale > 0) || math.IsInf(scale, 0) {
		return 1
	}
	return ref / scale
}

// resolution is the ground size of a pixel of v in the map's units, the hint a draw's scans
// give their sources (feature.Query.Resolution); 0 when v has no width. Only layers of lines
// and polygons drawn with one plain symbol and without labels pass it on (buildLayer, plain): a
// label's place depends on where the others are, and would change when a vertex moves by a
// fraction of a pixel (so would a marker's antialiasing, for little to read less: a point is 21
// bytes of WKB).
func resolution(v render.View) float64 {
	if v.Width <= 0 {
		return 0
	}
	return (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width)
}

// overview returns the overview a layer may be drawn from in req (feature.Overview): the
// layer's own, when req allows overviews, its data are read as stored (not projected), into a raster image (a vector
// surface draws a footprint as its box) whose pixels are square and upright (a footprint is
// turned into pixels by a similarity, and its box must stay within a pixel). buildLayer decides
// whether the layer's drawing allows it, the overview whether its features are small enough.
func overview(l *catalog.Layer, req Request) *feature.Overview {
	ov := l.Overview
	if !req.Overviews || ov == nil || ov.Source() != l.Data || req.Format.IsVector() || req.View.Rotation != 0 {
		return nil
	}
	v := req.View
	pw := (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width)
	ph := (v.Extent.Max[1] - v.Extent.Min[1]) / float64(v.Height)
	if !(math.Abs(pw-ph) <= 1e-3*pw) {
		return nil
	}
	return ov
}

// snappable reports whether a layer of geometry type g reads snapped geometries for a draw.
func snappable(g feature.GeometryType) bool { return g == feature.Polygon || g == feature.Polyline }

// plain reports whether a symbol draws the same from snapped geometries: a solid fill and a
// solid line. A dash pattern's phase runs along the line, and a picture or hatch fill is placed
// from the shape's box, so either would show a vertex moved by a fraction of a pixel.
func plain(s *render.Symbol) bool {
	return len(s.Dash) == 0 && s.Pattern == nil && s.Hatch == render.HatchNone
}

// buildLayer returns the render layer of a catalog layer, and the label-only layers of its
// further active label classes.
// f multiplies every symbol and label size (SymbolScale); res is the view's pixel size
// (resolution), passed to the layer's scans; ov, when not nil, the layer's overview (see
// overview), drawn from instead of the scans when the layer is drawn with one plain symbol
// and every feature is at most a pixel.
func buildLayer(l *catalog.Layer, st LayerState, scale, f, res float64, ov *feature.Overview) (render.Layer, []render.Layer, error) {
	data := l.Data
	fields := data.Info().Fields
	defWhere, err := ParseWhere(st.DefinitionExpression, fields)
	if err != nil {
		return render.Layer{}, nil, fmt.Errorf("definition expression: %w", err)
	}
	rd := &l.Def.Renderer
	if st.Renderer != nil {
		rd = st.Renderer
	}
	var rendererIdx []int
	for _, name := range rd.RendererFields() {
		i := feature.Info{Fields: fields}.FieldIndex(name)
		if i < 0 {
			return render.Layer{}, nil, fmt.Errorf("renderer field %q is not a column of the layer", name)
		}
		rendererIdx = append(rendererIdx, i)
	}
	symbols := map[*symbology.Symbol]*render.Symbol{}
	symbolOf := func(s *symbology.Symbol) *render.Symbol {
		if rs, ok := symbols[s]; ok {
			return rs
		}
		rs := convertSymbol(s).Scaled(f)
		symbols[s] = &rs
		return &rs
	}
	rl := render.Layer{Name: l.Name, MinScale: l.Def.MinScale, MaxScale: l.Def.MaxScale, Opacity: st.Opacity()}
	if rd.Type == symbology.SimpleRenderer || rd.Type == "" {
		if rd.Symbol != nil {
			rl.Symbol = convertSymbol(rd.Symbol).Scaled(f)
		}
	}

	// Label classes: the first one in scale range of the layer's own; every one in range of a
	// request's LabelingDescription, each for the features its where clause matches (the first
	// here, the others as label-only layers; see labelOnlyLayer).
	var active []*symbology.Label
	if st.ShowLabels {
		labels := l.Def.Labels
		if st.Labels != nil {
			labels = st.Labels
		}
		for i := range labels {
			lb := &labels[i]
			if lb.ScaleRange.Contains(scale) {
				active = append(active, lb)
				if st.Labels == nil {
					break
				}
			}
		}
	}
	var label *symbology.Label
	var labelIdx []int
	var labelPred *where.Predicate
	if len(active) > 0 {
		label = active[0]
		rl.Label = labelStyle(label).Scaled(f)
		if labelIdx, err = labelFields(label, fields); err != nil {
			return render.Layer{}, nil, err
		}
		if labelPred, err = Compile(label.Where, fields); err != nil {
			return render.Layer{}, nil, fmt.Errorf("label class where clause: %w", err)
		}
	}
	var extra []render.Layer
	for _, lb := range active[min(1, len(active)):] {
		el, err := labelOnlyLayer(l, lb, defWhere, f)
		if err != nil {
			return render.Layer{}, nil, err
		}
		extra = append(extra, el)
	}
	simple := rd.Type == symbology.SimpleRenderer || rd.Type == ""
	// Read only the columns the renderer and the label need, in id order so that every provider
	// draws the same picture.
	cols := slices.Clone(rendererIdx)
	if label != nil {
		cols = append(cols, labelIdx...)
		if labelPred != nil {
			e, _ := where.Parse(label.Where)
			cols = append(cols, feature.WhereColumns(e, fields)...)
		}
	}
	cols = readColumns(cols)
	if label != nil || len(extra) > 0 || !snappable(data.Info().GeometryType) || !simple || !plain(&rl.Symbol) {
		res = 0
	}
	if res == 0 || !simple || defWhere != nil || data.Info().GeometryType != feature.Polygon {
		ov = nil
	}
	rl.Features = render.SourceFunc(func(ctx context.Context, b orb.Bound, yield func(render.Feature) bool) error {
		if ov != nil {
			// Every polygon at most a pixel: drawn from its footprint anyway (render.Footprint),
			// which the overview holds, instead of reading the rows.
			drawn, err := ov.Footprints(ctx, b, res*render.FootprintMaxPixels, func(fb orb.Bound, area, perimeter float64) bool {
				return yield(render.Feature{Footprint: render.Footprint{Bound: fb, Area: area, Perimeter: perimeter}})
			})
			if drawn || err != nil {
				return err
			}
		}
		vals := make([]any, len(rendererIdx))
		q := &feature.Query{Bound: &b, Where: defWhere, Columns: cols, Resolution: res}
		return prefetch(ctx, yield, func(ctx context.Context, yield func(render.Feature) bool) error {
			return scanDraw(ctx, data, q, func(f *feature.Feature) bool {
				rf := render.Feature{Geom: f.Geom}
				if !simple {
					for i, idx := range rendererIdx {
						vals[i] = f.Values[idx]
					}
					s := rd.SymbolFor(vals)
					if s == nil {
						return true
					}
					rf.Symbol = symbolOf(s)
				}
				if label != nil && (labelPred == nil || labelPred.Match(f.Values)) {
					rf.Label = labelText(label, labelIdx, f.Values)
				}
				return yield(rf)
			})
		})
	})
	return rl, extra, nil
}

// prefetchBatch is how many features a scan hands to the drawing at a time, and prefetchDepth
// how many such batches may wait: the memory a draw holds beyond what it draws is bounded by
// their product.
const (
	prefetchBatch = 256
	prefetchDepth = 4
)

// prefetch runs scan in a goroutine of its own and yields what it finds in order, so that a
// provider's reading and decoding (a database's wire protocol, SQLite, WKB) overlaps with the
// drawing on another core. When yield returns false the scan is cancelled and prefetch returns
// nil; a scan's error is returned once everything before it has been yielded.
func prefetch(ctx context.Context, yield func(render.Feature) bool, scan func(context.Context, func(render.Feature) bool) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []render.Feature, prefetchDepth)
	done := make(chan error, 1)
	go func() {
		defer close(batches)
		batch := make([]render.Feature, 0, prefetchBatch)
		send := func() bool {
			select {
			case batches <- batch:
				batch = make([]render.Feature, 0, prefetchBatch)
				return true
			case <-ctx.Done():
				return false
			}
		}
		err := scan(ctx, func(f render.Feature) bool {
			batch = append(batch, f)
			return len(batch) < prefetchBatch || send()
		})
		if len(batch) > 0 {
			send()
		}
		done <- err
	}()
	for batch := range batches {
		for _, f := range batch {
			if !yield(f) {
				cancel()
				for range batches { // let the scan see the cancellation and end
				}
				<-done
				return nil
			}
		}
	}
	if err := <-done; err != nil {
		return err
	}
	return ctx.Err() // a scan cut short by the caller's cancellation
}

// readColumns returns the columns to read for a draw: cols without literals (-1) and repeats,
// never nil (nil would read every column).
func readColumns(cols []int) []int {
	out := []int{}
	for _, c := range cols {
		if c >= 0 && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// scanDraw scans q for a draw, skipping features without geometry, until fn returns false.
func scanDraw(ctx context.Context, data feature.Source, q *feature.Query, fn func(*feature.Feature) bool) error {
	err := data.Scan(ctx, q, func(f *feature.Feature) error {
		if f.Geom == nil || fn(f) {
			return nil
		}
		return errStopDraw
	})
	if errors.Is(err, errStopDraw) {
		return nil
	}
	return err
}

// errStopDraw ends a draw's scan early.
var errStopDraw = errors.New("draw stopped")

// labelFields returns the column index of each part of a label's text (-1 for literals).
func labelFields(lb *symbology.Label, fields []feature.Field) ([]int, error) {
	var idx []int
	for _, p := range lb.Text {
		i := -1
		if p.Field != "" {
			if i = (feature.Info{Fields: fields}).FieldIndex(p.Field); i < 0 {
				return nil, fmt.Errorf("label field %q is not a column of the layer", p.Field)
			}
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// labelOnlyLayer labels the features of a layer (within its definition expression pred) that a
// label class's where clause matches, drawing no symbols: the renderer places one label per
// feature, so a further class needs a layer of its own.
func labelOnlyLayer(l *catalog.Layer, lb *symbology.Label, defWhere *where.Expr, f float64) (render.Layer, error) {
	data := l.Data
	fields := data.Info().Fields
	idx, err := labelFields(lb, fields)
	if err != nil {
		return render.Layer{}, err
	}
	wp, err := ParseWhere(lb.Where, fields)
	if err != nil {
		return render.Layer{}, fmt.Errorf("label class where clause: %w", err)
	}
	rl := render.Layer{Name: l.Name + " (labels)", MinScale: l.Def.MinScale, MaxScale: l.Def.MaxScale, Label: labelStyle(lb).Scaled(f)}
	// Both where clauses go to the source: the layer's definition expression and the class's.
	cond := where.And(defWhere, wp)
	cols := readColumns(idx)
	rl.Features = render.SourceFunc(func(ctx context.Context, b orb.Bound, yield func(render.Feature) bool) error {
		q := &feature.Query{Bound: &b, Where: cond, Columns: cols}
		return scanDraw(ctx, data, q, func(f *feature.Feature) bool {
			if text := labelText(lb, idx, f.Values); text != "" {
				return yield(render.Feature{Geom: f.Geom, Label: text})
			}
			return true
		})
	})
	return rl, nil
}

func labelText(l *symbology.Label, idx []int, vals []any) string {
	if len(l.Text) == 1 && idx[0] >= 0 {
		if v := vals[idx[0]]; v != nil {
			if s, ok := v.(string); ok {
				return s
			}
			return symbology.FormatValue(v)
		}
		return ""
	}
	var b []byte
	for i, p := range l.Text {
		if p.Field == "" {
			b = append(b, p.Literal...)
			continue
		}
		if v := vals[idx[i]]; v != nil {
			b = append(b, symbology.FormatValue(v)...)
		}
	}
	return string(b)
}

func labelStyle(l *symbology.Label) *render.LabelStyle {
	ls := &render.LabelStyle{Font: l.Font.Family, FontStyle: fontStyle(l.Font), Size: l.Font.Size, Color: l.Color.NRGBA(), Priority: -l.Priority,
		Offset: l.Placement.Offset, Placement: labelPlacement(l.Placement)}
	if l.Halo != nil {
		ls.Halo, ls.HaloWidth = l.Halo.Color.NRGBA(), l.Halo.Width
	}
	return ls
}

var pointPositions = map[symbology.PointPosition]render.PointPosition{
	symbology.PointRight: render.PointRight, symbology.PointAboveRight: render.PointAboveRight, symbology.PointBelowRight: render.PointBelowRight,
	symbology.PointLeft: render.PointLeft, symbology.PointAboveLeft: render.PointAboveLeft, symbology.PointBelowLeft: render.PointBelowLeft,
	symbology.PointAbove: render.PointAbove, symbology.PointBelow: render.PointBelow, symbology.PointCenter: render.PointCenter,
}

// labelPlacement is the renderer's placement of a label class's (the offset goes to
// LabelStyle.Offset).
func labelPlacement(p symbology.LabelPlacement) render.LabelPlacement {
	out := render.LabelPlacement{LineRepeat: p.Repeat, LineAllParts: p.AllParts, PolygonStraight: p.PolygonStraight,
		PolygonOutside: p.Outside, RemoveDuplicates: p.RemoveDuplicates}
	for _, pp := range p.Points {
		if rp, ok := pointPositions[pp]; ok {
			out.Points = append(out.Points, rp)
		}
	}
	switch p.Line {
	case symbology.LineAbove:
		out.LineSide = render.LineAbove
	case symbology.LineBelow:
		out.LineSide = render.LineBelow
	}
	switch p.Along {
	case symbology.LineStart:
		out.LineAnchor = render.LineStart
	case symbology.LineEnd:
		out.LineAnchor = render.LineEnd
	}
	switch p.Orientation {
	case symbology.LineStraight:
		out.LineOrientation = render.LineStraight
	case symbology.LineHorizontal:
		out.LineOrientation = render.LineHorizontal
	}
	return out
}

// fontStyle is the renderer's style of a label's font.
func fontStyle(f symbology.Font) render.FontStyle {
	return render.FontStyle{Bold: f.Bold, Italic: f.Italic, Underline: f.Underline, Strikethrough: f.Strikethrough}
}

var dashes = map[symbology.LineStyle][]float64{
	symbology.LineDash:       {4, 3},
	symbology.LineDot:        {1, 2},
	symbology.LineDashDot:    {4, 2, 1, 2},
	symbology.LineDashDotDot: {4, 2, 1, 2, 1, 2},
}

var hatches = map[symbology.FillStyle]render.HatchStyle{
	symbology.FillHorizontal: render.HatchHorizontal, symbology.FillVertical: render.HatchVertical,
	symbology.FillForwardDiagonal: render.HatchForwardDiagonal, symbology.FillBackwardDiagonal: render.HatchBackwardDiagonal,
	symbology.FillCross: render.HatchCross, symbology.FillDiagonalCross: render.HatchDiagonalCross,
}

var markers = map[symbology.MarkerStyle]render.MarkerStyle{
	symbology.MarkerCircle: render.MarkerCircle, symbology.MarkerSquare: render.MarkerSquare,
	symbology.MarkerCross: render.MarkerCross, symbology.MarkerX: render.MarkerX, symbology.MarkerDiamond: render.MarkerDiamond,
}

// convertSymbol turns a symbol of the model (package symbology) into the renderer's.
func convertSymbol(s *symbology.Symbol) *render.Symbol {
	rs := &render.Symbol{}
	outline := func(o *symbology.Outline) {
		if o == nil || o.Style == symbology.LineNull {
			return
		}
		rs.Stroke, rs.StrokeWidth, rs.Dash = o.Color.NRGBA(), o.Width, dashes[o.Style]
	}
	switch s.Type {
	case symbology.SimpleFill:
		if s.FillStyle != symbology.FillNull {
			rs.Fill = s.Color.NRGBA()
		}
		rs.Hatch = hatches[s.FillStyle]
		outline(s.Outline)
	case symbology.SimpleLine:
		if s.LineStyle != symbology.LineNull {
			rs.Stroke, rs.StrokeWidth, rs.Dash = s.Color.NRGBA(), s.Width, dashes[s.LineStyle]
		}
	case symbology.SimpleMarker:
		rs.Fill, rs.Marker, rs.MarkerSize = s.Color.NRGBA(), markers[s.MarkerStyle], s.Size
		rs.MarkerAngle, rs.MarkerOffset = s.Angle, [2]float64{s.XOffset, s.YOffset}
		outline(s.Outline)
	case symbology.CharacterMarker:
		rs.Fill, rs.MarkerSize, rs.Character = s.Color.NRGBA(), s.Size, s.Character
		rs.CharacterFont, rs.CharacterStyle = s.CharacterFont.Family, fontStyle(s.CharacterFont)
		rs.MarkerAngle, rs.MarkerOffset = s.Angle, [2]float64{s.XOffset, s.YOffset}
	case symbology.PictureMarker:
		rs.MarkerAngle, rs.MarkerOffset = s.Angle, [2]float64{s.XOffset, s.YOffset}
		if img := pictureImage(s); img != nil {
			pictureMarker(rs, s, img)
		} else {
			rs.Fill, rs.MarkerSize = s.Color.NRGBA(), max(s.Size, 6)
		}
	case symbology.PictureFill:
		if img := pictureImage(s); img != nil {
			pictureFill(rs, s, img)
		} else {
			rs.Fill = s.Color.NRGBA()
		}
		outline(s.Outline)
	}
	return rs
}
