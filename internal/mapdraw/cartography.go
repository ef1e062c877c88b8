package mapdraw

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"math"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/simplify"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// selectionLayers returns the layers that draw a layer's selection: its buffer, then the
// selected features.
func selectionLayers(ctx context.Context, l *catalog.Layer, st LayerState, mapColor *color.NRGBA, v render.View, f float64) ([]render.Layer, error) {
	if len(st.Selection) == 0 {
		return nil, nil
	}
	sel := color.NRGBA{0, 255, 255, 255} // ArcGIS's default selection colour, cyan
	if mapColor != nil {
		sel = *mapColor
	}
	if st.SelectionColor != nil {
		sel = *st.SelectionColor
	}
	// Selected features outside the layer's definition expression are not in the layer.
	info := l.Data.Info()
	defWhere, err := ParseWhere(st.DefinitionExpression, info.Fields)
	if err != nil {
		return nil, err
	}
	var fs []render.Feature
	q := &feature.Query{IDs: st.Selection, Where: defWhere, Columns: []int{}}
	err = scanDraw(ctx, l.Data, q, func(f *feature.Feature) bool {
		fs = append(fs, render.Feature{Geom: f.Geom})
		return true
	})
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	var out []render.Layer
	gt := info.GeometryType
	if st.ShowBuffer && st.BufferDistance > 0 {
		buf, err := bufferLayer(fs, st, sel, v)
		if err != nil {
			return nil, err
		}
		out = append(out, buf)
	}
	var sym render.Symbol
	if st.SelectionSymbol != nil {
		sym = *convertSymbol(st.SelectionSymbol)
	} else {
		switch gt {
		case feature.Polygon:
			sym = render.Symbol{Stroke: sel, StrokeWidth: 1.5}
		case feature.Polyline:
			sym = render.Symbol{Stroke: sel, StrokeWidth: 2}
		default:
			size := 6.0
			if s := l.Def.Renderer.Symbol; s != nil && s.Size > 0 {
				size = s.Size
			}
			sym = render.Symbol{Fill: sel, Marker: render.MarkerCircle, MarkerSize: size}
		}
	}
	out = append(out, render.Layer{Name: l.Name + " (selection)", Features: render.NewIndex(fs), Symbol: sym.Scaled(f), MinScale: l.Def.MinScale, MaxScale: l.Def.MaxScale})
	return out, nil
}

// MaxBufferDistance is the largest selection buffer distance drawn in a view of extent: the
// extent's diagonal. A buffer that long around any feature in the view already covers the whole
// view, so a longer one draws the same image around those features, only at more cost.
func MaxBufferDistance(extent orb.Bound) float64 {
	return math.Hypot(extent.Max[0]-extent.Min[0], extent.Max[1]-extent.Min[1])
}

// bufferTolerance is the fraction of the buffer distance by which a line or polygon is simplified
// before its buffer is drawn: the buffer's outline moves by at most that much (1% of the
// distance), and a wide buffer around a detailed coast is drawn from a few dozen pieces instead of
// thousands, each as wide as the buffer.
const bufferTolerance = 0.01

// bufferLayer draws buffers of distance d around features as their union of simple pieces: a
// circle around every point and vertex, a rectangle 2d wide along every segment, and a polygon's
// own area, all of the same orientation and filled with the non-zero rule, which is exactly the
// buffer. Lines and polygons are simplified by bufferTolerance of d first. Unlike a stroke 2d wide
// with round joins, which draws the same area, the pieces cost the rasterizer time in proportion
// to their outline, not to their width times the row's width, so a buffer as wide as the image
// draws in about the time of a narrow one. The layer is drawn opaque in a group of the symbol's
// opacity, so overlapping buffers do not darken.
//
// The distance must be finite, not negative and at most MaxBufferDistance of the view's extent;
// another is an ErrBadRequest.
func bufferLayer(fs []render.Feature, st LayerState, sel color.NRGBA, v render.View) (render.Layer, error) {
	d := st.BufferDistance
	if limit := MaxBufferDistance(v.Extent); !(d >= 0 && d <= limit) {
		return render.Layer{}, &ErrBadRequest{Err: fmt.Errorf("selection buffer distance %g must be between 0 and %g, the diagonal of the map extent", d, limit)}
	}
	fill := sel
	fill.A = 128
	if st.BufferSymbol != nil {
		fill = convertSymbol(st.BufferSymbol).Fill
	}
	opacity := float64(fill.A) / 255
	fill.A = 255
	res := (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width) // map units per pixel
	tol := d * bufferTolerance
	bp := bufferPiecer{d: d, tol: tol, sides: circleSides(d/res, max(0.5, tol/res)), seen: map[[2]int64]bool{}}
	var out []render.Feature
	for _, f := range fs {
		switch g := f.Geom.(type) {
		case orb.Point:
			out = append(out, render.Feature{Geom: circle(g, d)})
		case orb.MultiPoint:
			for _, p := range g {
				out = append(out, render.Feature{Geom: circle(p, d)})
			}
		default:
			if pieces := bp.pieces(simplifyForBuffer(g, tol)); len(pieces) > 0 {
				out = append(out, render.Feature{Geom: pieces})
			}
		}
	}
	if opacity <= 0 {
		opacity = 0.001
	}
	return render.Layer{Name: "selection buffer", Features: render.NewIndex(out), Symbol: render.Symbol{Fill: fill}, Opacity: opacity}, nil
}

// circleSides is the number of sides of a circle of radius r whose sides stray at most tol from
// the circle: from 8 to 256.
func circleSides(r, tol float64) int {
	if !(r > tol) {
		return 8
	}
	n := math.Ceil(math.Pi / math.Acos(1-tol/r))
	return int(max(8, min(256, n)))
}

// bufferPiecer cuts lines and polygons into the pieces whose union is their buffer of distance d.
// A vertex in the same cell of a grid of tol as one already given a circle gets none: its circle
// lies within 1.5 tol of that one's.
type bufferPiecer struct {
	d, tol float64
	sides  int
	seen   map[[2]int64]bool
}

// pieces returns the pieces of the buffer around g (a line or a polygon): a polygon's own area
// (outer rings anticlockwise, holes clockwise), and for every line and ring a circle around each
// vertex and a rectangle 2d wide along each segment longer than tol, all anticlockwise.
func (bp *bufferPiecer) pieces(g orb.Geometry) orb.MultiPolygon {
	var out orb.MultiPolygon
	d := bp.d
	line := func(ls []orb.Point) {
		for i, p := range ls {
			cell := [2]int64{int64(math.Floor(p[0] / bp.tol)), int64(math.Floor(p[1] / bp.tol))}
			if bp.tol == 0 || !bp.seen[cell] {
				bp.seen[cell] = true
				out = append(out, circleN(p, d, bp.sides))
			}
			if i == 0 {
				continue
			}
			a := ls[i-1]
			l := math.Hypot(p[0]-a[0], p[1]-a[1])
			if !(l > bp.tol) {
				continue
			}
			nx, ny := -(p[1]-a[1])/l*d, (p[0]-a[0])/l*d // left of a→p, d long
			out = append(out, orb.Polygon{{
				{a[0] - nx, a[1] - ny}, {p[0] - nx, p[1] - ny}, {p[0] + nx, p[1] + ny}, {a[0] + nx, a[1] + ny}, {a[0] - nx, a[1] - ny},
			}})
		}
	}
	polygon := func(p orb.Polygon) {
		own := make(orb.Polygon, 0, len(p))
		for i, r := range p {
			line(r)
			r = r.Clone()
			if (i == 0) != (r.Orientation() == orb.CCW) {
				r.Reverse()
			}
			own = append(own, r)
		}
		out = append(out, own)
	}
	switch g := g.(type) {
	case orb.LineString:
		line(g)
	case orb.MultiLineString:
		for _, ls := range g {
			line(ls)
		}
	case orb.Ring:
		polygon(orb.Polygon{g})
	case orb.Polygon:
		polygon(g)
	case orb.MultiPolygon:
		for _, p := range g {
			polygon(p)
		}
	}
	return out
}

// simplifyForBuffer simplifies the lines and rings of g within tol (Douglas-Peucker), keeping every
// part: a part that would collapse is replaced by its bounding box, which lies within tol of it.
func simplifyForBuffer(g orb.Geometry, tol float64) orb.Geometry {
	if !(tol > 0) {
		return g
	}
	dp := simplify.DouglasPeucker(tol)
	line := func(ls orb.LineString) orb.LineString {
		out := dp.LineString(ls.Clone())
		if len(out) < 2 || (len(out) == 2 && out[0] == out[1]) {
			return orb.LineString(ls.Bound().ToRing())
		}
		return out
	}
	ring := func(r orb.Ring) orb.Ring {
		out := orb.Ring(line(orb.LineString(r)))
		if len(out) < 4 {
			return r.Bound().ToRing()
		}
		return out
	}
	polygon := func(p orb.Polygon) orb.Polygon { return mapParts(p, ring) }
	switch g := g.(type) {
	case orb.LineString:
		return line(g)
	case orb.MultiLineString:
		return mapParts(g, line)
	case orb.Ring:
		return ring(g)
	case orb.Polygon:
		return polygon(g)
	case orb.MultiPolygon:
		return mapParts(g, polygon)
	}
	return g
}

// mapParts returns a new geometry of the parts of g (the lines of a multiline, the rings of a
// polygon, the polygons of a multipolygon), each passed through fn.
func mapParts[G ~[]P, P any](g G, fn func(P) P) G {
	out := make(G, len(g))
	for i, p := range g {
		out[i] = fn(p)
	}
	return out
}

func dpiOf(v render.View) float64 {
	if v.DPI > 0 {
		return v.DPI
	}
	return 96
}

// circle is a 64-gon of radius r around c.
func circle(c orb.Point, r float64) orb.Polygon { return circleN(c, r, 64) }

// circleN is an n-gon of radius r around c, anticlockwise.
func circleN(c orb.Point, r float64, n int) orb.Polygon {
	ring := make(orb.Ring, 0, n+1)
	for i := 0; i <= n; i++ {
		a := 2 * math.Pi * float64(i%n) / float64(n)
		ring = append(ring, orb.Point{c[0] + r*math.Cos(a), c[1] + r*math.Sin(a)})
	}
	return orb.Polygon{ring}
}

// DrawGraphics draws graphics over a map drawn for v, on s; fonts draws character markers.
func DrawGraphics(s render.Surface, fonts *render.Fonts, gs []symbology.Graphic, v render.View) {
	m := v.Matrix()
	px := func(p [2]float64) (float64, float64) { return m.Apply(p[0], p[1]) }
	for _, g := range gs {
		if len(g.Parts) == 0 || len(g.Parts[0]) == 0 {
			continue
		}
		switch g.Kind {
		case symbology.GraphicMarker:
			sym := &symbology.Symbol{Type: symbology.SimpleMarker, Color: symbology.Color{A: 255}, Size: 8}
			if g.Symbol != nil {
				sym = g.Symbol
			}
			rs := convertSymbol(sym)
			x, y := px(g.Parts[0][0])
			size := v.PointsToPixels(rs.MarkerSize)
			if rs.Picture != nil {
				b := rs.Picture.Bounds()
				if size <= 0 {
					size = float64(b.Dx()) * dpiOf(v) / 96
				}
				h := size * float64(b.Dy()) / float64(max(1, b.Dx()))
				s.DrawImage(rs.Picture, x-size/2, y-h/2, size, h)
				continue
			}
			x, y = x+v.PointsToPixels(rs.MarkerOffset[0]), y-v.PointsToPixels(rs.MarkerOffset[1])
			stroke := render.StrokeStyle{Color: rs.Stroke, Width: v.PointsToPixels(rs.StrokeWidth)}
			if rs.Character != 0 {
				fonts.DrawCharacter(s, rs.Character, rs.CharacterFont, rs.CharacterStyle, x, y, size, rs.MarkerAngle, rs.Fill, stroke)
				continue
			}
			s.Marker(x, y, rs.Marker, size, rs.MarkerAngle, rs.Fill, stroke)
		case symbology.GraphicLine, symbology.GraphicPolygon:
			closed := g.Kind == symbology.GraphicPolygon
			sym := g.Symbol
			if sym == nil {
				if closed {
					sym = &symbology.Symbol{Type: symbology.SimpleFill, Color: symbology.Color{A: 255}}
				} else {
					sym = &symbology.Symbol{Type: symbology.SimpleLine, Color: symbology.Color{A: 255}, Width: 1}
				}
			}
			rs := convertSymbol(sym)
			path := func() {
				s.NewPath()
				for _, part := range g.Parts {
					for i, p := range part {
						x, y := px(p)
						if i == 0 {
							s.MoveTo(x, y)
						} else {
							s.LineTo(x, y)
						}
					}
					if closed {
						s.ClosePath()
					}
				}
			}
			path()
			if closed && rs.Fill.A > 0 {
				s.Fill(rs.Fill)
			}
			if rs.Stroke.A > 0 && rs.StrokeWidth > 0 {
				st := render.StrokeStyle{Color: rs.Stroke, Width: v.PointsToPixels(rs.StrokeWidth), Cap: render.CapRound, Join: render.JoinRound}
				for _, d := range rs.Dash {
					st.Dash = append(st.Dash, v.PointsToPixels(d))
				}
				s.Stroke(st)
			}
		case symbology.GraphicText:
			drawGraphicText(s, g, v, px)
		}
	}
}

// drawGraphicText draws a text graphic: lines separated by "\n", aligned on the anchor by
// Align (0 left, 0.5 centre, 1 right; vertically 0 baseline of the first line, 1 top, -1 bottom,
// 0.5 centre of the block).
func drawGraphicText(s render.Surface, g symbology.Graphic, v render.View, px func([2]float64) (float64, float64)) {
	f := symbology.GraphicFont{Font: symbology.Font{Size: 10}, Color: symbology.Color{A: 255}}
	if g.Font != nil {
		f = *g.Font
	}
	ts := render.TextStyle{Font: f.Family, Size: v.PointsToPixels(max(1, f.Size)), Color: f.Color.NRGBA(), Angle: g.Angle,
		FontStyle: fontStyle(f.Font)}
	if f.Halo != nil {
		ts.Halo, ts.HaloWidth = f.Halo.Color.NRGBA(), v.PointsToPixels(f.Halo.Width)
	}
	lines := strings.Split(g.Text, "\n")
	lineH := ts.Size * 1.2
	x, y := px(g.Parts[0][0])
	var w float64
	for _, l := range lines {
		w = max(w, s.MeasureText(l, ts).Width)
	}
	asc := ts.Size * 0.76
	blockH := lineH*float64(len(lines)-1) + asc
	var dy float64
	switch va := g.Align[1]; {
	case va == 1: // top
		dy = asc
	case va == -1: // bottom
		dy = -(blockH - asc)
	case va == 0.5: // centre
		dy = asc - blockH/2
	}
	sin, cos := math.Sincos(g.Angle * math.Pi / 180)
	if f.Back != nil && f.Back.A > 0 && g.Angle == 0 {
		pad := v.PointsToPixels(2)
		x0, y0 := x-g.Align[0]*w-pad, y+dy-asc-pad
		s.NewPath()
		s.MoveTo(x0, y0)
		s.LineTo(x0+w+2*pad, y0)
		s.LineTo(x0+w+2*pad, y0+blockH+2*pad+ts.Size*0.24)
		s.LineTo(x0, y0+blockH+2*pad+ts.Size*0.24)
		s.ClosePath()
		s.Fill(f.Back.NRGBA())
	}
	for i, l := range lines {
		lw := s.MeasureText(l, ts).Width
		// Offset along the baseline (alignment) and across it (line), rotated with the text.
		ax := -g.Align[0] * lw
		ay := dy + float64(i)*lineH
		s.Text(l, x+ax*cos+ay*sin, y-ax*sin+ay*cos, ts)
	}
}

// Patch is a legend patch shape: a line or polygon in any coordinates, fitted into the swatch
// (keeping its aspect ratio when PreserveAspect).
type Patch struct {
	Geom           orb.Geometry
	PreserveAspect bool
}

// Swatch draws one legend patch of w×h pixels at dpi for a symbol of a layer of geometry type gt:
// a rectangle for fills, a horizontal line for lines, a marker in the middle for points (or the
// patch's shape for fills and lines, when patch is not nil), on a transparent background, encoded in
// f.
func Swatch(ctx context.Context, r *render.Renderer, sym *symbology.Symbol, gt feature.GeometryType, w, h int, dpi float64, f render.Format, patch *Patch) ([]byte, error) {
	v := render.View{Extent: orb.Bound{Max: orb.Point{float64(w), float64(h)}}, Width: w, Height: h, DPI: dpi}
	rs := convertSymbol(sym)
	var geom orb.Geometry
	W, H := float64(w), float64(h)
	in := math.Ceil(v.PointsToPixels(rs.StrokeWidth)/2) + 1
	switch gt {
	case feature.Polygon:
		geom = orb.Polygon{{{in, in}, {W - in, in}, {W - in, H - in}, {in, H - in}, {in, in}}}
	case feature.Polyline:
		geom = orb.LineString{{in, H / 2}, {W - in, H / 2}}
	default:
		geom = orb.Point{W / 2, H / 2}
	}
	if patch != nil && patch.Geom != nil && gt != feature.Point && gt != feature.Multipoint {
		if g := fitPatch(patch, orb.Bound{Min: orb.Point{in, in}, Max: orb.Point{W - in, H - in}}); g != nil {
			geom = g
		}
	}
	m := render.Map{Transparent: true, Layers: []render.Layer{{Features: render.Features{{Geom: geom}}, Symbol: *rs}}}
	var buf bytes.Buffer
	if err := r.DrawEncoded(ctx, &buf, m, v, f, render.EncodeOptions{}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fitPatch scales and moves a patch shape into box; nil for an empty shape.
func fitPatch(p *Patch, box orb.Bound) orb.Geometry {
	b := p.Geom.Bound()
	bw, bh := b.Max[0]-b.Min[0], b.Max[1]-b.Min[1]
	if !(bw > 0) && !(bh > 0) {
		return nil
	}
	sx, sy := (box.Max[0]-box.Min[0])/max(bw, 1e-12), (box.Max[1]-box.Min[1])/max(bh, 1e-12)
	if bw <= 0 {
		sx = sy
	}
	if bh <= 0 {
		sy = sx
	}
	if p.PreserveAspect {
		sx, sy = min(sx, sy), min(sx, sy)
	}
	cx, cy := (b.Min[0]+b.Max[0])/2, (b.Min[1]+b.Max[1])/2
	bx, by := (box.Min[0]+box.Max[0])/2, (box.Min[1]+box.Max[1])/2
	return reprojectGeom(p.Geom, func(q orb.Point) orb.Point { return orb.Point{bx + (q[0]-cx)*sx, by + (q[1]-cy)*sy} })
}

// reprojectGeom applies fn to every point of a copy of a line or polygon geometry (an envelope
// as its polygon); nil for any other geometry.
func reprojectGeom(g orb.Geometry, fn func(orb.Point) orb.Point) orb.Geometry {
	switch v := g.(type) {
	case orb.LineString, orb.MultiLineString, orb.Polygon, orb.MultiPolygon:
		return proj.Geometry(orb.Clone(v), fn)
	case orb.Bound:
		return proj.Geometry(v.ToPolygon(), fn)
	}
	return nil
}

// FillColor is the colour a fill symbol paints (a picture fill's average colour), for backgrounds.
func FillColor(s *symbology.Symbol) color.NRGBA {
	if s.Type == symbology.PictureFill {
		return pictureColor(s)
	}
	return convertSymbol(s).Fill
}
