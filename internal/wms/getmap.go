package wms

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/kvp"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// drawDPI is the resolution maps are drawn at: ArcGIS Server's, so that a GetMap draws the
// same picture as ExportMapImage (and REST export) of the same extent and size. The scale
// denominators of the capabilities are converted to the WMS standard pixel (0.28 mm).
const drawDPI = 96.0

// imageFormat is an output format of GetMap: its MIME type and the farm's image format.
type imageFormat struct {
	mime string
	gis  gisxml.ImageFormat
}

// imageFormats are the formats GetMap draws, every one the farm's ExportMapImage draws, in
// the order the capabilities list them. image/png is 32-bit PNG, so that TRANSPARENT=TRUE keeps
// its alpha; image/png8 is the palette PNG.
var imageFormats = []imageFormat{
	{"image/png", gisxml.ImagePNG32},
	{"image/png8", gisxml.ImagePNG},
	{"image/png24", gisxml.ImagePNG24},
	{"image/png32", gisxml.ImagePNG32},
	{"image/jpeg", gisxml.ImageJPG},
	{"image/gif", gisxml.ImageGIF},
	{"image/bmp", gisxml.ImageBMP},
	{"image/tiff", gisxml.ImageTIFF},
	{"image/svg+xml", gisxml.ImageSVG},
	{"application/pdf", gisxml.ImagePDF},
}

func findFormat(s string) (imageFormat, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "image/jpg" {
		s = "image/jpeg"
	}
	for _, f := range imageFormats {
		if f.mime == s {
			return f, true
		}
	}
	return imageFormat{}, false
}

// mapImage is the picture a GetMap asks for: size, format and background.
type mapImage struct {
	width, height int
	format        imageFormat
	transparent   bool
	bg            [3]uint8
	bgGiven       bool
}

// readMapImage reads WIDTH, HEIGHT (each at most maxW, maxH), FORMAT, TRANSPARENT and BGCOLOR.
func readMapImage(p kvp.Params, maxW, maxH int) (*mapImage, *Exception) {
	m := &mapImage{bg: [3]uint8{255, 255, 255}}
	var exc *Exception
	if m.width, exc = positiveInt(p, "WIDTH"); exc != nil {
		return nil, exc
	}
	if m.height, exc = positiveInt(p, "HEIGHT"); exc != nil {
		return nil, exc
	}
	if m.width > maxW || m.height > maxH {
		return nil, &Exception{Locator: "width", Message: fmt.Sprintf("WIDTH and HEIGHT may be at most %d and %d (the image size limit), not %d and %d", maxW, maxH, m.width, m.height)}
	}
	f := p.Get("FORMAT")
	if f == "" {
		return nil, missing("FORMAT", "FORMAT is required")
	}
	var ok bool
	if m.format, ok = findFormat(f); !ok {
		return nil, &Exception{Code: "InvalidFormat", Locator: "format", Message: "FORMAT " + quoted(f) + " is not offered: " + formatList()}
	}
	switch t := strings.ToUpper(p.Get("TRANSPARENT")); t {
	case "", "FALSE":
	case "TRUE":
		m.transparent = true
	default:
		return nil, &Exception{Locator: "transparent", Message: "TRANSPARENT must be TRUE or FALSE, not " + quoted(p.Get("TRANSPARENT"))}
	}
	if s := p.Get("BGCOLOR"); s != "" {
		hex := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		n, err := strconv.ParseUint(hex, 16, 32)
		if err != nil || len(hex) != 6 {
			return nil, &Exception{Locator: "bgcolor", Message: "BGCOLOR must be 0xRRGGBB, not " + quoted(s)}
		}
		m.bg, m.bgGiven = [3]uint8{uint8(n >> 16), uint8(n >> 8), uint8(n)}, true
	}
	return m, nil
}

func formatList() string {
	names := make([]string, len(imageFormats))
	for i, f := range imageFormats {
		names[i] = f.mime
	}
	return strings.Join(names, ", ")
}

// crs is the coordinate system of a GetMap or GetFeatureInfo, as the request names it.
type crs struct {
	name string // as the capabilities spell it: EPSG:4326, CRS:84
	sr   proj.SR
	// northFirst says BBOX gives latitude or northing first (1.3.0, an EPSG system whose
	// first axis points north).
	northFirst bool
}

// view is the map area of a GetMap or GetFeatureInfo: system, extent (easting first) and
// image, with the layers drawn.
type view struct {
	info    *gisxml.MapServerInfo
	tree    *layerTree
	crs     crs
	bbox    [4]float64 // minx, miny, maxx, maxy, easting first
	img     *mapImage
	visible map[int]bool
}

// readCRS reads CRS (1.3.0) or SRS (1.1.1), which must be one of the systems the capabilities
// list for the service (InvalidCRS, InvalidSRS in 1.1.1).
func (s *service) readCRS(q *request) (crs, *Exception) {
	name, param := "CRS", "CRS"
	if q.version == version111 {
		name, param = "SRS", "SRS"
	}
	v := q.params.Get(param)
	if v == "" {
		v = q.params.Get(map[string]string{"CRS": "SRS", "SRS": "CRS"}[param]) // a client that mixed the versions up
	}
	if v == "" {
		return crs{}, missing(param, name+" is required")
	}
	for _, c := range s.systems(q.version) {
		if strings.EqualFold(c.name, strings.TrimSpace(v)) {
			if q.version == version111 {
				c.northFirst = false
			}
			return c, nil
		}
	}
	return crs{}, &Exception{Code: "InvalidCRS", Locator: strings.ToLower(param), Message: name + " " + quoted(v) + " is not offered by this layer"}
}

// systems are the coordinate systems of the service, as the capabilities list them: the map's
// own, EPSG:4326, EPSG:3857 and, in 1.3.0, CRS:84 — those the projection engine knows.
func (s *service) systems(v version) []crs {
	m := s.svc.Maps[0]
	own := m.SR.LatestWKID()
	var out []crs
	seen := map[string]bool{}
	add := func(name string, sr proj.SR, lonFirst bool) {
		if seen[name] {
			return
		}
		c, err := m.Systems.CRS(sr)
		if err != nil {
			return
		}
		seen[name] = true
		out = append(out, crs{name: name, sr: sr, northFirst: c.NorthFirst && !lonFirst})
	}
	if own != 0 {
		add("EPSG:"+strconv.Itoa(own), proj.SR{WKID: own}, false)
	}
	add("EPSG:4326", proj.SR{WKID: proj.WGS84}, false)
	add("EPSG:3857", proj.SR{WKID: proj.WebMercator}, false)
	if v == version130 {
		add("CRS:84", proj.SR{WKID: proj.WGS84}, true)
	}
	return out
}

// readView reads what GetMap and GetFeatureInfo share: LAYERS, STYLES, CRS/SRS, BBOX and the
// image (WIDTH, HEIGHT, FORMAT: GetFeatureInfo's FORMAT may be left out).
func (s *service) readView(q *request, formatRequired bool) (*view, error) {
	info, err := s.serverInfo()
	if err != nil {
		return nil, err
	}
	v := &view{info: info, tree: newLayerTree(s.svc, info)}
	p := q.params
	if !formatRequired && p.Get("FORMAT") == "" {
		p = copyParams(p)
		p["format"] = "image/png"
	}
	var exc *Exception
	if v.img, exc = readMapImage(p, s.h.p.MaxImageWidth, s.h.p.MaxImageHeight); exc != nil {
		return nil, exc
	}
	if v.visible, exc = v.tree.readLayers(q.params); exc != nil {
		return nil, exc
	}
	if v.crs, exc = s.readCRS(q); exc != nil {
		return nil, exc
	}
	bs := q.params.Get("BBOX")
	if bs == "" {
		return nil, missing("BBOX", "BBOX is required")
	}
	parts := strings.Split(bs, ",")
	if len(parts) != 4 {
		return nil, &Exception{Locator: "bbox", Message: "BBOX must be four numbers minx,miny,maxx,maxy, not " + quoted(bs)}
	}
	for i, part := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || f != f || f > 1e300 || f < -1e300 {
			return nil, &Exception{Locator: "bbox", Message: "BBOX must be four numbers minx,miny,maxx,maxy, not " + quoted(bs)}
		}
		v.bbox[i] = f
	}
	if v.crs.northFirst {
		v.bbox = [4]float64{v.bbox[1], v.bbox[0], v.bbox[3], v.bbox[2]}
	}
	if !(v.bbox[0] < v.bbox[2] && v.bbox[1] < v.bbox[3]) {
		return nil, &Exception{Locator: "bbox", Message: "BBOX must have minx < maxx and miny < maxy (in the axis order of " + v.crs.name + "), not " + quoted(bs)}
	}
	if d := q.params.Get("TIME"); d != "" {
		return nil, &Exception{Code: "InvalidDimensionValue", Locator: "time", Message: "no layer of this service has a TIME dimension"}
	}
	return v, nil
}

func copyParams(p kvp.Params) kvp.Params {
	out := make(kvp.Params, len(p)+1)
	for k, v := range p {
		out[k] = v
	}
	return out
}

// serverInfo is GetServerInfo of the service's default map.
func (s *service) serverInfo() (*gisxml.MapServerInfo, error) {
	resp, err := invoke(s, "GetServerInfo", s.families().Information.GetServerInfo, &gisxml.GetServerInfo{MapName: s.svc.DefaultMap().Name})
	if err != nil {
		return nil, err
	}
	if resp.Result == nil || resp.Result.DefaultMapDescription == nil {
		return nil, fmt.Errorf("wms: GetServerInfo of %s has no default map description", s.svc.Name)
	}
	return resp.Result, nil
}

// mapDescription is the default map description with the view's extent, system and layers.
func (v *view) mapDescription() *gisxml.MapDescription {
	md := *v.info.DefaultMapDescription
	sr := mapview.SpatialReference(v.crs.sr)
	md.MapArea = &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: v.bbox[0], YMin: v.bbox[1], XMax: v.bbox[2], YMax: v.bbox[3],
		SpatialReference: sr}}}
	md.SpatialReference = sr
	md.LayerDescriptions = make(gisxml.ArrayOfLayerDescription, len(v.info.DefaultMapDescription.LayerDescriptions))
	for i, ld := range v.info.DefaultMapDescription.LayerDescriptions {
		c := *ld
		c.Visible = v.visible[ld.LayerID]
		md.LayerDescriptions[i] = &c
	}
	switch {
	case v.img.transparent:
		var zero uint8
		md.BackgroundSymbol = &gisxml.SimpleFillSymbol{Style: gisxml.SFSSolid, FillSymbolFields: gisxml.FillSymbolFields{
			Color: &gisxml.RgbColor{ColorFields: gisxml.ColorFields{AlphaValue: &zero}, Red: v.img.bg[0], Green: v.img.bg[1], Blue: v.img.bg[2]}}}
	case v.img.bgGiven:
		md.BackgroundSymbol = &gisxml.SimpleFillSymbol{Style: gisxml.SFSSolid, FillSymbolFields: gisxml.FillSymbolFields{
			Color: &gisxml.RgbColor{Red: v.img.bg[0], Green: v.img.bg[1], Blue: v.img.bg[2]}}}
	}
	return &md
}

// getMap answers GetMap: ExportMapImage of the view, through the farm, its bytes inline.
func (s *service) getMap(w http.ResponseWriter, r *http.Request, q *request) error {
	v, err := s.readView(q, true)
	if err != nil {
		return err
	}
	resp, err := invoke(s, "ExportMapImage", mapserver.Drawing(s.h.p.Server, s.families().Cartography.ExportMapImage), &gisxml.ExportMapImage{
		MapDescription: v.mapDescription(),
		ImageDescription: &gisxml.ImageDescription{
			ImageType:    &gisxml.ImageType{ImageFormat: v.img.format.gis, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: v.img.width, ImageHeight: v.img.height, ImageDPI: drawDPI},
		}})
	if err != nil {
		return err
	}
	img := resp.Result
	if ri := s.call.Render; ri != nil {
		w.Header().Set("Server-Timing", fmt.Sprintf(`render;dur=%.3f;desc="%s"`, float64(ri.Render.Microseconds())/1000, ri.Worker))
	}
	writeBody(w, r, http.StatusOK, v.img.format.mime, "public, max-age=60", img.ImageData)
	return nil
}
