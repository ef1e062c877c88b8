package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// imageFormats maps export's format parameter to the schema's image formats.
var imageFormats = map[string]gisxml.ImageFormat{
	"png": gisxml.ImagePNG, "png8": gisxml.ImagePNG, "png24": gisxml.ImagePNG24, "png32": gisxml.ImagePNG32,
	"jpg": gisxml.ImageJPG, "jpeg": gisxml.ImageJPG, "gif": gisxml.ImageGIF, "bmp": gisxml.ImageBMP,
	"tiff": gisxml.ImageTIFF, "svg": gisxml.ImageSVG, "pdf": gisxml.ImagePDF, "jpgpng": gisxml.ImageJPGPNG,
}

// parseBBox reads bbox: "xmin,ymin,xmax,ymax" in any corner order (esri-leaflet sends ymax
// before ymin; ArcGIS sorts them) or an Esri JSON envelope.
func parseBBox(s string, sr gisxml.SpatialReference) (*gisxml.EnvelopeN, error) {
	if s == "" {
		return nil, badRequest("'bbox' parameter is required")
	}
	g, err := parseGeometry(s, "esriGeometryEnvelope", sr)
	if err != nil {
		return nil, badRequest("'bbox' parameter is invalid: %q", s)
	}
	env := g.(*gisxml.EnvelopeN)
	if env.XMin == env.XMax || env.YMin == env.YMax {
		return nil, badRequest("'bbox' parameter is invalid: the extent is empty: %q", s)
	}
	return env, nil
}

// parseSize reads size=w,h (default 400,400).
func parseSize(s string) (w, h int, err error) {
	if s == "" {
		return 400, 400, nil
	}
	ws, hs, ok := strings.Cut(s, ",")
	w, err1 := strconv.Atoi(strings.TrimSpace(ws))
	h, err2 := strconv.Atoi(strings.TrimSpace(hs))
	if !ok || err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, badRequest("'size' parameter is invalid: %q", s)
	}
	return w, h, nil
}

// applyLayers applies layers=show|hide|include|exclude:ids to the default visibility.
func applyLayers(lds gisxml.ArrayOfLayerDescription, spec string) error {
	if spec == "" {
		return nil
	}
	op, list, ok := strings.Cut(spec, ":")
	if !ok {
		return badRequest("'layers' parameter is invalid: %q", spec)
	}
	ids := map[int]bool{}
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return badRequest("'layers' parameter is invalid: %q", spec)
		}
		ids[n] = true
	}
	for _, ld := range lds {
		switch strings.ToLower(op) {
		case "show":
			ld.Visible = ids[ld.LayerID]
		case "hide":
			ld.Visible = !ids[ld.LayerID]
		case "include":
			ld.Visible = ld.Visible || ids[ld.LayerID]
		case "exclude":
			ld.Visible = ld.Visible && !ids[ld.LayerID]
		default:
			return badRequest("'layers' parameter is invalid: %q", spec)
		}
	}
	return nil
}

// applyLayerDefs applies layerDefs: "0:POP>1000;1:NAME='x'" or JSON {"0":"POP>1000"}.
func applyLayerDefs(lds gisxml.ArrayOfLayerDescription, s string) error {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	defs := map[string]string{}
	if strings.HasPrefix(s, "{") {
		if err := json.Unmarshal([]byte(s), &defs); err != nil {
			return badJSON("layerDefs", err)
		}
	} else {
		for _, part := range strings.Split(s, ";") {
			id, expr, ok := strings.Cut(part, ":")
			if !ok {
				return badRequest("'layerDefs' parameter is invalid: %q", part)
			}
			defs[strings.TrimSpace(id)] = expr
		}
	}
	for id, expr := range defs {
		n, err := strconv.Atoi(id)
		if err != nil {
			return badRequest("'layerDefs' parameter is invalid: layer %q", id)
		}
		found := false
		for _, ld := range lds {
			if ld.LayerID == n {
				ld.DefinitionExpression, found = expr, true
			}
		}
		if !found {
			return badRequest("'layerDefs' parameter is invalid: no layer %d", n)
		}
	}
	return nil
}

// export answers export: the map drawn by ExportMapImage, as the image bytes (f=image) or as
// JSON with the image's URL (f=json).
func (ms *mapService) export(q *request) error {
	switch q.f {
	case "image", "json", "pjson":
	default:
		return badRequest("f=%s is not supported for export: use image, json or pjson", q.f)
	}
	info, err := ms.serverInfo(q)
	if err != nil {
		return err
	}
	if info.DefaultMapDescription == nil {
		return badRequest("the map has no default map description")
	}
	bboxSR, err := srParam(q, "bboxSR", info.SpatialReference)
	if err != nil {
		return err
	}
	imageSR, err := srParam(q, "imageSR", bboxSR)
	if err != nil {
		return err
	}
	bbox, err := parseBBox(q.param("bbox"), bboxSR)
	if err != nil {
		return err
	}
	width, height, err := parseSize(q.param("size"))
	if err != nil {
		return err
	}
	dpi := 96.0
	if s := q.param("dpi"); s != "" {
		if dpi, err = strconv.ParseFloat(s, 64); err != nil || dpi <= 0 {
			return badRequest("'dpi' parameter is invalid: %q", s)
		}
	}
	format := strings.TrimPrefix(strings.ToLower(q.param("format")), "image/")
	if format == "" {
		format = "png"
	}
	imgFormat, ok := imageFormats[format]
	if !ok {
		return badRequest("'format' parameter is invalid: %q (one of png, png8, png24, png32, jpg, gif, bmp, tiff, svg, pdf, jpgpng)", format)
	}
	transparent, err := boolParam(q, "transparent", false)
	if err != nil {
		return err
	}
	// The default map description, with this request's area, system and layers.
	md := *info.DefaultMapDescription
	md.MapArea = &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: bbox}}
	md.SpatialReference = imageSR
	md.LayerDescriptions = make(gisxml.ArrayOfLayerDescription, len(info.DefaultMapDescription.LayerDescriptions))
	for i, ld := range info.DefaultMapDescription.LayerDescriptions {
		c := *ld
		md.LayerDescriptions[i] = &c
	}
	if err := applyLayers(md.LayerDescriptions, q.param("layers")); err != nil {
		return err
	}
	if err := applyLayerDefs(md.LayerDescriptions, q.param("layerDefs")); err != nil {
		return err
	}
	if transparent {
		var zero uint8
		md.BackgroundSymbol = &gisxml.SimpleFillSymbol{Style: gisxml.SFSSolid, FillSymbolFields: gisxml.FillSymbolFields{
			Color: &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: &zero}, Red: 255, Green: 255, Blue: 255}}}
	}
	returnType := gisxml.ImageReturnURL
	if q.f == "image" {
		returnType = gisxml.ImageReturnMimeData
	}
	resp, err := invoke(ms, q, "ExportMapImage", mapserver.Drawing(ms.h.p.Ops, ms.families().Cartography.ExportMapImage), &gisxml.ExportMapImage{MapDescription: &md, ImageDescription: &gisxml.ImageDescription{
		ImageType:    &gisxml.ImageType{ImageFormat: imgFormat, ImageReturnType: returnType},
		ImageDisplay: &gisxml.ImageDisplay{ImageWidth: width, ImageHeight: height, ImageDPI: dpi},
	}})
	if err != nil {
		return err
	}
	img := resp.Result
	if ri := ms.call.Render; ri != nil {
		// The worker and its draw time, as the SOAP endpoint writes them.
		q.w.Header().Set("Server-Timing", fmt.Sprintf(`render;dur=%.3f;desc="%s"`, float64(ri.Render.Microseconds())/1000, ri.Worker))
	}
	if q.f == "image" {
		q.w.Header().Set("Content-Type", strp(img.ImageType))
		q.w.Header().Set("Content-Length", strconv.Itoa(len(img.ImageData)))
		q.w.WriteHeader(http.StatusOK)
		_, _ = q.w.Write(img.ImageData)
		return nil
	}
	return ms.h.writeValue(q, exportJSON{Href: text(img.ImageURL), Width: img.ImageWidth, Height: img.ImageHeight, Extent: extentJSON{img.Extent},
		Scale: num(img.MapScale)})
}

// exportJSON is export's f=json answer: where the image is, and what it shows.
type exportJSON struct {
	Href   text       `json:"href"`
	Width  int        `json:"width"`
	Height int        `json:"height"`
	Extent extentJSON `json:"extent"`
	Scale  num        `json:"scale"`
}
