package cartography

import (
	"context"
	"fmt"
	"image/color"
	"time"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/symbology"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapdraw"
	"github.com/mapfarm/mapfarm/internal/task"
)

// imageFormats maps the schema's image formats to the farm's format names. gisImagePNG is the
// 8-bit palette PNG, as in ArcGIS; JPGPNG is decided per request.
var imageFormats = map[gisxml.ImageFormat]string{
	gisxml.ImagePNG:   "png8",
	gisxml.ImagePNG24: "png24",
	gisxml.ImagePNG32: "png32",
	gisxml.ImageJPG:   "jpg",
	gisxml.ImageGIF:   "gif",
	gisxml.ImageBMP:   "bmp",
	gisxml.ImageDIB:   "bmp",
	gisxml.ImageTIFF:  "tiff",
	gisxml.ImageSVG:   "svg",
	gisxml.ImagePDF:   "pdf",
}

var extensions = map[string]string{"png8": "png", "png24": "png", "png32": "png", "jpg": "jpg", "gif": "gif",
	"bmp": "bmp", "tiff": "tif", "svg": "svg", "pdf": "pdf"}

// ExportMapImage renders a map through the farm and answers with the image's URL or bytes.
func (s *Service) ExportMapImage(ctx context.Context, c *operation.Call, req *gisxml.ExportMapImage) (*gisxml.ExportMapImageResponse, error) {
	md := req.MapDescription
	if md == nil {
		return nil, operation.Invalid("ExportMapImage: MapDescription is required")
	}
	if req.ImageDescription == nil || req.ImageDescription.ImageDisplay == nil {
		return nil, operation.Invalid("ExportMapImage: ImageDescription/ImageDisplay is required (ImageWidth, ImageHeight, ImageDPI)")
	}
	m, err := operation.MapOf(c, md.Name)
	if err != nil {
		return nil, err
	}
	disp := req.ImageDescription.ImageDisplay
	view, err := operation.ResolveView(ctx, m, md, disp, s.p.Limits)
	if err != nil {
		return nil, err
	}
	if err := checkBuffers(md.LayerDescriptions, view.Extent); err != nil {
		return nil, err
	}
	imgType := req.ImageDescription.ImageType
	if imgType == nil {
		imgType = &gisxml.ImageType{ImageFormat: gisxml.ImagePNG, ImageReturnType: gisxml.ImageReturnURL}
	}
	transparent, err := transparentColor(md, disp)
	if err != nil {
		return nil, err
	}
	layers, visible, err := LayerStates(m, md.LayerDescriptions, view.Scale())
	if err != nil {
		return nil, err
	}
	job := task.ExportMap{
		ID: s.p.NewID(), TraceID: c.RequestID, Service: c.Service.Name, Map: m.Name,
		Extent: [4]float64{view.Extent.Min[0], view.Extent.Min[1], view.Extent.Max[0], view.Extent.Max[1]},
		Width:  view.Width, Height: view.Height, DPI: view.DPI, Rotation: view.Rotation,
		Layers: layerPayloads(layers),
	}
	if !view.SR.Same(m.SR) { // drawn in the MapDescription's system, projected on the fly
		job.SpatialReference = &task.SpatialReference{WKID: view.SR.WKID, WKT: view.SR.Text}
	}
	inline := imgType.ImageReturnType == gisxml.ImageReturnMimeData
	job.Inline = inline
	if transparent != nil {
		job.Transparent = &[3]uint8{transparent.R, transparent.G, transparent.B}
	}
	if err := drawingOptions(&job, md); err != nil {
		return nil, err
	}
	// JPGPNG is JPEG unless the image has transparency: a transparent colour or background.
	needsAlpha := transparent != nil || (job.Background != nil && job.Background[3] < 255)
	if job.Format, err = formatOf(imgType.ImageFormat, needsAlpha); err != nil {
		return nil, err
	}
	job.Key = "outputs/" + job.ID + "." + extensions[job.Format]
	res, err := s.p.Exporter.Export(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("export map image: %w", err)
	}
	c.Render = &operation.RenderInfo{Worker: res.Worker, Render: time.Duration(res.RenderNanos)}
	if res.Error != "" {
		if res.ClientError {
			return nil, operation.Invalid("%s", res.Error)
		}
		return nil, fmt.Errorf("export map image: worker: %s", res.Error)
	}
	img := &gisxml.MapImage{
		Extent: operation.Envelope(view.Extent, view.SR), VisibleLayerIDs: visible, MapScale: view.Scale(),
		ImageHeight: view.Height, ImageWidth: view.Width, ImageDPI: view.DPI, ImageType: operation.Ptr(res.ContentType),
	}
	switch {
	case inline && res.Data != nil:
		img.ImageData = res.Data
	case inline:
		return nil, fmt.Errorf("export map image: the %d-byte image is larger than the %d bytes returned inline; ask for a URL", res.Size, task.MaxInlineBytes)
	default:
		if res.Data != nil && s.p.Recent != nil {
			s.p.Recent.Remember(res.Key, res.ContentType, res.Data)
		}
		img.ImageURL = s.p.OutputURL(res.Key)
	}
	return &gisxml.ExportMapImageResponse{Result: img}, nil
}

// checkBuffers refuses a selection buffer longer than mapdraw.MaxBufferDistance, the diagonal of
// the map extent: a longer one draws the same image around the selected features in view, at a
// cost that grows with the distance. (drawingOf refuses non-finite and negative distances.)
func checkBuffers(lds gisxml.ArrayOfLayerDescription, extent orb.Bound) error {
	limit := mapdraw.MaxBufferDistance(extent)
	for i, ld := range lds {
		if ld != nil && ld.ShowSelectionBuffer && ld.SelectionBufferDistance > limit {
			return operation.OverLimit(limits.BufferDistance, "LayerDescriptions[%d]/SelectionBufferDistance %g is longer than the limit, the diagonal of the map extent: %.6g map units",
				i, ld.SelectionBufferDistance, limit)
		}
	}
	return nil
}

func formatOf(f gisxml.ImageFormat, transparent bool) (string, error) {
	if f == gisxml.ImageJPGPNG {
		if transparent {
			return "png32", nil
		}
		return "jpg", nil
	}
	if name, ok := imageFormats[f]; ok {
		return name, nil
	}
	switch f {
	case gisxml.ImageEMF, gisxml.ImagePS, gisxml.ImageAI:
		return "", operation.Invalid("ImageFormat %s is not supported: this server does not write EMF, PostScript or Adobe Illustrator; "+
			"ask for gisImageSVG or gisImagePDF for vector output, or a raster format (gisImagePNG, gisImagePNG24, gisImagePNG32, "+
			"gisImageJPG, gisImageGIF, gisImageBMP, gisImageDIB, gisImageTIFF, gisImageJPGPNG)", f)
	}
	return "", operation.Invalid("ImageFormat %q is not a gisImageFormat", f)
}

func transparentColor(md *gisxml.MapDescription, disp *gisxml.ImageDisplay) (*color.NRGBA, error) {
	tc := disp.TransparentColor
	if tc == nil {
		tc = md.TransparentColor
	}
	if tc == nil {
		return nil, nil
	}
	c, err := ColorOf(tc)
	if err != nil {
		return nil, operation.Invalid("TransparentColor: %v", err)
	}
	return &c, nil
}

// layerPayloads is the task payload's form of layer states; a layer's drawing travels only
// when the request changes it.
func layerPayloads(states []mapdraw.LayerState) []task.LayerOverride {
	out := make([]task.LayerOverride, len(states))
	for i, st := range states {
		out[i] = task.LayerOverride{ID: st.ID, Visible: st.Visible, ShowLabels: st.ShowLabels, DefinitionExpression: st.DefinitionExpression}
		if !st.Drawing.IsZero() {
			out[i].Drawing = mapdraw.DrawingPayload(&st.Drawing)
		}
	}
	return out
}

// LayerStates merges the request's layer descriptions with the map's defaults and returns every
// layer's state in drawing order plus the ids of the layers that draw at this scale.
func LayerStates(m *catalog.Map, lds gisxml.ArrayOfLayerDescription, scale float64) ([]mapdraw.LayerState, gisxml.ArrayOfInt, error) {
	byID := map[int]*gisxml.LayerDescription{}
	drawings := map[int]*symbology.Drawing{}
	for i, ld := range lds {
		if ld == nil {
			continue
		}
		l, ok := m.Layer(ld.LayerID)
		if !ok {
			return nil, nil, operation.Invalid("LayerDescriptions[%d]: map %s has no layer %d", i, m.Name, ld.LayerID)
		}
		if ld.DefinitionExpression != "" {
			if _, err := mapdraw.Compile(ld.DefinitionExpression, l.Data.Info().Fields); err != nil {
				return nil, nil, operation.Invalid("LayerDescriptions[%d] (layer %d) DefinitionExpression: %v", i, ld.LayerID, err)
			}
		}
		d, err := drawingOf(ld, l, i)
		if err != nil {
			return nil, nil, err
		}
		// ScaleSymbols: the drawing description's when it has one, else the layer description's;
		// carried only when it differs from the layer's default.
		scaleSymbols := ld.ScaleSymbols
		if dd, ok := ld.DrawingDescription.(*gisxml.FeatureLayerDrawingDescription); ok && dd != nil && dd.ScaleSymbols != nil {
			scaleSymbols = *dd.ScaleSymbols
		}
		if scaleSymbols != operation.ScaleSymbolsDefault(m, l) {
			if d == nil {
				d = &symbology.Drawing{}
			}
			d.ScaleSymbols = &scaleSymbols
		}
		if d != nil {
			drawings[ld.LayerID] = d
		}
		byID[ld.LayerID] = ld
	}
	out := make([]mapdraw.LayerState, 0, len(m.Layers))
	visible := gisxml.ArrayOfInt{}
	for _, l := range m.Layers {
		o := mapdraw.LayerState{ID: l.ID, Visible: l.Def.Visible, ShowLabels: len(l.Def.Labels) > 0, DefinitionExpression: l.Def.DefinitionExpression}
		if d := drawings[l.ID]; d != nil {
			o.Drawing = *d
		}
		if ld, ok := byID[l.ID]; ok {
			o.Visible, o.ShowLabels = ld.Visible, ld.ShowLabels
			if ld.DefinitionExpression != "" {
				o.DefinitionExpression = ld.DefinitionExpression
			}
		}
		if o.Visible && l.Def.ScaleRange.Contains(scale) {
			visible = append(visible, l.ID)
		}
		out = append(out, o)
	}
	return out, visible, nil
}

// ColorOf reads any schema colour as non-premultiplied RGBA. AlphaValue 0 is transparent, 255
// (or absent) opaque.
func ColorOf(c gisxml.Color) (color.NRGBA, error) {
	a := uint8(255)
	if f := c.ColorPart(); f.AlphaValue != nil {
		a = *f.AlphaValue
	}
	switch v := c.(type) {
	case *gisxml.RgbColor:
		return color.NRGBA{v.Red, v.Green, v.Blue, a}, nil
	case *gisxml.GrayColor:
		return color.NRGBA{v.GrayLevel, v.GrayLevel, v.GrayLevel, a}, nil
	case *gisxml.CmykColor:
		k := 255 - float64(v.Black)
		ch := func(x uint8) uint8 { return uint8((255 - float64(x)) * k / 255) }
		return color.NRGBA{ch(v.Cyan), ch(v.Magenta), ch(v.Yellow), a}, nil
	case *gisxml.HsvColor:
		r, g, b := hsvToRGB(float64(v.Hue), float64(v.Saturation)/100, float64(v.Value)/100)
		return color.NRGBA{r, g, b, a}, nil
	case *gisxml.HlsColor:
		r, g, b := hlsToRGB(float64(v.Hue), float64(v.Lightness)/100, float64(v.Saturation)/100)
		return color.NRGBA{r, g, b, a}, nil
	}
	return color.NRGBA{}, fmt.Errorf("colour type %s is not supported", c.GisType())
}

func hsvToRGB(h, s, v float64) (uint8, uint8, uint8) {
	c := v * s
	return chroma(h, c, v-c)
}

func hlsToRGB(h, l, s float64) (uint8, uint8, uint8) {
	c := (1 - abs(2*l-1)) * s
	return chroma(h, c, l-c/2)
}

func chroma(h, c, m float64) (uint8, uint8, uint8) {
	h = mod(h, 360) / 60
	x := c * (1 - abs(mod(h, 2)-1))
	var r, g, b float64
	switch {
	case h < 1:
		r, g, b = c, x, 0
	case h < 2:
		r, g, b = x, c, 0
	case h < 3:
		r, g, b = 0, c, x
	case h < 4:
		r, g, b = 0, x, c
	case h < 5:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	to := func(f float64) uint8 { return uint8(clamp((f+m)*255+0.5, 0, 255)) }
	return to(r), to(g), to(b)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func mod(a, b float64) float64 {
	r := a - b*float64(int(a/b))
	if r < 0 {
		r += b
	}
	return r
}

func clamp(f, lo, hi float64) float64 {
	if f < lo {
		return lo
	}
	if f > hi {
		return hi
	}
	return f
}

// drawingOptions reads the MapDescription's background symbol, selection colour and custom
// graphics into the job.
func drawingOptions(job *task.ExportMap, md *gisxml.MapDescription) error {
	switch fs := md.BackgroundSymbol.(type) {
	case nil:
	case *gisxml.SimpleFillSymbol:
		if fs.Color != nil {
			bg, err := ColorOf(fs.Color)
			if err != nil {
				return operation.Invalid("MapDescription/BackgroundSymbol/Color: %v", err)
			}
			if fs.Style == gisxml.SFSNull {
				bg.A = 0
			}
			job.Background = colorNRGBA4(bg)
		}
	default:
		bs, _ := md.BackgroundSymbol.(gisxml.Symbol)
		sym, err := symbolIn(bs, "MapDescription/BackgroundSymbol")
		if err != nil {
			return err
		}
		bg := mapdraw.FillColor(sym)
		job.Background = colorNRGBA4(bg)
	}
	if md.SelectionColor != nil {
		c, err := ColorOf(md.SelectionColor)
		if err != nil {
			return operation.Invalid("MapDescription/SelectionColor: %v", err)
		}
		job.SelectionColor = colorNRGBA4(c)
	}
	if len(md.CustomGraphics) > 0 {
		gs, err := graphicsIn(md.CustomGraphics, "MapDescription/CustomGraphics")
		if err != nil {
			return err
		}
		job.Graphics = mapdraw.GraphicsPayload(gs)
	}
	return nil
}
