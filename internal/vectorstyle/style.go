package vectorstyle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/servicedef"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// SourceName is the name of the style's one source, as ArcGIS names it.
const SourceName = "esri"

// ZoomZeroScale is the scale denominator of zoom 0 (a 512-pixel world at 96 DPI, at the
// equator): zoom z is ZoomZeroScale / 2^z.
const ZoomZeroScale = 295828763.7957775

// DefaultMaxZoom is the source's maxzoom when Options leaves it 0: clients overzoom past it.
const DefaultMaxZoom = 14

// MaxZoom is the largest zoom a style names.
const MaxZoom = 24

// Options says where the style's resources are.
type Options struct {
	// ServiceURL is the absolute URL of the service's VectorTileServer,
	// `https://host/arcgis/rest/services/<svc>/VectorTileServer`; tiles, glyphs and sprites
	// are under it.
	ServiceURL string
	// MaxZoom is the last zoom of the tiles (DefaultMaxZoom when 0).
	MaxZoom int
}

// Style is a Mapbox GL style, version 8. Paint and layout values are JSON values: literals or
// expressions (arrays).
type Style struct {
	Version int               `json:"version"`
	Name    string            `json:"name"`
	Sources map[string]Source `json:"sources"`
	Sprite  string            `json:"sprite"`
	Glyphs  string            `json:"glyphs"`
	Layers  []Layer           `json:"layers"`
}

// Source is a vector tile source.
type Source struct {
	Type        string   `json:"type"`
	Tiles       []string `json:"tiles"`
	MinZoom     int      `json:"minzoom"`
	MaxZoom     int      `json:"maxzoom"`
	Attribution string   `json:"attribution,omitempty"`
}

// Layer is one style layer.
type Layer struct {
	ID          string         `json:"id"`
	Type        string         `json:"type"`
	Source      string         `json:"source,omitempty"`
	SourceLayer string         `json:"source-layer,omitempty"`
	MinZoom     float64        `json:"minzoom,omitempty"`
	MaxZoom     float64        `json:"maxzoom,omitempty"`
	Filter      any            `json:"filter,omitempty"`
	Layout      map[string]any `json:"layout,omitempty"`
	Paint       map[string]any `json:"paint,omitempty"`
}

// New writes the style of map m of a service.
func New(svc *servicedef.Service, m *servicedef.Map, opts Options) (*Style, error) {
	u, err := url.Parse(opts.ServiceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("vectorstyle: service URL %q: want an absolute http(s) URL", opts.ServiceURL)
	}
	if opts.MaxZoom < 0 || opts.MaxZoom > MaxZoom {
		return nil, fmt.Errorf("vectorstyle: maxzoom %d: want 0 to %d", opts.MaxZoom, MaxZoom)
	}
	if opts.MaxZoom == 0 {
		opts.MaxZoom = DefaultMaxZoom
	}
	base := strings.TrimSuffix(opts.ServiceURL, "/")
	copyright := m.CopyrightText
	if copyright == "" {
		copyright = svc.CopyrightText
	}
	st := &Style{
		Version: 8,
		Name:    svc.Name,
		Sources: map[string]Source{SourceName: {
			Type: "vector", Tiles: []string{base + "/tile/{z}/{y}/{x}.pbf"},
			MaxZoom: opts.MaxZoom, Attribution: copyright,
		}},
		Sprite: base + "/resources/sprites/sprite",
		Glyphs: base + "/resources/fonts/{fontstack}/{range}.pbf",
		Layers: []Layer{{ID: "background", Type: "background", Paint: map[string]any{"background-color": color(m.BackgroundColor)}}},
	}
	type labelLayer struct {
		Layer
		priority, index int
	}
	var labels []labelLayer
	for i := len(m.Layers) - 1; i >= 0; i-- {
		l := m.Layers[i]
		if !l.InVectorTiles() {
			continue // not in the tiles (servicedef.VectorTiles)
		}
		sz := sizesOf(m, l)
		ls, err := featureLayers(l, sz)
		if err != nil {
			return nil, err
		}
		st.Layers = append(st.Layers, ls...)
		for j := range l.Labels {
			if lb, ok := labelLayerOf(l, j, sz); ok {
				labels = append(labels, labelLayer{lb, l.Labels[j].Priority, i})
			}
		}
	}
	// MapLibre places the last symbol layer first: the class that wins conflicts (lowest
	// priority, then the layer on top) goes last.
	sortLabels := func(a, b labelLayer) bool {
		if a.priority != b.priority {
			return a.priority > b.priority
		}
		return a.index > b.index
	}
	for i := 1; i < len(labels); i++ {
		for j := i; j > 0 && sortLabels(labels[j], labels[j-1]); j-- {
			labels[j], labels[j-1] = labels[j-1], labels[j]
		}
	}
	for _, lb := range labels {
		st.Layers = append(st.Layers, lb.Layer)
	}
	return st, nil
}

// base returns the properties every style layer of l shares.
func base(l *servicedef.Layer, suffix, typ string, r symbology.ScaleRange) Layer {
	out := Layer{ID: l.Name + "/" + suffix, Type: typ, Source: SourceName, SourceLayer: l.Name}
	out.MinZoom, out.MaxZoom = zooms(r)
	out.MinZoom = max(out.MinZoom, float64(l.VectorTiles.MinZoom))
	if !l.Visible {
		out.Layout = map[string]any{"visibility": "none"}
	}
	return out
}

// zooms turns a scale range into minzoom and maxzoom (0 for none).
func zooms(r symbology.ScaleRange) (minZoom, maxZoom float64) {
	if r.MinScale > 0 {
		minZoom = max(0, ZoomFor(r.MinScale))
	}
	if r.MaxScale > 0 {
		maxZoom = min(MaxZoom, ZoomFor(r.MaxScale))
	}
	return minZoom, maxZoom
}

// ZoomFor is the zoom of scale 1:scale, to 1/1000.
func ZoomFor(scale float64) float64 {
	return math.Round(math.Log2(ZoomZeroScale/scale)*1000) / 1000
}

// intersect is the scale range inside both.
func intersect(a, b symbology.ScaleRange) symbology.ScaleRange {
	r := a
	if b.MinScale > 0 && (r.MinScale == 0 || b.MinScale < r.MinScale) {
		r.MinScale = b.MinScale
	}
	if b.MaxScale > 0 && b.MaxScale > r.MaxScale {
		r.MaxScale = b.MaxScale
	}
	return r
}

// px converts points to pixels at 96 DPI, to 1/1000.
func px(pt float64) float64 { return math.Round(pt*4/3*1000) / 1000 }

// color writes c as CSS, which style colours are.
func color(c symbology.Color) string {
	if c.A == 255 {
		return fmt.Sprintf("rgb(%d,%d,%d)", c.R, c.G, c.B)
	}
	return fmt.Sprintf("rgba(%d,%d,%d,%g)", c.R, c.G, c.B, math.Round(float64(c.A)/255*1000)/1000)
}

var errNoSymbol = errors.New("vectorstyle: a renderer without a symbol")

// featureLayers returns the style layers drawing l's features, bottom-up.
func featureLayers(l *servicedef.Layer, sz sizes) ([]Layer, error) {
	c, err := classesOf(l)
	if err != nil {
		return nil, err
	}
	var out []Layer
	add := func(suffix, typ string, paint, layout map[string]any) {
		sl := base(l, suffix, typ, l.ScaleRange)
		sl.Filter = c.filter
		sl.Paint = paint
		for k, v := range layout {
			if sl.Layout == nil {
				sl.Layout = map[string]any{}
			}
			sl.Layout[k] = v
		}
		out = append(out, sl)
	}
	switch l.GeometryType {
	case feature.Polygon:
		if c.any(func(s *symbology.Symbol) bool {
			return s.Type == symbology.PictureFill || s.FillStyle != symbology.FillNull
		}) {
			add("fill", "fill", map[string]any{
				"fill-color":   c.expr(func(s *symbology.Symbol) any { return color(fillColor(s)) }),
				"fill-opacity": c.expr(fillOpacity),
			}, nil)
		}
		if c.any(func(s *symbology.Symbol) bool { return outlineWidth(s.Outline) > 0 }) {
			add("outline", "line", linePaint(c, sz, func(s *symbology.Symbol) (symbology.Color, float64, symbology.LineStyle) {
				if s.Outline == nil {
					return symbology.Color{}, 0, symbology.LineNull
				}
				return s.Outline.Color, outlineWidth(s.Outline), s.Outline.Style
			}), map[string]any{"line-join": "round"})
		}
	case feature.Polyline:
		add("line", "line", linePaint(c, sz, func(s *symbology.Symbol) (symbology.Color, float64, symbology.LineStyle) {
			if s.LineStyle == symbology.LineNull {
				return s.Color, 0, s.LineStyle
			}
			return s.Color, s.Width, s.LineStyle
		}), map[string]any{"line-join": "round"})
	default:
		if c.circles() {
			add("circle", "circle", map[string]any{
				"circle-color": c.expr(func(s *symbology.Symbol) any { return color(s.Color) }),
				// the raster strokes a marker's outline on its edge, a style outside its radius
				"circle-radius": sz.scaled(c.expr(func(s *symbology.Symbol) any {
					return max(0, px(s.Size)/2-px(outlineWidth(s.Outline))/2)
				})),
				"circle-stroke-color": c.expr(func(s *symbology.Symbol) any { return color(outlineColor(s.Outline)) }),
				"circle-stroke-width": sz.scaled(c.expr(func(s *symbology.Symbol) any { return px(outlineWidth(s.Outline)) })),
			}, nil)
		} else {
			layout := map[string]any{
				"icon-image":            c.exprNamed(func(name string, _ *symbology.Symbol) any { return name }),
				"icon-allow-overlap":    true,
				"icon-ignore-placement": true,
			}
			if sz.on() {
				layout["icon-size"] = sz.scaled(1.0)
			}
			add("icon", "symbol", nil, layout)
		}
	}
	return out, nil
}

func fillColor(s *symbology.Symbol) symbology.Color {
	if s.FillStyle == symbology.FillNull && s.Type == symbology.SimpleFill {
		return symbology.Color{}
	}
	return s.Color
}

// fillOpacity is 1 for a solid fill, 0 for a null one, and a quarter for a hatch (a tint of
// its colour: a style has no hatches).
func fillOpacity(s *symbology.Symbol) any {
	switch {
	case s.Type != symbology.SimpleFill, s.FillStyle == symbology.FillSolid, s.FillStyle == "":
		return 1.0
	case s.FillStyle == symbology.FillNull:
		return 0.0
	}
	return 0.25
}

func outlineWidth(o *symbology.Outline) float64 {
	if o == nil || o.Style == symbology.LineNull {
		return 0
	}
	return o.Width
}

func outlineColor(o *symbology.Outline) symbology.Color {
	if o == nil || o.Style == symbology.LineNull {
		return symbology.Color{}
	}
	return o.Color
}

// dashes are the raster renderer's dash patterns, in points.
var dashes = map[symbology.LineStyle][]float64{
	symbology.LineDash:       {4, 3},
	symbology.LineDot:        {1, 2},
	symbology.LineDashDot:    {4, 2, 1, 2},
	symbology.LineDashDotDot: {4, 2, 1, 2, 1, 2},
}

// linePaint is the paint of lines whose colour, width (points) and style each class gives. A
// dash pattern cannot vary by feature in a style: the first drawn class's pattern applies to the
// layer, in units of its width.
func linePaint(c *classes, sz sizes, line func(*symbology.Symbol) (symbology.Color, float64, symbology.LineStyle)) map[string]any {
	p := map[string]any{
		"line-color": c.expr(func(s *symbology.Symbol) any { col, _, _ := line(s); return color(col) }),
		"line-width": sz.scaled(c.expr(func(s *symbology.Symbol) any { _, w, _ := line(s); return px(w) })),
	}
	for _, s := range c.symbols() {
		_, w, ls := line(s)
		if w <= 0 {
			continue
		}
		if d := dashes[ls]; d != nil {
			arr := make([]any, len(d))
			for i, x := range d {
				arr[i] = math.Round(x/w*1000) / 1000
			}
			p["line-dasharray"] = arr
		}
		break
	}
	return p
}

// JSON encodes the style as it is served: indented, and without HTML escapes (a client reads
// "\u003e=" as the operator ">=", but validators and people read it better as it is).
func (s *Style) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("vectorstyle: %w", err)
	}
	return b.Bytes(), nil
}

// sizes scales a layer's sizes with its map's reference scale: when the map has one and the layer
// scales its symbols, a size is its given size at the reference scale and doubles with each zoom
// in (ReferenceScale / scale), as the raster renderer draws it (mapdraw.SymbolScale).
type sizes struct {
	zoomZero float64 // the factor at zoom 0; 0 when sizes are fixed
}

func sizesOf(m *servicedef.Map, l *servicedef.Layer) sizes {
	if m.ReferenceScale > 0 && l.ScaleSymbols {
		return sizes{m.ReferenceScale / ZoomZeroScale}
	}
	return sizes{}
}

func (sz sizes) on() bool { return sz.zoomZero > 0 }

// scaled returns size v (a number or an expression) at every zoom: v itself when sizes are fixed,
// else an exponential interpolation of base 2 over the zoom from v × the factor at zoom 0 to v ×
// the factor at MaxZoom.
func (sz sizes) scaled(v any) any {
	if !sz.on() {
		return v
	}
	lo, hi := sz.zoomZero, sz.zoomZero*math.Exp2(MaxZoom)
	at := func(f float64) any {
		if x, ok := v.(float64); ok {
			return x * f
		}
		return []any{"*", v, f}
	}
	return []any{"interpolate", []any{"exponential", 2}, []any{"zoom"}, 0, at(lo), MaxZoom, at(hi)}
}
