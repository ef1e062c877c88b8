package queries

import (
	"context"
	"html"
	"strings"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// Identify finds the features within Tolerance pixels of SearchShape (any geometry kind, in the
// map's spatial reference). Tolerance becomes map units through the view the MapDescription and
// ImageDisplay resolve to (map units per pixel). The options:
//
//   - gisIdentifyAllLayers: every layer in LayerIDs (all when empty), visible or not;
//   - gisIdentifyVisibleLayers: those of them visible at the view's scale;
//   - gisIdentifyTopmost: the visible layers, results of the topmost layer with a hit only;
//   - gisIdentifyVisibleWithHTMLPopup, gisIdentifyTopOneWithHTMLPopup: as VisibleLayers and
//     Topmost (one feature), each result with an HTML popup of its attributes.
//
// Results come layer by layer, topmost first, features in id order; at most MaxRecordCount.
// The MapDescription's LayerResultOptions apply (IncludeGeometry, ReturnFieldNamesInResults).
func (s *Service) Identify(ctx context.Context, c *operation.Call, req *gisxml.Identify) (*gisxml.IdentifyResponse, error) {
	opt := req.IdentifyOption
	if opt == "" {
		opt = gisxml.IdentifyTopmost
	}
	if !containsOpt(opt) {
		return nil, operation.Invalid("IdentifyOption %q is not a gisIdentifyOption value", req.IdentifyOption)
	}
	if req.Tolerance < 0 {
		return nil, operation.Invalid("Tolerance must not be negative (got %d)", req.Tolerance)
	}
	m, v, layers, err := s.searchLayers(ctx, c, req.MapDescription, req.MapImageDisplay, req.LayerIDs, opt != gisxml.IdentifyAllLayers)
	if err != nil {
		return nil, err
	}
	shape, gsr, err := operation.GeometryIn(req.SearchShape, "SearchShape")
	if err != nil {
		return nil, err
	}
	// The shape and the tolerance are in the view's system (the MapDescription's, or the
	// shape's own); the search runs in the map's, and shapes come back in the view's.
	if gsr.IsZero() {
		gsr = v.SR
	}
	if t, err := operation.Transformer(m, gsr, v.SR, "SearchShape"); err != nil {
		return nil, err
	} else if t != nil {
		if shape = operation.Reproject(shape, t); shape == nil {
			return nil, operation.Invalid("SearchShape lies outside the area where %s is defined", v.SR.Name())
		}
	}
	tol := float64(req.Tolerance) * v.Resolution()
	b := shape.Bound()
	search := orb.Bound{Min: orb.Point{b.Min[0] - tol, b.Min[1] - tol}, Max: orb.Point{b.Max[0] + tol, b.Max[1] + tol}}
	toView, err := operation.Transformer(m, m.SR, v.SR, "MapDescription/SpatialReference")
	if err != nil {
		return nil, err
	}
	if toView != nil { // search in the map's system: the shape, and the search box along its edges
		w := search.Max[0] - search.Min[0]
		if search, err = toView.InverseBound(search); err != nil {
			return nil, operation.Invalid("SearchShape: %v", err)
		}
		if shape, err = toView.InverseGeometry(orb.Clone(shape)); err != nil {
			return nil, operation.Invalid("SearchShape: %v", err)
		}
		if w > 0 { // the tolerance in the map's units, as the search box scales
			tol *= (search.Max[0] - search.Min[0]) / w
		}
	}
	sg := searchShape{exact: feature.Exact(shape)}
	if mp, ok := shape.(orb.MultiPoint); ok && len(mp) > 0 {
		sg.points = feature.NewPointSet(mp)
	}
	topmost := opt == gisxml.IdentifyTopmost || opt == gisxml.IdentifyTopOneWithHTMLPopup
	popup := opt == gisxml.IdentifyTopOneWithHTMLPopup || opt == gisxml.IdentifyVisibleWithHTMLPopup
	limit := s.maxRecords()
	if opt == gisxml.IdentifyTopOneWithHTMLPopup {
		limit = 1
	}
	results := gisxml.ArrayOfMapServerIdentifyResult{}
	for _, sl := range layers {
		p, err := newPlan(ctx, sl.src, nil, sl.defExpr)
		if err != nil {
			return nil, err
		}
		p.spatial = &feature.Spatial{Rel: feature.EnvelopeIntersects, Geom: search}
		feats, err := p.collect()
		if err != nil {
			return nil, err
		}
		hit := false
		for _, f := range feats {
			if !sg.near(f, tol) {
				continue
			}
			hit = true
			r := &gisxml.MapServerIdentifyResult{
				LayerID: sl.src.id, Name: sl.src.name, Properties: properties(sl.src, f, sl.fieldNames), FeatureID: operation.Ptr(int(f.ID)),
			}
			if sl.geometry {
				r.Shape = operation.GeometryOut(operation.Reproject(f.Geom, toView), v.SR)
			}
			if popup {
				r.HTMLPopup = operation.Ptr(htmlPopup(sl.src, r.Properties))
				if l, _ := m.Layer(sl.src.id); l.Def.Popup != nil {
					r.HTMLPopup = operation.Ptr(fillPopup(l.Def.Popup, sl.src, f))
				}
			}
			results = append(results, r)
			if len(results) >= limit {
				return &gisxml.IdentifyResponse{Result: results}, nil
			}
		}
		if hit && topmost {
			break
		}
	}
	return &gisxml.IdentifyResponse{Result: results}, nil
}

func containsOpt(o gisxml.IdentifyOption) bool {
	switch o {
	case gisxml.IdentifyTopmost, gisxml.IdentifyAllLayers, gisxml.IdentifyVisibleLayers,
		gisxml.IdentifyTopOneWithHTMLPopup, gisxml.IdentifyVisibleWithHTMLPopup:
		return true
	}
	return false
}

// searchShape is Identify's search geometry; a multipoint's points are indexed too, so that a
// feature is measured against the points near its bound only (feature.PointSet), not all of
// them.
type searchShape struct {
	exact  geom.Geometry
	points *feature.PointSet // nil unless the shape is a multipoint
}

// near reports whether a feature lies within tol map units of the search geometry.
func (s searchShape) near(f *feature.Feature, tol float64) bool {
	fg := feature.Exact(f.Geom)
	sg := s.exact
	if s.points != nil {
		var n int
		if sg, n = s.points.Near(f.Geom.Bound(), tol); n == 0 {
			return false
		}
	}
	if tol == 0 {
		return geom.Intersects(sg, fg)
	}
	d, ok := geom.Distance(sg, fg)
	return ok && d <= tol
}

// htmlPopup is a feature's attributes as a small HTML table, the popup of layers without a
// popup template (layers with one get it filled).
func htmlPopup(src *source, ps *gisxml.PropertySet) string {
	var b strings.Builder
	b.WriteString("<html><body><table><caption>")
	b.WriteString(html.EscapeString(src.name))
	b.WriteString("</caption>")
	for _, p := range ps.PropertyArray {
		b.WriteString("<tr><th>")
		b.WriteString(html.EscapeString(p.Key))
		b.WriteString("</th><td>")
		b.WriteString(html.EscapeString(valueText(p.Value)))
		b.WriteString("</td></tr>")
	}
	b.WriteString("</table></body></html>")
	return b.String()
}
