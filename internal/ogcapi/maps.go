package ogcapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapview"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// drawDPI is the resolution maps and tiles are drawn at: ArcGIS Server's, so that a map is the
// picture ExportMapImage (REST export, WMS GetMap) draws of the same extent and size.
const drawDPI = 96.0

// defaultMapWidth is a map's width when the request gives neither width nor height.
const defaultMapWidth = 1024

// mapQuery is a map to draw: its system, extent in it (easting first), size, format and
// layers.
type mapQuery struct {
	crs           crsRef
	bbox          orb.Bound
	width, height int
	mt            string
	visible       map[int]bool
}

// readMap reads a map request (Maps 1.0 core, spatial subsetting, scaling, crs): crs (the map's
// own system by default), bbox in bbox-crs (CRS84 by default; the layer's or the map's full
// extent when absent), width and height (a missing one follows the bbox's aspect; neither:
// 1024 wide), f png or jpg. Other parameters are ignored, as Maps core lets a server do.
func (s *service) readMap(r *http.Request, l *gisxml.MapLayerInfo) (*mapQuery, error) {
	p, err := params(r, nil)
	if err != nil {
		return nil, err
	}
	q := &mapQuery{}
	if q.mt, err = negotiate(r, p, mediaPNG, mediaJPEG); err != nil {
		return nil, err
	}
	m := s.svc.DefaultMap()
	own := s.defaultCRS()
	for _, c := range s.systems() {
		if c.sr.Same(m.SR) && c.uri != crs84 {
			own = c
		}
	}
	if q.crs, err = s.readCRS(p, "crs", own); err != nil {
		return nil, err
	}
	bbox, bc, err := s.readBBoxCRS(p)
	if err != nil {
		return nil, err
	}
	var from proj.SR
	var b orb.Bound
	if bbox != nil {
		if !(bbox[0] < bbox[2] && bbox[1] < bbox[3]) {
			return nil, invalid("bbox", "its lower corner must be below and left of its upper corner")
		}
		from, b = bc.sr, orb.Bound{Min: orb.Point{bbox[0], bbox[1]}, Max: orb.Point{bbox[2], bbox[3]}}
	} else {
		from, b = m.SR, m.FullExtent
		if l != nil {
			if env, ok := l.Extent.(*gisxml.EnvelopeN); ok && env != nil && env.XMin < env.XMax && env.YMin < env.YMax {
				b = orb.Bound{Min: orb.Point{env.XMin, env.YMin}, Max: orb.Point{env.XMax, env.YMax}}
			}
		}
	}
	t, err := m.Systems.Transformer(from, q.crs.sr)
	if err != nil {
		return nil, invalid("crs", "the map cannot be drawn in "+q.crs.uri+": "+err.Error())
	}
	if q.bbox, err = t.Bound(b); err != nil || !(q.bbox.Min[0] < q.bbox.Max[0] && q.bbox.Min[1] < q.bbox.Max[1]) {
		return nil, invalid("bbox", "the box has no extent in "+q.crs.uri)
	}
	maxW, maxH := s.h.p.MaxImageWidth, s.h.p.MaxImageHeight
	if q.width, err = intParam(p, "width", 0, 1, maxW); err != nil {
		return nil, err
	}
	if q.height, err = intParam(p, "height", 0, 1, maxH); err != nil {
		return nil, err
	}
	aspect := (q.bbox.Max[0] - q.bbox.Min[0]) / (q.bbox.Max[1] - q.bbox.Min[1])
	switch {
	case q.width == 0 && q.height == 0:
		q.width = min(defaultMapWidth, maxW)
		q.height = int(math.Round(float64(q.width) / aspect))
	case q.width == 0:
		q.width = int(math.Round(float64(q.height) * aspect))
	case q.height == 0:
		q.height = int(math.Round(float64(q.width) / aspect))
	}
	if q.width > maxW || q.height > maxH {
		// Only a computed side can be over: the map shrinks to fit the limit, keeping its aspect.
		f := math.Min(float64(maxW)/float64(q.width), float64(maxH)/float64(q.height))
		q.width, q.height = int(float64(q.width)*f), int(float64(q.height)*f)
	}
	q.width, q.height = max(1, q.width), max(1, q.height)
	q.visible, err = s.layersToDraw(l)
	return q, err
}

// layersToDraw are the layers a map draws: the map's default visibility for the dataset, the
// layer with its groups and, for a group, its sublayers for a collection.
func (s *service) layersToDraw(l *gisxml.MapLayerInfo) (map[int]bool, error) {
	info, err := s.serverInfo()
	if err != nil {
		return nil, err
	}
	vis := map[int]bool{}
	if l == nil {
		for _, ld := range info.DefaultMapDescription.LayerDescriptions {
			vis[ld.LayerID] = ld.Visible
		}
		return vis, nil
	}
	byID := make(map[int]*gisxml.MapLayerInfo, len(info.MapLayerInfos))
	for _, li := range info.MapLayerInfos {
		byID[li.LayerID] = li
	}
	var down func(li *gisxml.MapLayerInfo)
	down = func(li *gisxml.MapLayerInfo) {
		if vis[li.LayerID] {
			return
		}
		vis[li.LayerID] = true
		for _, id := range li.SubLayerIDs {
			if c, ok := byID[id]; ok {
				down(c)
			}
		}
	}
	down(l)
	// Its groups: a sublayer draws only in a visible group.
	for cur := l; ; {
		parent := (*gisxml.MapLayerInfo)(nil)
		for _, li := range info.MapLayerInfos {
			for _, id := range li.SubLayerIDs {
				if id == cur.LayerID && li != cur {
					parent = li
				}
			}
		}
		if parent == nil || vis[parent.LayerID] && parent != l {
			break
		}
		vis[parent.LayerID] = true
		cur = parent
	}
	return vis, nil
}

// export draws q through the farm: ExportMapImage, as REST export and WMS GetMap draw.
func (s *service) export(q *mapQuery) ([]byte, error) {
	info, err := s.serverInfo()
	if err != nil {
		return nil, err
	}
	md := *info.DefaultMapDescription
	sr := mapview.SpatialReference(q.crs.sr)
	md.MapArea = &gisxml.MapExtent{MapAreaFields: gisxml.MapAreaFields{Extent: &gisxml.EnvelopeN{XMin: q.bbox.Min[0], YMin: q.bbox.Min[1],
		XMax: q.bbox.Max[0], YMax: q.bbox.Max[1], SpatialReference: sr}}}
	md.SpatialReference = sr
	md.LayerDescriptions = make(gisxml.ArrayOfLayerDescription, len(info.DefaultMapDescription.LayerDescriptions))
	for i, ld := range info.DefaultMapDescription.LayerDescriptions {
		c := *ld
		c.Visible = q.visible[ld.LayerID]
		md.LayerDescriptions[i] = &c
	}
	format := gisxml.ImagePNG32
	if q.mt == mediaJPEG {
		format = gisxml.ImageJPG
	}
	resp, err := invoke(s, "ExportMapImage", mapserver.Drawing(s.h.p.Server, s.families().Cartography.ExportMapImage), &gisxml.ExportMapImage{
		MapDescription: &md,
		ImageDescription: &gisxml.ImageDescription{
			ImageType:    &gisxml.ImageType{ImageFormat: format, ImageReturnType: gisxml.ImageReturnMimeData},
			ImageDisplay: &gisxml.ImageDisplay{ImageWidth: q.width, ImageHeight: q.height, ImageDPI: drawDPI},
		}})
	if err != nil {
		return nil, err
	}
	return resp.Result.ImageData, nil
}

// drawMap answers /map (l nil) and /collections/{id}/map.
func (s *service) drawMap(w http.ResponseWriter, r *http.Request, l *gisxml.MapLayerInfo) error {
	q, err := s.readMap(r, l)
	if err != nil {
		return err
	}
	img, err := s.export(q)
	if err != nil {
		return err
	}
	if ri := s.call.Render; ri != nil {
		w.Header().Set("Server-Timing", fmt.Sprintf(`render;dur=%.3f;desc="%s"`, float64(ri.Render.Microseconds())/1000, ri.Worker))
	}
	setCRSHeader(w, q.crs)
	// The extent drawn, in the answer's system and its axis order (Maps 1.0 §8.2): the bbox
	// widened about its centre to the image's aspect, as ExportMapImage draws it.
	bb := q.bbox
	dx, dy := bb.Max[0]-bb.Min[0], bb.Max[1]-bb.Min[1]
	if want := dx * float64(q.height) / float64(q.width); want > dy {
		bb.Min[1], bb.Max[1] = bb.Min[1]-(want-dy)/2, bb.Max[1]+(want-dy)/2
	} else if want := dy * float64(q.width) / float64(q.height); want > dx {
		bb.Min[0], bb.Max[0] = bb.Min[0]-(want-dx)/2, bb.Max[0]+(want-dx)/2
	}
	b := []float64{bb.Min[0], bb.Min[1], bb.Max[0], bb.Max[1]}
	if q.crs.northFirst {
		b = []float64{b[1], b[0], b[3], b[2]}
	}
	parts := make([]string, 4)
	for i, v := range b {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	w.Header().Set("Content-Bbox", strings.Join(parts, ","))
	writeBody(w, r, http.StatusOK, q.mt, "public, max-age=60", img)
	return nil
}
