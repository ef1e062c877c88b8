package render

import (
	"context"
	"image"
	"image/color"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/paulmach/orb"
)

// clipMargin is how far outside the image, in pixels, geometry is kept when clipping: more than half
// of any stroke width, so clipped edges stay out of sight.
const clipMargin = 64

// Renderer draws maps. It holds the fonts and their glyph caches and pools of image buffers and
// drawing state, so one Renderer should serve a whole process. It is safe for concurrent use.
type Renderer struct {
	fonts   *Fonts
	images  sync.Pool    // *image.RGBA
	states  sync.Pool    // *drawState
	drawing atomic.Int32 // Draw calls in progress
}

// drawState is the per-draw scratch space, reused through Renderer.states.
type drawState struct {
	surface *GGSurface
	path    pixelPath
	labels  labeller
}

// NewRenderer returns a Renderer with the embedded fonts.
func NewRenderer() (*Renderer, error) {
	fonts, err := NewFonts()
	if err != nil {
		return nil, err
	}
	return &Renderer{fonts: fonts}, nil
}

// defaultRenderer serves the package-level Draw and Release.
var defaultRenderer = sync.OnceValue(func() *Renderer {
	r, err := NewRenderer()
	if err != nil {
		panic(err) // the embedded font is valid; see TestFonts
	}
	return r
})

// Draw draws m for v with a process-wide Renderer; see Renderer.Draw.
func Draw(ctx context.Context, m Map, v View) (*image.RGBA, error) {
	return defaultRenderer().Draw(ctx, m, v)
}

// Release returns an image from Draw to the process-wide Renderer's pool; see Renderer.Release.
func Release(img *image.RGBA) { defaultRenderer().Release(img) }

// Fonts returns the renderer's fonts, for surfaces created outside it.
func (r *Renderer) Fonts() *Fonts { return r.fonts }

// Draw draws m for v into a new image (premultiplied RGBA, v.Width×v.Height, origin at 0,0). It stops
// with ctx's error when ctx is done. Pass the image to Release once it is encoded to let the next
// Draw reuse its memory; keeping it is fine too.
func (r *Renderer) Draw(ctx context.Context, m Map, v View) (*image.RGBA, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	r.drawing.Add(1)
	defer r.drawing.Add(-1)
	img := r.image(v.Width, v.Height)
	st, _ := r.states.Get().(*drawState)
	if st == nil {
		st = &drawState{surface: NewGGSurface(img, r.fonts)}
	}
	st.surface.reset(img)
	if v.Width*v.Height >= parallelPixels {
		st.surface.record(r.drawBands())
	}
	err := r.drawTo(ctx, st.surface, st, m, v)
	if err == nil {
		// What was recorded and not yet replayed (a street view's fills and outlines, all of it).
		if err = ctx.Err(); err == nil {
			st.surface.flushList()
		}
	}
	st.surface.reset(nil)
	st.surface.dropSpare(maxPooledBytes)
	r.states.Put(st)
	if err != nil {
		r.Release(img)
		return nil, err
	}
	return img, nil
}

// drawBands returns the bands a large image is drawn in (see displayList): drawBands, fewer when
// the other draws in progress leave fewer cores free (a worker drawing several images at once
// draws each on one core).
func (r *Renderer) drawBands() int {
	return min(drawBands, runtime.GOMAXPROCS(0)-int(r.drawing.Load())+1)
}

// DrawTo draws m for v on s, whose size should be v.Width×v.Height.
func (r *Renderer) DrawTo(ctx context.Context, s Surface, m Map, v View) error {
	if err := v.Validate(); err != nil {
		return err
	}
	return r.drawTo(ctx, s, &drawState{}, m, v)
}

// maxPooledBytes bounds the image buffers the Renderer keeps for reuse (images and group
// images): 16 MiB, a 2048×2048 image. A larger one is left to the garbage collector, so that
// the memory of an occasional large render is given back instead of staying in a pool, where
// a later small render could even keep it alive for good.
const maxPooledBytes = 16 << 20

// Release puts img back in the pool for reuse by a later Draw, unless it is larger than
// maxPooledBytes. img must not be used afterwards.
func (r *Renderer) Release(img *image.RGBA) {
	if img != nil && cap(img.Pix) <= maxPooledBytes {
		r.images.Put(img)
	}
}

// image returns a w×h image from the pool (contents undefined) or a new one.
func (r *Renderer) image(w, h int) *image.RGBA {
	n := w * h * 4
	if img, _ := r.images.Get().(*image.RGBA); img != nil && cap(img.Pix) >= n {
		img.Pix = img.Pix[:n]
		img.Stride = 4 * w
		img.Rect = image.Rect(0, 0, w, h)
		return img
	}
	return image.NewRGBA(image.Rect(0, 0, w, h))
}

func (r *Renderer) drawTo(ctx context.Context, s Surface, st *drawState, m Map, v View) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.Transparent {
		s.Clear(color.NRGBA{})
	} else {
		s.Clear(m.Background)
	}
	W, H := float64(v.Width), float64(v.Height)
	tr := transformer{
		m:     v.Matrix(),
		clip:  clipRect{-clipMargin, -clipMargin, W + clipMargin, H + clipMargin},
		tol2:  simplifyTol * simplifyTol,
		dpTol: dpTol,
	}
	imgRect := clipRect{0, 0, W, H}
	query := v.Bounds()
	scale := m.Scale(v)
	st.labels.reset()
	for li := range m.Layers {
		l := &m.Layers[li]
		if l.Features == nil || !l.visibleAt(scale) {
			continue
		}
		group := l.Opacity > 0 && l.Opacity < 1
		if group {
			s.BeginGroup()
		}
		err := r.drawLayer(ctx, s, st, l, v, &tr, query, imgRect)
		if group {
			s.EndGroup(l.Opacity)
		}
		if err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st.labels.place(s, r.fonts, v.Width, v.Height)
	return nil
}

func (r *Renderer) drawLayer(ctx context.Context, s Surface, st *drawState, l *Layer, v View, tr *transformer, query orb.Bound, imgRect clipRect) error {
	path := &st.path
	path.reset()
	var cur *Symbol
	fps, _ := s.(footprintSurface)
	pending := false // footprints accumulated for cur
	flush := func() {
		if cur != nil && (len(path.subs) > 0 || pending) {
			drawPath(s, fps, path, cur, v)
		}
		path.reset()
		pending = false
	}
	var label labelCand
	if l.Label != nil {
		ls := l.Label
		label = labelCand{
			style: TextStyle{
				Font: ls.Font, FontStyle: ls.FontStyle, Size: v.PointsToPixels(ls.Size), Color: ls.Color,
				Halo: ls.Halo, HaloWidth: v.PointsToPixels(ls.HaloWidth),
			},
			priority: ls.Priority,
			overlap:  ls.AllowOverlap,
			place:    &ls.Placement,
			layer:    st.labels.nextLayer(),
			repeat:   v.PointsToPixels(ls.Placement.LineRepeat),
		}
		if label.style.Size <= 0 {
			label.style.Size = v.PointsToPixels(8)
		}
	}
	n := 0
	var ctxErr error
	err := l.Features.Search(ctx, query, func(f Feature) bool {
		if n++; n%64 == 0 {
			if ctxErr = ctx.Err(); ctxErr != nil {
				return false
			}
		}
		if f.Geom == nil && f.Footprint.IsZero() {
			return true
		}
		sym := f.Symbol
		if sym == nil {
			sym = &l.Symbol
		}
		if sym != cur {
			flush()
			cur = sym
		}
		wantLabel := l.Label != nil && f.Label != ""
		if fps != nil && !wantLabel && f.Outline == nil && sym.Pattern == nil && sym.Hatch == HatchNone {
			// A polygon of at most a pixel: its coverage, not its outline.
			var fp pixelFootprint
			ok := f.Geom == nil
			if ok {
				fp = footprintPixels(f.Footprint, tr.m)
			} else {
				fp, ok = polygonFootprint(f.Geom, tr.m)
			}
			if ok {
				width, duty := 0.0, 1.0
				if sym.Stroke.A > 0 {
					width = v.PointsToPixels(sym.StrokeWidth)
					duty = dashDuty(sym.Dash)
				}
				if fps.addFootprint(fp, sym.Fill.A > 0, width, duty) {
					pending = true
					return true
				}
			}
		}
		geom := f.Geom
		if geom == nil {
			geom = f.Footprint.Bound
		}
		switch g := geom.(type) {
		case orb.Point, orb.MultiPoint:
			flush()
			cur = sym
			var pts []orb.Point
			if p, ok := g.(orb.Point); ok {
				pts = []orb.Point{p}
			} else {
				pts = g.(orb.MultiPoint)
			}
			size := v.PointsToPixels(sym.MarkerSize)
			stroke := StrokeStyle{Color: sym.Stroke, Width: v.PointsToPixels(sym.StrokeWidth)}
			labelled := false
			offX, offY := v.PointsToPixels(sym.MarkerOffset[0]), -v.PointsToPixels(sym.MarkerOffset[1])
			for _, p := range pts {
				x, y := tr.m.Apply(p[0], p[1])
				x, y = x+offX, y+offY
				if x < -size || y < -size || x > float64(v.Width)+size || y > float64(v.Height)+size {
					continue
				}
				if sym.Picture != nil {
					pb := sym.Picture.Bounds()
					pw := size
					if pw <= 0 {
						pw = v.PointsToPixels(float64(pb.Dx()) * 72 / 96)
					}
					ph := pw * float64(pb.Dy()) / float64(max(1, pb.Dx()))
					if sym.MarkerAngle != 0 {
						s.Push(Translate(-x, -y).Then(Rotate(-sym.MarkerAngle)).Then(Translate(x, y)))
					}
					s.DrawImage(sym.Picture, x-pw/2, y-ph/2, pw, ph)
					if sym.MarkerAngle != 0 {
						s.Pop()
					}
				} else if sym.Character != 0 {
					r.fonts.DrawCharacter(s, sym.Character, sym.CharacterFont, sym.CharacterStyle, x, y, size, sym.MarkerAngle, sym.Fill, stroke)
				} else {
					s.Marker(x, y, sym.Marker, size, sym.MarkerAngle, sym.Fill, stroke)
				}
				if wantLabel && !labelled {
					c := label
					c.text = f.Label
					c.offset = size/2 + v.PointsToPixels(2)
					if l.Label.Offset > 0 {
						c.offset = v.PointsToPixels(l.Label.Offset)
					}
					st.labels.addPoint(c, x, y)
					labelled = true
				}
			}
			return true
		}
		firstSub, firstPoly := len(path.subs), len(path.polys)
		tr.addGeometry(path, geom)
		if f.Outline != nil {
			for i := firstSub; i < len(path.subs); i++ {
				path.subs[i].fillOnly = true
			}
			tr.addGeometry(path, f.Outline)
		}
		if wantLabel && len(path.subs) > firstSub {
			c := label
			c.text = f.Label
			if len(path.polys) > firstPoly {
				// Placed outside (PolygonOutside): as far from the anchor as a point label.
				c.offset = v.PointsToPixels(orDefault(l.Label.Offset, 2))
				st.labels.addPolygon(c, path, firstPoly, imgRect)
			} else {
				// Above or below the line: clear of the stroke by 2 points or Offset.
				c.offset = v.PointsToPixels(sym.StrokeWidth)/2 + v.PointsToPixels(2)
				if l.Label.Offset > 0 {
					c.offset = v.PointsToPixels(sym.StrokeWidth)/2 + v.PointsToPixels(l.Label.Offset)
				}
				st.labels.addLine(c, path, firstSub)
			}
		}
		if len(path.pts) > 1<<16 {
			flush()
		}
		return true
	})
	flush()
	if err != nil {
		return err
	}
	return ctxErr
}

// footprintSurface is a Surface that draws polygons smaller than a pixel from their footprints
// (GGSurface): addFootprint accumulates one for the batch being drawn, compositeFill and
// compositeStroke composite what the batch accumulated with its fill and outline colour.
type footprintSurface interface {
	addFootprint(fp pixelFootprint, fill bool, width, duty float64) bool
	compositeFill(c color.NRGBA)
	compositeStroke(c color.NRGBA)
}

// dashDuty returns the fraction of a line a dash pattern draws (1 for none).
func dashDuty(dash []float64) float64 {
	var on, all float64
	for i, d := range dash {
		if d > 0 {
			all += d
			if i%2 == 0 {
				on += d
			}
		}
	}
	if all == 0 {
		return 1
	}
	return on / all
}

// drawPath fills the closed subpaths of path with sym and strokes all of them but the rings
// that are only filled; with fps, the footprints accumulated for the batch are composited after
// the fill and after the outline.
func drawPath(s Surface, fps footprintSurface, path *pixelPath, sym *Symbol, v View) {
	hasOpen, hasFillOnly := false, false
	emit := func(closedOnly bool) {
		s.NewPath()
		for _, sp := range path.subs {
			if !sp.closed {
				hasOpen = true
				if closedOnly {
					continue
				}
			}
			if sp.fillOnly {
				hasFillOnly = true
				if !closedOnly {
					continue
				}
			}
			p := path.pts[sp.start]
			s.MoveTo(p.x, p.y)
			for _, p := range path.pts[sp.start+1 : sp.end] {
				s.LineTo(p.x, p.y)
			}
			if sp.closed {
				s.ClosePath()
			}
		}
	}
	stroke := StrokeStyle{Color: sym.Stroke, Width: v.PointsToPixels(sym.StrokeWidth), Cap: CapRound, Join: JoinRound}
	if len(sym.Dash) > 0 {
		stroke.Dash = make([]float64, len(sym.Dash))
		for i, d := range sym.Dash {
			stroke.Dash[i] = v.PointsToPixels(d)
		}
	}
	emit(true)
	switch {
	case sym.Pattern != nil:
		if tile := sym.pictureFillTile(v, pathBounds(path)); tile != nil {
			s.FillPattern(tile)
		}
	case sym.Hatch != HatchNone && sym.Fill.A > 0:
		s.FillPattern(hatchTile(sym.Hatch, sym.Fill, v.PointsToPixels(orDefault(sym.HatchSpacing, defaultHatchSpacing)), v.PointsToPixels(0.75)))
	case sym.Fill.A > 0:
		s.Fill(sym.Fill)
		if fps != nil {
			fps.compositeFill(sym.Fill)
		}
	}
	if stroke.Color.A == 0 || stroke.Width <= 0 {
		return
	}
	if hasOpen || hasFillOnly {
		emit(false)
	}
	s.Stroke(stroke)
	if fps != nil {
		fps.compositeStroke(stroke.Color)
	}
}
