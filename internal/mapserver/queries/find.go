package queries

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/cartography"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/mapview"
)

// searchLayer is a layer that Find or Identify searches, with the definition expression the
// request's MapDescription gives it.
type searchLayer struct {
	src     *source
	defExpr string
	// From the LayerDescription's LayerResultOptions: whether results carry the shape, and
	// whether properties are keyed by field name rather than alias.
	geometry, fieldNames bool
}

// searchLayers resolves the view of a Find or Identify request and the layers it searches, in
// map order (topmost first): those listed in ids (every layer when empty), and of those only
// the ones visible at the view's scale when visibleOnly.
func (s *Service) searchLayers(ctx context.Context, c *operation.Call, md *gisxml.MapDescription, disp *gisxml.ImageDisplay, ids gisxml.ArrayOfInt, visibleOnly bool) (*catalog.Map, mapview.View, []searchLayer, error) {
	if md == nil {
		return nil, mapview.View{}, nil, operation.Invalid("MapDescription is required")
	}
	m, err := operation.MapOf(c, md.Name)
	if err != nil {
		return nil, mapview.View{}, nil, err
	}
	v, err := operation.ResolveView(ctx, m, md, disp, s.p.Limits)
	if err != nil {
		return nil, mapview.View{}, nil, err
	}
	states, visible, err := cartography.LayerStates(m, md.LayerDescriptions, v.Scale())
	if err != nil {
		return nil, mapview.View{}, nil, err
	}
	for i, id := range ids {
		if _, ok := m.Layer(id); !ok {
			return nil, mapview.View{}, nil, operation.Invalid("LayerIDs[%d]: map %s has no layer %d", i, m.Name, id)
		}
	}
	var out []searchLayer
	for i, l := range m.Layers {
		if len(ids) > 0 && !slices.Contains(ids, l.ID) {
			continue
		}
		if visibleOnly && !slices.Contains(visible, l.ID) {
			continue
		}
		sl := searchLayer{src: layerSource(m, l), defExpr: states[i].DefinitionExpression, geometry: true}
		for _, ld := range md.LayerDescriptions {
			if ld == nil || ld.LayerID != l.ID || ld.LayerResultOptions == nil {
				continue
			}
			if o := ld.LayerResultOptions; o.IncludeGeometry != nil {
				sl.geometry = *o.IncludeGeometry
			}
			if o := ld.LayerResultOptions; o.ReturnFieldNamesInResults != nil {
				sl.fieldNames = *o.ReturnFieldNamesInResults
			}
		}
		out = append(out, sl)
	}
	return m, v, out, nil
}

// Find searches the text of the layers' fields: Contains finds a case-insensitive substring,
// otherwise the whole value must equal SearchString exactly (case-sensitively). Numeric fields
// match when SearchString is the same number. SearchFields is a comma list (empty: every
// field). One result per matching feature, for the first field that matches; at most
// MaxRecordCount results in all. The MapDescription's LayerResultOptions apply (IncludeGeometry,
// ReturnFieldNamesInResults).
func (s *Service) Find(ctx context.Context, c *operation.Call, req *gisxml.Find) (*gisxml.FindResponse, error) {
	if req.SearchString == "" {
		return nil, operation.Invalid("SearchString is required")
	}
	visibleOnly := req.FindOption != gisxml.FindAllLayers
	if req.FindOption != "" && req.FindOption != gisxml.FindAllLayers && req.FindOption != gisxml.FindVisibleLayers {
		return nil, operation.Invalid("FindOption %q is not a gisFindOption value", req.FindOption)
	}
	m, view, layers, err := s.searchLayers(ctx, c, req.MapDescription, req.MapImageDisplay, req.LayerIDs, visibleOnly)
	if err != nil {
		return nil, err
	}
	toView, err := operation.Transformer(m, m.SR, view.SR, "MapDescription/SpatialReference")
	if err != nil {
		return nil, err
	}
	var names []string
	for n := range strings.SplitSeq(req.SearchFields, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	needle := strings.ToLower(req.SearchString)
	num, numErr := strconv.ParseFloat(strings.TrimSpace(req.SearchString), 64)
	limit := s.maxRecords()
	results := gisxml.ArrayOfMapServerFindResult{}
	for _, sl := range layers {
		src := sl.src
		var cols []int // positions in src.fields
		for i, f := range src.fields {
			if f.Type == feature.FieldBlob || f.Type == feature.FieldDate {
				continue
			}
			if len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, f.Name) }) {
				cols = append(cols, i)
			}
		}
		if len(cols) == 0 {
			continue
		}
		p, err := newPlan(ctx, src, nil, sl.defExpr)
		if err != nil {
			return nil, err
		}
		feats, err := p.collect()
		if err != nil {
			return nil, err
		}
		for _, f := range feats {
			for _, i := range cols {
				v := f.Values[src.fieldIndex[i]]
				if !findMatch(v, req.SearchString, needle, req.Contains, num, numErr == nil) {
					continue
				}
				r := &gisxml.MapServerFindResult{
					Value: valueText(v), LayerID: src.id, FeatureID: int(f.ID), FieldName: src.fields[i].Name,
					Properties: properties(src, f, sl.fieldNames),
				}
				if sl.geometry {
					r.Shape = operation.GeometryOut(operation.Reproject(f.Geom, toView), view.SR)
				}
				results = append(results, r)
				break
			}
			if len(results) >= limit {
				return &gisxml.FindResponse{Result: results}, nil
			}
		}
	}
	return &gisxml.FindResponse{Result: results}, nil
}

func findMatch(v any, exact, lower string, contains bool, num float64, isNum bool) bool {
	switch x := v.(type) {
	case string:
		if contains {
			return strings.Contains(strings.ToLower(x), lower)
		}
		return x == exact
	case int64:
		if contains {
			return strings.Contains(strconv.FormatInt(x, 10), lower)
		}
		return isNum && float64(x) == num
	case float64:
		if contains {
			return strings.Contains(strconv.FormatFloat(x, 'f', -1, 64), lower)
		}
		return isNum && x == num
	}
	return false
}

// valueText is a value as Find and Identify show it.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "Null"
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05")
	case []byte:
		return "Blob"
	}
	return fmt.Sprint(v)
}

// properties are a feature's published field values keyed by field alias (or name, with
// LayerResultOptions.ReturnFieldNamesInResults), as text, and "Shape" with the geometry type, as
// ArcGIS's Find and Identify give them.
func properties(src *source, f *feature.Feature, byName bool) *gisxml.PropertySet {
	ps := &gisxml.PropertySet{PropertyArray: make(gisxml.ArrayOfPropertySetProperty, 0, len(src.fields)+1)}
	for i, fd := range src.fields {
		name := fd.Alias
		if name == "" || byName {
			name = fd.Name
		}
		ps.PropertyArray = append(ps.PropertyArray, &gisxml.PropertySetProperty{Key: name, Value: valueText(f.Values[src.fieldIndex[i]])})
	}
	if src.hasShape {
		ps.PropertyArray = append(ps.PropertyArray, &gisxml.PropertySetProperty{Key: "Shape", Value: strings.TrimPrefix(src.info.GeometryType.String(), "esriGeometry")})
	}
	return ps
}
