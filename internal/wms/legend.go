package wms

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// The legend graphic's layout: a row per legend class, its swatch (the patch, WIDTH × HEIGHT,
// 20 × 20 by default) then its label, as GeoServer and ArcGIS draw a layer's legend.
const (
	legendPatch   = 20
	legendPatchMx = 256 // the largest patch side GetLegendGraphic draws
	legendGap     = 4   // between swatch and label, and around the whole
	glyphW        = 7   // basicfont.Face7x13
	glyphH        = 13
)

// legendRow is one class of a layer's legend.
type legendRow struct {
	label  string
	symbol []byte // the swatch, PNG; nil when the operation drew none
}

// legendLayout is the size of the legend graphic of rows with patches pw × ph.
func legendLayout(rows []legendRow, pw, ph int) (w, h int) {
	longest := 0
	for _, r := range rows {
		longest = max(longest, len([]rune(r.label)))
	}
	rowH := max(ph, glyphH) + legendGap
	w = legendGap + pw + legendGap + longest*glyphW + legendGap
	h = legendGap + len(rows)*rowH
	return max(w, 1), max(h, 1)
}

// legendRows runs GetLegendInfo for the layers ids with patches pw × ph, and returns each
// layer's rows.
func (s *service) legendRows(ids []int, pw, ph int) (map[int][]legendRow, error) {
	rt := gisxml.ImageReturnMimeData
	resp, err := invoke(s, "GetLegendInfo", mapserver.Drawing(s.h.p.Server, s.families().Cartography.GetLegendInfo), &gisxml.GetLegendInfo{
		MapName: s.svc.DefaultMap().Name, LayerIDs: ids,
		LegendPatch: &gisxml.MapServerLegendPatch{Width: float64(pw), Height: float64(ph), ImageDPI: drawDPI},
		ImageType:   &gisxml.ImageType{ImageFormat: gisxml.ImagePNG32, ImageReturnType: rt},
	})
	if err != nil {
		return nil, err
	}
	out := map[int][]legendRow{}
	for _, li := range resp.Result {
		for _, g := range li.LegendGroups {
			for _, c := range g.LegendClasses {
				r := legendRow{label: c.Label}
				if c.SymbolImage != nil {
					r.symbol = c.SymbolImage.ImageData
				}
				out[li.LayerID] = append(out[li.LayerID], r)
			}
		}
	}
	return out, nil
}

// legendSizes is the size of each layer's default legend graphic, for the capabilities'
// LegendURLs: layers with a legend (a group's is its sublayers'), one GetLegendInfo for all.
func (s *service) legendSizes(t *layerTree) (map[int][2]int, error) {
	var ids []int
	t.all(func(n *layerNode) {
		if len(n.children) == 0 {
			ids = append(ids, n.info.LayerID)
		}
	})
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.legendRows(ids, legendPatch, legendPatch)
	if err != nil {
		return nil, err
	}
	out := map[int][2]int{}
	t.all(func(n *layerNode) {
		var rs []legendRow
		n.walk(func(d *layerNode) { rs = append(rs, rows[d.info.LayerID]...) })
		if len(rs) > 0 {
			w, h := legendLayout(rs, legendPatch, legendPatch)
			out[n.info.LayerID] = [2]int{w, h}
		}
	})
	return out, nil
}

// legendGraphic answers GetLegendGraphic (the SLD extension both GeoServer and ArcGIS Server
// answer): LAYER (a layer's name; a group's legend is its sublayers'), FORMAT image/png (the
// default), image/jpeg or image/gif, WIDTH and HEIGHT the patch size (20 × 20 by default, at
// most 256). STYLE may be empty or "default"; RULE and SLD are not supported.
func (s *service) legendGraphic(w http.ResponseWriter, r *http.Request, q *request) error {
	p := q.params
	name := p.Get("LAYER")
	if name == "" {
		return missing("LAYER", "LAYER is required")
	}
	if st := strings.TrimSpace(p.Get("STYLE")); st != "" && !strings.EqualFold(st, "default") {
		return &Exception{Code: "StyleNotDefined", Locator: "style", Message: "style " + quoted(st) + " is not defined: each layer has the style \"default\""}
	}
	for _, unsupported := range []string{"SLD", "SLD_BODY", "RULE"} {
		if p.Get(unsupported) != "" {
			return &Exception{Code: "OperationNotSupported", Locator: strings.ToLower(unsupported), Message: unsupported + " is not supported: the legend is the layer's own"}
		}
	}
	format := strings.ToLower(p.Get("FORMAT"))
	switch format {
	case "":
		format = "image/png"
	case "image/png", "image/jpeg", "image/gif":
	default:
		return &Exception{Code: "InvalidFormat", Locator: "format", Message: "FORMAT must be image/png, image/jpeg or image/gif, not " + quoted(p.Get("FORMAT"))}
	}
	pw, ph := legendPatch, legendPatch
	for _, d := range []struct {
		name string
		v    *int
	}{{"WIDTH", &pw}, {"HEIGHT", &ph}} {
		if p.Get(d.name) == "" {
			continue
		}
		n, exc := positiveInt(p, d.name)
		if exc != nil {
			return exc
		}
		if n > legendPatchMx {
			return &Exception{Locator: strings.ToLower(d.name), Message: d.name + " (the legend patch) may be at most " + strconv.Itoa(legendPatchMx)}
		}
		*d.v = n
	}
	info, err := s.serverInfo()
	if err != nil {
		return err
	}
	tree := newLayerTree(s.svc, info)
	node, ok := tree.lookup(name)
	var ids []int
	switch {
	case !ok:
		return &Exception{Code: "LayerNotDefined", Locator: "layer", Message: "layer " + quoted(name) + " is not defined"}
	case node == nil:
		tree.all(func(n *layerNode) {
			if len(n.children) == 0 {
				ids = append(ids, n.info.LayerID)
			}
		})
	default:
		node.walk(func(n *layerNode) {
			if len(n.children) == 0 {
				ids = append(ids, n.info.LayerID)
			}
		})
	}
	byLayer, err := s.legendRows(ids, pw, ph)
	if err != nil {
		return err
	}
	var rows []legendRow
	for _, id := range ids {
		rows = append(rows, byLayer[id]...)
	}
	img := drawLegend(rows, pw, ph, format != "image/jpeg")
	var b bytes.Buffer
	switch format {
	case "image/jpeg":
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	case "image/gif":
		err = gif.Encode(&b, img, nil)
	default:
		err = png.Encode(&b, img)
	}
	if err != nil {
		return err
	}
	writeBody(w, r, http.StatusOK, format, "public, max-age=60", b.Bytes())
	return nil
}

// drawLegend draws the rows: each swatch, then its label in black; the background is
// transparent when alpha is set, else white.
func drawLegend(rows []legendRow, pw, ph int, alpha bool) *image.NRGBA {
	w, h := legendLayout(rows, pw, ph)
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	if !alpha {
		draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	}
	d := &font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13}
	rowH := max(ph, glyphH) + legendGap
	for i, r := range rows {
		y := legendGap + i*rowH
		if sym, err := png.Decode(bytes.NewReader(r.symbol)); err == nil {
			draw.Draw(img, image.Rect(legendGap, y, legendGap+pw, y+ph), sym, sym.Bounds().Min, draw.Over)
		}
		d.Dot = fixed.P(legendGap+pw+legendGap, y+(max(ph, glyphH)+glyphH)/2-2)
		d.DrawString(r.label)
	}
	return img
}
