package information

import (
	"context"
	"slices"
	"strconv"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/servicedef"
)

// GetMapTableSubtypeInfos describes the subtypes and attribute domains of the layers in
// TableIDs (every layer when empty) that declare any (service definition keys `subtypes`,
// `domains`). A layer with domains but no subtypes answers one SubtypeInfo with code 0 and
// an empty name and subtype field, holding the domains. Every subtype lists every domain.
func (s *Service) GetMapTableSubtypeInfos(ctx context.Context, c *operation.Call, req *gisxml.GetMapTableSubtypeInfos) (*gisxml.GetMapTableSubtypeInfosResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	out, err := subtypeInfos(m, req.TableIDs)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetMapTableSubtypeInfosResponse{Result: out}, nil
}

// GetMapTableSubtypeInfos2 is GetMapTableSubtypeInfos for the layers of LayerDescriptions.
func (s *Service) GetMapTableSubtypeInfos2(ctx context.Context, c *operation.Call, req *gisxml.GetMapTableSubtypeInfos2) (*gisxml.GetMapTableSubtypeInfos2Response, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	ids := gisxml.ArrayOfInt{}
	for _, ld := range req.LayerDescriptions {
		if ld != nil {
			ids = append(ids, ld.LayerID)
		}
	}
	out, err := subtypeInfos(m, ids)
	if err != nil {
		return nil, err
	}
	return &gisxml.GetMapTableSubtypeInfos2Response{Result: out}, nil
}

func subtypeInfos(m *catalog.Map, ids gisxml.ArrayOfInt) (gisxml.ArrayOfMapTableSubtypeInfo, error) {
	for _, id := range ids {
		_, isLayer := m.Layer(id)
		_, isTable := m.Table(id)
		if !isLayer && !isTable {
			return nil, operation.NotFound("layer or table %d is not in map %s", id, m.Name)
		}
	}
	out := gisxml.ArrayOfMapTableSubtypeInfo{}
	for _, l := range m.Layers {
		q := l.Def.Queryable
		if !hasID(ids, l.ID) || (q.Subtypes == nil && len(q.Domains) == 0) {
			continue
		}
		domains := gisxml.ArrayOfFieldDomainInfo{}
		for _, f := range l.Fields {
			if d, ok := q.Domains[f.Name]; ok {
				domains = append(domains, &gisxml.FieldDomainInfo{FieldName: f.Name, Domain: domainOut(d, f), IsInherited: operation.Ptr(true)})
			}
		}
		info := &gisxml.MapTableSubtypeInfo{TableID: l.ID}
		if q.Subtypes == nil {
			info.SubtypeInfos = gisxml.ArrayOfSubtypeInfo{{SubtypeCode: 0, FieldDomainInfos: domains}}
		} else {
			info.SubtypeFieldName = q.Subtypes.Field
			for _, st := range q.Subtypes.Values {
				info.SubtypeInfos = append(info.SubtypeInfos, &gisxml.SubtypeInfo{SubtypeCode: st.Code, SubtypeName: st.Name, FieldDomainInfos: domains})
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// domainOut is a declared domain in the schema's form; codes and bounds take the field's type.
func domainOut(d *servicedef.Domain, f feature.Field) gisxml.Domain {
	df := gisxml.DomainFields{DomainName: d.Name, FieldType: operation.FieldType(f.Type), MergePolicy: gisxml.MPTDefaultValue,
		SplitPolicy: gisxml.SPTDefaultValue, Description: operation.Ptr(d.Description), Owner: operation.Ptr("")}
	typed := func(v float64) any {
		if f.Type == feature.FieldDouble || f.Type == feature.FieldSingle {
			return v
		}
		return int(v)
	}
	if d.Type == servicedef.RangeDomain {
		return &gisxml.RangeDomain{DomainFields: df, MinValue: typed(d.Min), MaxValue: typed(d.Max)}
	}
	cv := &gisxml.CodedValueDomain{DomainFields: df}
	for _, c := range d.Codes {
		var code any = c.Code
		if f.Type.Numeric() {
			if n, err := strconv.ParseFloat(c.Code, 64); err == nil {
				code = typed(n)
			}
		}
		cv.CodedValues = append(cv.CodedValues, &gisxml.CodedValue{Name: c.Name, Code: code})
	}
	return cv
}

// hasID reports whether ids lists id, or is empty (meaning every id).
func hasID(ids gisxml.ArrayOfInt, id int) bool { return len(ids) == 0 || slices.Contains(ids, id) }
