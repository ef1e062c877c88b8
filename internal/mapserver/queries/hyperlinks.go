package queries

import (
	"context"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
)

// QueryHyperlinks returns the hyperlinks of the features in view: for each layer in LayerIDs
// (every layer when empty) that declares a hyperlinkField and is visible at the view's scale,
// every feature meeting the view's extent whose hyperlink field is not empty. Location is a
// point of the feature (its centre, or the point itself). Layers in map order, features by id;
// at most MaxRecordCount in all.
func (s *Service) QueryHyperlinks(ctx context.Context, c *operation.Call, req *gisxml.QueryHyperlinks) (*gisxml.QueryHyperlinksResponse, error) {
	m, v, layers, err := s.searchLayers(ctx, c, req.MapDescription, req.MapImageDisplay, req.LayerIDs, true)
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfMapServerHyperlink{}
	limit := s.maxRecords()
	for _, sl := range layers {
		l, _ := m.Layer(sl.src.id)
		if l.Def.HyperlinkField == "" {
			continue
		}
		p, err := newPlan(ctx, sl.src, nil, sl.defExpr)
		if err != nil {
			return nil, err
		}
		p.spatial = &feature.Spatial{Rel: feature.EnvelopeIntersects, Geom: v.Extent}
		feats, err := p.collect()
		if err != nil {
			return nil, err
		}
		col := sl.src.info.FieldIndex(l.Def.HyperlinkField)
		for _, f := range feats {
			url, _ := f.Values[col].(string)
			if url == "" {
				continue
			}
			out = append(out, &gisxml.MapServerHyperlink{URL: url, Location: operation.GeometryOut(anchor(f), m.SR)})
			if len(out) >= limit {
				return &gisxml.QueryHyperlinksResponse{Result: out}, nil
			}
		}
	}
	return &gisxml.QueryHyperlinksResponse{Result: out}, nil
}

// anchor is the point a feature's hyperlink is shown at.
func anchor(f *feature.Feature) orb.Point {
	if p, ok := f.Geom.(orb.Point); ok {
		return p
	}
	return f.Geom.Bound().Center()
}
