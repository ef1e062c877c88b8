package wms

import (
	"encoding/xml"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// arcgisToWMSScale converts an ArcGIS scale (drawn at 96 DPI, a pixel of 0.0254/96 m) to a WMS
// scale denominator (the standard pixel of 0.28 mm).
const arcgisToWMSScale = 0.0254 / 96 / 0.00028

// infoFormats are GetFeatureInfo's INFO_FORMATs.
var infoFormats = []string{"text/xml", "text/html", "text/plain", "application/json", "application/geo+json"}

// legendFormats are GetLegendGraphic's formats.
var legendFormats = []string{"image/png", "image/jpeg", "image/gif"}

// xmlWriter builds an XML document; text and attribute values are escaped.
type xmlWriter struct{ strings.Builder }

func (w *xmlWriter) esc(s string) { _ = xml.EscapeText(w, []byte(s)) }

// elem writes <name>text</name>.
func (w *xmlWriter) elem(name, text string) {
	w.WriteString("<" + name + ">")
	w.esc(text)
	w.WriteString("</" + name + ">")
}

func (w *xmlWriter) link(href string) {
	w.WriteString(`<OnlineResource xmlns:xlink="http://www.w3.org/1999/xlink" xlink:type="simple" xlink:href="`)
	w.esc(href)
	w.WriteString(`"/>`)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// endpoint is the service's WMS address, as the capabilities name it.
func (s *service) endpoint() string {
	return s.h.p.PublicURL + "/arcgis/services/" + s.svc.Name + "/MapServer/WMSServer"
}

// capabilities answers GetCapabilities in the negotiated version, with UPDATESEQUENCE: the
// document's updateSequence is a hash of its content, so it changes whenever the service does;
// a client that names the current one gets CurrentUpdateSequence.
func (s *service) capabilities(w http.ResponseWriter, r *http.Request, q *request) error {
	if f := q.params.Get("FORMAT"); f != "" && !strings.EqualFold(f, "text/xml") && !strings.EqualFold(f, "application/vnd.ogc.wms_xml") {
		return &Exception{Code: "InvalidFormat", Locator: "format", Message: "the capabilities are served as text/xml (1.3.0) or application/vnd.ogc.wms_xml (1.1.1)"}
	}
	info, err := s.serverInfo()
	if err != nil {
		return err
	}
	tree := newLayerTree(s.svc, info)
	legends, err := s.legendSizes(tree)
	if err != nil {
		return err
	}
	var body xmlWriter
	s.writeCapability(&body, q.version, info, tree, legends)
	sum := fnv.New64a()
	_, _ = sum.Write([]byte(body.String()))
	seq := strconv.FormatUint(sum.Sum64(), 16)
	if us := q.params.Get("UPDATESEQUENCE"); us == seq {
		return &Exception{Code: "CurrentUpdateSequence", Locator: "updatesequence", Message: "the capabilities have not changed since update sequence " + seq}
	}
	var doc xmlWriter
	doc.WriteString(xml.Header)
	ct := "text/xml; charset=utf-8"
	if q.version == version111 {
		ct = "application/vnd.ogc.wms_xml; charset=utf-8"
		doc.WriteString(`<!DOCTYPE WMT_MS_Capabilities SYSTEM "http://schemas.opengis.net/wms/1.1.1/WMS_MS_Capabilities.dtd">` + "\n")
		doc.WriteString(`<WMT_MS_Capabilities version="1.1.1" updateSequence="` + seq + `">`)
	} else {
		doc.WriteString(`<WMS_Capabilities version="1.3.0" updateSequence="` + seq + `" xmlns="http://www.opengis.net/wms" xmlns:sld="http://www.opengis.net/sld"` +
			` xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"` +
			` xsi:schemaLocation="http://www.opengis.net/wms http://schemas.opengis.net/wms/1.3.0/capabilities_1_3_0.xsd` +
			` http://www.opengis.net/sld http://schemas.opengis.net/sld/1.1.0/sld_capabilities.xsd">`)
	}
	s.writeService(&doc, q.version, info)
	doc.WriteString(body.String())
	if q.version == version111 {
		doc.WriteString("</WMT_MS_Capabilities>\n")
	} else {
		doc.WriteString("</WMS_Capabilities>\n")
	}
	writeBody(w, r, http.StatusOK, ct, "public, max-age=60", []byte(doc.String()))
	return nil
}

// writeService writes the Service section: the definition's title, description and keywords.
func (s *service) writeService(w *xmlWriter, v version, info *gisxml.MapServerInfo) {
	def := s.svc.Def
	w.WriteString("<Service>")
	if v == version111 {
		w.elem("Name", "OGC:WMS")
	} else {
		w.elem("Name", "WMS")
	}
	title := def.DocumentInfo.Title
	if title == "" {
		title = s.svc.Name
	}
	w.elem("Title", title)
	abstract := def.Description
	if abstract == "" {
		abstract = info.Description
	}
	if abstract != "" {
		w.elem("Abstract", abstract)
	}
	if kws := keywords(def.DocumentInfo.Keywords); len(kws) > 0 {
		w.WriteString("<KeywordList>")
		for _, k := range kws {
			w.elem("Keyword", k)
		}
		w.WriteString("</KeywordList>")
	}
	w.link(s.endpoint())
	w.elem("Fees", "none")
	access := "none"
	if c := def.CopyrightText; c != "" {
		access = c
	}
	w.elem("AccessConstraints", access)
	if v == version130 {
		w.elem("MaxWidth", strconv.Itoa(s.h.p.MaxImageWidth))
		w.elem("MaxHeight", strconv.Itoa(s.h.p.MaxImageHeight))
	}
	w.WriteString("</Service>")
}

func keywords(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// writeCapability writes the Capability section: the operations, the exception formats and the
// layer tree.
func (s *service) writeCapability(w *xmlWriter, v version, info *gisxml.MapServerInfo, tree *layerTree, legends map[int][2]int) {
	url := s.endpoint() + "?"
	op := func(name string, formats []string) {
		w.WriteString("<" + name + ">")
		for _, f := range formats {
			w.elem("Format", f)
		}
		w.WriteString("<DCPType><HTTP><Get>")
		w.link(url)
		w.WriteString("</Get></HTTP></DCPType></" + name + ">")
	}
	w.WriteString("<Capability><Request>")
	if v == version111 {
		op("GetCapabilities", []string{"application/vnd.ogc.wms_xml"})
	} else {
		op("GetCapabilities", []string{"text/xml"})
	}
	maps := make([]string, len(imageFormats))
	for i, f := range imageFormats {
		maps[i] = f.mime
	}
	op("GetMap", maps)
	op("GetFeatureInfo", infoFormats)
	if v == version111 {
		op("GetLegendGraphic", legendFormats)
	} else {
		op("sld:GetLegendGraphic", legendFormats)
	}
	w.WriteString("</Request><Exception>")
	if v == version111 {
		for _, f := range []string{"application/vnd.ogc.se_xml", "application/vnd.ogc.se_inimage", "application/vnd.ogc.se_blank"} {
			w.elem("Format", f)
		}
	} else {
		for _, f := range []string{"XML", "INIMAGE", "BLANK"} {
			w.elem("Format", f)
		}
	}
	w.WriteString("</Exception>")
	systems := s.systems(v)
	full := envelopeBound(info.FullExtent)
	queryable := false
	tree.all(func(n *layerNode) { queryable = queryable || n.queryable() })
	s.writeLayer(w, v, layerDesc{name: tree.name, title: tree.title, abstract: info.Description, extent: full, queryable: queryable,
		minScale: deref(info.MinScale), maxScale: deref(info.MaxScale)}, systems, true, legends)
	for _, n := range tree.roots {
		s.writeNode(w, v, n, systems, legends)
	}
	w.WriteString("</Layer></Capability>")
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// layerDesc is what a Layer element says.
type layerDesc struct {
	name, title, abstract string
	extent                orb.Bound // in the map's system; empty when unknown
	queryable             bool
	minScale, maxScale    float64 // ArcGIS's: minScale the most zoomed out, 0 none
	legend                *[2]int // LegendURL size; nil for no style
}

func (s *service) writeNode(w *xmlWriter, v version, n *layerNode, systems []crs, legends map[int][2]int) {
	d := layerDesc{name: n.name(), title: n.info.Name, abstract: n.info.Description, extent: s.nodeExtent(n), queryable: n.queryable(),
		minScale: n.info.MinScale, maxScale: n.info.MaxScale}
	if size, ok := legends[n.info.LayerID]; ok {
		d.legend = &size
	}
	s.writeLayer(w, v, d, systems, false, legends)
	for _, c := range n.children {
		s.writeNode(w, v, c, systems, legends)
	}
	w.WriteString("</Layer>")
}

// nodeExtent is a layer's extent, a group's the union of its sublayers'.
func (s *service) nodeExtent(n *layerNode) orb.Bound {
	b := envelopeBound(n.info.Extent)
	for _, c := range n.children {
		if cb := s.nodeExtent(c); !isEmpty(cb) {
			if isEmpty(b) {
				b = cb
			} else {
				b = b.Union(cb)
			}
		}
	}
	return b
}

func isEmpty(b orb.Bound) bool { return !(b.Min[0] < b.Max[0] || b.Min[1] < b.Max[1]) }

func envelopeBound(e gisxml.Envelope) orb.Bound {
	env, ok := e.(*gisxml.EnvelopeN)
	if !ok || env == nil {
		return orb.Bound{Min: orb.Point{1, 1}, Max: orb.Point{0, 0}}
	}
	return orb.Bound{Min: orb.Point{env.XMin, env.YMin}, Max: orb.Point{env.XMax, env.YMax}}
}

// writeLayer opens a Layer element and writes its content up to its sublayers; the caller
// closes it. The root layer lists the systems; sublayers inherit them (both standards).
func (s *service) writeLayer(w *xmlWriter, v version, d layerDesc, systems []crs, root bool, legends map[int][2]int) {
	q := "0"
	if d.queryable {
		q = "1"
	}
	w.WriteString(`<Layer queryable="` + q + `" opaque="0">`)
	w.elem("Name", d.name)
	w.elem("Title", d.title)
	if d.abstract != "" {
		w.elem("Abstract", d.abstract)
	}
	if root {
		for _, c := range systems {
			if v == version111 {
				w.elem("SRS", c.name)
			} else {
				w.elem("CRS", c.name)
			}
		}
	}
	if !isEmpty(d.extent) {
		bounds := make([]orb.Bound, len(systems))
		ok := make([]bool, len(systems))
		var geo orb.Bound
		geoOK := false
		for i, c := range systems {
			if b, valid := s.boundIn(d.extent, c.sr); valid {
				bounds[i], ok[i] = b, true
				if c.sr.WKID == proj.WGS84 && !geoOK {
					geo, geoOK = clampGeographic(b), true
				}
			}
		}
		if geoOK {
			if v == version111 {
				w.WriteString(`<LatLonBoundingBox minx="` + num(geo.Min[0]) + `" miny="` + num(geo.Min[1]) + `" maxx="` + num(geo.Max[0]) + `" maxy="` + num(geo.Max[1]) + `"/>`)
			} else {
				w.WriteString("<EX_GeographicBoundingBox>")
				w.elem("westBoundLongitude", num(geo.Min[0]))
				w.elem("eastBoundLongitude", num(geo.Max[0]))
				w.elem("southBoundLatitude", num(geo.Min[1]))
				w.elem("northBoundLatitude", num(geo.Max[1]))
				w.WriteString("</EX_GeographicBoundingBox>")
			}
		}
		for i, c := range systems {
			if !ok[i] {
				continue
			}
			b := bounds[i]
			if c.sr.WKID == proj.WGS84 {
				b = clampGeographic(b)
			}
			if v == version111 {
				w.WriteString(`<BoundingBox SRS="` + c.name + `" minx="` + num(b.Min[0]) + `" miny="` + num(b.Min[1]) + `" maxx="` + num(b.Max[0]) + `" maxy="` + num(b.Max[1]) + `"/>`)
				continue
			}
			x0, y0, x1, y1 := b.Min[0], b.Min[1], b.Max[0], b.Max[1]
			if c.northFirst {
				x0, y0, x1, y1 = y0, x0, y1, x1
			}
			w.WriteString(`<BoundingBox CRS="` + c.name + `" minx="` + num(x0) + `" miny="` + num(y0) + `" maxx="` + num(x1) + `" maxy="` + num(y1) + `"/>`)
		}
	}
	if d.legend != nil {
		w.WriteString("<Style><Name>default</Name><Title>default</Title>")
		w.WriteString(`<LegendURL width="` + strconv.Itoa(d.legend[0]) + `" height="` + strconv.Itoa(d.legend[1]) + `">`)
		w.elem("Format", "image/png")
		w.link(s.endpoint() + "?request=GetLegendGraphic&version=" + v.String() + "&format=image/png&layer=" + d.name)
		w.WriteString("</LegendURL></Style>")
	}
	// ArcGIS's minScale is the smallest scale (most zoomed out) a layer draws at: WMS's
	// MaxScaleDenominator; its maxScale the largest, MinScaleDenominator.
	if v == version111 {
		if d.minScale > 0 || d.maxScale > 0 {
			lo, hi := d.maxScale*arcgisToWMSScale*0.00028*math.Sqrt2, d.minScale*arcgisToWMSScale*0.00028*math.Sqrt2
			if d.minScale <= 0 {
				hi = math.MaxFloat32
			}
			w.WriteString(`<ScaleHint min="` + num(lo) + `" max="` + num(hi) + `"/>`)
		}
		return
	}
	if d.maxScale > 0 {
		w.elem("MinScaleDenominator", num(d.maxScale*arcgisToWMSScale))
	}
	if d.minScale > 0 {
		w.elem("MaxScaleDenominator", num(d.minScale*arcgisToWMSScale))
	}
}

// boundIn is the extent b of the map's system in sr, remembered for the request: the layers
// of a service often share their extent.
func (s *service) boundIn(b orb.Bound, sr proj.SR) (orb.Bound, bool) {
	k := boundKey{b, sr.WKID}
	if r, ok := s.bounds[k]; ok {
		return r.b, r.ok
	}
	m := s.svc.Maps[0]
	var r boundResult
	if t, err := m.Systems.Transformer(m.SR, sr); err == nil {
		if tb, err := t.Bound(b); err == nil && !isEmpty(tb) {
			r = boundResult{tb, true}
		}
	}
	if s.bounds == nil {
		s.bounds = map[boundKey]boundResult{}
	}
	s.bounds[k] = r
	return r.b, r.ok
}

type boundKey struct {
	b    orb.Bound
	wkid int
}

type boundResult struct {
	b  orb.Bound
	ok bool
}

func clampGeographic(b orb.Bound) orb.Bound {
	b.Min[0], b.Max[0] = math.Max(b.Min[0], -180), math.Min(b.Max[0], 180)
	b.Min[1], b.Max[1] = math.Max(b.Min[1], -90), math.Min(b.Max[1], 90)
	return b
}
