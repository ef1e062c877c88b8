package queries

import (
	"context"
	"html"
	"net/url"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// QueryHTMLPopups returns the HTML popup of each row of RowIDs, in order, from the layer's
// popup template (service definition key `popup`): HTML text, or a URL, as the template's type
// says. Rows that do not exist are skipped. A layer without a template is a client fault.
func (s *Service) QueryHTMLPopups(ctx context.Context, c *operation.Call, req *gisxml.QueryHTMLPopups) (*gisxml.QueryHTMLPopupsResponse, error) {
	src, l, err := sourceOf(c, req.MapName, req.TableID)
	if err != nil {
		return nil, err
	}
	out, err := s.popups(ctx, src, l, "", req.RowIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryHTMLPopupsResponse{Result: out}, nil
}

// QueryHTMLPopups2 is QueryHTMLPopups with the layer from a MapTableDescription, whose
// definition expression limits the rows.
func (s *Service) QueryHTMLPopups2(ctx context.Context, c *operation.Call, req *gisxml.QueryHTMLPopups2) (*gisxml.QueryHTMLPopups2Response, error) {
	_, src, l, defExpr, err := describedSource(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	out, err := s.popups(ctx, src, l, defExpr, req.RowIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryHTMLPopups2Response{Result: out}, nil
}

func (s *Service) popups(ctx context.Context, src *source, l *catalog.Layer, defExpr string, ids gisxml.ArrayOfInt) (gisxml.ArrayOfString, error) {
	if l == nil || l.Def.Popup == nil {
		return nil, operation.Invalid("%s %d (%s) has no HTML popup", src.kind, src.id, src.name)
	}
	p, err := newPlan(ctx, src, &gisxml.QueryFilter{FIDSet: &gisxml.FIDSet{FIDArray: ids}}, defExpr)
	if err != nil {
		return nil, err
	}
	found, err := p.byID(ids, nil)
	if err != nil {
		return nil, err
	}
	out := gisxml.ArrayOfString{}
	for _, id := range ids {
		f, ok := found[int64(id)]
		if !ok {
			continue
		}
		out = append(out, fillPopup(l.Def.Popup, src, f))
		if len(out) >= s.maxRecords() {
			break
		}
	}
	return out, nil
}

// fillPopup fills a popup template with a feature's values: HTML-escaped for HTML text,
// query-escaped for a URL.
func fillPopup(p *servicedef.Popup, src *source, f *feature.Feature) string {
	return p.Fill(func(field string) string {
		i := src.info.FieldIndex(field)
		if i < 0 {
			return ""
		}
		v := valueText(f.Values[i])
		if f.Values[i] == nil {
			v = ""
		}
		if p.Type == servicedef.PopupURL {
			return url.QueryEscape(v)
		}
		return html.EscapeString(v)
	})
}

// PopupType is a layer's HTMLPopupType for GetServerInfo.
func PopupType(l *catalog.Layer) gisxml.ServerHTMLPopupType {
	switch {
	case l.Def.Popup == nil:
		return gisxml.ServerHTMLPopupTypeNone
	case l.Def.Popup.Type == servicedef.PopupURL:
		return gisxml.ServerHTMLPopupTypeAsURL
	}
	return gisxml.ServerHTMLPopupTypeAsHTMLText
}
