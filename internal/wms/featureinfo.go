package wms

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/paulmach/orb/geojson"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
)

// identifyTolerance is the search radius of GetFeatureInfo around the pixel, in pixels.
const identifyTolerance = 3

// maxFeatureCount bounds FEATURE_COUNT (features per layer); it is the REST maxRecordCount's
// order of size and keeps an answer small.
const maxFeatureCount = 1000

// infoFeature is one feature GetFeatureInfo answers.
type infoFeature struct {
	layerID   int
	layerName string
	fid       *int
	props     [][2]any // key, value, in the operation's order
	shape     gisxml.GeometryKind
}

// featureInfo answers GetFeatureInfo: Identify at the pixel I,J (X,Y in 1.1.1) of the map
// GetMap would draw, on the QUERY_LAYERS, at most FEATURE_COUNT features per layer (1 by
// default), in INFO_FORMAT (text/xml by default).
func (s *service) featureInfo(w http.ResponseWriter, r *http.Request, q *request) error {
	v, err := s.readView(q, false)
	if err != nil {
		return err
	}
	p := q.params
	format := strings.ToLower(p.Get("INFO_FORMAT"))
	if format == "" {
		format = "text/xml"
	}
	known := false
	for _, f := range infoFormats {
		known = known || f == format
	}
	if !known {
		return &Exception{Code: "InvalidFormat", Locator: "info_format", Message: "INFO_FORMAT must be one of " + strings.Join(infoFormats, ", ") + ", not " + quoted(p.Get("INFO_FORMAT"))}
	}
	iName, jName := "I", "J"
	if q.version == version111 {
		iName, jName = "X", "Y"
	}
	i, exc := pixel(p, iName, v.img.width)
	if exc != nil {
		return exc
	}
	j, exc := pixel(p, jName, v.img.height)
	if exc != nil {
		return exc
	}
	count := 1
	if p.Get("FEATURE_COUNT") != "" {
		if count, exc = positiveInt(p, "FEATURE_COUNT"); exc != nil {
			return exc
		}
		count = min(count, maxFeatureCount)
	}
	ql := p.Get("QUERY_LAYERS")
	if strings.TrimSpace(ql) == "" {
		return missing("QUERY_LAYERS", "QUERY_LAYERS is required")
	}
	var ids []int
	for _, name := range strings.Split(ql, ",") {
		n, ok := v.tree.lookup(name)
		if !ok {
			return &Exception{Code: "LayerNotDefined", Locator: "query_layers", Message: "layer " + quoted(name) + " is not defined"}
		}
		var nodes []*layerNode
		if n == nil {
			nodes = v.tree.roots
		} else {
			if !v.visible[n.info.LayerID] {
				return &Exception{Code: "LayerNotDefined", Locator: "query_layers", Message: "layer " + quoted(name) + " of QUERY_LAYERS is not among LAYERS"}
			}
			if !n.queryable() {
				return &Exception{Code: "LayerNotQueryable", Locator: "query_layers", Message: "layer " + quoted(name) + " is not queryable"}
			}
			nodes = []*layerNode{n}
		}
		for _, n := range nodes {
			n.walk(func(d *layerNode) {
				if len(d.children) == 0 && d.queryable() && v.visible[d.info.LayerID] {
					ids = append(ids, d.info.LayerID)
				}
			})
		}
	}
	md := v.mapDescription()
	// The pixel's centre in the extent GetMap draws: the BBOX widened about its centre to the
	// image's aspect, as ExportMapImage widens it (mapview.Resolve).
	minX, minY, maxX, maxY := drawnExtent(v.bbox, v.img.width, v.img.height)
	resX := (maxX - minX) / float64(v.img.width)
	resY := (maxY - minY) / float64(v.img.height)
	pt := &gisxml.PointN{X: minX + (float64(i)+0.5)*resX, Y: maxY - (float64(j)+0.5)*resY, SpatialReference: md.SpatialReference}
	var features []infoFeature
	if len(ids) > 0 {
		resp, err := invoke(s, "Identify", mapserver.Drawing(s.h.p.Server, s.families().Queries.Identify), &gisxml.Identify{
			MapDescription: md, MapImageDisplay: &gisxml.ImageDisplay{ImageWidth: v.img.width, ImageHeight: v.img.height, ImageDPI: drawDPI},
			SearchShape: pt, Tolerance: identifyTolerance, IdentifyOption: gisxml.IdentifyAllLayers, LayerIDs: ids,
		})
		if err != nil {
			return err
		}
		perLayer := map[int]int{}
		for _, res := range resp.Result {
			if perLayer[res.LayerID] >= count {
				continue
			}
			perLayer[res.LayerID]++
			f := infoFeature{layerID: res.LayerID, fid: res.FeatureID, shape: res.Shape, layerName: res.Name}
			if n, ok := v.tree.byID[res.LayerID]; ok {
				f.layerName = n.info.Name
			}
			if res.Properties != nil {
				for _, kv := range res.Properties.PropertyArray {
					f.props = append(f.props, [2]any{kv.Key, kv.Value})
				}
			}
			features = append(features, f)
		}
	}
	var b bytes.Buffer
	ct := format
	switch format {
	case "text/xml":
		writeInfoXML(&b, features)
		ct = "text/xml; charset=utf-8"
	case "text/html":
		if err := infoHTML.Execute(&b, htmlRows(features)); err != nil {
			return err
		}
		ct = "text/html; charset=utf-8"
	case "text/plain":
		writeInfoText(&b, features)
		ct = "text/plain; charset=utf-8"
	default:
		if err := writeInfoGeoJSON(&b, features); err != nil {
			return err
		}
	}
	writeBody(w, r, http.StatusOK, ct, "no-cache", b.Bytes())
	return nil
}

// drawnExtent is bbox grown about its centre to the aspect w/h.
func drawnExtent(bbox [4]float64, w, h int) (minX, minY, maxX, maxY float64) {
	bw, bh := bbox[2]-bbox[0], bbox[3]-bbox[1]
	want := float64(w) / float64(h)
	if bw/bh < want {
		bw = bh * want
	} else {
		bh = bw / want
	}
	cx, cy := (bbox[0]+bbox[2])/2, (bbox[1]+bbox[3])/2
	return cx - bw/2, cy - bh/2, cx + bw/2, cy + bh/2
}

// pixel reads I, J, X or Y: a pixel of the map, 0 ≤ value < size (InvalidPoint otherwise).
func pixel(p map[string]string, name string, size int) (int, *Exception) {
	s := p[strings.ToLower(name)]
	if s == "" {
		return 0, missing(name, name+" is required")
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n >= size {
		return 0, &Exception{Code: "InvalidPoint", Locator: strings.ToLower(name), Message: fmt.Sprintf("%s must be a pixel of the map, 0 to %d, not %s", name, size-1, quoted(s))}
	}
	return n, nil
}

// valueText is an attribute as text: "Null" for none, as ArcGIS writes it.
func valueText(v any) string {
	if v == nil {
		return "Null"
	}
	return fmt.Sprint(v)
}

// writeInfoXML writes ArcGIS Server's text/xml answer: a FeatureInfoCollection per layer, a
// FeatureInfo per feature, a Field (FieldName, FieldValue) per attribute.
func writeInfoXML(b *bytes.Buffer, fs []infoFeature) {
	var w xmlWriter
	w.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	w.WriteString(`<esri_wms:FeatureInfoResponse xmlns:esri_wms="http://www.esri.com/wms" xmlns="http://www.esri.com/wms">`)
	for i := 0; i < len(fs); {
		k := i
		for k < len(fs) && fs[k].layerID == fs[i].layerID {
			k++
		}
		w.WriteString(`<esri_wms:FeatureInfoCollection layername="`)
		w.esc(fs[i].layerName)
		w.WriteString(`">`)
		for _, f := range fs[i:k] {
			w.WriteString("<esri_wms:FeatureInfo>")
			for _, kv := range f.props {
				w.WriteString("<esri_wms:Field>")
				w.elem("esri_wms:FieldName", fmt.Sprint(kv[0]))
				w.elem("esri_wms:FieldValue", valueText(kv[1]))
				w.WriteString("</esri_wms:Field>")
			}
			w.WriteString("</esri_wms:FeatureInfo>")
		}
		w.WriteString("</esri_wms:FeatureInfoCollection>")
		i = k
	}
	w.WriteString("</esri_wms:FeatureInfoResponse>\n")
	b.WriteString(w.String())
}

// writeInfoText writes the text/plain answer, as GeoServer's: the layer, then each feature's
// attributes, one per line.
func writeInfoText(b *bytes.Buffer, fs []infoFeature) {
	if len(fs) == 0 {
		b.WriteString("no features were found\n")
		return
	}
	last := -1
	for _, f := range fs {
		if f.layerID != last {
			fmt.Fprintf(b, "Results for layer '%s':\n", f.layerName)
			last = f.layerID
		}
		b.WriteString("--------------------------------------------\n")
		for _, kv := range f.props {
			fmt.Fprintf(b, "%v = %s\n", kv[0], valueText(kv[1]))
		}
	}
	b.WriteString("--------------------------------------------\n")
}

type htmlLayer struct {
	Name     string
	Fields   []string
	Features [][]string
}

func htmlRows(fs []infoFeature) []htmlLayer {
	var out []htmlLayer
	last := -1
	for _, f := range fs {
		if f.layerID != last {
			l := htmlLayer{Name: f.layerName}
			for _, kv := range f.props {
				l.Fields = append(l.Fields, fmt.Sprint(kv[0]))
			}
			out = append(out, l)
			last = f.layerID
		}
		row := make([]string, 0, len(f.props))
		for _, kv := range f.props {
			row = append(row, valueText(kv[1]))
		}
		l := &out[len(out)-1]
		l.Features = append(l.Features, row)
	}
	return out
}

var infoHTML = template.Must(template.New("info").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Feature information</title></head><body>
{{- range .}}
<table border="1"><caption>{{.Name}}</caption>
<tr>{{range .Fields}}<th>{{.}}</th>{{end}}</tr>
{{- range .Features}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{- end}}
</table>
{{- else}}
<p>No features were found.</p>
{{- end}}
</body></html>
`))

// writeInfoGeoJSON writes the application/json answer: a GeoJSON FeatureCollection, each
// feature's id "<layer name>.<feature id>" as GeoServer writes it, its geometry in the
// request's system (easting first, as GeoJSON orders it), its attributes as properties.
func writeInfoGeoJSON(b *bytes.Buffer, fs []infoFeature) error {
	fc := geojson.NewFeatureCollection()
	for _, f := range fs {
		var feat *geojson.Feature
		if g, _, err := operation.GeometryIn(f.shape, "Shape"); err == nil && g != nil {
			feat = geojson.NewFeature(g)
		} else {
			feat = &geojson.Feature{Type: "Feature", Properties: geojson.Properties{}}
		}
		if f.fid != nil {
			feat.ID = f.layerName + "." + strconv.Itoa(*f.fid)
		}
		for _, kv := range f.props {
			feat.Properties[fmt.Sprint(kv[0])] = kv[1]
		}
		fc.Append(feat)
	}
	enc := json.NewEncoder(b)
	return enc.Encode(fc)
}
