package queries

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/mapserver/operation"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// This file holds the feature and table queries: counts, ids and record sets, for layers
// (QueryFeature*) and standalone tables (QueryRow*, QueryData).

// defaultMaxRecordCount caps record sets when Limits.MaxRecordCount is not set, as ArcGIS does.
const defaultMaxRecordCount = 1000

func (s *Service) maxRecords() int {
	if s.p.Limits.MaxRecordCount > 0 {
		return s.p.Limits.MaxRecordCount
	}
	return defaultMaxRecordCount
}

// QueryFeatureCount counts the layer's features that pass the filter.
func (s *Service) QueryFeatureCount(ctx context.Context, c *operation.Call, req *gisxml.QueryFeatureCount) (*gisxml.QueryFeatureCountResponse, error) {
	n, err := s.countLayer(ctx, c, req.MapName, req.LayerID, req.QueryFilter, "")
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryFeatureCountResponse{Result: n}, nil
}

// QueryFeatureCount2 is QueryFeatureCount with the layer's state from a LayerDescription.
func (s *Service) QueryFeatureCount2(ctx context.Context, c *operation.Call, req *gisxml.QueryFeatureCount2) (*gisxml.QueryFeatureCount2Response, error) {
	ld, err := layerDesc(req.LayerDescription)
	if err != nil {
		return nil, err
	}
	n, err := s.countLayer(ctx, c, req.MapName, ld.LayerID, req.QueryFilter, ld.DefinitionExpression)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryFeatureCount2Response{Result: n}, nil
}

func layerDesc(ld *gisxml.LayerDescription) (*gisxml.LayerDescription, error) {
	if ld == nil {
		return nil, operation.Invalid("LayerDescription is required")
	}
	return ld, nil
}

func (s *Service) countLayer(ctx context.Context, c *operation.Call, mapName string, id int, qf gisxml.QueryFilterKind, defExpr string) (int, error) {
	_, src, err := layerOf(c, mapName, id)
	if err != nil {
		return 0, err
	}
	p, err := newPlan(ctx, src, qf, defExpr)
	if err != nil {
		return 0, err
	}
	return p.count()
}

// QueryFeatureIDs returns the ids of the layer's features that pass the filter, ascending. It
// is not capped by MaxRecordCount, so clients page through large results with FIDSets.
func (s *Service) QueryFeatureIDs(ctx context.Context, c *operation.Call, req *gisxml.QueryFeatureIDs) (*gisxml.QueryFeatureIDsResponse, error) {
	ids, err := s.layerIDs(ctx, c, req.MapName, req.LayerID, req.QueryFilter, "")
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryFeatureIDsResponse{Result: ids}, nil
}

// QueryFeatureIDs2 is QueryFeatureIDs with the layer's state from a LayerDescription.
func (s *Service) QueryFeatureIDs2(ctx context.Context, c *operation.Call, req *gisxml.QueryFeatureIDs2) (*gisxml.QueryFeatureIDs2Response, error) {
	ld, err := layerDesc(req.LayerDescription)
	if err != nil {
		return nil, err
	}
	ids, err := s.layerIDs(ctx, c, req.MapName, ld.LayerID, req.QueryFilter, ld.DefinitionExpression)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryFeatureIDs2Response{Result: ids}, nil
}

func (s *Service) layerIDs(ctx context.Context, c *operation.Call, mapName string, id int, qf gisxml.QueryFilterKind, defExpr string) (*gisxml.FIDSet, error) {
	_, src, err := layerOf(c, mapName, id)
	if err != nil {
		return nil, err
	}
	return planIDs(ctx, src, qf, defExpr)
}

func planIDs(ctx context.Context, src *source, qf gisxml.QueryFilterKind, defExpr string) (*gisxml.FIDSet, error) {
	p, err := newPlan(ctx, src, qf, defExpr)
	if err != nil {
		return nil, err
	}
	ids := gisxml.ArrayOfInt{}
	if err := p.scan(func(f *feature.Feature) bool { ids = append(ids, int(f.ID)); return true }); err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return &gisxml.FIDSet{FIDArray: ids}, nil
}

// QueryFeatureData returns the features that pass the filter as a RecordSet, at most
// MaxRecordCount of them (the first ones in ORDER BY, then id order).
func (s *Service) QueryFeatureData(ctx context.Context, c *operation.Call, req *gisxml.QueryFeatureData) (*gisxml.QueryFeatureDataResponse, error) {
	_, src, err := layerOf(c, req.MapName, req.LayerID)
	if err != nil {
		return nil, err
	}
	rs, _, err := s.recordSet(ctx, src, req.QueryFilter, "", true)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryFeatureDataResponse{Result: rs}, nil
}

// QueryFeatureData2 is QueryFeatureData with the layer's state from a LayerDescription (its
// definition expression, and LayerResultOptions.IncludeGeometry) and the result's format from
// QueryResultOptions: a RecordSet as Object, or Esri JSON as MIME data.
func (s *Service) QueryFeatureData2(ctx context.Context, c *operation.Call, req *gisxml.QueryFeatureData2) (*gisxml.QueryFeatureData2Response, error) {
	ld, err := layerDesc(req.LayerDescription)
	if err != nil {
		return nil, err
	}
	_, src, err := layerOf(c, req.MapName, ld.LayerID)
	if err != nil {
		return nil, err
	}
	geometry := true
	if o := ld.LayerResultOptions; o != nil && o.IncludeGeometry != nil {
		geometry = *o.IncludeGeometry
	}
	res, err := s.queryResult(ctx, src, req.QueryFilter, ld.DefinitionExpression, geometry, req.QueryResultOptions, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryFeatureData2Response{Result: res}, nil
}

// QueryRowCount counts the rows of a standalone table (or layer) that pass the filter.
func (s *Service) QueryRowCount(ctx context.Context, c *operation.Call, req *gisxml.QueryRowCount) (*gisxml.QueryRowCountResponse, error) {
	src, defExpr, err := tableOf(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	p, err := newPlan(ctx, src, req.QueryFilter, defExpr)
	if err != nil {
		return nil, err
	}
	n, err := p.count()
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryRowCountResponse{Result: n}, nil
}

// QueryRowIDs returns the ids of the rows that pass the filter, ascending.
func (s *Service) QueryRowIDs(ctx context.Context, c *operation.Call, req *gisxml.QueryRowIDs) (*gisxml.QueryRowIDsResponse, error) {
	src, defExpr, err := tableOf(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	ids, err := planIDs(ctx, src, req.QueryFilter, defExpr)
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryRowIDsResponse{Result: ids.FIDArray}, nil
}

// QueryData returns the rows that pass the filter in the QueryResultOptions format.
func (s *Service) QueryData(ctx context.Context, c *operation.Call, req *gisxml.QueryData) (*gisxml.QueryDataResponse, error) {
	src, defExpr, err := tableOf(c, req.MapName, req.MapTableDescription)
	if err != nil {
		return nil, err
	}
	res, err := s.queryResult(ctx, src, req.QueryFilter, defExpr, true, req.QueryResultOptions, s.publisher(ctx))
	if err != nil {
		return nil, err
	}
	return &gisxml.QueryDataResponse{Result: res}, nil
}

func (s *Service) queryResult(ctx context.Context, src *source, qf gisxml.QueryFilterKind, defExpr string, geometry bool, o *gisxml.QueryResultOptions, publish publishFunc) (*gisxml.QueryResult, error) {
	format := gisxml.QueryResultRecordSetAsObject
	if o != nil && o.Format != "" {
		format = o.Format
	}
	switch format {
	case gisxml.QueryResultRecordSetAsObject:
		rs, _, err := s.recordSet(ctx, src, qf, defExpr, geometry)
		if err != nil {
			return nil, err
		}
		return &gisxml.QueryResult{Object: rs}, nil
	case gisxml.QueryResultJsonAsMime, gisxml.QueryResultJsonAsURL:
		p, feats, exceeded, err := s.run(ctx, src, qf, defExpr, geometry)
		if err != nil {
			return nil, err
		}
		data, err := esriJSON(p, feats, exceeded)
		if err != nil {
			return nil, err
		}
		if format == gisxml.QueryResultJsonAsURL {
			url, err := publish(data, "application/json")
			if err != nil {
				return nil, err
			}
			return &gisxml.QueryResult{URL: url}, nil
		}
		return &gisxml.QueryResult{MimeData: data}, nil
	}
	return nil, operation.Invalid("QueryResultOptions/Format %s is not supported: use gisQueryResultRecordSetAsObject, gisQueryResultJsonAsMime or gisQueryResultJsonAsURL", format)
}

// run plans and collects a query, capped at MaxRecordCount; exceeded tells whether more
// features matched.
func (s *Service) run(ctx context.Context, src *source, qf gisxml.QueryFilterKind, defExpr string, geometry bool) (*plan, []*feature.Feature, bool, error) {
	p, err := newPlan(ctx, src, qf, defExpr)
	if err != nil {
		return nil, nil, false, err
	}
	if !geometry {
		p.shape = false
	}
	limit := s.maxRecords()
	feats, err := p.collectN(limit + 1) // one more tells whether the limit was exceeded
	if err != nil {
		return nil, nil, false, err
	}
	if p.distinct {
		feats = p.dedupe(feats)
	}
	exceeded := false
	if len(feats) > limit {
		feats, exceeded = feats[:limit], true
	}
	return p, feats, exceeded, nil
}

func (s *Service) recordSet(ctx context.Context, src *source, qf gisxml.QueryFilterKind, defExpr string, geometry bool) (*gisxml.RecordSet, bool, error) {
	p, feats, exceeded, err := s.run(ctx, src, qf, defExpr, geometry)
	if err != nil {
		return nil, false, err
	}
	return p.recordSet(feats), exceeded, nil
}

// dedupe keeps the first feature of each distinct combination of output values.
func (p *plan) dedupe(feats []*feature.Feature) []*feature.Feature {
	seen := map[string]bool{}
	out := feats[:0]
	var key strings.Builder
	for _, f := range feats {
		key.Reset()
		for _, i := range p.out {
			fmt.Fprintf(&key, "%T:%v\x00", f.Values[p.src.fieldIndex[i]], f.Values[p.src.fieldIndex[i]])
		}
		if k := key.String(); !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// recordSet builds the RecordSet of features: the output fields, then the shape.
func (p *plan) recordSet(feats []*feature.Feature) *gisxml.RecordSet {
	fs := make([]feature.Field, len(p.out))
	for i, j := range p.out {
		fs[i] = p.src.fields[j]
	}
	var shape *gisxml.GeometryDef
	if p.shape {
		shape = &gisxml.GeometryDef{GeometryType: operation.GeometryType(p.src.info.GeometryType), SpatialReference: operation.SpatialReference(p.outSR)}
	}
	rs := &gisxml.RecordSet{Fields: operation.Fields(fs, shape), Records: make(gisxml.ArrayOfRecord, 0, len(feats))}
	MarkRaster(rs.Fields, p.src.raster)
	for _, f := range feats {
		vals := make(gisxml.ArrayOfValue, 0, len(p.out)+1)
		for _, j := range p.out {
			vals = append(vals, wireValue(p.src.fields[j].Type, f.Values[p.src.fieldIndex[j]]))
		}
		if p.shape {
			vals = append(vals, p.shapeOut(f.Geom))
		}
		rs.Records = append(rs.Records, &gisxml.Record{Values: vals})
	}
	return rs
}

// shapeOut converts a feature's geometry to the output SR and schema form; nil stays nil.
func (p *plan) shapeOut(g orb.Geometry) any {
	if g == nil {
		return nil
	}
	return operation.GeometryOut(operation.Reproject(g, p.toOut), p.outSR)
}

// wireValue types a stored value for the wire as ArcGIS does: OID and Integer as xsd:int,
// SmallInteger as xsd:short, Single as xsd:float, Double as xsd:double, String, Date as
// xsd:dateTime, Blob as base64; NULL as nil.
func wireValue(t feature.FieldType, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		switch t {
		case feature.FieldSmallInteger:
			return int16(x)
		case feature.FieldDouble:
			return float64(x)
		case feature.FieldSingle:
			return float32(x)
		}
		return int(x)
	case float64:
		if t == feature.FieldSingle {
			return float32(x)
		}
		return x
	}
	return v
}

// esriJSON writes a feature set as ArcGIS's REST JSON (the format of a query with f=json).
func esriJSON(p *plan, feats []*feature.Feature, exceeded bool) ([]byte, error) {
	type jsonField struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Alias  string `json:"alias"`
		Length int    `json:"length,omitempty"`
	}
	type jsonFeature struct {
		Attributes map[string]any `json:"attributes"`
		Geometry   any            `json:"geometry,omitempty"`
	}
	doc := struct {
		DisplayFieldName      string            `json:"displayFieldName"`
		FieldAliases          map[string]string `json:"fieldAliases"`
		GeometryType          string            `json:"geometryType,omitempty"`
		SpatialReference      map[string]int    `json:"spatialReference,omitempty"`
		Fields                []jsonField       `json:"fields"`
		Features              []jsonFeature     `json:"features"`
		ExceededTransferLimit bool              `json:"exceededTransferLimit,omitempty"`
	}{DisplayFieldName: p.src.display, FieldAliases: map[string]string{}, Features: []jsonFeature{}, ExceededTransferLimit: exceeded}
	if p.shape {
		doc.GeometryType = p.src.info.GeometryType.String()
		doc.SpatialReference = map[string]int{"wkid": p.outSR.WKID, "latestWkid": p.outSR.LatestWKID()}
	}
	for _, j := range p.out {
		f := p.src.fields[j]
		doc.FieldAliases[f.Name] = f.Alias
		jf := jsonField{Name: f.Name, Type: f.Type.String(), Alias: f.Alias}
		if f.Type == feature.FieldString {
			jf.Length = f.Length
		}
		doc.Fields = append(doc.Fields, jf)
	}
	for _, f := range feats {
		jf := jsonFeature{Attributes: make(map[string]any, len(p.out))}
		for _, j := range p.out {
			v := f.Values[p.src.fieldIndex[j]]
			if t, ok := v.(time.Time); ok {
				v = t.UnixMilli()
			}
			jf.Attributes[p.src.fields[j].Name] = v
		}
		if p.shape && f.Geom != nil {
			jf.Geometry = geometryJSON(operation.Reproject(f.Geom, p.toOut))
		}
		doc.Features = append(doc.Features, jf)
	}
	return json.Marshal(doc)
}

// geometryJSON is a geometry in Esri JSON form (no spatial reference: the feature set has it).
func geometryJSON(g orb.Geometry) any {
	xy := func(ps []orb.Point) [][2]float64 {
		out := make([][2]float64, len(ps))
		for i, p := range ps {
			out[i] = [2]float64{p[0], p[1]}
		}
		return out
	}
	switch g := operation.GeometryOut(g, proj.SR{}).(type) {
	case *gisxml.PointN:
		return map[string]float64{"x": g.X, "y": g.Y}
	case *gisxml.MultipointN:
		return map[string]any{"points": xy(pointsOf(g.PointArray))}
	case *gisxml.PolylineN:
		paths := make([][][2]float64, 0, len(g.PathArray))
		for _, path := range g.PathArray {
			paths = append(paths, xy(pointsOf(path.PathPart().PointArray)))
		}
		return map[string]any{"paths": paths}
	case *gisxml.PolygonN:
		rings := make([][][2]float64, 0, len(g.RingArray))
		for _, r := range g.RingArray {
			rings = append(rings, xy(pointsOf(r.PointArray)))
		}
		return map[string]any{"rings": rings}
	}
	return nil
}

func pointsOf(ps gisxml.ArrayOfPoint) []orb.Point {
	out := make([]orb.Point, 0, len(ps))
	for _, p := range ps {
		if pn, ok := p.(*gisxml.PointN); ok {
			out = append(out, orb.Point{pn.X, pn.Y})
		}
	}
	return out
}
