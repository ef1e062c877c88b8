package cartography

import (
	"context"
	"fmt"
	"math"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/render"
	"github.com/mapfarm/mapfarm/internal/symbology"
)

// Legend swatches are small and drawn in the api, by the same renderer and symbol conversion the
// workers use. Swatches answered by URL are written to the output store (Params.Outputs) and
// remembered in Params.Recent, like farm renders.

// Legend patch defaults: ArcGIS Server's 20×20 pixels at 96 DPI.
const (
	defaultPatchSize = 20
	maxPatchSize     = 512
)

// GetLegendInfo returns, for each layer asked for (all when LayerIDs is empty), one legend group
// with one class per renderer class and a swatch image of each.
func (s *Service) GetLegendInfo(ctx context.Context, c *operation.Call, req *gisxml.GetLegendInfo) (*gisxml.GetLegendInfoResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	res, err := s.legend(ctx, m, req.LayerIDs, req.LegendPatch, req.ImageType, nil)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetLegendInfoResponse{Result: res}, nil
}

// GetLegendInfo2 is GetLegendInfo for a MapDescription: layers drawn with a request renderer
// (LayerDescription/DrawingDescription) get that renderer's classes.
func (s *Service) GetLegendInfo2(ctx context.Context, c *operation.Call, req *gisxml.GetLegendInfo2) (*gisxml.GetLegendInfo2Response, error) {
	md := req.MapDescription
	if md == nil {
		return nil, operation.Invalid("GetLegendInfo2: MapDescription is required")
	}
	m, err := operation.MapOf(c, md.Name)
	if err != nil {
		return nil, err
	}
	states, _, err := LayerStates(m, md.LayerDescriptions, 0)
	if err != nil {
		return nil, err
	}
	renderers := map[int]*symbology.Renderer{}
	for _, st := range states {
		if st.Drawing.Renderer != nil {
			renderers[st.ID] = st.Drawing.Renderer
		}
	}
	res, err := s.legend(ctx, m, req.LayerIDs, req.LegendPatch, req.ImageType, renderers)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetLegendInfo2Response{Result: res}, nil
}

// legendClass is one class of a renderer: its label, description and symbol.
type legendClass struct {
	label, description string
	symbol             *symbology.Symbol
}

// legendClasses lists a renderer's classes in legend order, the default symbol last.
func legendClasses(r *symbology.Renderer) []legendClass {
	var out []legendClass
	switch r.Type {
	case symbology.UniqueValueRenderer:
		for i := range r.Values {
			v := &r.Values[i]
			out = append(out, legendClass{v.Label, v.Description, &v.Symbol})
		}
	case symbology.ClassBreaksRenderer:
		for i := range r.Breaks {
			b := &r.Breaks[i]
			out = append(out, legendClass{b.Label, b.Description, &b.Symbol})
		}
	default:
		if r.Symbol != nil {
			out = append(out, legendClass{r.Label, r.Description, r.Symbol})
		}
		return out
	}
	if r.DefaultSymbol != nil {
		out = append(out, legendClass{r.DefaultLabel, "", r.DefaultSymbol})
	}
	return out
}

// legendHeading is ArcMap's heading of a renderer's legend group: the classified field names.
func legendHeading(r *symbology.Renderer) string {
	switch r.Type {
	case symbology.UniqueValueRenderer:
		d := r.FieldDelimiter
		if d == "" {
			d = ", "
		}
		h := ""
		for i, f := range r.Fields {
			if i > 0 {
				h += d
			}
			h += f
		}
		return h
	case symbology.ClassBreaksRenderer:
		return r.Field
	}
	return ""
}

func (s *Service) legend(ctx context.Context, m *catalog.Map, ids gisxml.ArrayOfInt, patch *gisxml.MapServerLegendPatch, it *gisxml.ImageType, renderers map[int]*symbology.Renderer) (gisxml.ArrayOfMapServerLegendInfo, error) {
	w, h, dpi := defaultPatchSize, defaultPatchSize, 96.0
	var areaPatch, linePatch *mapdraw.Patch
	if patch != nil {
		var err error
		if patch.AreaPatch != nil {
			if areaPatch, err = patchOf(&patch.AreaPatch.Patch, "LegendPatch/AreaPatch"); err != nil {
				return nil, err
			}
		}
		if patch.LinePatch != nil {
			if linePatch, err = patchOf(&patch.LinePatch.Patch, "LegendPatch/LinePatch"); err != nil {
				return nil, err
			}
		}
		if patch.Width > 0 {
			w = int(math.Round(patch.Width))
		}
		if patch.Height > 0 {
			h = int(math.Round(patch.Height))
		}
		if patch.ImageDPI > 0 {
			dpi = patch.ImageDPI
		}
		if w > maxPatchSize || h > maxPatchSize || dpi > 1200 {
			return nil, operation.Invalid("LegendPatch %g×%g at %g DPI is too large (at most %d×%d pixels at 1200 DPI)", patch.Width, patch.Height, patch.ImageDPI, maxPatchSize, maxPatchSize)
		}
	}
	if it == nil {
		it = &gisxml.ImageType{ImageFormat: gisxml.ImagePNG, ImageReturnType: gisxml.ImageReturnURL}
	}
	name, err := formatOf(it.ImageFormat, true)
	if err != nil {
		return nil, err
	}
	format, err := render.ParseFormat(name)
	if err != nil {
		return nil, operation.Invalid("ImageType/ImageFormat %s: %v", it.ImageFormat, err)
	}
	layers := m.Layers
	if len(ids) > 0 {
		layers = nil
		for _, id := range ids {
			l, ok := m.Layer(id)
			if !ok {
				return nil, operation.Invalid("LayerIDs: map %s has no layer %d", m.Name, id)
			}
			layers = append(layers, l)
		}
	}
	r, err := s.renderer()
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfMapServerLegendInfo{}
	cache := map[*symbology.Symbol][]byte{}
	for _, l := range layers {
		rd := &l.Def.Renderer
		if o := renderers[l.ID]; o != nil {
			rd = o
		}
		group := &gisxml.MapServerLegendGroup{Heading: legendHeading(rd), LegendClasses: gisxml.ArrayOfMapServerLegendClass{}}
		for _, lc := range legendClasses(rd) {
			data, ok := cache[lc.symbol]
			if !ok {
				shape := areaPatch
				if l.Data.Info().GeometryType == feature.Polyline {
					shape = linePatch
				}
				if data, err = mapdraw.Swatch(ctx, r, lc.symbol, l.Data.Info().GeometryType, w, h, dpi, format, shape); err != nil {
					return nil, fmt.Errorf("legend of layer %d: %w", l.ID, err)
				}
				cache[lc.symbol] = data
			}
			img := &gisxml.ImageResult{ImageWidth: w, ImageHeight: h, ImageDPI: dpi, ImageType: operation.Ptr(format.ContentType())}
			if it.ImageReturnType == gisxml.ImageReturnMimeData {
				img.ImageData = data
			} else if img.ImageURL, err = s.storeOutput(ctx, format, data); err != nil {
				return nil, err
			}
			group.LegendClasses = append(group.LegendClasses, &gisxml.MapServerLegendClass{Label: lc.label, Description: lc.description, SymbolImage: img})
		}
		out = append(out, &gisxml.MapServerLegendInfo{LayerID: l.ID, Name: l.Name, LegendGroups: gisxml.ArrayOfMapServerLegendGroup{group}})
	}
	return out, nil
}

// patchOf reads a legend patch shape (nil when it has no geometry).
func patchOf(p *gisxml.Patch, what string) (*mapdraw.Patch, error) {
	if p.Geometry == nil {
		return nil, nil
	}
	g, _, err := operation.GeometryIn(p.Geometry, what+"/Geometry")
	if err != nil {
		return nil, err
	}
	return &mapdraw.Patch{Geom: g, PreserveAspect: p.PreserveAspectRatio == nil || *p.PreserveAspectRatio}, nil
}

// renderer returns the api's renderer for legend swatches, created on first use.
func (s *Service) renderer() (*render.Renderer, error) {
	sw := &s.swatches
	sw.once.Do(func() { sw.r, sw.err = render.NewRenderer() })
	return sw.r, sw.err
}

// storeOutput writes an api-rendered image to the output store and returns its URL.
func (s *Service) storeOutput(ctx context.Context, f render.Format, data []byte) (string, error) {
	if s.p.NewID == nil || s.p.OutputURL == nil {
		return "", fmt.Errorf("legend: no output store configured; ask for gisImageReturnMimeData")
	}
	ext := extensions[f.String()]
	if ext == "" {
		ext = "png"
	}
	key := "outputs/" + s.p.NewID() + "." + ext
	if st := s.p.Outputs; st != nil {
		if err := st.Put(ctx, key, data, f.ContentType()); err != nil {
			return "", fmt.Errorf("legend: store swatch: %w", err)
		}
	}
	if s.p.Recent != nil {
		s.p.Recent.Remember(key, f.ContentType(), data)
	}
	return s.p.OutputURL(key), nil
}
