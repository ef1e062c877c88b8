package information

import (
	"context"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/mapserver/operation"
	"github.com/mapfarm/mapfarm/internal/where"
)

// GetSQLSyntaxInfo describes the where-clause language, exactly as internal/where accepts it.
// The language is the same for every layer; the layer is only checked to exist.
func (s *Service) GetSQLSyntaxInfo(ctx context.Context, c *operation.Call, req *gisxml.GetSQLSyntaxInfo) (*gisxml.GetSQLSyntaxInfoResponse, error) {
	m, err := operation.MapOf(c, req.MapName)
	if err != nil {
		return nil, err
	}
	if _, ok := m.Layer(req.LayerID); !ok {
		if _, ok := m.Table(req.LayerID); !ok {
			return nil, operation.NotFound("layer %d is not in map %s", req.LayerID, m.Name)
		}
	}
	syn := where.Syntax()
	props := func(ps []where.Property) *gisxml.PropertySet {
		out := &gisxml.PropertySet{PropertyArray: make(gisxml.ArrayOfPropertySetProperty, 0, len(ps))}
		for _, p := range ps {
			out.PropertyArray = append(out.PropertyArray, &gisxml.PropertySetProperty{Key: p.Key, Value: p.Value})
		}
		return out
	}
	return &gisxml.GetSQLSyntaxInfoResponse{Result: &gisxml.SQLSyntaxInfo{
		FunctionNames:             props(syn.FunctionNames),
		SpecialCharacters:         props(syn.SpecialCharacters),
		SupportedPredicates:       syn.SupportedPredicates,
		SupportedClauses:          syn.SupportedClauses,
		IdentifierCase:            syn.IdentifierCase,
		DelimitedIdentifierCase:   syn.DelimitedIdentifierCase,
		StringComparisonCase:      syn.StringComparisonCase,
		Keywords:                  syn.Keywords,
		InvalidCharacters:         syn.InvalidCharacters,
		InvalidStartingCharacters: syn.InvalidStartingCharacters,
	}}, nil
}
